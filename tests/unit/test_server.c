/* test_server.c - libcheck suite: the settings table (defaults, env, flags) and the bounded worker pool. */
#include <check.h>

#include "testutil.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config.h"
#include "server/pool.h"

static int load(ikd_config *c, int argc, char **argv, char *err)
{
    FILE *devnull = fopen("/dev/null", "w");
    int rc = ikd_config_load(c, argc, argv, devnull, err, 256);
    fclose(devnull);
    return rc;
}

START_TEST(config_defaults_env_flags)
{
    ikd_config c;
    char err[256];
    char *a0[] = {"ikd"};
    unsetenv("IKD_QUEUE");
    unsetenv("IKD_LISTEN");
    ck_assert_int_eq(load(&c, 1, a0, err), 0);
    ck_assert_str_eq(c.listen, "127.0.0.1:8080");
    ck_assert_int_eq(c.queue, 1024);
    ck_assert_int_eq(c.workers, 0);
    setenv("IKD_QUEUE", "7", 1);
    ck_assert_int_eq(load(&c, 1, a0, err), 0);
    ck_assert_int_eq(c.queue, 7);
    char *a1[] = {"ikd", "--queue", "9", "--listen=[::1]:0"};
    ck_assert_int_eq(load(&c, 4, a1, err), 0); /* flags win */
    ck_assert_int_eq(c.queue, 9);
    ck_assert_str_eq(c.listen, "[::1]:0");
    unsetenv("IKD_QUEUE");
    char *a2[] = {"ikd", "--queue", "0"};
    ck_assert_int_eq(load(&c, 3, a2, err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--queue"));
    char *a2b[] = {"ikd", "--conn-buffer", "4095"}; /* one below its range */
    ck_assert_int_eq(load(&c, 3, a2b, err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--conn-buffer"));
    ck_assert_int_eq(load(&c, 1, a0, err), 0);
    ck_assert_int_eq(c.inline_us, 1000);
    char *a2c[] = {"ikd", "--inline-us", "-1"}; /* one below its range */
    ck_assert_int_eq(load(&c, 3, a2c, err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--inline-us"));
    setenv("IKD_INLINE_US", "0", 1); /* 0: every skeleton solve on the workers */
    ck_assert_int_eq(load(&c, 1, a0, err), 0);
    ck_assert_int_eq(c.inline_us, 0);
    unsetenv("IKD_INLINE_US");
    char *a3[] = {"ikd", "--bogus", "1"};
    ck_assert_int_eq(load(&c, 3, a3, err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--bogus"));
    char *a4[] = {"ikd", "--listen", "nocolon"};
    ck_assert_int_eq(load(&c, 3, a4, err), -1);
    char *a5[] = {"ikd", "--workers"};
    ck_assert_int_eq(load(&c, 2, a5, err), -1);
    char *a6[] = {"ikd", "--help"};
    ck_assert_int_eq(load(&c, 2, a6, err), 1);
    setenv("IKD_MAX_BODY", "12x", 1);
    ck_assert_int_eq(load(&c, 1, a0, err), -1);
    ck_assert_ptr_nonnull(strstr(err, "IKD_MAX_BODY"));
    unsetenv("IKD_MAX_BODY");
}
END_TEST

START_TEST(split_listen)
{
    char host[64];
    int port;
    ck_assert_int_eq(ikd_config_split_listen("127.0.0.1:80", host, sizeof host, &port), 0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 80);
    ck_assert_int_eq(ikd_config_split_listen("[::1]:0", host, sizeof host, &port), 0);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(ikd_config_split_listen(":80", host, sizeof host, &port), -1);
    ck_assert_int_eq(ikd_config_split_listen("h:70000", host, sizeof host, &port), -1);
    ck_assert_int_eq(ikd_config_split_listen("h:", host, sizeof host, &port), -1);
}
END_TEST

typedef struct gate {
    pthread_mutex_t m;
    pthread_cond_t c;
    int open;
    atomic_int ran;
} gate;

typedef struct gated_job {
    ikd_pool_job job;
    gate *g;
} gated_job;

static void gated_run(ikd_pool_job *job, void *data)
{
    gated_job *gj = (gated_job *)job;
    (void)data;
    pthread_mutex_lock(&gj->g->m);
    while (!gj->g->open) pthread_cond_wait(&gj->g->c, &gj->g->m);
    pthread_mutex_unlock(&gj->g->m);
    atomic_fetch_add(&gj->g->ran, 1);
}

START_TEST(pool_refuses_when_full_and_drains_on_destroy)
{
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    ikd_pool pool;
    ck_assert_int_eq(ikd_pool_init(&pool, 2, 3, NULL, NULL, NULL), 0);
    gated_job jobs[10];
    int accepted = 0, refused = 0;
    for (int i = 0; i < 10; i++) {
        jobs[i].job.run = gated_run;
        jobs[i].g = &g;
        int rc = ikd_pool_submit(&pool, &jobs[i].job);
        if (rc == 0) accepted++;
        else { ck_assert_int_eq(rc, -1); refused++; }
        if (i == 1) { /* let both workers pick up their jobs so the queue is empty again */
            size_t running = 0;
            for (int k = 0; k < 1000 && running < 2; k++) { ikd_pool_load(&pool, NULL, &running); usleep(1000); }
            ck_assert_uint_eq(running, 2);
        }
    }
    ck_assert_int_eq(accepted, 5); /* 2 running + 3 queued */
    ck_assert_int_eq(refused, 5);
    size_t queued, running;
    ikd_pool_load(&pool, &queued, &running);
    ck_assert_uint_eq(queued, 3);
    pthread_mutex_lock(&g.m);
    g.open = 1;
    pthread_cond_broadcast(&g.c);
    pthread_mutex_unlock(&g.m);
    ikd_pool_destroy(&pool);
    ck_assert_int_eq(atomic_load(&g.ran), 5);
}
END_TEST

static void *counting_init(void *arg, int index)
{
    atomic_int *n = arg;
    atomic_fetch_add(n, 1);
    return (void *)(long)(index + 1);
}

/* A job that records the worker data it was handed. */
typedef struct seen_job {
    ikd_pool_job job;
    atomic_long data;
} seen_job;

static void seen_run(ikd_pool_job *job, void *worker_data) { atomic_store(&((seen_job *)job)->data, (long)worker_data); }

static atomic_int destroyed_mask;
static void mark_destroyed(void *data) { atomic_fetch_or(&destroyed_mask, 1 << (int)(long)data); }

/* Every job runs with the data worker_init made for the worker running it
 * (1..4 here), and worker_destroy gets each worker's data back. */
START_TEST(pool_worker_data)
{
    atomic_int n = 0;
    ikd_pool pool;
    atomic_store(&destroyed_mask, 0);
    ck_assert_int_eq(ikd_pool_init(&pool, 4, 64, counting_init, mark_destroyed, &n), 0);
    ck_assert_int_eq(atomic_load(&n), 4);
    seen_job jobs[40];
    for (int i = 0; i < 40; i++) {
        jobs[i].job.run = seen_run;
        atomic_init(&jobs[i].data, 0);
        ck_assert_int_eq(ikd_pool_submit(&pool, &jobs[i].job), 0);
    }
    ikd_pool_destroy(&pool); /* runs every queued job first */
    for (int i = 0; i < 40; i++) {
        long d = atomic_load(&jobs[i].data);
        ck_assert_msg(d >= 1 && d <= 4, "job %d got worker data %ld", i, d);
    }
    ck_assert_int_eq(atomic_load(&destroyed_mask), 0x1e); /* bits 1..4 */
    ck_assert_int_eq(ikd_pool_init(&pool, 0, 8, NULL, NULL, NULL), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("config_pool");
    tcase_add_test(tc, config_defaults_env_flags);
    tcase_add_test(tc, split_listen);
    tcase_add_test(tc, pool_refuses_when_full_and_drains_on_destroy);
    tcase_add_test(tc, pool_worker_data);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
