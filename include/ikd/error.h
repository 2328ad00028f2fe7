/* ikd/error.h - the library's error codes (one table) and the fixed-size error detail struct. */
#ifndef IKD_ERROR_H
#define IKD_ERROR_H

#include <stddef.h>

/* X(enum suffix, name, default message): the codes the solver library
 * returns. The library knows no transport: the service built on it gives
 * each code its wire name and HTTP status in a table of its own. */
#define IKD_ERROR_TABLE(X)                                                         \
    X(OK, "ok", "success")                                                         \
    X(INVALID, "invalid", "a field is missing, of the wrong type or out of range") \
    X(NOMEM, "out_of_memory", "out of memory")                                     \
    X(INTERNAL, "internal", "internal error")

typedef enum ikd_code {
#define IKD_X_ENUM(name, str, msg) IKD_E_##name,
    IKD_ERROR_TABLE(IKD_X_ENUM)
#undef IKD_X_ENUM
    IKD_E__COUNT /* layers built on the library number their own codes from here up */
} ikd_code;

#define IKD_ERROR_FIELD_MAX 128
#define IKD_ERROR_MESSAGE_MAX 192

/* Error detail, fixed size so that reporting an error never allocates
 * (the model is jansson's json_error_t). */
typedef struct ikd_error {
    int code;                              /* an ikd_code (IKD_E_OK when there is no error),
                                              or a code of a layer above, >= IKD_E__COUNT */
    char field[IKD_ERROR_FIELD_MAX];       /* JSON path of the offending field, e.g.
                                              "chain.joints[1].position"; "" = whole body */
    char message[IKD_ERROR_MESSAGE_MAX];   /* human-readable, one sentence */
} ikd_error;

/* The name of a library code ("invalid"); "unknown" for any other value.
 * Never NULL. */
const char *ikd_code_name(int code);
/* The default one-line description of a library code; "" for any other
 * value. Never NULL. */
const char *ikd_strerror(int code);

/* Clear `err` to IKD_E_OK with empty field and message. */
void ikd_error_clear(ikd_error *err);
/* Fill `err` (may be NULL: then nothing happens) with `code`, `field`
 * (NULL = "") and a printf-style message (NULL = ikd_strerror(code)).
 * Strings are truncated to fit. Returns `code`. */
int ikd_error_set(ikd_error *err, int code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
