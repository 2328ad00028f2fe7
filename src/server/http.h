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
    int quiesced_fd;         /* the listener after ikd_http_close_listener, closed by ikd_http_stop */
    atomic_long active;      /* requests begun and not yet completed */
    atomic_long connections; /* open client connections (checked against --max-connections) */
    atomic_long fresh;       /* open connections on which no request has begun yet */
    atomic_long started;     /* connections libmicrohttpd has taken in, ever */
    long handed;             /* what `started` reaches once the backlog handed over at the drain is taken in */
    atomic_int draining;     /* set by ikd_http_drain */
    atomic_int ready;        /* set once serving; cleared when draining */
    ikd_metrics metrics;
    char *tls_cert, *tls_key; /* PEM contents when serving HTTPS */
    char url[320];           /* http(s)://HOST:PORT actually bound */
} ikd_http;

/* Bind, start the pool and the HTTP daemon. 0, or -1 with a message in errbuf
 * (everything started is stopped again). */
int ikd_http_start(ikd_http *h, const ikd_config *cfg, char *errbuf, size_t errlen);

/* The drain, in steps (main.c runs them on SIGTERM):
 * 1. ikd_http_drain: /readyz answers 503 and every reply carries
 *    Connection: close; connections are still accepted (--drain-delay).
 * 2. ikd_http_close_listener: stop listening, after handing every connection
 *    already in the kernel's backlog to libmicrohttpd.
 * 3. wait until ikd_http_busy is 0, within --shutdown-grace;
 * 4. ikd_http_abort if it is not: running solves stop, queued ones get 503;
 * 5. ikd_http_stop. */
void ikd_http_drain(ikd_http *h);
void ikd_http_close_listener(ikd_http *h);
void ikd_http_abort(ikd_http *h);

/* Requests begun and not yet completed. */
long ikd_http_active(ikd_http *h);
/* Those, and accepted connections on which no request has begun yet. */
long ikd_http_busy(ikd_http *h);

/* Finish queued solves, stop the daemon, free everything. */
void ikd_http_stop(ikd_http *h);

#endif
