/* pool.c - worker threads taking jobs from a bounded ring buffer under one mutex. */
#include "pool.h"

#include <stdlib.h>
#include <string.h>

static void *pool_main(void *p)
{
    ikd_pool *pool = p;
    pthread_mutex_lock(&pool->lock);
    int index = pool->nworkers; /* the launcher hands out indices under the lock */
    pool->nworkers++;
    void *data = pool->worker_data[index];
    for (;;) {
        while (pool->count == 0 && !pool->resumed && !pool->stopping) pthread_cond_wait(&pool->nonempty, &pool->lock);
        ikd_pool_job *job = pool->resumed;
        if (job) {
            pool->resumed = job->next;
            if (!pool->resumed) pool->resumed_tail = NULL;
            pool->resumed_count--;
        } else if (pool->count == 0) {
            break; /* stopping and drained */
        } else {
            job = pool->ring[pool->head];
            pool->head = (pool->head + 1) % pool->capacity;
            pool->count--;
        }
        pool->running++;
        pthread_mutex_unlock(&pool->lock);
        job->run(job, data);
        pthread_mutex_lock(&pool->lock);
        pool->running--;
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

static void pool_free(ikd_pool *pool, int ndata)
{
    for (int i = 0; i < ndata; i++)
        if (pool->worker_destroy) pool->worker_destroy(pool->worker_data[i]);
    free(pool->worker_data);
    free(pool->threads);
    free(pool->ring);
    pthread_cond_destroy(&pool->nonempty);
    pthread_mutex_destroy(&pool->lock);
}

int ikd_pool_init(ikd_pool *pool, int workers, size_t capacity, void *(*worker_init)(void *arg, int index),
                  void (*worker_destroy)(void *data), void *arg)
{
    memset(pool, 0, sizeof *pool);
    if (workers < 1 || capacity < 1) return -1;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->nonempty, NULL);
    pool->capacity = capacity;
    pool->worker_destroy = worker_destroy;
    pool->ring = calloc(capacity, sizeof *pool->ring);
    pool->threads = calloc((size_t)workers, sizeof *pool->threads);
    pool->worker_data = calloc((size_t)workers, sizeof *pool->worker_data);
    int ndata = 0;
    if (!pool->ring || !pool->threads || !pool->worker_data) goto fail;
    for (; ndata < workers; ndata++) {
        pool->worker_data[ndata] = worker_init ? worker_init(arg, ndata) : arg;
        if (worker_init && !pool->worker_data[ndata]) goto fail;
    }
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&pool->threads[i], NULL, pool_main, pool) != 0) {
            pthread_mutex_lock(&pool->lock);
            pool->stopping = 1;
            pthread_cond_broadcast(&pool->nonempty);
            pthread_mutex_unlock(&pool->lock);
            for (int k = 0; k < i; k++) pthread_join(pool->threads[k], NULL);
            goto fail;
        }
    }
    pool->nthreads = workers;
    return 0;
fail:
    pool_free(pool, ndata);
    memset(pool, 0, sizeof *pool);
    return -1;
}

int ikd_pool_submit(ikd_pool *pool, ikd_pool_job *job)
{
    int rc = 0;
    pthread_mutex_lock(&pool->lock);
    if (pool->stopping) {
        rc = -2;
    } else if (pool->count == pool->capacity) {
        rc = -1;
    } else {
        pool->ring[(pool->head + pool->count) % pool->capacity] = job;
        pool->count++;
        pthread_cond_signal(&pool->nonempty);
    }
    pthread_mutex_unlock(&pool->lock);
    return rc;
}

int ikd_pool_resume(ikd_pool *pool, ikd_pool_job *job)
{
    int rc = 0;
    pthread_mutex_lock(&pool->lock);
    if (pool->stopping) {
        rc = -2;
    } else {
        job->next = NULL;
        if (pool->resumed_tail) pool->resumed_tail->next = job;
        else pool->resumed = job;
        pool->resumed_tail = job;
        pool->resumed_count++;
        pthread_cond_signal(&pool->nonempty);
    }
    pthread_mutex_unlock(&pool->lock);
    return rc;
}

void ikd_pool_load(ikd_pool *pool, size_t *queued, size_t *running)
{
    pthread_mutex_lock(&pool->lock);
    if (queued) *queued = pool->count;
    if (running) *running = pool->running;
    pthread_mutex_unlock(&pool->lock);
}

void ikd_pool_stop(ikd_pool *pool)
{
    if (!pool->threads || !pool->nthreads) return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = 1;
    pthread_cond_broadcast(&pool->nonempty);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->nthreads; i++) pthread_join(pool->threads[i], NULL);
    pool->joined = pool->nthreads;
    pool->nthreads = 0;
}

void ikd_pool_destroy(ikd_pool *pool)
{
    if (!pool->threads) return;
    ikd_pool_stop(pool);
    pool_free(pool, pool->joined);
    memset(pool, 0, sizeof *pool);
}
