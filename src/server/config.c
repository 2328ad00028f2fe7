/* config.c - the settings table and its loaders (defaults, IKD_* environment, --flags, --help). */
#include "config.h"

#include "log.h"

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SET_STR, SET_LONG } set_type;

typedef struct setting {
    const char *flag;    /* without the leading "--" */
    const char *env;
    set_type type;
    size_t offset;
    size_t size;         /* SET_STR: buffer size */
    const char *def;
    long min, max;       /* SET_LONG bounds */
    const char *help;
} setting;

#define STR(f, e, field, d, h) {f, e, SET_STR, offsetof(ikd_config, field), sizeof(((ikd_config *)0)->field), d, 0, 0, h}
#define NUM(f, e, field, d, lo, hi, h) {f, e, SET_LONG, offsetof(ikd_config, field), 0, d, lo, hi, h}

static const setting settings[] = {
    STR("listen", "IKD_LISTEN", listen, "127.0.0.1:8080", "address to listen on, HOST:PORT or [V6]:PORT; port 0 picks a free port"),
    NUM("workers", "IKD_WORKERS", workers, "0", 0, 256, "solver worker threads; 0 = one per online CPU"),
    NUM("queue", "IKD_QUEUE", queue, "1024", 1, 1000000, "solve queue capacity; when full, requests get 503 + Retry-After"),
    NUM("max-body", "IKD_MAX_BODY", max_body, "1048576", 64, 1073741824, "largest body in bytes of /v1/solve, /v1/solve/batch and /v1/solve/skeleton; larger gets 413"),
    NUM("max-clip-body", "IKD_MAX_CLIP_BODY", max_clip_body, "8388608", 64, 1073741824, "largest body in bytes of /v1/solve/clip (the default fits --max-frames frames of four 6-DoF goals, and --memory-budget); larger gets 413"),
    NUM("max-import-body", "IKD_MAX_IMPORT_BODY", max_import_body, "50331648", 64, 1073741824, "largest body in bytes of /v1/import (a file: a 60 s BVH take is about 2.5 MB, a VRM character with its textures 10-30 MB); larger gets 413"),
    NUM("skeleton-cache", "IKD_SKELETON_CACHE", skeleton_cache, "16777216", 0, 1073741824, "bytes of skeletons kept by reference (POST /v1/skeletons, /v1/import; least recently used out first), charged to --memory-budget; 0 = none (every id gets 409)"),
    NUM("linger-bytes", "IKD_LINGER_BYTES", linger_bytes, "33554432", 0, 1073741824, "after an answer given before the body is in (413, 401, 415, 503...), at most this many body bytes are read and dropped so that the client reads the answer; then the connection is cut"),
    NUM("linger-ms", "IKD_LINGER_MS", linger_ms, "5000", 0, 600000, "at most this many ms are spent reading and dropping such a body; then the connection is cut"),
    NUM("max-joints", "IKD_MAX_JOINTS", max_joints, "1024", 3, 4096, "most joints in one chain; more gets 400"),
    NUM("io-threads", "IKD_IO_THREADS", io_threads, "0", 0, 64, "HTTP I/O threads (libmicrohttpd), which also answer analytic and short skeleton solves; 0 = one per online CPU"),
    NUM("conn-timeout", "IKD_CONN_TIMEOUT", conn_timeout, "30", 1, 3600, "seconds an idle or stalled connection is kept"),
    NUM("conn-buffer", "IKD_CONN_BUFFER", conn_buffer, "8192", 4096, 1048576, "bytes of buffer per connection: request line and headers must fit (else 431), bodies stream through it"),
    NUM("shutdown-grace", "IKD_SHUTDOWN_GRACE", shutdown_grace, "10", 0, 3600, "seconds after SIGTERM (and --drain-delay) to finish accepted requests; then running solves stop, queued ones get 503, and ikd exits"),
    NUM("drain-delay", "IKD_DRAIN_DELAY", drain_delay, "0", 0, 3600, "seconds after SIGTERM to keep accepting connections (answered with Connection: close while /readyz says 503) before the listener closes"),
    NUM("memory-budget", "IKD_MEMORY_BUDGET", memory_budget, "67108864", 0, 1099511627776, "bytes of request bodies and replies held at once; a request that would pass it gets 503 + Retry-After (413 if it never could fit); 0 = no limit"),
    NUM("max-batch", "IKD_MAX_BATCH", max_batch, "1024", 1, 100000, "most problems in one /v1/solve/batch; more gets 413"),
    NUM("max-frames", "IKD_MAX_FRAMES", max_frames, "10000", 1, 1000000, "most frames in one /v1/solve/clip; more gets 413"),
    NUM("max-iterations", "IKD_MAX_ITERATIONS", max_iterations, "10000", 1, 100000, "highest options.max_iterations accepted; more gets 400"),
    NUM("deadline-ms", "IKD_DEADLINE_MS", deadline_ms, "10000", 0, 3600000, "per-request deadline from arrival, ms; queued too long -> 503, solving too long -> status deadline; 0 = none"),
    NUM("max-connections", "IKD_MAX_CONNECTIONS", max_connections, "0", 0, 100000, "open connections in total; more are closed at once; 0 = 1024, or fewer when RLIMIT_NOFILE leaves less room"),
    NUM("max-connections-per-ip", "IKD_MAX_CONNECTIONS_PER_IP", max_connections_per_ip, "0", 0, 100000, "open connections per client address; 0 = no limit"),
    STR("cors-origins", "IKD_CORS_ORIGINS", cors_origins, "", "browser origins allowed (comma-separated, exact, or *); empty = no CORS"),
    STR("api-token", "IKD_API_TOKEN", api_token, "", "when set, every request but /healthz and /readyz needs Authorization: Bearer TOKEN"),
    STR("tls-cert", "IKD_TLS_CERT", tls_cert, "", "PEM certificate file; with --tls-key serves HTTPS"),
    STR("tls-key", "IKD_TLS_KEY", tls_key, "", "PEM private key file for --tls-cert"),
    STR("log-level", "IKD_LOG_LEVEL", log_level, "info", "debug, info (one line per request), warn, error or off"),
    STR("ui", "IKD_UI", ui, "on", "the browser editor at / and the JavaScript client at /client/ikd.js: on or off (off: 404)"),
    NUM("inline-us", "IKD_INLINE_US", inline_us, "1000", 0, 1000000, "a skeleton solve (body up to 8 KiB) is answered on the I/O thread that read it (no hand-off to a worker) while the moving average of skeleton solve times is under this many us; 0 = always on the workers"),
    NUM("debug-delay-ms", "IKD_DEBUG_DELAY_MS", debug_delay_ms, "0", 0, 60000, "testing only: each solve job waits this long first"),
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

static int apply(ikd_config *cfg, const setting *s, const char *value, const char *origin, char *errbuf, size_t errlen)
{
    char *dst = (char *)cfg + s->offset;
    if (s->type == SET_STR) {
        if (strlen(value) >= s->size) {
            snprintf(errbuf, errlen, "%s: value too long", origin);
            return -1;
        }
        memcpy(dst, value, strlen(value) + 1);
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end != '\0' || v < s->min || v > s->max) {
        snprintf(errbuf, errlen, "%s: '%s' is not an integer in [%ld, %ld]", origin, value, s->min, s->max);
        return -1;
    }
    memcpy(dst, &v, sizeof v);
    return 0;
}

void ikd_config_usage(FILE *out)
{
    fprintf(out, "usage: ikd [--flag VALUE]...\n\n"
                 "Inverse-kinematics solving service (HTTP/JSON). Every flag has an IKD_* environment\n"
                 "variable; flags win over the environment, which wins over the default.\n\n");
    fprintf(out, "  %-24s %-28s %-7s %-16s %-14s %s\n", "flag", "variable", "type", "default", "range", "meaning");
    for (size_t i = 0; i < NSETTINGS; i++) {
        const setting *s = &settings[i];
        char flag[48], range[48];
        snprintf(flag, sizeof flag, "--%s", s->flag);
        if (s->type == SET_LONG) snprintf(range, sizeof range, "%ld..%ld", s->min, s->max);
        else snprintf(range, sizeof range, "-");
        fprintf(out, "  %-24s %-28s %-7s %-16s %-14s %s\n", flag, s->env, s->type == SET_LONG ? "integer" : "string",
                s->def[0] ? s->def : "\"\"", range, s->help);
    }
    fprintf(out, "  %-24s %-28s %-7s %-16s %-14s %s\n", "--help", "-", "-", "-", "-", "print this table and exit");
}

static const setting *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strlen(settings[i].flag) == len && strncmp(settings[i].flag, name, len) == 0) return &settings[i];
    return NULL;
}

