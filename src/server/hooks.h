/* hooks.h - what the service asks of the HTTP server (metrics, the pool, readiness) and the service's start. */
#ifndef IKD_HOOKS_H
#define IKD_HOOKS_H

#include "http.h"

/* Start h->service with the daemon's settings and hooks that reach h's
 * metrics and pool; `finished` hands a pooled call back to the transport.
 * 0, or -1 out of memory. */
int ikd_hooks_service_start(ikd_http *h, const ikd_config *cfg, void (*finished)(ikd_call *call));
/* A worker's private data (its solve scratch), and its end. */
void *ikd_hooks_worker_init(void *arg, int index);
void ikd_hooks_worker_destroy(void *data);
/* Online CPUs, at least 1. */
long ikd_hooks_online_cpus(void);

#endif
