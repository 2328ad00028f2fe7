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

int ikd_stream_push(ikd_stream *s, const char *data, size_t n, int done)
{
    pthread_mutex_lock(&s->lock);
    if (s->off == s->buf.len) ikd_buf_reset(&s->buf), s->off = 0; /* all read: start over */
    ikd_buf_append(&s->buf, data, n);
    int failed = s->buf.failed;
    if (!failed) account(s, (long)n);
    s->done = done || failed;
    if (s->parked && s->wake) {
        s->parked = 0;
        s->wake(s->ctx);
    }
    pthread_mutex_unlock(&s->lock);
    return failed ? -1 : 0;
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
    } else if (s->done) {
        r = -1;
    } else {
        s->parked = 1;
        park(ctx);
        r = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

void ikd_stream_detach(ikd_stream *s)
{
    pthread_mutex_lock(&s->lock);
    s->wake = NULL;
    s->parked = 0;
    atomic_store(&s->cancel, 1);
    pthread_mutex_unlock(&s->lock);
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
