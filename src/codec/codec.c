/* codec.c - document loading for both encodings (jansson, msgpack-c) and media types. */
#include "codec.h"
#include "doc_at.h"

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- jansson behind the document view ---- */

static ikd_doc_type js_type(const void *v)
{
    switch (json_typeof((const json_t *)v)) {
    case JSON_OBJECT: return IKD_DOC_OBJECT;
    case JSON_ARRAY: return IKD_DOC_ARRAY;
    case JSON_STRING: return IKD_DOC_STRING;
    case JSON_INTEGER: return IKD_DOC_INT;
    case JSON_REAL: return IKD_DOC_REAL;
    case JSON_TRUE:
    case JSON_FALSE: return IKD_DOC_BOOL;
    default: return IKD_DOC_NULL;
    }
}

static size_t js_size(const void *v)
{
    const json_t *j = v;
    return json_is_array(j) ? json_array_size(j) : json_object_size(j);
}

static const void *js_at(const void *v, size_t i) { return json_array_get((const json_t *)v, i); }

static const void *js_member(const void *v, size_t i, const char **key, size_t *len)
{
    void *it = json_object_iter((json_t *)v);
    while (i-- && it) it = json_object_iter_next((json_t *)v, it);
    if (!it) {
        *key = "";
        *len = 0;
        return NULL;
    }
    *key = json_object_iter_key(it);
    *len = strlen(*key);
    return json_object_iter_value(it);
}

static double js_real(const void *v) { return json_number_value((const json_t *)v); }
static long long js_integer(const void *v) { return (long long)json_integer_value((const json_t *)v); }

static const char *js_string(const void *v, size_t *len)
{
    *len = json_string_length((const json_t *)v);
    return json_string_value((const json_t *)v);
}

static int js_reals(const void *v, double *out, size_t n)
{
    const json_t *a = v;
    if (!json_is_array(a) || json_array_size(a) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_number(x)) return 0;
        out[i] = json_number_value(x);
    }
    return 1;
}

static const ikd_doc_ops json_ops = {js_type, js_size, js_at, js_member, js_real, js_integer, js_string, js_reals};

/* ---- msgpack-c behind the document view ---- */

static ikd_doc_type mp_type(const void *v)
{
    switch (((const msgpack_object *)v)->type) {
    case MSGPACK_OBJECT_NIL: return IKD_DOC_NULL;
    case MSGPACK_OBJECT_BOOLEAN: return IKD_DOC_BOOL;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return IKD_DOC_INT;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return IKD_DOC_REAL;
    case MSGPACK_OBJECT_STR: return IKD_DOC_STRING;
    case MSGPACK_OBJECT_ARRAY: return IKD_DOC_ARRAY;
    case MSGPACK_OBJECT_MAP: return IKD_DOC_OBJECT;
    default: return IKD_DOC_OTHER;
    }
}

static size_t mp_size(const void *v)
{
    const msgpack_object *o = v;
    return o->type == MSGPACK_OBJECT_ARRAY ? o->via.array.size : o->via.map.size;
}

static const void *mp_at(const void *v, size_t i) { return &((const msgpack_object *)v)->via.array.ptr[i]; }

static const void *mp_member(const void *v, size_t i, const char **key, size_t *len)
{
    const msgpack_object_kv *kv = &((const msgpack_object *)v)->via.map.ptr[i];
    if (kv->key.type == MSGPACK_OBJECT_STR) {
        *key = kv->key.via.str.ptr;
        *len = kv->key.via.str.size;
    } else {
        *key = "(non-string key)";
        *len = strlen(*key);
    }
    return &kv->val;
}

static double mp_real(const void *v)
{
    const msgpack_object *o = v;
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return (double)o->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return (double)o->via.i64;
    default: return o->via.f64;
    }
}

static long long mp_integer(const void *v)
{
    const msgpack_object *o = v;
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) return o->via.u64 > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)o->via.u64;
    return (long long)o->via.i64;
}

static const char *mp_string(const void *v, size_t *len)
{
    const msgpack_object *o = v;
    *len = o->via.str.size;
    return o->via.str.ptr;
}

