/* lazy.c - a body's top-level member located without parsing it, and its array elements parsed one at a time. */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "doc_at.h"

/* ---- documents with one member left unparsed ----------------------------
 * A clip's frames are most of its body; parsed as one tree they take about
 * seven times the body's bytes. ikd_doc_find locates one top-level member
 * without parsing, ikd_doc_load_except parses everything but that member,
 * and ikd_doc_elems hands out its array elements one document at a time,
 * each freed before the next. */

static int json_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t json_skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n && json_ws(s[i])) i++;
    return i;
}

/* The offset just past the JSON value whose text starts at s[i], or
 * (size_t)-1 when the text ends first or a bracket does not match. Only
 * strings and nesting are followed: the value itself is checked when it is
 * parsed. */
static size_t json_skip_value(const char *s, size_t n, size_t i)
{
    char stack[64];
    size_t depth = 0;
    do {
        if (i >= n) return (size_t)-1;
        char c = s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i += s[i] == '\\' ? 2 : 1) {}
            if (i >= n) return (size_t)-1;
            i++;
        } else if (c == '[' || c == '{') {
            if (depth == sizeof stack) return (size_t)-1;
            stack[depth++] = c == '[' ? ']' : '}';
            i++;
        } else if (c == ']' || c == '}') {
            if (!depth || stack[depth - 1] != c) return (size_t)-1;
            depth--;
            i++;
        } else if (!depth) { /* a scalar at the top: up to a delimiter */
            while (i < n && !json_ws(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') i++;
            return i;
        } else {
            i++;
        }
    } while (depth > 0);
    return i;
}

/* 1 when the raw JSON string text s[0..n) (between its quotes) reads
 * `key` (ASCII): escapes such as \u0066 are followed. */
static int json_key_is(const char *s, size_t n, const char *key)
{
    size_t i = 0;
    for (; *key; key++) {
        if (i >= n) return 0;
        unsigned c = (unsigned char)s[i];
        if (c == '\\') {
            if (i + 1 >= n) return 0;
            char e = s[i + 1];
            if (e == 'u') {
                if (i + 6 > n) return 0;
                c = 0;
                for (int k = 2; k < 6; k++) {
                    char h = s[i + (size_t)k];
                    c = c * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : 99);
                }
                i += 6;
            } else {
                c = (unsigned char)(e == '/' || e == '"' || e == '\\' ? e : 0);
                i += 2;
            }
        } else {
            i++;
        }
        if (c != (unsigned char)*key) return 0;
    }
    return i == n;
}

/* Find top-level member `key`: 1 with its value's span; 0 when the body is
 * an object without it; -1 with err set when the body is no object, the
 * member is given twice, or the top level is malformed. */
