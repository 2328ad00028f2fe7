/* metrics.c - request, solve and rejection counters as relaxed atomics; Prometheus text rendering. */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define IKD_VERSION "0.1.0"

static const int codes[] = {200, 204, 400, 401, 403, 404, 405, 408, 413, 415, 431, 499, 500, 501, 503, 0};
_Static_assert(sizeof codes / sizeof codes[0] == IKD_METRICS_CODES, "one slot per status code, the last for others");
static const double bounds[IKD_METRICS_BUCKETS - 1] = {1e-6,   2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4,
                                                       5e-4,   1e-3,   2.5e-3, 5e-3, 1e-2, 1e-1, 1.0};
static const char *const reasons[IKD_REJECT__COUNT] = {"queue_full", "too_large", "deadline", "draining",
                                                          "connection_limit", "memory"};

void ikd_metrics_init(ikd_metrics *m)
{
    memset(m, 0, sizeof *m);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    m->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int code_slot(int status)
{
    for (int i = 0; i < IKD_METRICS_CODES - 1; i++)
        if (codes[i] == status) return i;
    return IKD_METRICS_CODES - 1; /* "other" */
}

void ikd_metrics_request(ikd_metrics *m, int route, int status)
{
    if (route < 0 || route >= IKD_METRICS_ROUTES) route = IKD_METRICS_ROUTES - 1;
    atomic_fetch_add_explicit(&m->requests[route][code_slot(status)], 1, memory_order_relaxed);
}

/* One solve time into a duration histogram (buckets not cumulative) and its sum. */
static void observe(atomic_ulong buckets[IKD_METRICS_BUCKETS], atomic_ulong *ns, double seconds)
{
    int b = 0;
    while (b < IKD_METRICS_BUCKETS - 1 && seconds > bounds[b]) b++;
    atomic_fetch_add_explicit(&buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(ns, (unsigned long)(seconds * 1e9), memory_order_relaxed);
}

void ikd_metrics_solve(ikd_metrics *m, ikd_solver solver, ikd_status status, double seconds)
{
    if ((int)solver < 0 || solver >= IKD_SOLVER__COUNT) return;
    observe(m->solve_buckets[solver], &m->solve_ns[solver], seconds);
    atomic_fetch_add_explicit(&m->solve_count[solver], 1, memory_order_relaxed);
    if ((int)status >= 0 && status <= IKD_STATUS_DEADLINE)
        atomic_fetch_add_explicit(&m->solves[solver][status], 1, memory_order_relaxed);
}

void ikd_metrics_skeleton(ikd_metrics *m, ikd_multi_status status, const unsigned goals[3], double seconds)
{
    observe(m->skel_buckets, &m->skel_ns, seconds);
    if ((unsigned)status < 3) atomic_fetch_add_explicit(&m->skel_solves[status], 1, memory_order_relaxed);
    for (int g = 0; g < 3; g++) atomic_fetch_add_explicit(&m->skel_goals[g], goals[g], memory_order_relaxed);
}

void ikd_metrics_clip(ikd_metrics *m, const unsigned frames[3])
{
    atomic_fetch_add_explicit(&m->clips, 1, memory_order_relaxed);
    for (int i = 0; i < 3; i++) atomic_fetch_add_explicit(&m->clip_frames[i], frames[i], memory_order_relaxed);
}

void ikd_metrics_reject(ikd_metrics *m, ikd_reject_reason why)
{
    if ((int)why >= 0 && why < IKD_REJECT__COUNT) atomic_fetch_add_explicit(&m->rejections[why], 1, memory_order_relaxed);
}

static void line(ikd_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(ikd_buf *out, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) ikd_buf_append(out, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* ikd_solve_duration_seconds{solver=NAME}: cumulative buckets, sum, count. */
static void render_duration(ikd_buf *out, const char *name, atomic_ulong buckets[IKD_METRICS_BUCKETS], atomic_ulong *ns)
{
    unsigned long cum = 0;
    for (int b = 0; b < IKD_METRICS_BUCKETS; b++) {
        cum += atomic_load_explicit(&buckets[b], memory_order_relaxed);
        if (b < IKD_METRICS_BUCKETS - 1)
            line(out, "ikd_solve_duration_seconds_bucket{solver=\"%s\",le=\"%g\"} %lu\n", name, bounds[b], cum);
        else
            line(out, "ikd_solve_duration_seconds_bucket{solver=\"%s\",le=\"+Inf\"} %lu\n", name, cum);
    }
    line(out, "ikd_solve_duration_seconds_sum{solver=\"%s\"} %.9f\n", name,
         (double)atomic_load_explicit(ns, memory_order_relaxed) / 1e9);
    line(out, "ikd_solve_duration_seconds_count{solver=\"%s\"} %lu\n", name, cum);
}

void ikd_metrics_render(ikd_metrics *m, const char *const *route_names, int nroutes, const ikd_metrics_gauges *g,
                        ikd_buf *out)
{
    line(out, "# HELP ikd_http_requests_total HTTP requests answered, by route and status code.\n");
    line(out, "# TYPE ikd_http_requests_total counter\n");
    for (int r = 0; r < nroutes && r < IKD_METRICS_ROUTES; r++) {
        for (int c = 0; c < IKD_METRICS_CODES; c++) {
            unsigned long v = atomic_load_explicit(&m->requests[r][c], memory_order_relaxed);
            if (!v) continue;
            if (codes[c])
                line(out, "ikd_http_requests_total{route=\"%s\",code=\"%d\"} %lu\n", route_names[r], codes[c], v);
            else
                line(out, "ikd_http_requests_total{route=\"%s\",code=\"other\"} %lu\n", route_names[r], v);
        }
    }
    line(out, "# HELP ikd_solve_duration_seconds Time spent in the solver per problem, by solver.\n");
    line(out, "# TYPE ikd_solve_duration_seconds histogram\n");
    for (int s = 1; s < IKD_SOLVER__COUNT; s++)
        render_duration(out, ikd_solver_name((ikd_solver)s), m->solve_buckets[s], &m->solve_ns[s]);
    render_duration(out, "skeleton", m->skel_buckets, &m->skel_ns);
    line(out, "# HELP ikd_skeleton_solves_total Skeleton problems solved, by result status.\n");
    line(out, "# TYPE ikd_skeleton_solves_total counter\n");
    for (int st = 0; st < 3; st++)
        line(out, "ikd_skeleton_solves_total{status=\"%s\"} %lu\n", ikd_multi_status_name((ikd_multi_status)st),
             atomic_load_explicit(&m->skel_solves[st], memory_order_relaxed));
    line(out, "# HELP ikd_skeleton_goals_total Goals of skeleton solves, by goal status.\n");
    line(out, "# TYPE ikd_skeleton_goals_total counter\n");
    for (int st = 0; st < 3; st++)
        line(out, "ikd_skeleton_goals_total{status=\"%s\"} %lu\n", ikd_goal_status_name((ikd_goal_status)st),
             atomic_load_explicit(&m->skel_goals[st], memory_order_relaxed));
    line(out, "# HELP ikd_clips_total Clips solved (POST /v1/solve/clip).\n# TYPE ikd_clips_total counter\n");
    line(out, "ikd_clips_total %lu\n", atomic_load_explicit(&m->clips, memory_order_relaxed));
    line(out, "# HELP ikd_clip_frames_total Frames of clips solved, by frame status.\n");
    line(out, "# TYPE ikd_clip_frames_total counter\n");
    for (int st = 0; st < 3; st++)
        line(out, "ikd_clip_frames_total{status=\"%s\"} %lu\n", ikd_multi_status_name((ikd_multi_status)st),
             atomic_load_explicit(&m->clip_frames[st], memory_order_relaxed));
    line(out, "# HELP ikd_solves_total Problems solved, by solver and result status.\n");
    line(out, "# TYPE ikd_solves_total counter\n");
    for (int s = 1; s < IKD_SOLVER__COUNT; s++)
        for (int st = 0; st <= IKD_STATUS_DEADLINE; st++)
            line(out, "ikd_solves_total{solver=\"%s\",status=\"%s\"} %lu\n", ikd_solver_name((ikd_solver)s),
                 ikd_status_name((ikd_status)st), atomic_load_explicit(&m->solves[s][st], memory_order_relaxed));
    line(out, "# HELP ikd_rejections_total Requests (connections, for connection_limit) refused before solving, by reason.\n");
    line(out, "# TYPE ikd_rejections_total counter\n");
    for (int r = 0; r < IKD_REJECT__COUNT; r++)
        line(out, "ikd_rejections_total{reason=\"%s\"} %lu\n", reasons[r],
             atomic_load_explicit(&m->rejections[r], memory_order_relaxed));
    line(out, "# HELP ikd_queue_depth Solve jobs waiting for a worker.\n# TYPE ikd_queue_depth gauge\nikd_queue_depth %zu\n",
         g->queue_depth);
    line(out, "# HELP ikd_queue_capacity Solve queue capacity (--queue).\n# TYPE ikd_queue_capacity gauge\nikd_queue_capacity %zu\n",
         g->queue_capacity);
    line(out, "# HELP ikd_workers Solver worker threads.\n# TYPE ikd_workers gauge\nikd_workers %zu\n", g->workers);
    line(out, "# HELP ikd_workers_busy Workers running a job now.\n# TYPE ikd_workers_busy gauge\nikd_workers_busy %zu\n",
         g->running);
    line(out, "# HELP ikd_in_flight Requests begun and not yet answered.\n# TYPE ikd_in_flight gauge\nikd_in_flight %ld\n",
         g->in_flight);
    line(out, "# HELP ikd_draining 1 while shutting down.\n# TYPE ikd_draining gauge\nikd_draining %d\n", g->draining);
    line(out,
         "# HELP ikd_memory_held_bytes Bytes of request bodies and replies (streamed frames not yet sent included) "
         "charged to --memory-budget now.\n# TYPE ikd_memory_held_bytes gauge\nikd_memory_held_bytes %zu\n",
         g->memory_held);
    line(out, "# HELP ikd_memory_budget_bytes --memory-budget (0: no limit).\n# TYPE ikd_memory_budget_bytes gauge\n"
              "ikd_memory_budget_bytes %zu\n",
         g->memory_budget);
    line(out, "# HELP ikd_skeletons_kept Skeletons kept by reference (POST /v1/skeletons, /v1/import).\n"
              "# TYPE ikd_skeletons_kept gauge\nikd_skeletons_kept %zu\n",
         g->skeletons);
    line(out, "# HELP ikd_skeleton_cache_bytes Bytes of the skeletons kept (--skeleton-cache; part of ikd_memory_held_bytes).\n"
              "# TYPE ikd_skeleton_cache_bytes gauge\nikd_skeleton_cache_bytes %zu\n",
         g->skeleton_bytes);
    line(out,
         "# HELP ikd_log_dropped_lines_total Log lines dropped because stderr did not keep up (its buffer was full).\n"
         "# TYPE ikd_log_dropped_lines_total counter\nikd_log_dropped_lines_total %lu\n",
         g->log_dropped);
    line(out, "# HELP ikd_build_info Build information.\n# TYPE ikd_build_info gauge\nikd_build_info{version=\"%s\"} 1\n",
         IKD_VERSION);
    line(out, "# HELP ikd_start_time_seconds Start time of the process, unix seconds.\n# TYPE ikd_start_time_seconds gauge\n"
              "ikd_start_time_seconds %.3f\n", m->start_time);
}
