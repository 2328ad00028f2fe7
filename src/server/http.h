/* http.h - the libmicrohttpd front end: requests to and from the service layer, connection limits, start and stop. */
#ifndef IKD_HTTP_H
#define IKD_HTTP_H

#include <stdatomic.h>
#include <stddef.h>

#include "../service/call.h"
#include "config.h"
#include "metrics.h"
#include "pool.h"

struct MHD_Daemon;

typedef struct ikd_http {
    const ikd_config *cfg;
    struct MHD_Daemon *daemon;
    ikd_service service;
    int service_started;
    ikd_pool pool;
    int pool_started;
    int nworkers;
    int listen_fd;
    atomic_long active;      /* requests begun and not yet completed */
    atomic_long connections; /* open client connections (checked against --max-connections) */
    atomic_int draining;     /* set by ikd_http_drain */
    atomic_int ready;        /* set once serving; cleared when draining */
    ikd_metrics metrics;
    char *tls_cert, *tls_key; /* PEM contents when serving HTTPS */
    char url[320];           /* http(s)://HOST:PORT actually bound */
} ikd_http;

/* Bind, start the pool and the HTTP daemon. 0, or -1 with a message in errbuf
 * (everything started is stopped again). */
int ikd_http_start(ikd_http *h, const ikd_config *cfg, char *errbuf, size_t errlen);

/* Stop accepting connections and report not ready; requests on open
 * connections are still answered (with Connection: close), and requests
 * already begun run to completion. */
void ikd_http_drain(ikd_http *h);

/* Requests begun and not yet completed. */
long ikd_http_active(ikd_http *h);

/* Finish queued solves, stop the daemon, free everything. */
void ikd_http_stop(ikd_http *h);

#endif
