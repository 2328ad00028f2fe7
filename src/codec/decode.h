/* decode.h - solve requests from a document view: shapes, types and field paths, the same for every encoding. */
#ifndef IKD_DECODE_H
#define IKD_DECODE_H

#include "doc.h"
#include "ikd/error.h"
#include "request.h"

/* Decode one solve request from `root` into `req` (initialised by the
 * caller). `item` < 0: the body is the request; otherwise it is item `item`
 * of a batch and error field paths start with "problems[item]". Joint names
 * are copied into the request. Checks shapes and types; ikd_validate checks
 * values. */
int ikd_decode_solve(ikd_val root, long item, ikd_request *req, ikd_error *err);

/* The "problems" array of a batch envelope {"problems": [...]}. */
int ikd_decode_batch(ikd_val root, ikd_val *items, ikd_error *err);

#endif