static int json_find_member(const char *s, size_t n, const char *key, ikd_doc_span *span, ikd_error *err)
{
    size_t i = json_skip_ws(s, n, 0);
    int found = 0;
    if (i >= n || s[i] != '{') return ikd_error_set(err, IKD_E_INVALID, "", "the body must be an object"), -1;
    i = json_skip_ws(s, n, i + 1);
    if (i < n && s[i] == '}') i = n + 1; /* {} */
    while (i <= n) {
        if (i >= n || s[i] != '"') return ikd__doc_json_error_at(err, s, i, "a member's name (a string) was expected"), -1;
        size_t k0 = i + 1, k1 = json_skip_value(s, n, i);
        if (k1 == (size_t)-1) return ikd__doc_json_error_at(err, s, i, "unterminated string"), -1;
        i = json_skip_ws(s, n, k1);
        if (i >= n || s[i] != ':') return ikd__doc_json_error_at(err, s, i, "':' was expected"), -1;
        size_t v0 = json_skip_ws(s, n, i + 1), v1 = json_skip_value(s, n, v0);
        if (v1 == (size_t)-1 || v1 == v0) return ikd__doc_json_error_at(err, s, v0, "a value was expected"), -1;
        if (json_key_is(s + k0, k1 - 1 - k0, key)) {
            if (found) return ikd__doc_json_error_at(err, s, k0 - 1, "duplicate object key"), -1;
            *span = (ikd_doc_span){1, v0, v1};
            found = 1;
        }
        i = json_skip_ws(s, n, v1);
        if (i < n && s[i] == ',') {
            i = json_skip_ws(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == '}') break;
        return ikd__doc_json_error_at(err, s, i, "',' or '}' was expected"), -1;
    }
    if (i <= n) {
        i = json_skip_ws(s, n, i + 1);
        if (i != n) return ikd__doc_json_error_at(err, s, i, "end of file expected"), -1;
    }
    return found;
}

/* MessagePack: the same (the body was checked by mp_scan). */
static int mp_find_member(const unsigned char *p, size_t n, const char *key, ikd_doc_span *span, ikd_error *err)
{
    size_t i = 0, count = 0, klen = strlen(key);
    unsigned c = p[i++];
    if (c >= 0x80 && c <= 0x8f) count = c & 0x0f;
    else if (c == 0xde) count = ((size_t)p[1] << 8) | p[2], i = 3;
    else if (c == 0xdf) count = ((size_t)p[1] << 24) | ((size_t)p[2] << 16) | ((size_t)p[3] << 8) | p[4], i = 5;
    else return ikd_error_set(err, IKD_E_INVALID, "", "the body must be an object"), -1;
    int found = 0, take = 0;
    for (size_t m = 0; m < 2 * count; m++) {
        size_t end;
        ikd__doc_mp_scan(p + i, n - i, &end); /* checked whole before */
        if (m % 2 == 1 && take) {
            *span = (ikd_doc_span){1, i, i + end};
            take = 0;
        } else if (m % 2 == 0) {
            unsigned h = p[i];
            size_t so = h >= 0xa0 && h <= 0xbf ? 1 : h == 0xd9 ? 2 : h == 0xda ? 3 : h == 0xdb ? 5 : 0;
            if (so && end - so == klen && memcmp(p + i + so, key, klen) == 0) {
                if (found) return ikd_error_set(err, IKD_E_MALFORMED, "", "malformed MessagePack: \"%s\" is given twice", key), -1;
                found = take = 1;
            }
        }
        i += end;
    }
    return found;
}

/* The map `root` of the body without member number `skip` (its key and
 * value), built in this thread's zone from the body's bytes. */
static int mp_load_without(ikd_doc *doc, const char *body, size_t len, const ikd_doc_span *span, ikd_error *err)
{
    msgpack_zone *zone = ikd__doc_zone(doc);
    if (!zone) return ikd_error_set(err, IKD_E_NOMEM, "", NULL);
    msgpack_object whole;
    size_t off = 0;
    /* a copy of the body with the skipped value as an empty array would
     * cost the body's size again; instead unpack member by member */
    const unsigned char *p = (const unsigned char *)body;
    unsigned c = p[0];
    size_t count = c <= 0x8f ? (size_t)(c & 0x0f) : c == 0xde ? ((size_t)p[1] << 8) | p[2]
                                                   : ((size_t)p[1] << 24) | ((size_t)p[2] << 16) | ((size_t)p[3] << 8) | p[4];
    off = c <= 0x8f ? 1 : c == 0xde ? 3 : 5;
    msgpack_object_kv *kv = count ? msgpack_zone_malloc(zone, count * sizeof *kv) : NULL;
    if (count && !kv) return ikd_error_set(err, IKD_E_NOMEM, "", NULL);
    size_t kept = 0;
    for (size_t m = 0; m < count; m++) {
        msgpack_object k, v;
        msgpack_unpack_return rk = msgpack_unpack(body, len, &off, zone, &k);
        if (rk != MSGPACK_UNPACK_SUCCESS && rk != MSGPACK_UNPACK_EXTRA_BYTES)
            return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while unpacking the MessagePack body");
        if (off == span->start) { /* the deferred member's value: passed over */
            off = span->end;
            continue;
        }
        msgpack_unpack_return rv = msgpack_unpack(body, len, &off, zone, &v);
        if (rv != MSGPACK_UNPACK_SUCCESS && rv != MSGPACK_UNPACK_EXTRA_BYTES)
            return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while unpacking the MessagePack body");
        kv[kept++] = (msgpack_object_kv){k, v};
    }
    whole.type = MSGPACK_OBJECT_MAP;
    whole.via.map.size = (uint32_t)kept;
    whole.via.map.ptr = kv;
    ikd__doc_set_mp(doc, &whole);
    return IKD_E_OK;
}

int ikd_doc_find(ikd_encoding enc, const char *body, size_t len, const char *key, ikd_doc_span *span, ikd_error *err)
{
    *span = (ikd_doc_span){0, 0, 0};
    ikd_error_clear(err);
    if (enc == IKD_ENC_JSON) return json_find_member(body, len, key, span, err);
    size_t end;
    if (ikd__doc_mp_scan((const unsigned char *)body, len, &end) != 0 || end != len) {
        ikd_doc doc;
        ikd_doc_load(&doc, enc, body, len, err); /* it says what is wrong (the scan fails first: nothing is built) */
        ikd_doc_free(&doc);
        return -1;
    }
    return mp_find_member((const unsigned char *)body, len, key, span, err);
}

int ikd_doc_load_except(ikd_doc *doc, ikd_encoding enc, const char *body, size_t len, const ikd_doc_span *span,
                        ikd_error *err)
{
    ikd_error_clear(err);
    if (enc == IKD_ENC_MSGPACK) {
        memset(doc, 0, sizeof *doc);
        doc->enc = enc;
        return mp_load_without(doc, body, len, span, err);
    }
    /* the rest parsed from a copy whose member value is "0" and spaces:
     * every other byte, and so every line and column, stays where it was */
    char *copy = malloc(len ? len : 1);
    if (!copy) {
        memset(doc, 0, sizeof *doc);
        doc->enc = enc;
        return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while parsing the JSON body");
    }
    memcpy(copy, body, len);
    memset(copy + span->start, ' ', span->end - span->start);
    copy[span->start] = '0';
    int rc = ikd_doc_load(doc, enc, copy, len, err);
    free(copy); /* jansson keeps copies of what it needs */
    return rc;
}

int ikd_doc_elems_begin(ikd_doc_elems *it, ikd_encoding enc, const char *body, const ikd_doc_span *span)
{
    it->enc = enc;
    it->body = body;
    it->end = span->end;
    it->index = 0;
    if (enc == IKD_ENC_JSON) {
        if (body[span->start] != '[') return -1;
        it->pos = json_skip_ws(body, span->end, span->start + 1); /* past '[' */
        it->left = it->pos < span->end && body[it->pos] == ']' ? 0 : (size_t)-1;
        return 0;
    }
    const unsigned char *p = (const unsigned char *)body + span->start;
    if (*p >= 0x90 && *p <= 0x9f) it->left = *p & 0x0f, it->pos = span->start + 1;
    else if (*p == 0xdc) it->left = ((size_t)p[1] << 8) | p[2], it->pos = span->start + 3;
    else if (*p == 0xdd) it->left = ((size_t)p[1] << 24) | ((size_t)p[2] << 16) | ((size_t)p[3] << 8) | p[4], it->pos = span->start + 5;
    else return -1;
    return 0;
}

int ikd_doc_elems_next(ikd_doc_elems *it, ikd_doc *doc, ikd_error *err)
{
    memset(doc, 0, sizeof *doc);
    doc->enc = it->enc;
    ikd_error_clear(err);
    if (it->left == 0) return 0;
    if (it->enc == IKD_ENC_MSGPACK) {
        msgpack_zone *zone = ikd__doc_zone(doc);
        if (!zone) return ikd_error_set(err, IKD_E_NOMEM, "", NULL), -1;
        msgpack_object o;
        msgpack_unpack_return rc = msgpack_unpack(it->body, it->end, &it->pos, zone, &o);
        if (rc != MSGPACK_UNPACK_SUCCESS && rc != MSGPACK_UNPACK_EXTRA_BYTES)
            return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory while unpacking the MessagePack body"), -1;
        ikd__doc_set_mp(doc, &o);
        it->left--;
        it->index++;
        return 1;
    }
    const char *s = it->body;
    size_t used = 0;
    if (ikd__doc_json_at(doc, s, it->pos, it->end, &used, err) != IKD_E_OK) return -1;
    size_t i = json_skip_ws(s, it->end, it->pos + used);
    it->index++;
    if (i < it->end && s[i] == ',') {
        it->pos = json_skip_ws(s, it->end, i + 1);
    } else if (i < it->end && s[i] == ']') {
        it->left = 0;
    } else {
        ikd_doc_free(doc);
        return ikd__doc_json_error_at(err, s, i, "',' or ']' was expected"), -1;
    }
    return 1;
}
