/* metrics.h - Prometheus counters, gauges and histograms of the daemon (lock-free updates, text rendering). */
#ifndef IKD_METRICS_H
#define IKD_METRICS_H

#include <stdatomic.h>
#include <stddef.h>

#include "../codec/buf.h"
#include "../service/call.h"
#include "ikd/solve.h"

#define IKD_METRICS_ROUTES (IKD_ROUTE__COUNT + 1) /* route slots: the routing table's indices, then "unmatched" */
#define IKD_METRICS_CODES 16 /* the status codes counted (metrics.c), the last for any other */
#define IKD_METRICS_BUCKETS 16

/* ikd_reject_reason (src/service/call.h) indexes the rejections. */
typedef struct ikd_metrics {
    atomic_ulong requests[IKD_METRICS_ROUTES][IKD_METRICS_CODES];
    atomic_ulong solve_buckets[IKD_SOLVER__COUNT][IKD_METRICS_BUCKETS]; /* not cumulative */
    atomic_ulong solve_count[IKD_SOLVER__COUNT];
    atomic_ulong solve_ns[IKD_SOLVER__COUNT];
    atomic_ulong solves[IKD_SOLVER__COUNT][IKD_STATUS_DEADLINE + 1]; /* by ikd_status */
    atomic_ulong skel_buckets[IKD_METRICS_BUCKETS]; /* skeleton solves: not cumulative */
    atomic_ulong skel_ns;
    atomic_ulong skel_solves[3]; /* by ikd_multi_status */
    atomic_ulong skel_goals[3];  /* by ikd_goal_status */
    atomic_ulong clip_frames[3]; /* clips' frames by ikd_multi_status */
    atomic_ulong clips;
    atomic_ulong rejections[IKD_REJECT__COUNT];
    double start_time; /* unix seconds */
} ikd_metrics;

void ikd_metrics_init(ikd_metrics *m);
/* Count a finished request on route slot `route` (IKD_METRICS_ROUTES - 1 = unmatched). */
void ikd_metrics_request(ikd_metrics *m, int route, int status);
/* Count one solve: the solver that ran, its status and its time in seconds. */
void ikd_metrics_solve(ikd_metrics *m, ikd_solver solver, ikd_status status, double seconds);
/* Count one skeleton solve: its status, its goals by status, its time. */
void ikd_metrics_skeleton(ikd_metrics *m, ikd_multi_status status, const unsigned goals[3], double seconds);
/* Count one clip: its frames by ikd_multi_status. */
void ikd_metrics_clip(ikd_metrics *m, const unsigned frames[3]);
void ikd_metrics_reject(ikd_metrics *m, ikd_reject_reason why);

/* The live gauges, read by the caller when rendering. */
typedef struct ikd_metrics_gauges {
    size_t queue_depth, queue_capacity, running, workers;
    long in_flight;
    int draining;
    unsigned long log_dropped; /* log lines dropped on a full log buffer */
    size_t memory_held, memory_budget; /* bytes charged to --memory-budget now; the budget (0: none) */
    size_t skeletons, skeleton_bytes;  /* skeletons kept by reference, and their bytes (part of memory_held) */
} ikd_metrics_gauges;

/* Prometheus text exposition format 0.0.4. `route_names[i]` labels slot i. */
void ikd_metrics_render(ikd_metrics *m, const char *const *route_names, int nroutes, const ikd_metrics_gauges *g,
                        ikd_buf *out);

#endif
