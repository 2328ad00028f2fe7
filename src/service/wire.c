/* wire.c - the one table mapping every error code to its wire name, HTTP status and default message. */
#include "wire.h"

static const struct {
    const char *wire;
    int status;
    const char *message;
} rows[IKD_E__SERVICE_END] = {
    /* the library's codes (ikd/error.h) */
    [IKD_E_OK] = {"ok", 200, "success"},
    [IKD_E_INVALID] = {"invalid_request", 400, "a field is missing, of the wrong type or out of range"},
    [IKD_E_NOMEM] = {"internal_error", 500, "out of memory"},
    [IKD_E_INTERNAL] = {"internal_error", 500, "internal error"},
    /* the codec's */
    [IKD_E_MALFORMED] = {"malformed_request", 400, "the body is not a well-formed document"},
    [IKD_E_UNKNOWN_SKELETON] = {"unknown_skeleton", 409,
                                "this instance does not hold that skeleton: send the skeleton again (POST /v1/skeletons)"},
/* the service's */
#define IKD_X_ROW(name, wire, http, msg) [IKD_E_##name] = {wire, http, msg},
    IKD_SERVICE_ERROR_TABLE(IKD_X_ROW)
#undef IKD_X_ROW
};

_Static_assert(IKD_E__COUNT == 4 && IKD_E__CODEC_END == 6, "a new library or codec code needs its row above");

static int known(int code) { return code >= 0 && code < IKD_E__SERVICE_END && rows[code].wire; }

const char *ikd_wire_code(int code) { return known(code) ? rows[code].wire : "internal_error"; }
int ikd_wire_status(int code) { return known(code) ? rows[code].status : 500; }
const char *ikd_wire_message(int code) { return known(code) ? rows[code].message : "internal error"; }
