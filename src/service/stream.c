/* stream.c - a reply written while it is produced: a locked byte queue between a worker and the transport, two references. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

ikd_stream *ikd_stream_new(void)
{
    ikd_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->lock, NULL);
    ikd_buf_init(&s->buf);
    s->refs = 2;
    return s;
}

void ikd_stream_account(ikd_stream *s, atomic_size_t *held) { s->held = held; }

/* Charge (n > 0) or give back (n < 0) unread bytes; under the lock. */
static void account(ikd_stream *s, long n)
{
    if (!s->held || !n) return;
    if (n > 0) {
        atomic_fetch_add(s->held, (size_t)n);
        s->charged += (size_t)n;
    } else {
        atomic_fetch_sub(s->held, (size_t)-n);
        s->charged -= (size_t)-n;
    }
}

void ikd_stream_producer(ikd_stream *s, void (*resume)(void *ctx), void (*abandon)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&s->lock);
    s->high = IKD_STREAM_HIGH;
    s->resume = resume;
    s->abandon = abandon;
    s->producer_ctx = ctx;
    pthread_mutex_unlock(&s->lock);
}

int ikd_stream_push(ikd_stream *s, const char *data, size_t n, int done)
{
    pthread_mutex_lock(&s->lock);
    if (s->off == s->buf.len) {
        ikd_buf_reset(&s->buf), s->off = 0; /* all read: start over */
    } else if (s->off >= s->buf.len / 2) { /* a reader behind: the read half goes, so the buffer stays bounded */
        memmove(s->buf.data, s->buf.data + s->off, s->buf.len - s->off);
        s->buf.len -= s->off;
        s->buf.data[s->buf.len] = '\0';
        s->off = 0;
    }
    ikd_buf_append(&s->buf, data, n);
    int failed = s->buf.failed;
    if (!failed) account(s, (long)n);
    s->done = done || failed;
    if (s->parked && s->wake) {
        s->parked = 0;
        s->wake(s->ctx);
    }
    int park = !s->done && s->high && s->buf.len - s->off >= s->high && !atomic_load(&s->cancel);
    if (park) s->producer_parked = 1;
    pthread_mutex_unlock(&s->lock);
    return failed ? -1 : park;
}

void ikd_stream_attach(ikd_stream *s, void (*wake)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&s->lock);
    s->wake = wake;
    s->ctx = ctx;
    pthread_mutex_unlock(&s->lock);
}

long ikd_stream_read(ikd_stream *s, char *dst, size_t max, void (*park)(void *ctx), void *ctx)
{
    int resume = 0;
    pthread_mutex_lock(&s->lock);
    size_t have = s->buf.failed ? 0 : s->buf.len - s->off;
    long r;
    if (have) {
        size_t n = have < max ? have : max;
        memcpy(dst, s->buf.data + s->off, n);
        s->off += n;
        s->sent += n;
        account(s, -(long)n);
        r = (long)n;
        if (s->producer_parked && s->buf.len - s->off < IKD_STREAM_LOW) s->producer_parked = 0, resume = 1;
    } else if (s->done) {
        r = -1;
    } else {
        s->parked = 1;
        park(ctx);
        r = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (resume) s->resume(s->producer_ctx); /* outside the lock: it may run the producer at once */
    return r;
}

void ikd_stream_detach(ikd_stream *s)
{
    pthread_mutex_lock(&s->lock);
    s->wake = NULL;
    s->parked = 0;
    atomic_store(&s->cancel, 1);
    int abandon = s->producer_parked;
    s->producer_parked = 0;
    pthread_mutex_unlock(&s->lock);
    if (abandon) s->abandon(s->producer_ctx);
}

unsigned long long ikd_stream_sent(ikd_stream *s)
{
    pthread_mutex_lock(&s->lock);
    unsigned long long n = s->sent;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void ikd_stream_release(ikd_stream *s)
{
    pthread_mutex_lock(&s->lock);
    int last = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (!last) return;
    account(s, -(long)s->charged); /* what was never read */
    ikd_buf_destroy(&s->buf);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