int ikd_config_load(ikd_config *cfg, int argc, char **argv, FILE *out, char *errbuf, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < NSETTINGS; i++)
        if (apply(cfg, &settings[i], settings[i].def, settings[i].flag, errbuf, errlen) != 0) return -1;
    for (size_t i = 0; i < NSETTINGS; i++) {
        const char *v = getenv(settings[i].env);
        if (v && *v && apply(cfg, &settings[i], v, settings[i].env, errbuf, errlen) != 0) return -1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            ikd_config_usage(out);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            snprintf(errbuf, errlen, "unexpected argument '%s' (see --help)", a);
            return -1;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const setting *s = find_flag(name, len);
        if (!s) {
            snprintf(errbuf, errlen, "unknown flag '%.*s' (see --help)", (int)(len + 2), a);
            return -1;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (!value) {
            if (i + 1 >= argc) {
                snprintf(errbuf, errlen, "--%s needs a value", s->flag);
                return -1;
            }
            value = argv[++i];
        }
        char origin[48];
        snprintf(origin, sizeof origin, "--%s", s->flag);
        if (apply(cfg, s, value, origin, errbuf, errlen) != 0) return -1;
    }
    ikd_log_level level;
    if (ikd_log_level_from_name(cfg->log_level, &level) != 0) {
        snprintf(errbuf, errlen, "log-level: '%s' is not debug, info, warn, error or off", cfg->log_level);
        return -1;
    }
    if (strcmp(cfg->ui, "on") != 0 && strcmp(cfg->ui, "off") != 0) {
        snprintf(errbuf, errlen, "ui: '%s' is not on or off", cfg->ui);
        return -1;
    }
    if (!cfg->tls_cert[0] != !cfg->tls_key[0]) {
        snprintf(errbuf, errlen, "--tls-cert and --tls-key go together");
        return -1;
    }
    char host[256];
    int port;
    if (ikd_config_split_listen(cfg->listen, host, sizeof host, &port) != 0) {
        snprintf(errbuf, errlen, "listen: '%s' is not HOST:PORT", cfg->listen);
        return -1;
    }
    return ikd_config_fit_descriptors(cfg, errbuf, errlen);
}

