/* config.h - daemon settings: one table feeds defaults, IKD_* environment variables, flags and --help. */
#ifndef IKD_CONFIG_H
#define IKD_CONFIG_H

#include <stddef.h>
#include <stdio.h>

typedef struct ikd_config {
    char listen[256];    /* HOST:PORT ([v6]:PORT); port 0 = any free port */
    long workers;        /* solver threads; 0 = online CPUs */
    long queue;          /* solve queue capacity; full -> 503 */
    long max_body;       /* request body limit, bytes; larger -> 413 */
    long max_joints;     /* joints per chain; more -> 400 */
    long io_threads;     /* libmicrohttpd I/O threads */
    long conn_timeout;   /* idle connection timeout, seconds */
    long shutdown_grace; /* seconds to finish accepted requests after SIGTERM */
    long debug_delay_ms; /* testing only: every solve job sleeps this long first */
} ikd_config;

/* Fill `cfg` from defaults, then the environment, then argv (flags win).
 * Returns 0 to run, 1 when --help was printed to `out`, -1 on a bad setting
 * (the message is in `errbuf`). */
int ikd_config_load(ikd_config *cfg, int argc, char **argv, FILE *out, char *errbuf, size_t errlen);

/* Print the flags table (flag, variable, default, range, meaning). */
void ikd_config_usage(FILE *out);

/* Split cfg->listen into host and port. 0 on success, -1 if malformed. */
int ikd_config_split_listen(const char *listen, char *host, size_t hostlen, int *port);

#endif
