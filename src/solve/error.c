/* error.c - names and messages of the library's error codes, from the one table; the error detail setters. */
#include "ikd/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    const char *message;
} ikd_error_rows[] = {
#define IKD_X_ROW(code, str, msg) [IKD_E_##code] = {str, msg},
    IKD_ERROR_TABLE(IKD_X_ROW)
#undef IKD_X_ROW
};

static int ikd_code_valid(int code) { return code >= 0 && code < IKD_E__COUNT; }

const char *ikd_code_name(int code) { return ikd_code_valid(code) ? ikd_error_rows[code].name : "unknown"; }
const char *ikd_strerror(int code) { return ikd_code_valid(code) ? ikd_error_rows[code].message : ""; }

void ikd_error_clear(ikd_error *err)
{
    if (!err) return;
    err->code = IKD_E_OK;
    err->field[0] = '\0';
    err->message[0] = '\0';
}

int ikd_error_set(ikd_error *err, int code, const char *field, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    } else {
        snprintf(err->message, sizeof err->message, "%s", ikd_strerror(code));
    }
    return code;
}
