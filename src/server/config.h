/* config.h - daemon settings: one table feeds defaults, IKD_* environment variables, flags and --help. */
#ifndef IKD_CONFIG_H
#define IKD_CONFIG_H

#include <stddef.h>
#include <stdio.h>

typedef struct ikd_config {
    char listen[256];    /* HOST:PORT ([v6]:PORT); port 0 = any free port */
    long workers;        /* solver threads; 0 = online CPUs */
    long queue;          /* solve queue capacity; full -> 503 */
    long max_body;       /* request body limit of the small routes (solve, batch, skeleton), bytes; larger -> 413 */
    long max_clip_body;  /* request body limit of /v1/solve/clip, bytes; larger -> 413 */
    long max_import_body; /* request body limit of /v1/import, bytes; larger -> 413 */
    long skeleton_cache;  /* bytes of skeletons kept by reference */
    long linger_bytes;   /* body bytes read and dropped after an early answer before the connection is cut */
    long linger_ms;      /* ms spent reading and dropping a body after an early answer before the connection is cut */
    long max_joints;     /* joints per chain; more -> 400 */
    long io_threads;     /* libmicrohttpd I/O threads */
    long conn_timeout;   /* idle connection timeout, seconds */
    long shutdown_grace; /* seconds to finish accepted requests after SIGTERM; then stop them */
    long drain_delay;    /* seconds to keep accepting after SIGTERM before the listener closes */
    long inline_us;      /* skeleton solves on the I/O thread while their average is under this, us; 0 = never */
    long debug_delay_ms; /* testing only: every solve job sleeps this long first */
    long max_batch;      /* problems per /v1/solve/batch; more -> 413 */
    long max_frames;     /* frames per /v1/solve/clip; more -> 413 */
    long memory_budget;  /* bytes of bodies and replies held at once; 0 = no limit */
    long max_iterations; /* cap on options.max_iterations; more -> 400 */
    long deadline_ms;    /* per-request deadline from arrival; 0 = none */
    long conn_buffer;    /* libmicrohttpd's memory per connection, bytes */
    long max_connections;        /* open connections in total (0 in the table: derived from RLIMIT_NOFILE) */
    long max_connections_per_ip; /* open connections per client address; 0 = no limit */
    char cors_origins[1024];     /* comma-separated allowed Origins, or "*"; "" = no CORS */
    char api_token[256];         /* bearer token required on non-health endpoints; "" = none */
    char tls_cert[512];          /* PEM certificate file; with tls_key: HTTPS */
    char tls_key[512];           /* PEM private key file */
    char log_level[16];          /* debug, info, warn, error, off */
    char ui[8];                  /* on, off: the browser editor at / and the client at /client/ikd.js */
} ikd_config;

/* Fill `cfg` from defaults, then the environment, then argv (flags win).
 * Returns 0 to run, 1 when --help was printed to `out`, -1 on a bad setting
 * (the message is in `errbuf`). */
int ikd_config_load(ikd_config *cfg, int argc, char **argv, FILE *out, char *errbuf, size_t errlen);

/* Raise the soft RLIMIT_NOFILE to the hard one, then derive
 * max_connections when it is 0 (1024, or what the limit leaves after the
 * daemon's own descriptors), or refuse a value the limit cannot hold.
 * 0, or -1 with a message. Called by ikd_config_load. */
int ikd_config_fit_descriptors(ikd_config *cfg, char *errbuf, size_t errlen);

/* Print the flags table (flag, variable, default, range, meaning). */
void ikd_config_usage(FILE *out);

/* Split cfg->listen into host and port. 0 on success, -1 if malformed. */
int ikd_config_split_listen(const char *listen, char *host, size_t hostlen, int *port);

#endif
