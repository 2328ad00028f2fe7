/* batch.c - POST /v1/solve/batch: decode every item, solve ranges of items, write the replies in order. */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "../codec/field.h"
#include "reply.h"
#include "wire.h"

/* Decode skeleton item i into a new it->skel; 0, or -1 out of memory (a bad
 * item keeps its error in it->err). */
static int open_skeleton(const ikd_api_limits *lim, ikd_val v, size_t i, ikd_batch_item *it)
{
    ikd_batch_skel *k = it->skel = calloc(1, sizeof *k);
    if (!k) return -1;
    ikd_api_skel_init(&k->req, lim);
    if (ikd_api_skel_decode(v, lim, (long)i, &k->req, &it->err) != IKD_E_OK) return 0;
    size_t n = k->req.skeleton.count;
    char *m = malloc(n * (sizeof *k->local + sizeof *k->pose) + k->req.goal_count * sizeof *k->gr);
    if (!m) return -1;
    k->local = (ikd_quat *)m;
    k->pose = (ikd_pose_joint *)(m + n * sizeof *k->local);
    k->gr = (ikd_goal_result *)(m + n * (sizeof *k->local + sizeof *k->pose));
    return 0;
}

static void skel_destroy(ikd_batch_skel *k)
{
    if (!k) return;
    ikd_skel_request_destroy(&k->req);
    free(k->local);
    free(k);
}

int ikd_batch_open(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                       ikd_encoding out_enc, const char *body, size_t len, ikd_batch *b, ikd_buf *out)
{
    ikd_error err;
    ikd_doc doc;
    ikd_val items;
    int status = 0;
    memset(b, 0, sizeof *b);
    b->deadline_ns = deadline_ns;
    if (ikd_doc_load(&doc, in_enc, body, len, &err) != IKD_E_OK || ikd_decode_batch(doc.root, &items, &err) != IKD_E_OK) {
        b->error = err.code;
        status = ikd_reply_error_body(out, out_enc, &err);
        goto done;
    }
    b->count = items.ops->size(items.v);
    if (b->count > lim->max_batch) {
        b->error = IKD_E_TOO_LARGE;
        status = ikd_reply_errorf(out, out_enc, IKD_E_TOO_LARGE, "problems",
                               "at most %zu problems per batch (--max-batch), got %zu", lim->max_batch, b->count);
        b->count = 0;
        goto done;
    }
    size_t joints = 0;
    b->items = malloc((b->count ? b->count : 1) * sizeof *b->items); /* every item is set up below */
    b->joints.cap = 3 * b->count;
    b->joints.joints = malloc((b->joints.cap ? b->joints.cap : 1) * sizeof *b->joints.joints);
    if (!b->items || !b->joints.joints) {
        b->count = 0; /* no item set up yet: nothing for destroy to walk */
        goto nomem;
    }
    ikd_request fresh; /* set up once, copied into every item */
    ikd_api_request_init(&fresh, lim);
    fresh.pool = &b->joints;
    for (size_t i = 0; i < b->count; i++) {
        ikd_batch_item *it = &b->items[i];
        it->req = fresh;
        it->skel = NULL;
        ikd_error_clear(&it->err);
        ikd_val v = ikd_val_at(items, i);
        if (ikd_field_member(v, "skeleton").v) { /* a skeleton problem */
            if (open_skeleton(lim, v, i, it) != 0) {
                b->count = i + 1; /* the items set up so far, this one included */
                goto nomem;
            }
            continue;
        }
        if (ikd_decode_solve(v, (long)i, &it->req, &it->err) == IKD_E_OK)
            ikd_api_check(&it->req, lim, (long)i, &it->err);
        if (it->err.code == IKD_E_OK) joints += it->req.problem.joint_count;
    }
    /* not zeroed: ikd_solve writes every joint of an item it solves, and items
     * that fail are answered with their error, never their pose */
    b->poses = malloc((joints ? joints : 1) * sizeof *b->poses);
    if (!b->poses) goto nomem;
    for (size_t i = 0, at = 0; i < b->count; i++) {
        if (b->items[i].err.code != IKD_E_OK || b->items[i].skel) continue;
        b->items[i].pose = b->poses + at;
        at += b->items[i].req.problem.joint_count;
    }
    goto done;
nomem:
    ikd_batch_destroy(b);
    b->error = IKD_E_NOMEM;
    status = ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", NULL);
done:
    ikd_doc_free(&doc);
    return status;
}

/* A skeleton item's solve, with scratch of its own (a skeleton's system
 * is larger than a worker's chain scratch). */
