/* main.c - the ikd daemon: load settings, start serving, drain gracefully on SIGTERM/SIGINT. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "http.h"
#include "log.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    /* Requests allocate and free blocks of up to a few hundred kB (batch items,
     * msgpack-c's zone, big replies). By default glibc hands such memory back
     * to the kernel on free (heap trim above 128 kB, mmap above its dynamic
     * threshold) and faults the pages in again on the next request (a large
     * share of a batch loop's time went to sys: docs/performance.md). Up to
     * 4 MB of free heap now stays with each malloc arena; beyond that, and for blocks over 4 MB (huge bodies), memory
     * goes back at once, and the periodic malloc_trim below returns the rest
     * of what lies free inside the heaps. */
    mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);

    ikd_config cfg;
    char err[512];
    int rc = ikd_config_load(&cfg, argc, argv, stdout, err, sizeof err);
    if (rc == 1) return 0;
    if (rc < 0) {
        fprintf(stderr, "ikd: %s\n", err);
        return 2;
    }

    ikd_log_level level = IKD_LOG_INFO;
    ikd_log_level_from_name(cfg.log_level, &level);
    ikd_log_set_level(level);

    /* Signals are taken synchronously by this thread only; every other thread
     * inherits the blocked mask. SIGPIPE is ignored (a vanished client). */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    static ikd_http h;
    if (ikd_http_start(&h, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "ikd: %s\n", err);
        return 1;
    }
    printf("ikd listening on %s\n", h.url);
    fflush(stdout);
    ikd_log_event(IKD_LOG_INFO, "listening", h.url);

    /* wait for a signal, writing buffered access lines four times a second and
     * handing freed heap back to the system every two seconds (one huge body
     * must not keep the process large) */
    int sig, ticks = 0;
    struct timespec quarter = {0, 250 * 1000000L};
    while ((sig = sigtimedwait(&set, NULL, &quarter)) < 0) {
        ikd_log_flush();
        if (++ticks % 8 == 0) malloc_trim(0);
    }
    ikd_log_event(IKD_LOG_INFO, "draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    ikd_http_drain(&h);

    /* Finish what was accepted, within the grace period; a second signal ends it at once. */
    double deadline = mono_s() + (double)cfg.shutdown_grace;
    struct timespec tick = {0, 10 * 1000000L};
    int forced = 0;
    while (ikd_http_active(&h) > 0 && mono_s() < deadline) {
        ikd_log_flush();
        if (sigtimedwait(&set, NULL, &tick) > 0) {
            forced = 1;
            break;
        }
    }
    long left = ikd_http_active(&h);
    char detail[96];
    snprintf(detail, sizeof detail, "%s; %ld request(s) unfinished", forced ? "second signal" : "drained", left);
    ikd_log_event(left ? IKD_LOG_WARN : IKD_LOG_INFO, "exit", detail);
    if (forced) _exit(0);
    ikd_http_stop(&h);
    ikd_log_flush();
    return 0;
}
