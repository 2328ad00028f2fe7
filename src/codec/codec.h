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

/* The encoding a Content-Type names: JSON (application/json, or absent) or
 * MessagePack (application/msgpack, application/x-msgpack, application/vnd.msgpack).
 * -1 for anything else. */
int ikd_encoding_from_content_type(const char *content_type);
/* The reply encoding an Accept header asks for; `fallback` when it names
 * neither (or is absent, or is a wildcard). */
ikd_encoding ikd_encoding_from_accept(const char *accept, ikd_encoding fallback);

#endif