/* Descriptors the daemon keeps for itself besides connections: standard
 * streams, the listening socket, per I/O thread its wake-up pipe (and an
 * epoll set, were libmicrohttpd to use one), the TLS files while read, and
 * some slack. */
static long reserved_descriptors(const ikd_config *cfg)
{
    long io = cfg->io_threads ? cfg->io_threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (io < 1) io = 1;
    return 16 + 4 * io;
}

int ikd_config_fit_descriptors(ikd_config *cfg, char *errbuf, size_t errlen)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    if (rl.rlim_cur < rl.rlim_max) { /* take what the hard limit allows */
        struct rlimit up = {rl.rlim_max, rl.rlim_max};
        if (rl.rlim_max != RLIM_INFINITY && setrlimit(RLIMIT_NOFILE, &up) == 0) rl.rlim_cur = rl.rlim_max;
    }
    long room = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000 ? 1000000 : (long)rl.rlim_cur;
    room -= reserved_descriptors(cfg);
    if (cfg->max_connections == 0) {
        if (room < 1) {
            snprintf(errbuf, errlen, "RLIMIT_NOFILE (%ld) leaves no descriptor for connections (%ld reserved)",
                     (long)rl.rlim_cur, reserved_descriptors(cfg));
            return -1;
        }
        cfg->max_connections = room < 1024 ? room : 1024;
    } else if (cfg->max_connections > room) {
        snprintf(errbuf, errlen,
                 "--max-connections %ld needs more descriptors than RLIMIT_NOFILE (%ld) leaves with %ld reserved "
                 "(at most %ld; raise ulimit -n)",
                 cfg->max_connections, (long)rl.rlim_cur, reserved_descriptors(cfg), room > 0 ? room : 0);
        return -1;
    }
    return 0;
}

int ikd_config_split_listen(const char *listen, char *host, size_t hostlen, int *port)
{
    const char *colon;
    const char *h = listen;
    size_t hl;
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (!close || close[1] != ':') return -1;
        h = listen + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(listen, ':');
        if (!colon) return -1;
        hl = (size_t)(colon - listen);
    }
    if (hl == 0 || hl >= hostlen) return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 0 || p > 65535) return -1;
    *port = (int)p;
    return 0;
}
