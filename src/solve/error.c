/* error.c - names, messages and HTTP statuses of the ikd error codes, from the one table. */
#include "ikd/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *wire;
    int http;
    const char *message;
} ikd_error_rows[] = {
#define IKD_X_ROW(name, wire, http, msg) {wire, http, msg},
    IKD_ERROR_TABLE(IKD_X_ROW)
#undef IKD_X_ROW
};

static int ikd_code_valid(ikd_code code) { return (int)code >= 0 && code < IKD_E__COUNT; }

const char *ikd_code_name(ikd_code code) { return ikd_code_valid(code) ? ikd_error_rows[code].wire : "internal_error"; }
const char *ikd_strerror(ikd_code code) { return ikd_code_valid(code) ? ikd_error_rows[code].message : "internal error"; }
int ikd_code_http_status(ikd_code code) { return ikd_code_valid(code) ? ikd_error_rows[code].http : 500; }

void ikd_error_clear(ikd_error *err)
{
    if (!err) return;
    err->code = IKD_E_OK;
    err->field[0] = '\0';
    err->message[0] = '\0';
}

ikd_code ikd_error_set(ikd_error *err, ikd_code code, const char *field, const char *fmt, ...)
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