static int mp_reals(const void *v, double *out, size_t n)
{
    const msgpack_object *a = v;
    if (a->type != MSGPACK_OBJECT_ARRAY || a->via.array.size != n) return 0;
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *x = &a->via.array.ptr[i];
        switch (x->type) {
        case MSGPACK_OBJECT_FLOAT64:
        case MSGPACK_OBJECT_FLOAT32: out[i] = x->via.f64; break;
        case MSGPACK_OBJECT_POSITIVE_INTEGER: out[i] = (double)x->via.u64; break;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: out[i] = (double)x->via.i64; break;
        default: return 0;
        }
    }
    return 1;
}

static const ikd_doc_ops msgpack_ops = {mp_type, mp_size, mp_at, mp_member, mp_real, mp_integer, mp_string, mp_reals};

/* ---- a per-thread arena for jansson ----
 * Parsing a request makes one small allocation per JSON value, and all of
 * them die together right after decoding. While a document is loaded, every
 * jansson allocation on this thread is bumped from a chain of blocks: the
 * first block is kept for the thread's life, the others (a big document's)
 * are freed when the document is. Freeing the document is then a reset: no
 * walk over jansson's tree (docs/performance.md has its measured share).
 * Outside a load, jansson allocates with malloc as usual. */
#define ARENA_BLOCK (256 * 1024)

typedef struct arena_block {
    struct arena_block *next; /* the block filled before this one */
    size_t size, used;        /* usable bytes after the header, bytes handed out */
    max_align_t data[];
} arena_block;

typedef struct arena {
    arena_block *kept;  /* the first block, reused by every load */
    arena_block *head;  /* the block being filled */
    int active;
} arena;

static _Thread_local arena tls_arena;

static arena_block *arena_block_new(size_t size, arena_block *next)
{
    arena_block *b = malloc(sizeof *b + size);
    if (b) *b = (arena_block){next, size, 0};
    return b;
}

/* jansson 2.14's lexer does not survive an allocation failure (it goes on
 * scanning a token it could not save, past the end of its buffer): while a
 * document is parsed, running out of memory jumps back to ikd_doc_load,
 * whose arena then frees whatever jansson had. */
static _Thread_local jmp_buf *tls_oom;

static void *arena_oom(void)
{
    if (tls_oom) longjmp(*tls_oom, 1);
    return NULL;
}

