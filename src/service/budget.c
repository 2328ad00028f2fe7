/* budget.c - the memory budget of a call: bodies, decoded documents and replies charged to --memory-budget. */
#include "budget.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>

#include "../codec/gltf.h"
#include "clip.h"
#include "reply.h"
#include "wire.h"

/* A body's decoded document (jansson's tree, msgpack-c's objects) is
 * charged to the memory budget with the body, as this many times the
 * body's bytes, until it is freed: measured on clip and batch bodies at
 * 6.1-6.3 (compact JSON) and 3.6 (MessagePack) with mallinfo2, rounded up.
 * Whitespace makes a JSON body's tree smaller per byte, so the estimate
 * only errs high. */
#define IKD_DECODE_FACTOR_JSON 7
#define IKD_DECODE_FACTOR_MSGPACK 4
/* A clip's frames, in a body over IKD_CLIP_WHOLE_MAX, are parsed one at a
 * time and kept packed (ikd_clip_open):
 * its decoding holds a copy of a JSON body (the rest is parsed from it)
 * and the packed goals (a 6-DoF goal: 72 bytes, about 0.4 of its JSON and
 * 0.8 of its MessagePack), so twice a JSON body and once a MessagePack one;
 * the members other than frames are charged as above when they are parsed
 * (clip_reserve). */
#define IKD_DECODE_FACTOR_CLIP_JSON 2
/* An imported file: its parse (a BVH's values as doubles, about its own
 * size) and its reply (poses in JSON, about four times a BVH's text). A
 * GLB's factor applies to what its import decodes (ikd_gltf_glb_weight:
 * the JSON chunk, the skins' and animations' data), not to its meshes
 * and pictures, which are only held as the body. */
#define IKD_DECODE_FACTOR_IMPORT 6
#define IKD_DECODE_FACTOR_CLIP_MSGPACK 1

/* Freed decoded documents this large or larger are handed back to the
 * system at once (malloc_trim), so that a big clip's tree does not stay
 * in the process' resident memory after it is gone. */
#define IKD_TRIM_AFTER (4u << 20)

/* ---- the memory budget --------------------------------------------------
 * Request bodies and replies are charged to --memory-budget while a call
 * holds them (replies until libmicrohttpd has sent them: the call ends
 * then), so a few clients that send big bodies or never read big replies
 * cannot take the process past its memory limit. */

/* Charge `n` bytes to the call; 0 when that would pass the budget (unless
 * `force`: a small reply that is already built). */
int ikd_budget_charge(ikd_call *c, size_t n, int force)
{
    ikd_service *s = c->svc;
    size_t before = atomic_fetch_add(&s->held, n);
    if (!force && s->budget && before + n > s->budget) {
        atomic_fetch_sub(&s->held, n);
        return 0;
    }
    c->charged += n;
    return 1;
}

void ikd_budget_release(ikd_call *c, size_t n)
{
    atomic_fetch_sub(&c->svc->held, n);
    c->charged -= n;
}

/* What the decoded document of an n-byte body is charged as. */
size_t ikd_budget_decode_estimate(const ikd_call *c, size_t n)
{
    int mp = c->in_enc == IKD_ENC_MSGPACK;
    if (c->route && c->route->id == IKD_ROUTE_IMPORT) {
        size_t w = c->body.data && c->body.len == n ? ikd_gltf_glb_weight(c->body.data, n) : 0;
        if (!w) w = n;
        return w > SIZE_MAX / IKD_DECODE_FACTOR_IMPORT ? SIZE_MAX : w * IKD_DECODE_FACTOR_IMPORT;
    }
    if (c->route && c->route->id == IKD_ROUTE_CLIP && n > ikd_clip_whole_max(&c->svc->limits))
        return n * (mp ? IKD_DECODE_FACTOR_CLIP_MSGPACK : IKD_DECODE_FACTOR_CLIP_JSON);
    return n * (mp ? IKD_DECODE_FACTOR_MSGPACK : IKD_DECODE_FACTOR_JSON);
}

/* The decoded document is freed: its charge goes, and a big one's memory
 * goes back to the system. */
void ikd_budget_decoded(ikd_call *c)
{
    size_t n = c->decode_charge;
    if (!n) return;
    ikd_budget_release(c, n);
    c->decode_charge = 0;
#if defined(__GLIBC__)
    if (n >= IKD_TRIM_AFTER) malloc_trim(0);
#endif
}

/* The body's limit on this route and the flag that sets it. */
long ikd_budget_body_limit(const ikd_call *c)
{
    int k = c->route ? c->route->big_body : 0;
    return k == 2 ? c->svc->max_import_body : k == 1 ? c->svc->max_clip_body : c->svc->max_body;
}

const char *ikd_budget_body_flag(const ikd_call *c)
{
    int k = c->route ? c->route->big_body : 0;
    return k == 2 ? "--max-import-body" : k == 1 ? "--max-clip-body" : "--max-body";
}

