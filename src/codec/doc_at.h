/* doc_at.h - codec.c's loaders of one value at an offset, for lazy.c (internal to src/codec/). */
#ifndef IKD_DOC_AT_H
#define IKD_DOC_AT_H

#include <msgpack.h>
#include <stddef.h>

#include "codec.h"

/* The JSON value at whole[at..end) into *doc (this thread's arena; free it
 * with ikd_doc_free); *used: the bytes it took. IKD_E_MALFORMED with its
 * line and column in `whole`, or IKD_E_NOMEM. */
int ikd__doc_json_at(ikd_doc *doc, const char *whole, size_t at, size_t end, size_t *used, ikd_error *err);
/* IKD_E_MALFORMED: "malformed JSON at line L column C: what" for byte `at` of s. */
int ikd__doc_json_error_at(ikd_error *err, const char *s, size_t at, const char *what);
/* The MessagePack value at p (sizes and nesting checked): 0 with *end just
 * past it, or -1. */
int ikd__doc_mp_scan(const unsigned char *p, size_t len, size_t *end);
/* This thread's msgpack-c zone, held by *doc until ikd_doc_free; NULL out of memory. */
msgpack_zone *ikd__doc_zone(ikd_doc *doc);
/* *doc's root: a MessagePack object (in the doc's zone). */
void ikd__doc_set_mp(ikd_doc *doc, const msgpack_object *root);

#endif
