/* log.c - JSON log lines built on the stack and written to stderr by a writer thread that never holds up serving. */
#include "log.h"

#include "../codec/buf.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int current = IKD_LOG_INFO;
static const char *const names[] = {"debug", "info", "warn", "error", "off"};

int ikd_log_level_from_name(const char *name, ikd_log_level *out)
{
    for (int i = 0; i <= IKD_LOG_OFF; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (ikd_log_level)i;
            return 0;
        }
    }
    return -1;
}

void ikd_log_set_level(ikd_log_level level) { atomic_store(&current, (int)level); }
int ikd_log_enabled(ikd_log_level level) { return (int)level >= atomic_load(&current) && level != IKD_LOG_OFF; }

/* A line is built in a buffer on the stack with the codec's JSON writers
 * (strings escaped and invalid UTF-8 replaced, integers without printf). */
typedef struct line {
    ikd_buf b;
    char storage[4096]; /* a line's strings are bounded: a path of 255 bytes escapes to 1,530 */
} line;

static void line_init(line *l) { ikd_buf_init_fixed(&l->b, l->storage, sizeof l->storage); }
static void puts_(line *l, const char *s) { ikd_buf_puts(&l->b, s); }
static void str(line *l, const char *s) { ikd_buf_json_string(&l->b, s ? s : ""); }
static void put_int(line *l, long long v) { ikd_buf_json_int(&l->b, v); }

/* Milliseconds with three decimals ("%.3f" without printf: one line per
 * request at the default level). */
static void put_ms(line *l, double ms)
{
    if (!(ms >= 0)) ms = 0;
    if (ms > 1e12) ms = 1e12;
    long long us = (long long)(ms * 1000.0 + 0.5);
    char frac[5] = {'.', (char)('0' + us % 1000 / 100), (char)('0' + us % 100 / 10), (char)('0' + us % 10), 0};
    put_int(l, us / 1000);
    puts_(l, frac);
}

static void start(line *l, ikd_log_level level)
{
    /* the date and time up to the second are formatted once a second per thread */
    static _Thread_local time_t cached_sec = -1;
    static _Thread_local char cached[48];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec != cached_sec) {
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        snprintf(cached, sizeof cached, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        cached_sec = ts.tv_sec;
    }
    line_init(l);
    puts_(l, cached);
    long ms = ts.tv_nsec / 1000000;
    char msbuf[4] = {(char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10), 0};
    puts_(l, msbuf);
    puts_(l, "Z\",\"level\":\"");
    puts_(l, names[level]);
    puts_(l, "\"");
}

/* Lines go to one bounded buffer that a writer thread empties into stderr,
 * so that no serving thread ever waits on stderr: an unread pipe once froze
 * the whole daemon (log writes were blocking write(2) calls on the I/O
 * threads). Serving threads copy a line in under a short lock; the writer
 * swaps the buffer for an empty one and writes it with no lock held. A
 * line that finds the buffer full is dropped and counted
 * (ikd_log_dropped_lines_total). Until ikd_log_start, and after a failed
 * start, lines are written at once. */
#define LOG_BUFFER (512 * 1024)

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    char *fill, *spare;  /* the buffer lines go into; the one being written */
    size_t len;
    int running, stopping, writing;
} wr = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, 0, 0};
static pthread_t writer_thread;
static atomic_ulong dropped;

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(2, p, n);
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

/* The writer wakes when the buffer passes LOG_WAKE bytes, when flushed,
 * and at least every LOG_TICK_MS: waking it for every line cost a futex
 * wake-up and a context switch per request (a quarter of the daemon's
 * single-request rate on two cores). */
#define LOG_WAKE (64 * 1024)
#define LOG_TICK_MS 100

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wr.lock);
    for (;;) {
        if (wr.len == 0) pthread_cond_broadcast(&wr.idle);
        while (wr.len == 0 && !wr.stopping) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += LOG_TICK_MS * 1000000L;
            if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&wr.wake, &wr.lock, &until);
            if (wr.len == 0) pthread_cond_broadcast(&wr.idle);
        }
        if (wr.len == 0) break; /* stopping, nothing left */
        char *out = wr.fill;
        size_t n = wr.len;
        wr.fill = wr.spare;
        wr.spare = out;
        wr.len = 0;
        wr.writing = 1;
        pthread_mutex_unlock(&wr.lock);
        write_all(out, n); /* may block on a full pipe: nobody waits for it */
        pthread_mutex_lock(&wr.lock);
        wr.writing = 0;
    }
    pthread_cond_broadcast(&wr.idle);
    pthread_mutex_unlock(&wr.lock);
    return NULL;
}