static void solve_skeleton(const ikd_batch *b, ikd_batch_item *it)
{
    ikd_batch_skel *k = it->skel;
    size_t wsize = ikd_multi_workspace_size(k->req.skeleton.count, k->req.goal_count);
    void *work = malloc(wsize);
    if (!work) {
        ikd_error_set(&it->err, IKD_E_NOMEM, "", "out of memory for the skeleton's solve");
        return;
    }
    k->req.problem.deadline_ns = b->deadline_ns;
    ikd_multi_solve(&k->req.problem, work, wsize, k->local, k->pose, k->gr, &k->res, &it->err);
    free(work);
}

void ikd_batch_solve(ikd_batch *b, size_t lo, size_t hi, ikd_api_scratch *s)
{
    unsigned long long t0 = ikd_clock_ns(); /* one clock read per item: each solve ends where the next begins */
    for (size_t i = lo; i < hi && i < b->count; i++) {
        ikd_batch_item *it = &b->items[i];
        if (it->err.code != IKD_E_OK) continue;
        if (it->skel) {
            solve_skeleton(b, it);
        } else {
            it->req.problem.deadline_ns = b->deadline_ns;
            ikd_solve(&it->req.problem, s->work, s->work_size, it->pose, &it->res, &it->err);
        }
        unsigned long long t1 = ikd_clock_ns();
        it->solve_us = (double)(t1 - t0) / 1e3;
        t0 = t1;
    }
}

int ikd_batch_write(const ikd_batch *b, ikd_encoding out_enc, ikd_buf *out)
{
    ikd_emitter e;
    ikd_emit_reply(&e, out_enc, out);
    /* room for a two-bone reply per item up front (about 500 bytes in
     * MessagePack, 800 in JSON): no copying as the reply grows */
    ikd_buf_reserve(out, b->count * (out_enc == IKD_ENC_MSGPACK ? 512 : 832));
    ikd_emit_map(&e, 1);
    ikd_emit_key(&e, "results");
    ikd_emit_array(&e, b->count);
    for (size_t i = 0; i < b->count; i++) {
        const ikd_batch_item *it = &b->items[i];
        if (it->err.code != IKD_E_OK) ikd_reply_error(&e, &it->err);
        else if (it->skel) ikd_reply_skeleton(&e, &it->skel->req, it->skel->local, it->skel->pose, it->skel->gr, &it->skel->res, it->solve_us);
        else ikd_reply_solve(&e, &it->req, &it->res, it->pose, it->solve_us);
    }
    ikd_emit_end(&e);
    ikd_emit_end(&e);
    if (out->failed) return ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", "the reply could not be built");
    return 200;
}

void ikd_batch_destroy(ikd_batch *b)
{
    for (size_t i = 0; b->items && i < b->count; i++) {
        ikd_request_destroy(&b->items[i].req);
        skel_destroy(b->items[i].skel);
    }
    free(b->items);
    free(b->joints.joints);
    free(b->poses);
    memset(b, 0, sizeof *b);
}

size_t ikd_batch_reply_size(const ikd_batch *b, ikd_encoding enc)
{
    /* a joint is written as three numbers and two quaternions (up to 24
     * bytes a number in JSON, 9 in MessagePack) with its keys, and its name
     * (escaped: up to 6 bytes a byte in JSON) */
    size_t per_joint = enc == IKD_ENC_JSON ? 300 : 160, per_name_byte = enc == IKD_ENC_JSON ? 6 : 1, total = 64;
    for (size_t i = 0; i < b->count; i++) {
        const ikd_batch_item *it = &b->items[i];
        if (it->err.code != IKD_E_OK) {
            total += 512;
            continue;
        }
        size_t n = it->skel ? it->skel->req.skeleton.count : it->req.problem.joint_count;
        char **names = it->skel ? it->skel->req.names : it->req.names;
        total += 256 + n * per_joint;
        if (it->skel) /* the pose's rotations (four numbers each) and the goals' reports */
            total += n * (enc == IKD_ENC_JSON ? 112 : 48) + it->skel->req.goal_count * (enc == IKD_ENC_JSON ? 160 : 96);
        for (size_t j = 0; names && j < n; j++)
            if (names[j]) total += per_name_byte * strlen(names[j]) + 16;
    }
    return total;
}

size_t ikd_batch_slices(size_t n, size_t idle)
{
    size_t slices = (n + IKD_BATCH_SLICE - 1) / IKD_BATCH_SLICE;
    if (slices > 1 + idle) slices = 1 + idle;
    return slices ? slices : 1;
}