static void *arena_malloc(size_t n)
{
    arena *a = &tls_arena;
    if (!a->active) return malloc(n);
    n = (n + 15) & ~(size_t)15;
    if (!n || n > ((size_t)-1) / 2) return arena_oom();
    arena_block *b = a->head;
    if (n > b->size - b->used) {
        b = arena_block_new(n > ARENA_BLOCK ? n : ARENA_BLOCK, a->head);
        if (!b) return arena_oom();
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

/* While a load is active everything jansson frees came from the arena and
 * goes with it; otherwise jansson's memory is malloc's. */
static void arena_free(void *p)
{
    if (!tls_arena.active) free(p);
}

static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static pthread_key_t arena_key; /* frees a thread's kept block when the thread ends */

static void arena_release(void *block) { free(block); }

static void arena_install(void)
{
    pthread_key_create(&arena_key, arena_release);
    json_set_alloc_funcs(arena_malloc, arena_free);
}

/* 0 when the arena could not be set up (jansson then uses malloc). */
static int arena_begin(void)
{
    pthread_once(&arena_once, arena_install);
    arena *a = &tls_arena;
    if (!a->kept) {
        a->kept = arena_block_new(ARENA_BLOCK, NULL);
        if (!a->kept) return 0;
        pthread_setspecific(arena_key, a->kept);
    }
    a->head = a->kept;
    a->kept->used = 0;
    a->active = 1;
    return 1;
}

static void arena_end(void)
{
    arena *a = &tls_arena;
    while (a->head && a->head != a->kept) {
        arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->kept->used = 0;
    a->active = 0;
}

/* ---- a per-thread zone for msgpack-c ----
 * msgpack-c builds a document's objects in a zone; each thread keeps one
 * (its first 64 KiB chunk reused by every load, larger documents' extra
 * chunks freed when the document is), so a request costs no malloc here. */
static _Thread_local msgpack_zone *tls_zone;
static pthread_once_t zone_once = PTHREAD_ONCE_INIT;
static pthread_key_t zone_key; /* frees a thread's zone when the thread ends */

static void zone_release(void *z) { msgpack_zone_free(z); }
static void zone_install(void) { pthread_key_create(&zone_key, zone_release); }

static msgpack_zone *zone_begin(void)
{
    if (!tls_zone) {
        pthread_once(&zone_once, zone_install);
        tls_zone = msgpack_zone_new(64 * 1024);
        if (tls_zone) pthread_setspecific(zone_key, tls_zone);
    }
    return tls_zone;
}

static void zone_end(void) { msgpack_zone_clear(tls_zone); }

/* What a MessagePack head byte announces: payload bytes that follow it, elements
 * that follow (fixmap 2n, fixarray n), and for the larger forms how many bytes
 * of big-endian count follow and what that count counts. */
enum { MP_FIXED = 0, MP_BYTES, MP_ARRAY, MP_MAP, MP_BAD };
typedef struct mp_head {
    unsigned char skip, items, be, count;
} mp_head;
static mp_head mp_heads[256];
static pthread_once_t mp_heads_once = PTHREAD_ONCE_INIT;

static void mp_heads_init(void)
{
    for (unsigned c = 0; c < 256; c++) {
        mp_head h = {0, 0, 0, MP_FIXED};
        if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3) h.skip = 0; /* fixints, nil, bools */
        else if (c >= 0x80 && c <= 0x8f) h.items = (unsigned char)(2 * (c & 0x0f));
        else if (c >= 0x90 && c <= 0x9f) h.items = (unsigned char)(c & 0x0f);
        else if (c >= 0xa0 && c <= 0xbf) h.skip = (unsigned char)(c & 0x1f);
        else switch (c) {
            case 0xcc: case 0xd0: h.skip = 1; break;
            case 0xcd: case 0xd1: case 0xd4: h.skip = 2; break;
            case 0xd5: h.skip = 3; break;
            case 0xca: case 0xce: case 0xd2: h.skip = 4; break;
            case 0xd6: h.skip = 5; break;
            case 0xcb: case 0xcf: case 0xd3: h.skip = 8; break;
            case 0xd7: h.skip = 9; break;
            case 0xd8: h.skip = 17; break;
            case 0xc4: case 0xd9: h.be = 1; h.count = MP_BYTES; break; /* bin 8, str 8 */
            case 0xc5: case 0xda: h.be = 2; h.count = MP_BYTES; break; /* bin 16, str 16 */
            case 0xc6: case 0xdb: h.be = 4; h.count = MP_BYTES; break; /* bin 32, str 32 */
            case 0xc7: h.be = 1; h.skip = 1; h.count = MP_BYTES; break; /* ext 8: length, then type */
            case 0xc8: h.be = 2; h.skip = 1; h.count = MP_BYTES; break;
            case 0xc9: h.be = 4; h.skip = 1; h.count = MP_BYTES; break;
            case 0xdc: h.be = 2; h.count = MP_ARRAY; break;
            case 0xdd: h.be = 4; h.count = MP_ARRAY; break;
            case 0xde: h.be = 2; h.count = MP_MAP; break;
            case 0xdf: h.be = 4; h.count = MP_MAP; break;
            default: h.count = MP_BAD; /* 0xc1: never used */
            }
        mp_heads[c] = h;
    }
}

/* msgpack-c allocates an array's or map's slots for the size its header
 * claims before reading any element, so five bytes could ask for gigabytes.
 * This scan checks, in one pass and without allocating, that no claimed size
 * or length is larger than the bytes left (every element takes at least one),
 * that no reserved byte (0xc1) appears and that nesting stays within what
 * msgpack-c's unpacker takes (so that its "no memory" means memory). Head
 * bytes are looked up in a table (mp_heads). Returns MP_SCAN_OK or what is
 * wrong, with the offset in *at. */
enum { MP_SCAN_OK, MP_SCAN_EMPTY, MP_SCAN_LENGTH, MP_SCAN_RESERVED, MP_SCAN_DEEP };
#define MP_MAX_DEPTH 32 /* msgpack-c's MSGPACK_EMBED_STACK_SIZE */
static int mp_scan_end(const unsigned char *p, size_t len, size_t *at, size_t *end);
static int mp_scan(const unsigned char *p, size_t len, size_t *at)
{
    size_t end;
    return mp_scan_end(p, len, at, &end);
}

/* mp_scan of the value at p, which may be followed by more bytes: *end is
 * the offset just past it. */
static int mp_scan_end(const unsigned char *p, size_t len, size_t *at, size_t *end)
{
    pthread_once(&mp_heads_once, mp_heads_init);
    size_t pending[MP_MAX_DEPTH]; /* elements still expected at each open level */
    int depth = 0;
    size_t i = 0, want = 1; /* one top-level document */
    *at = 0;
    if (len == 0) return MP_SCAN_EMPTY;
    while (want > 0 || depth > 0) {
        if (want == 0) {
            want = pending[--depth];
            continue;
        }
        *at = i;
        if (i >= len) return MP_SCAN_LENGTH;
        if (p[i] == 0xcb) { /* float 64, most of a request: the common case first */
            if (len - i < 9) return MP_SCAN_LENGTH;
            i += 9;
            want--;
            continue;
        }
        mp_head h = mp_heads[p[i++]];
        size_t skip = h.skip, items = h.items;
        if (h.count != MP_FIXED) {
            if (h.count == MP_BAD) return MP_SCAN_RESERVED;
            if (len - i < h.be) return MP_SCAN_LENGTH;
            size_t n = 0;
            for (int k = 0; k < h.be; k++) n = (n << 8) | p[i++];
            if (h.count == MP_ARRAY) items = n;
            else if (h.count == MP_MAP) items = 2 * n;
            else skip += n;
        }
        if (skip > len - i || items > len - i) return MP_SCAN_LENGTH;
        i += skip;
        want--;
        if (items) {
            if (depth == MP_MAX_DEPTH) return MP_SCAN_DEEP;
            pending[depth++] = want;
            want = items;
        }
    }
    *end = i;
    return MP_SCAN_OK;
}

/* ---- loading ---- */

/* Parse JSON text into doc (this thread's arena) with jansson `flags`:
 * IKD_E_OK; IKD_E_NOMEM (err set); or -1, malformed, with *jerr saying where. */
static int json_parse(ikd_doc *doc, const char *text, size_t len, size_t flags, json_error_t *jerr, ikd_error *err)
{
    doc->arena = arena_begin();
    if (!doc->arena) return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while parsing the JSON body");
    jmp_buf oom;
    if (setjmp(oom)) {
        tls_oom = NULL;
        return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while parsing the JSON body");
    }
    tls_oom = &oom;
    json_t *root = json_loadb(text, len, flags, jerr);
    if (!root && json_error_code(jerr) == json_error_numeric_overflow) {
        /* an integer beyond 64 bits is still a valid JSON number: read
         * every integer as a double (a real beyond double range fails again) */
        arena_end();
        if (!(doc->arena = arena_begin())) arena_oom();
        root = json_loadb(text, len, flags | JSON_DECODE_INT_AS_REAL, jerr);
    }
    tls_oom = NULL;
    if (!root && json_error_code(jerr) == json_error_out_of_memory)
        return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while parsing the JSON body");
    if (!root) return -1;
    doc->json = root;
    doc->root = (ikd_val){&json_ops, root};
    return IKD_E_OK;
}

int ikd_doc_load(ikd_doc *doc, ikd_encoding enc, const char *body, size_t len, ikd_error *err)
{
    memset(doc, 0, sizeof *doc);
    doc->enc = enc;
    ikd_error_clear(err);
    if (enc == IKD_ENC_JSON) {
        json_error_t jerr;
        int rc = json_parse(doc, body, len, JSON_REJECT_DUPLICATES, &jerr, err);
        if (rc >= 0) return rc;
        return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed JSON at line %d column %d: %s", jerr.line, jerr.column,
                             jerr.text);
    }
    size_t at;
    switch (mp_scan((const unsigned char *)body, len, &at)) {
    case MP_SCAN_EMPTY: return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed MessagePack: the body is empty");
    case MP_SCAN_LENGTH:
        return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed MessagePack: the value at byte %zu runs past the body",
                             at);
    case MP_SCAN_RESERVED:
        return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed MessagePack: byte %zu is 0xc1, which is never used", at);
    case MP_SCAN_DEEP:
        return ikd_error_set(err, IKD_E_MALFORMED, "", "MessagePack nested deeper than %d levels (at byte %zu)",
                             MP_MAX_DEPTH, at);
    default: break;
    }
    msgpack_zone *zone = zone_begin();
    if (!zone) return ikd_error_set(err, IKD_E_NOMEM, "", NULL);
    doc->mp_zone = 1;
    size_t off = 0;
    msgpack_unpack_return rc = msgpack_unpack(body, len, &off, zone, &doc->mp);
    if (rc == MSGPACK_UNPACK_EXTRA_BYTES)
        return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed MessagePack: %zu bytes after the document",
                             len - off);
    if (rc == MSGPACK_UNPACK_CONTINUE || (rc == MSGPACK_UNPACK_SUCCESS && len == 0))
        return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed MessagePack: truncated after %zu bytes", len);
    /* sizes and nesting were checked above: "no memory" is memory */
    if (rc == MSGPACK_UNPACK_NOMEM_ERROR)
        return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while unpacking the MessagePack body");
    if (rc != MSGPACK_UNPACK_SUCCESS)
        return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed MessagePack (or nested too deep)");
    doc->root = (ikd_val){&msgpack_ops, &doc->mp};
    return IKD_E_OK;
}

