/* hooks.c - what the service asks of the HTTP server (metrics, the pool, readiness) and the service's start. */
#include "hooks.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assets.h"
#include "log.h"

static void hook_solved(void *ctx, ikd_solver solver, ikd_status status, double seconds)
{
    ikd_metrics_solve(&((ikd_http *)ctx)->metrics, solver, status, seconds);
}

static void hook_skeleton(void *ctx, ikd_multi_status status, const unsigned goals[3], double seconds)
{
    ikd_metrics_skeleton(&((ikd_http *)ctx)->metrics, status, goals, seconds);
}

static void hook_clip(void *ctx, const unsigned frames[3])
{
    ikd_metrics_clip(&((ikd_http *)ctx)->metrics, frames);
}

static void hook_rejected(void *ctx, ikd_reject_reason why) { ikd_metrics_reject(&((ikd_http *)ctx)->metrics, why); }

static int hook_submit(void *ctx, ikd_task *task) { return ikd_pool_submit(&((ikd_http *)ctx)->pool, task); }

static int hook_resume(void *ctx, ikd_task *task) { return ikd_pool_resume(&((ikd_http *)ctx)->pool, task); }

static size_t hook_idle(void *ctx)
{
    ikd_http *h = ctx;
    size_t queued, running;
    ikd_pool_load(&h->pool, &queued, &running);
    return (size_t)h->nworkers > queued + running ? (size_t)h->nworkers - queued - running : 0;
}

static int hook_queue_full(void *ctx)
{
    ikd_http *h = ctx;
    size_t queued, running;
    ikd_pool_load(&h->pool, &queued, &running);
    return queued >= (size_t)h->cfg->queue;
}

static int hook_ready(void *ctx)
{
    ikd_http *h = ctx;
    return atomic_load(&h->ready) && !atomic_load(&h->draining);
}

static void hook_metrics(void *ctx, ikd_buf *out)
{
    ikd_http *h = ctx;
    const char *names[IKD_METRICS_ROUTES];
    for (int i = 0; i < IKD_ROUTE__COUNT; i++) names[i] = ikd_route_all()[i].path;
    names[IKD_ROUTE__COUNT] = "unmatched";
    ikd_metrics_gauges g;
    ikd_pool_load(&h->pool, &g.queue_depth, &g.running);
    g.queue_capacity = (size_t)h->cfg->queue;
    g.workers = (size_t)h->nworkers;
    g.in_flight = ikd_http_active(h);
    g.draining = atomic_load(&h->draining);
    g.log_dropped = ikd_log_dropped();
    g.memory_held = ikd_service_held(&h->service);
    g.memory_budget = (size_t)h->cfg->memory_budget;
    ikd_skelstore_usage(&h->service.store, &g.skeletons, &g.skeleton_bytes);
    ikd_metrics_render(&h->metrics, names, IKD_METRICS_ROUTES, &g, out);
}

void *ikd_hooks_worker_init(void *arg, int index)
{
    ikd_http *h = arg;
    (void)index;
    ikd_api_scratch *s = malloc(sizeof *s);
    if (!s || ikd_api_scratch_init(s, (size_t)h->cfg->max_joints) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

void ikd_hooks_worker_destroy(void *data)
{
    ikd_api_scratch_destroy(data);
    free(data);
}

long ikd_hooks_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n;
}

int ikd_hooks_service_start(ikd_http *h, const ikd_config *cfg, void (*finished)(ikd_call *call))
{
    ikd_service_settings set = {.limits = {(size_t)cfg->max_joints, (int)cfg->max_iterations, (size_t)cfg->max_batch, NULL,
                                           (size_t)cfg->max_frames, 0, NULL, NULL},
                                .max_body = cfg->max_body,
                                .max_clip_body = cfg->max_clip_body,
                                .max_import_body = cfg->max_import_body,
                                .skeleton_cache = (size_t)cfg->skeleton_cache,
                                .deadline_ms = cfg->deadline_ms,
                                .debug_delay_ms = cfg->debug_delay_ms,
                                .inline_us = cfg->inline_us,
                                .head_max = cfg->conn_buffer,
                                .memory_budget = (size_t)cfg->memory_budget,
                                .cors_origins = cfg->cors_origins,
                                .api_token = cfg->api_token,
                                .find_file = strcmp(cfg->ui, "on") == 0 ? ikd_asset_find : NULL};
    ikd_service_hooks hooks = {.ctx = h,
                               .solved = hook_solved,
                               .skeleton_solved = hook_skeleton,
                               .clip_solved = hook_clip,
                               .rejected = hook_rejected,
                               .submit = hook_submit,
                               .resume = hook_resume,
                               .idle = hook_idle,
                               .queue_full = hook_queue_full,
                               .ready = hook_ready,
                               .metrics = hook_metrics,
                               .finished = finished};
    if (ikd_service_init(&h->service, &set, &hooks) != 0) return -1;
    h->service_started = 1;
    return 0;
}

