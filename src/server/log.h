/* log.h - JSON lines on stderr: one per request (access log) and one per daemon event, filtered by level. */
#ifndef IKD_LOG_H
#define IKD_LOG_H

typedef enum { IKD_LOG_DEBUG, IKD_LOG_INFO, IKD_LOG_WARN, IKD_LOG_ERROR, IKD_LOG_OFF } ikd_log_level;

/* "debug", "info", "warn", "error", "off"; 0 or -1 when unknown. */
int ikd_log_level_from_name(const char *name, ikd_log_level *out);
void ikd_log_set_level(ikd_log_level level);
int ikd_log_enabled(ikd_log_level level);

/* One access-log line (level info; warn for 5xx). Strings may be NULL. */
typedef struct ikd_access {
    const char *method, *path, *request_id, *solver, *client;
    const char *error; /* the error reply's code ("internal_error"), or NULL */
    int status;
    unsigned long bytes;
    double duration_ms, queue_ms;
} ikd_access;
void ikd_log_access(const ikd_access *a);

/* Lines are handed to a writer thread through a bounded buffer (512 KiB):
 * logging never waits on stderr, and a line that finds the buffer full (an
 * unread pipe) is dropped and counted. Start the writer once (-1 when it
 * cannot start: lines are then written at once, as before it starts). */
int ikd_log_start(void);
/* Wake the writer for what is buffered; returns at once. */
void ikd_log_flush(void);
/* Write what is left and stop the writer, waiting at most `ms`; -1 when
 * stderr did not take it in time (the writer is left behind). */
int ikd_log_stop(long ms);
/* Lines dropped because the buffer was full. */
unsigned long ikd_log_dropped(void);

/* {"time","level","event", "detail"} with a free-text detail (may be NULL);
 * written at once, after the pending access lines. */
void ikd_log_event(ikd_log_level level, const char *event, const char *detail);

#endif