void ikd_doc_free(ikd_doc *doc)
{
    if (doc->arena) arena_end(); /* the whole tree goes with the arena */
    else if (doc->json) json_decref((json_t *)doc->json);
    if (doc->mp_zone) zone_end();
    memset(doc, 0, sizeof *doc);
}

/* ---- media types ---- */

static int media_is(const char *v, size_t n, const char *type)
{
    return n == strlen(type) && strncasecmp(v, type, n) == 0;
}

static int msgpack_type(const char *v, size_t n)
{
    return media_is(v, n, "application/msgpack") || media_is(v, n, "application/x-msgpack") ||
           media_is(v, n, "application/vnd.msgpack");
}

int ikd_encoding_from_content_type(const char *ct)
{
    if (!ct) return IKD_ENC_JSON; /* absent: assume JSON (curl --data-binary without -H) */
    while (*ct == ' ' || *ct == '\t') ct++;
    size_t n = strcspn(ct, "; \t");
    if (media_is(ct, n, "application/json")) return IKD_ENC_JSON;
    if (msgpack_type(ct, n)) return IKD_ENC_MSGPACK;
    return -1;
}

ikd_encoding ikd_encoding_from_accept(const char *accept, ikd_encoding fallback)
{
    /* the first listed type ikd can produce wins (q-values are not weighed) */
    for (const char *p = accept; p && *p;) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, ";, \t");
        if (msgpack_type(p, n)) return IKD_ENC_MSGPACK;
        if (media_is(p, n, "application/json")) return IKD_ENC_JSON;
        p += strcspn(p, ",");
    }
    return fallback;
}

