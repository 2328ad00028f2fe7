/* ikd/error.h - the one table of ikd error codes and the fixed-size error detail struct. */
#ifndef IKD_ERROR_H
#define IKD_ERROR_H

#include <stddef.h>

/* X(enum suffix, wire code string, HTTP status, default message).
 * The wire code is what the HTTP API puts in error.code; the HTTP status is
 * used by the server only (the library never speaks HTTP). */
#define IKD_ERROR_TABLE(X)                                                                 \
    X(OK, "ok", 200, "success")                                                            \
    X(MALFORMED, "malformed_request", 400, "the body is not a well-formed document")        \
    X(INVALID, "invalid_request", 400, "a field is missing, of the wrong type or out of range") \
    X(UNAUTHORIZED, "unauthorized", 401, "missing or wrong bearer token")                  \
    X(FORBIDDEN_ORIGIN, "origin_not_allowed", 403, "this Origin is not in --cors-origins")  \
    X(NOT_FOUND, "not_found", 404, "no such endpoint")                                     \
    X(METHOD, "method_not_allowed", 405, "method not allowed on this endpoint")            \
    X(TOO_LARGE, "payload_too_large", 413, "the request body is larger than the limit")    \
    X(MEDIA_TYPE, "unsupported_media_type", 415, "the body must be application/json")      \
    X(OVERLOADED, "overloaded", 503, "the solve queue is full; retry later")               \
    X(DRAINING, "shutting_down", 503, "the server is shutting down")                       \
    X(DEADLINE, "deadline_exceeded", 503, "the request waited past its deadline; retry later") \
    X(NOMEM, "internal_error", 500, "out of memory")                                       \
    X(INTERNAL, "internal_error", 500, "internal error")

typedef enum ikd_code {
#define IKD_X_ENUM(name, wire, http, msg) IKD_E_##name,
    IKD_ERROR_TABLE(IKD_X_ENUM)
#undef IKD_X_ENUM
    IKD_E__COUNT
} ikd_code;

#define IKD_ERROR_FIELD_MAX 128
#define IKD_ERROR_MESSAGE_MAX 192

/* Error detail, fixed size so that reporting an error never allocates
 * (the model is jansson's json_error_t). */
typedef struct ikd_error {
    ikd_code code;                         /* IKD_E_OK when there is no error */
    char field[IKD_ERROR_FIELD_MAX];       /* JSON path of the offending field, e.g.
                                              "chain.joints[1].position"; "" = whole body */
    char message[IKD_ERROR_MESSAGE_MAX];   /* human-readable, one sentence */
} ikd_error;

/* The wire code string of `code` ("invalid_request"); "internal_error" for
 * an unknown value. Never NULL. */
const char *ikd_code_name(ikd_code code);
/* The default one-line description of `code`. Never NULL. */
const char *ikd_strerror(ikd_code code);
/* The HTTP status the server answers `code` with. */
int ikd_code_http_status(ikd_code code);

/* Clear `err` to IKD_E_OK with empty field and message. */
void ikd_error_clear(ikd_error *err);
/* Fill `err` (may be NULL: then nothing happens) with `code`, `field`
 * (NULL = "") and a printf-style message (NULL = the default message).
 * Strings are truncated to fit. Returns `code`. */
ikd_code ikd_error_set(ikd_error *err, ikd_code code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