ikd_call_next ikd_budget_over(ikd_call *c, size_t want)
{
    ikd_service *s = c->svc;
    s->hooks.rejected(s->hooks.ctx, IKD_REJECT_MEMORY);
    return ikd_call_error(c, IKD_E_OVERLOADED,
                        "the memory budget is in use (%zu more bytes wanted, %zu of %zu held, --memory-budget); "
                        "retry later",
                        want, ikd_service_held(s), s->budget);
}

/* A body of n bytes and its decoded document (est bytes; 0: not known
 * yet, a GLB's import before its body is read) could never fit the budget. */
ikd_call_next ikd_budget_never_fits(ikd_call *c, size_t n, size_t est)
{
    ikd_service *s = c->svc;
    s->hooks.rejected(s->hooks.ctx, IKD_REJECT_MEMORY);
    if (!est)
        return ikd_call_error(c, IKD_E_TOO_LARGE, "a file of %zu bytes could never fit --memory-budget (%zu bytes)", n,
                              s->budget);
    if (c->route && c->route->id == IKD_ROUTE_IMPORT)
        return ikd_call_error(c, IKD_E_TOO_LARGE,
                              "a file of %zu bytes and its import (about %zu bytes) could never fit --memory-budget "
                              "(%zu bytes)", n, est, s->budget);
    return ikd_call_error(c, IKD_E_TOO_LARGE,
                        "a body of %zu bytes and its decoded document (about %zu bytes) could never fit "
                        "--memory-budget (%zu bytes); send it in parts or as MessagePack",
                        n, est, s->budget);
}

/* Charge a body of n bytes' decoded document: 1, else the answer is set
 * (413 when it could never fit, 503 when it does not fit now). */
int ikd_budget_charge_decode(ikd_call *c, size_t n)
{
    ikd_service *s = c->svc;
    size_t est = ikd_budget_decode_estimate(c, n);
    if (s->budget && (est > s->budget || n > s->budget - est)) {
        ikd_budget_never_fits(c, n, est);
        return 0;
    }
    if (!ikd_budget_charge(c, est, 0)) {
        ikd_budget_over(c, est);
        return 0;
    }
    c->decode_charge = est;
    return 1;
}

/* An import that may be a GLB (call.h's decode_later) is charged its
 * decoded document on the worker, once its body is read: the estimate
 * parses its JSON chunk, which is no work for libmicrohttpd's thread.
 * 1 (charged, or nothing to charge), else the answer is set. */
int ikd_budget_charge_late(ikd_call *c)
{
    return !c->decode_later || ikd_budget_charge_decode(c, c->body.len);
}

/* Charge a reply of about est bytes before solving: 1, else the answer is
 * set: 413 on `field` (with `hint`) when it could never fit, 503 when it
 * does not fit now. */
int ikd_budget_charge_reply(ikd_call *c, size_t est, const char *field, const char *hint)
{
    ikd_service *s = c->svc;
    if (s->budget && est > s->budget) {
        s->hooks.rejected(s->hooks.ctx, IKD_REJECT_MEMORY);
        c->reply_type = NULL;
        c->outcome.error = IKD_E_TOO_LARGE;
        c->status = ikd_reply_errorf(&c->reply, c->out_enc, IKD_E_TOO_LARGE, field,
                                     "the reply would take about %zu bytes, more than --memory-budget (%zu); %s", est,
                                     s->budget, hint);
        return 0;
    }
    if (!ikd_budget_charge(c, est, 0)) {
        ikd_budget_over(c, est);
        return 0;
    }
    return 1;
}

/* A clip's members other than frames are about to be parsed whole: their
 * tree is charged too (ikd_clip_reserve). */
int ikd_budget_clip_reserve(void *ctx, size_t body_bytes, ikd_error *err)
{
    ikd_call *c = ctx;
    ikd_service *s = c->svc;
    size_t n = body_bytes * (c->in_enc == IKD_ENC_MSGPACK ? IKD_DECODE_FACTOR_MSGPACK : IKD_DECODE_FACTOR_JSON);
    if (s->budget && c->charged + n > s->budget) {
        s->hooks.rejected(s->hooks.ctx, IKD_REJECT_MEMORY);
        return ikd_error_set(err, IKD_E_TOO_LARGE, "", "the clip's members other than frames (%zu bytes) could never be "
                             "parsed within --memory-budget (%zu bytes)", body_bytes, s->budget);
    }
    if (!ikd_budget_charge(c, n, 0)) {
        s->hooks.rejected(s->hooks.ctx, IKD_REJECT_MEMORY);
        return ikd_error_set(err, IKD_E_OVERLOADED, "", "the memory budget is in use (%zu more bytes wanted, %zu of %zu "
                             "held, --memory-budget); retry later", n, ikd_service_held(s), s->budget);
    }
    c->decode_charge += n;
    return 0;
}

