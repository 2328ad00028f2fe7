/* log.c - JSON log lines built on the stack, buffered per thread and written to stderr. */
#include "log.h"

#include "../codec/buf.h"

#include <pthread.h>
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

/* Access lines are collected per thread and written in blocks (one write(2)
 * per 16 KiB instead of one per request); ikd_log_flush writes what is left.
 * Daemon events are written at once. */
#define LOG_BLOCK 16384
#define LOG_MAX_THREADS 256

typedef struct block {
    pthread_mutex_t lock;
    size_t len;
    char data[LOG_BLOCK];
} block;

static block *blocks[LOG_MAX_THREADS];
static atomic_int nblocks;
static _Thread_local block *mine;
static _Thread_local int no_block; /* registry full: write directly */

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(2, p, n);
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

static void flush_block(block *b)
{
    if (b->len) write_all(b->data, b->len);
    b->len = 0;
}

void ikd_log_flush(void)
{
    int n = atomic_load(&nblocks);
    for (int i = 0; i < n && i < LOG_MAX_THREADS; i++) {
        block *b = blocks[i];
        if (!b) continue;
        pthread_mutex_lock(&b->lock);
        flush_block(b);
        pthread_mutex_unlock(&b->lock);
    }
}

static void emit(const char *p, size_t n, int buffered)
{
    if (buffered && !mine && !no_block) {
        int i = atomic_fetch_add(&nblocks, 1);
        if (i < LOG_MAX_THREADS) {
            block *b = calloc(1, sizeof *b);
            if (b) {
                pthread_mutex_init(&b->lock, NULL);
                blocks[i] = b;
                mine = b;
            }
        }
        if (!mine) no_block = 1;
    }
    if (!buffered || !mine) {
        write_all(p, n);
        return;
    }
    pthread_mutex_lock(&mine->lock);
    if (mine->len + n > LOG_BLOCK) flush_block(mine);
    memcpy(mine->data + mine->len, p, n);
    mine->len += n;
    pthread_mutex_unlock(&mine->lock);
}

static void finish(line *l, int buffered)
{
    puts_(l, "}\n");
    if (l->b.failed) return; /* cannot happen with bounded strings; never write half a line */
    emit(l->b.data, l->b.len, buffered);
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
    puts_(&l, ",\"request_id\":");
    str(&l, a->request_id);
    finish(&l, 1);
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
    ikd_log_flush(); /* keep the order: requests before the event */
    finish(&l, 0);
}
