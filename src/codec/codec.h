/* codec.h - bodies in either encoding: load a document, tell encodings from media types. */
#ifndef IKD_CODEC_H
#define IKD_CODEC_H

#include <msgpack.h>
#include <stddef.h>

#include "decode.h"
#include "emit.h"

/* A decoded body and what owns its memory. */
typedef struct ikd_doc {
    ikd_encoding enc;
    ikd_val root;
    void *json;            /* JSON: the jansson root */
    msgpack_object mp;     /* MessagePack: msgpack-c's root, in this thread's zone */
    int mp_zone;           /* MessagePack: the zone holds this document until freed */
    int arena;             /* JSON: jansson allocates from this thread's arena until freed */
} ikd_doc;

/* Parse `body` (syntax only). Errors: IKD_E_MALFORMED with a message saying
 * where. Free the document with ikd_doc_free whatever this returns, on the
 * same thread, before loading another (JSON values come from a per-thread
 * arena, MessagePack objects from a per-thread msgpack-c zone, in between). */
int ikd_doc_load(ikd_doc *doc, ikd_encoding enc, const char *body, size_t len, ikd_error *err);
void ikd_doc_free(ikd_doc *doc);

/* Where one top-level member's value lies in a body (byte offsets). */
typedef struct ikd_doc_span {
    int found;
    size_t start, end;
} ikd_doc_span;

/* Where top-level member `key` lies in a body, without parsing it: 1 with
 * *span; 0 when the body is an object without it; -1 with err set when
 * the body is malformed at its top level (line and column), no object,
 * or names `key` twice. Allocates nothing (JSON: escaped names are read). */
int ikd_doc_find(ikd_encoding enc, const char *body, size_t len, const char *key, ikd_doc_span *span, ikd_error *err);
/* ikd_doc_load of every member but the one at *span (JSON: it reads as 0;
 * MessagePack: it is left out). JSON parses a copy of the body (its bytes
 * are allocated for the while). */
int ikd_doc_load_except(ikd_doc *doc, ikd_encoding enc, const char *body, size_t len, const ikd_doc_span *span,
                        ikd_error *err);

/* The elements of an array at a span (ikd_doc_find), each loaded as a
 * document of its own (free it with ikd_doc_free before the next, on the
 * same thread; any other document must be freed before the first). */
typedef struct ikd_doc_elems {
    ikd_encoding enc;
    const char *body;
    size_t pos, end; /* the next element's offset; the array's end */
    size_t left;     /* elements still to come (JSON: (size_t)-1 until the last) */
    size_t index;    /* elements handed out */
} ikd_doc_elems;

/* 0; -1 when the value at the span is no array. */
int ikd_doc_elems_begin(ikd_doc_elems *it, ikd_encoding enc, const char *body, const ikd_doc_span *span);
/* The next element into *doc: 1; 0 after the last; -1 with err set (a
 * malformed element, with its line and column, or out of memory). */
int ikd_doc_elems_next(ikd_doc_elems *it, ikd_doc *doc, ikd_error *err);

/* The encoding a Content-Type names: JSON (application/json, or absent) or
 * MessagePack (application/msgpack, application/x-msgpack, application/vnd.msgpack).
 * -1 for anything else. */
int ikd_encoding_from_content_type(const char *content_type);
/* The reply encoding an Accept header asks for; `fallback` when it names
 * neither (or is absent, or is a wildcard). */
ikd_encoding ikd_encoding_from_accept(const char *accept, ikd_encoding fallback);

#endif