int ikd_log_start(void)
{
    pthread_mutex_lock(&wr.lock);
    int rc = 0;
    if (!wr.running) {
        wr.fill = malloc(LOG_BUFFER);
        wr.spare = malloc(LOG_BUFFER);
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old); /* the writer takes no signals */
        if (!wr.fill || !wr.spare || pthread_create(&writer_thread, NULL, writer_main, NULL) != 0) {
            free(wr.fill);
            free(wr.spare);
            wr.fill = wr.spare = NULL;
            rc = -1;
        } else {
            wr.running = 1;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&wr.lock);
    return rc;
}

static void emit(const char *p, size_t n)
{
    pthread_mutex_lock(&wr.lock);
    if (!wr.running) {
        pthread_mutex_unlock(&wr.lock);
        write_all(p, n);
        return;
    }
    if (wr.len + n > LOG_BUFFER) {
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
    } else {
        memcpy(wr.fill + wr.len, p, n);
        if (wr.len < LOG_WAKE && wr.len + n >= LOG_WAKE) pthread_cond_signal(&wr.wake);
        wr.len += n;
    }
    pthread_mutex_unlock(&wr.lock);
}

unsigned long ikd_log_dropped(void) { return atomic_load(&dropped); }

/* Wait until the writer has written everything, at most `ms`. 0 when it has. */
static int wait_idle(long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&wr.lock);
    int rc = 0;
    while (wr.running && (wr.len || wr.writing) && rc == 0) rc = pthread_cond_timedwait(&wr.idle, &wr.lock, &until);
    int left = wr.len || wr.writing;
    pthread_mutex_unlock(&wr.lock);
    return left ? -1 : 0;
}

void ikd_log_flush(void)
{
    pthread_mutex_lock(&wr.lock);
    if (wr.len) pthread_cond_signal(&wr.wake);
    pthread_mutex_unlock(&wr.lock);
}

int ikd_log_stop(long ms)
{
    pthread_mutex_lock(&wr.lock);
    if (!wr.running) {
        pthread_mutex_unlock(&wr.lock);
        return 0;
    }
    wr.stopping = 1;
    pthread_cond_signal(&wr.wake);
    pthread_mutex_unlock(&wr.lock);
    if (wait_idle(ms) != 0) return -1; /* stderr does not drain: leave the writer blocked */
    pthread_join(writer_thread, NULL);
    pthread_mutex_lock(&wr.lock);
    wr.running = 0;
    wr.stopping = 0;
    free(wr.fill);
    free(wr.spare);
    wr.fill = wr.spare = NULL;
    pthread_mutex_unlock(&wr.lock);
    return 0;
}

static void finish(line *l)
{
    puts_(l, "}\n");
    if (l->b.failed) return; /* cannot happen with bounded strings; never write half a line */
    emit(l->b.data, l->b.len);
}

void ikd_log_access(const ikd_access *a)
{
    ikd_log_level level = a->status >= 500 ? IKD_LOG_WARN : IKD_LOG_INFO;
    if (!ikd_log_enabled(level)) return;
    line l;
    start(&l, level);
    puts_(&l, ",\"method\":");
    str(&l, a->method);
    puts_(&l, ",\"path\":");
    str(&l, a->path);
    puts_(&l, ",\"status\":");
    put_int(&l, a->status > 0 ? a->status : 0);
    puts_(&l, ",\"bytes\":");
    put_int(&l, (long long)a->bytes);
    puts_(&l, ",\"duration_ms\":");
    put_ms(&l, a->duration_ms);
    puts_(&l, ",\"queue_ms\":");
    put_ms(&l, a->queue_ms);
    if (a->solver) {
        puts_(&l, ",\"solver\":");
        str(&l, a->solver);
    }
    if (a->client) {
        puts_(&l, ",\"client\":");
        str(&l, a->client);
    }
    if (a->error) {
        puts_(&l, ",\"error\":");
        str(&l, a->error);
    }
    puts_(&l, ",\"request_id\":");
    str(&l, a->request_id);
    finish(&l);
}

void ikd_log_event(ikd_log_level level, const char *event, const char *detail)
{
    if (!ikd_log_enabled(level)) return;
    line l;
    start(&l, level);
    puts_(&l, ",\"event\":");
    str(&l, event);
    if (detail) {
        puts_(&l, ",\"detail\":");
        str(&l, detail);
    }
    finish(&l);
}