/* ---- for lazy.c: one value at a time ------------------------------------ */

int ikd__doc_json_error_at(ikd_error *err, const char *s, size_t at, const char *what)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < at; i++) {
        if (s[i] == '\n') line++, col = 1;
        else col++;
    }
    return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed JSON at line %d column %d: %s", line, col, what);
}

int ikd__doc_json_at(ikd_doc *doc, const char *whole, size_t at, size_t end, size_t *used, ikd_error *err)
{
    memset(doc, 0, sizeof *doc);
    doc->enc = IKD_ENC_JSON;
    json_error_t jerr;
    int rc = json_parse(doc, whole + at, end - at, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY,
                        &jerr, err);
    if (rc < 0) return ikd__doc_json_error_at(err, whole, at + (size_t)jerr.position, jerr.text);
    *used = (size_t)jerr.position;
    return rc;
}

int ikd__doc_mp_scan(const unsigned char *p, size_t len, size_t *end)
{
    size_t at;
    return mp_scan_end(p, len, &at, end) == MP_SCAN_OK ? 0 : -1;
}

msgpack_zone *ikd__doc_zone(ikd_doc *doc)
{
    msgpack_zone *z = zone_begin();
    if (z) doc->mp_zone = 1;
    return z;
}

void ikd__doc_set_mp(ikd_doc *doc, const msgpack_object *root)
{
    doc->mp = *root;
    doc->root = (ikd_val){&msgpack_ops, &doc->mp};
}
