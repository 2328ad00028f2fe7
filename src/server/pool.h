/* pool.h - a fixed worker thread pool with a bounded job queue (full -> refused at once). */
#ifndef IKD_POOL_H
#define IKD_POOL_H

#include <pthread.h>
#include <stddef.h>

#include "../service/task.h"

/* A job runs on a worker; `worker_data` is what worker_init returned for it. */
typedef ikd_task ikd_pool_job;

typedef struct ikd_pool {
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    ikd_pool_job **ring;  /* capacity slots */
    size_t capacity, head, count;
    ikd_pool_job *resumed, *resumed_tail; /* jobs accepted before, queued again: run first, not bounded */
    size_t resumed_count;
    size_t running;       /* jobs being run right now */
    int stopping;
    int nworkers;         /* workers that have started (hands out indices) */
    int nthreads;         /* threads created and running */
    int joined;           /* threads joined by ikd_pool_stop */
    pthread_t *threads;
    void **worker_data;
    void (*worker_destroy)(void *data);
} ikd_pool;

/* Start `workers` threads and a queue of `capacity` jobs. worker_init(arg, i)
 * makes each worker's private data (e.g. solver scratch); NULL from it is a
 * failure. Returns 0, or -1 with nothing left allocated. */
int ikd_pool_init(ikd_pool *pool, int workers, size_t capacity, void *(*worker_init)(void *arg, int index),
                  void (*worker_destroy)(void *data), void *arg);

/* Queue a job. 0 = queued; -1 = queue full; -2 = pool stopping. Never blocks
 * on a full queue. */
int ikd_pool_submit(ikd_pool *pool, ikd_pool_job *job);

/* Queue a job that was accepted before and gave its worker back (a
 * streamed reply waiting for its reader): past the capacity, ahead of the
 * ring. 0 = queued; -2 = pool stopping (the caller ends the job). Their
 * number is bounded by the connections that carry them. */
int ikd_pool_resume(ikd_pool *pool, ikd_pool_job *job);

/* Jobs waiting in the ring (not yet running; resumed ones aside) and jobs running. */
void ikd_pool_load(ikd_pool *pool, size_t *queued, size_t *running);

/* Refuse new jobs, run every queued one, join the workers; the pool's
 * lock stays usable (submit and resume answer -2) until destroy. */
void ikd_pool_stop(ikd_pool *pool);

/* ikd_pool_stop, then free everything. */
void ikd_pool_destroy(ikd_pool *pool);

#endif
