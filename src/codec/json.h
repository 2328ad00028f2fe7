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

/* Decode a solve problem from an already parsed JSON object (a jansson
 * json_t *). Names point into `value`, which must outlive `req`. */
ikd_code ikd_json_parse_solve_value(void *value, ikd_request *req, ikd_error *err);

/* A parsed /v1/solve/batch body: {"problems": [ <solve body>, ... ]}. */
typedef struct ikd_json_batch {
    void *doc;    /* the whole document */
    void *items;  /* its "problems" array */
    size_t count;
} ikd_json_batch;

/* Parse and check the batch envelope; the items are decoded one by one with
 * ikd_json_batch_item. On failure nothing is left to close. */
ikd_code ikd_json_batch_open(const char *body, size_t len, ikd_json_batch *b, ikd_error *err);
/* Decode item i into `req`; error field paths start with "problems[i]". */
ikd_code ikd_json_batch_item(const ikd_json_batch *b, size_t i, ikd_request *req, ikd_error *err);
void ikd_json_batch_close(ikd_json_batch *b);

/* Encode a solve reply. `solve_us` is the solver's wall time in microseconds. */
void ikd_json_write_solve(ikd_buf *out, const ikd_request *req, const ikd_result *res, const ikd_pose_joint *pose,
                          double solve_us);

/* Encode {"error":{"code","message","field"}}. */
void ikd_json_write_error(ikd_buf *out, const ikd_error *err);

#endif
