/* json.h - the JSON encoding of the HTTP API (jansson): requests in, replies and errors out. */
#ifndef IKD_JSON_H
#define IKD_JSON_H

#include <stddef.h>

#include "buf.h"
#include "ikd/solve.h"
#include "request.h"

/* Decode a /v1/solve body into `req` (initialised by the caller; destroy it
 * whatever this returns). Checks shapes and types only; ikd_validate checks
 * values. Errors: IKD_E_MALFORMED (not JSON) or IKD_E_INVALID, with the field
 * path in `err`. */
ikd_code ikd_json_parse_solve(const char *body, size_t len, ikd_request *req, ikd_error *err);

/* Encode a solve reply. `solve_us` is the solver's wall time in microseconds. */
void ikd_json_write_solve(ikd_buf *out, const ikd_request *req, const ikd_result *res, const ikd_pose_joint *pose,
                          double solve_us);

/* Encode {"error":{"code","message","field"}}. */
void ikd_json_write_error(ikd_buf *out, const ikd_error *err);

#endif
