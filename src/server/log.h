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
    int status;
    unsigned long bytes;
    double duration_ms, queue_ms;
} ikd_access;
void ikd_log_access(const ikd_access *a);

/* Access lines are buffered per thread and written in blocks; this writes
 * every pending line now (the daemon calls it a few times a second). */
void ikd_log_flush(void);

/* {"time","level","event", "detail"} with a free-text detail (may be NULL);
 * written at once, after the pending access lines. */
void ikd_log_event(ikd_log_level level, const char *event, const char *detail);

#endif
