/* log.c - JSON log lines built on the stack and written to stderr with one write(2) each. */
#include "log.h"

#include <stdatomic.h>
#include <stdio.h>
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

typedef struct line {
    char buf[2048];
    size_t len;
} line;

static void put(line *l, const char *s, size_t n)
{
    if (n > sizeof l->buf - 2 - l->len) n = sizeof l->buf - 2 - l->len;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void puts_(line *l, const char *s) { put(l, s, strlen(s)); }

/* A JSON string, escaped, at most 256 bytes of input. */
static void str(line *l, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    put(l, "\"", 1);
    for (size_t i = 0; s && s[i] && i < 256; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(l, e, 2);
        } else if (c < 0x20 || c >= 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(l, e, 6); /* bytes >= 0x7f as \u00XX: keeps the line valid JSON whatever the input */
        } else {
            put(l, (const char *)&c, 1);
        }
    }
    put(l, "\"", 1);
}

static void start(line *l, ikd_log_level level)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char t[128];
    snprintf(t, sizeof t, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":\"%s\"", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, names[level]);
    l->len = 0;
    puts_(l, t);
}

static void finish(line *l)
{
    l->buf[l->len++] = '}';
    l->buf[l->len++] = '\n';
    ssize_t w = write(2, l->buf, l->len);
    (void)w;
}

void ikd_log_access(const ikd_access *a)
{
    ikd_log_level level = a->status >= 500 ? IKD_LOG_WARN : IKD_LOG_INFO;
    if (!ikd_log_enabled(level)) return;
    line l;
    char num[160];
    start(&l, level);
    puts_(&l, ",\"method\":");
    str(&l, a->method);
    puts_(&l, ",\"path\":");
    str(&l, a->path);
    snprintf(num, sizeof num, ",\"status\":%d,\"bytes\":%lu,\"duration_ms\":%.3f,\"queue_ms\":%.3f", a->status, a->bytes,
             a->duration_ms, a->queue_ms);
    puts_(&l, num);
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
