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

/* Wait until `done` holds or `until` (mono_s) passes, writing log lines;
 * SIGTERM or SIGINT ends the wait at once (returns 1), SIGHUP is ignored. */
static int wait_until(ikd_http *h, double until, int (*done)(ikd_http *), sigset_t *set)
{
    struct timespec tick = {0, 10 * 1000000L};
    while (!done(h) && mono_s() < until) {
        ikd_log_flush();
        int sig = sigtimedwait(set, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) return 1;
    }
    return 0;
}

static int never(ikd_http *h) { return (void)h, 0; }
static int idle(ikd_http *h) { return ikd_http_busy(h) == 0; }

/* The drain after SIGTERM/SIGINT (http.h lists its steps): keep accepting
 * for --drain-delay, close the listener, let what was accepted finish within
 * --shutdown-grace, then stop what is left (solves stop, queued requests get
 * 503, with a second for those answers to go out) and exit. A second signal
 * exits at once: status 0 when nothing was left, else 1. */
static int drain(ikd_http *h, const ikd_config *cfg, sigset_t *set)
{
    ikd_http_drain(h);
    int forced = wait_until(h, mono_s() + (double)cfg->drain_delay, never, set);
    ikd_http_close_listener(h);
    double grace_end = mono_s() + (double)cfg->shutdown_grace;
    if (!forced) forced = wait_until(h, grace_end, idle, set);
    int aborted = !forced && ikd_http_busy(h) > 0;
    if (aborted) {
        ikd_log_event(IKD_LOG_WARN, "grace_over", "stopping running solves; queued requests get 503");
        ikd_http_abort(h);
        forced = wait_until(h, mono_s() + 1.0, idle, set);
    }
    long left = ikd_http_busy(h);
    char detail[128];
    snprintf(detail, sizeof detail, "%s; %ld request(s) or connection(s) unfinished",
             forced ? "second signal" : aborted ? "grace over" : "drained", left);
    ikd_log_event(left ? IKD_LOG_WARN : IKD_LOG_INFO, "exit", detail);
    if (forced) {
        ikd_log_stop(200);
        _exit(left ? 1 : 0);
    }
    ikd_http_stop(h);
    return 0;
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
    ikd_log_start(); /* on failure lines are written directly */

    /* Signals are taken synchronously by this thread only; every other thread
     * inherits the blocked mask. SIGPIPE is ignored (a vanished client).
     * SIGHUP is logged and ignored: ikd reads no configuration file and logs
     * to stderr, so there is nothing to reload or reopen, and a hang-up of
     * the terminal it was started from must not stop it. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
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
    while ((sig = sigtimedwait(&set, NULL, &quarter)) < 0 || sig == SIGHUP) {
        if (sig == SIGHUP) ikd_log_event(IKD_LOG_INFO, "sighup", "ignored (no configuration file; logs go to stderr)");
        ikd_log_flush();
        if (++ticks % 8 == 0) malloc_trim(0);
    }
    ikd_log_event(IKD_LOG_INFO, "draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    rc = drain(&h, &cfg, &set);
    ikd_log_stop(1000); /* an unread stderr must not hold the exit */
    return rc;
}
