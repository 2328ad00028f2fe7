/* api.c - the endpoints as pure functions over buffers: solve, batch on one thread, health, the solver catalogue. */
#include "api.h"

#include "batch.h"
#include "clip.h"
#include "reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ikd_api_scratch_init(ikd_api_scratch *s, size_t max_joints)
{
    memset(s, 0, sizeof *s);
    s->max_joints = max_joints;
    s->pose = calloc(max_joints, sizeof *s->pose);
    s->work_size = ikd_workspace_size(max_joints);
    s->work = s->work_size ? malloc(s->work_size) : NULL;
    if (!s->pose || (s->work_size && !s->work)) {
        ikd_api_scratch_destroy(s);
        return -1;
    }
    return 0;
}

void ikd_api_scratch_destroy(ikd_api_scratch *s)
{
    free(s->pose);
    free(s->work);
    memset(s, 0, sizeof *s);
}

/* A fresh request whose default iteration cap respects --max-iterations. */
void ikd_api_request_init(ikd_request *req, const ikd_api_limits *lim)
{
    ikd_request_init(req);
    req->problem.cancel = lim->cancel;
    if (req->problem.options.max_iterations > lim->max_iterations)
        req->problem.options.max_iterations = lim->max_iterations;
}

void ikd_api_field_prefix(ikd_error *err, const char *prefix)
{
    char inner[IKD_ERROR_FIELD_MAX];
    memcpy(inner, err->field, sizeof inner);
    int n = snprintf(err->field, sizeof err->field, "%s", prefix);
    size_t room = sizeof err->field - 1 - (size_t)n, k = inner[0] ? strlen(inner) : 0;
    if (k && room > 1) {
        err->field[n++] = '.';
        room--;
        if (k > room) k = room;
        memcpy(err->field + n, inner, k);
        err->field[n + (int)k] = '\0';
    }
}

/* "problems[item]." in front of err's field (a batch item's error). */
static void prefix_item(ikd_error *err, long item)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "problems[%ld]", item);
    ikd_api_field_prefix(err, prefix);
}

int ikd_api_check(ikd_request *req, const ikd_api_limits *lim, long item, ikd_error *err)
{
    int rc;
    if (req->problem.joint_count > lim->max_joints)
        rc = ikd_error_set(err, IKD_E_INVALID, "chain.joints", "at most %zu joints are allowed (--max-joints)",
                           lim->max_joints);
    else if (req->problem.options.max_iterations > lim->max_iterations)
        rc = ikd_error_set(err, IKD_E_INVALID, "options.max_iterations",
                           "must be an integer in [1, %d] (--max-iterations)", lim->max_iterations);
    else
        rc = ikd_validate(&req->problem, err);
    if (rc && item >= 0) prefix_item(err, item);
    return rc;
}

void ikd_api_skel_init(ikd_skel_request *req, const ikd_api_limits *lim)
{
    ikd_skel_request_init(req);
    req->lookup = lim->lookup;
    req->problem.cancel = lim->cancel;
    if (req->problem.max_iterations > lim->max_iterations) req->problem.max_iterations = lim->max_iterations;
}

int ikd_api_skel_decode(ikd_val root, const ikd_api_limits *lim, long item, ikd_skel_request *req, ikd_error *err)
{
    int rc = ikd_skel_decode(root, item, lim->max_joints, req, err);
    if (rc != IKD_E_OK) return rc; /* the decoder names batch items itself */
    if (req->problem.max_iterations > lim->max_iterations)
        rc = ikd_error_set(err, IKD_E_INVALID, "options.max_iterations", "must be an integer in [1, %d] (--max-iterations)",
                           lim->max_iterations);
    if (rc == IKD_E_OK) rc = ikd_skel_request_validate(req, err);
    if (rc == IKD_E_OK) rc = ikd_multi_validate(&req->problem, req->goals, err);
    if (rc && item >= 0) prefix_item(err, item);
    return rc;
}

static double elapsed_us(unsigned long long t0) { return (double)(ikd_clock_ns() - t0) / 1e3; }

int ikd_api_decode(const ikd_api_limits *lim, ikd_encoding enc, const char *body, size_t len, ikd_request *req,
                        ikd_error *err)
{
    ikd_doc doc;
    ikd_api_request_init(req, lim);
    int rc = ikd_doc_load(&doc, enc, body, len, err);
    if (rc == IKD_E_OK) rc = ikd_decode_solve(doc.root, -1, req, err);
    ikd_doc_free(&doc);
    if (rc == IKD_E_OK) rc = ikd_api_check(req, lim, -1, err);
    return rc;
}

int ikd_api_run(ikd_api_scratch *s, ikd_request *req, unsigned long long deadline_ns, ikd_encoding out_enc,
                ikd_buf *out, ikd_api_outcome *outcome)
{
    ikd_error err;
    ikd_result res;
    if (outcome) *outcome = (ikd_api_outcome){.solved = 0};
    req->problem.deadline_ns = deadline_ns;
    unsigned long long t0 = ikd_clock_ns();
    if (ikd_solve(&req->problem, s->work, s->work_size, s->pose, &res, &err) != IKD_E_OK) {
        if (outcome) outcome->error = err.code;
        return ikd_reply_error_body(out, out_enc, &err);
    }
    double us = elapsed_us(t0);
    if (outcome) *outcome = (ikd_api_outcome){.solved = 1, .solver = res.solver, .status = res.status, .solve_s = us / 1e6};
    ikd_emitter e;
    ikd_emit_reply(&e, out_enc, out);
    ikd_reply_solve(&e, req, &res, s->pose, us);
    if (out->failed) {
        if (outcome) outcome->error = IKD_E_NOMEM;
        return ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", "the reply could not be built");
    }
    return 200;
}

int ikd_api_solve(ikd_api_scratch *s, const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                  ikd_encoding out_enc, const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome)
{
    ikd_request req;
    ikd_error err;
    int status;
    if (outcome) *outcome = (ikd_api_outcome){.solved = 0};
    if (ikd_api_decode(lim, in_enc, body, len, &req, &err) != IKD_E_OK) {
        if (outcome) outcome->error = err.code;
        status = ikd_reply_error_body(out, out_enc, &err);
    } else
        status = ikd_api_run(s, &req, deadline_ns, out_enc, out, outcome);
    ikd_request_destroy(&req);
    return status;
}

/* Solve a validated skeleton request into `out`; the HTTP status. */
static int skeleton_run(ikd_skel_request *req, unsigned long long deadline_ns, ikd_encoding out_enc, ikd_buf *out,
                        ikd_api_outcome *outcome)
{
    size_t n = req->skeleton.count, wsize = ikd_multi_workspace_size(n, req->goal_count);
    void *work = malloc(wsize);
    ikd_quat *local = malloc(n * sizeof *local);
    ikd_pose_joint *pose = malloc(n * sizeof *pose);
    ikd_goal_result *gr = malloc(req->goal_count * sizeof *gr);
    int status;
    ikd_error err;
    ikd_multi_result res;
    req->problem.deadline_ns = deadline_ns;
    if (!work || !local || !pose || !gr) {
        if (outcome) outcome->error = IKD_E_NOMEM;
        status = ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", "out of memory for the skeleton's solve");
    } else {
        unsigned long long t0 = ikd_clock_ns();
        if (ikd_multi_solve(&req->problem, work, wsize, local, pose, gr, &res, &err) != IKD_E_OK) {
            if (outcome) outcome->error = err.code;
            status = ikd_reply_error_body(out, out_enc, &err);
        } else {
            ikd_emitter e;
            ikd_emit_reply(&e, out_enc, out);
            double us = elapsed_us(t0);
            ikd_reply_skeleton(&e, req, local, pose, gr, &res, us);
            status = 200;
            if (outcome) {
                *outcome = (ikd_api_outcome){.solved = 1, .skeleton = 1, .multi = res.status, .solve_s = us / 1e6};
                for (size_t i = 0; i < req->goal_count; i++)
                    if ((unsigned)gr[i].status < 3) outcome->goals[gr[i].status]++;
            }
            if (out->failed) {
                if (outcome) outcome->error = IKD_E_NOMEM;
                status = ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", "the reply could not be built");
            }
        }
    }
    free(work);
    free(local);
    free(pose);
    free(gr);
    return status;
}

int ikd_api_skeleton(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                     ikd_encoding out_enc, const char *body, size_t len, ikd_buf *out, ikd_api_outcome *outcome)
{
    ikd_doc doc;
    ikd_error err;
    ikd_skel_request req;
    ikd_api_skel_init(&req, lim);
    if (outcome) *outcome = (ikd_api_outcome){.solved = 0};
    int rc = ikd_doc_load(&doc, in_enc, body, len, &err);
    if (rc == IKD_E_OK) rc = ikd_api_skel_decode(doc.root, lim, -1, &req, &err);
    ikd_doc_free(&doc);
    int status;
    if (rc != IKD_E_OK) {
        if (outcome) outcome->error = err.code;
        status = ikd_reply_error_body(out, out_enc, &err);
    } else {
        status = skeleton_run(&req, deadline_ns, out_enc, out, outcome);
    }
    ikd_skel_request_destroy(&req);
    return status;
}

int ikd_api_keep_skeleton(const ikd_api_limits *lim, ikd_skeleton *s, char *const *names, char id[IKD_SKEL_ID_LEN + 1],
                          ikd_error *err)
{
    int rc = ikd_skeleton_validate(s, err);
    if (rc != IKD_E_OK) return rc;
    ikd_skelstore_id(s, names, id);
    if (lim->store) ikd_skelstore_put(lim->store, id, s, names); /* larger than the store: not kept (409 later) */
    return IKD_E_OK;
}

int ikd_api_register(const ikd_api_limits *lim, ikd_encoding in_enc, ikd_encoding out_enc, const char *body, size_t len,
                     ikd_buf *out, int *error)
{
    ikd_doc doc;
    ikd_error err;
    ikd_skel_request req;
    ikd_skel_request_init(&req);
    char id[IKD_SKEL_ID_LEN + 1];
    int rc = ikd_doc_load(&doc, in_enc, body, len, &err);
    if (rc == IKD_E_OK) rc = ikd_skel_decode_register(doc.root, lim->max_joints, &req, &err);
    ikd_doc_free(&doc);
    if (rc == IKD_E_OK) rc = ikd_api_keep_skeleton(lim, &req.skeleton, req.names, id, &err);
    int status = 200;
    *error = rc;
    if (rc != IKD_E_OK) {
        status = ikd_reply_error_body(out, out_enc, &err);
    } else {
        ikd_emitter e;
        ikd_emit_reply(&e, out_enc, out);
        ikd_emit_map(&e, 2);
        IKD_EMIT_KEY(&e, "id");
        ikd_emit_str(&e, id);
        IKD_EMIT_KEY(&e, "joints");
        ikd_emit_int(&e, (long long)req.skeleton.count);
        ikd_emit_end(&e);
        if (out->failed) *error = IKD_E_NOMEM, status = ikd_reply_errorf(out, out_enc, IKD_E_NOMEM, "", NULL);
    }
    ikd_skel_request_destroy(&req);
    return status;
}

int ikd_api_batch(ikd_api_scratch *s, const ikd_api_limits *lim, ikd_encoding in_enc, ikd_encoding out_enc,
                  const char *body, size_t len, ikd_buf *out)
{
    ikd_batch b;
    int status = ikd_batch_open(lim, 0, in_enc, out_enc, body, len, &b, out);
    if (status) return status;
    ikd_batch_solve(&b, 0, b.count, s);
    status = ikd_batch_write(&b, out_enc, out);
    ikd_batch_destroy(&b);
    return status;
}

int ikd_api_healthz(ikd_buf *out, ikd_encoding enc)
{
    ikd_reply_status(out, enc, "ok");
    return 200;
}

int ikd_api_readyz(ikd_buf *out, ikd_encoding enc, int ready)
{
    ikd_reply_status(out, enc, ready ? "ready" : "not_ready");
    return ready ? 200 : 503;
}

static const struct {
    ikd_solver solver;
    const char *summary;
    const char *constraints[3];
    int min_joints, max_joints, orientation;
} solver_rows[] = {
    {IKD_SOLVER_AUTO, "picks a solver from the request: 3 free joints -> two_bone; a target rotation -> jacobian; free "
                      "chains -> ccd; constrained chains -> fabrik/jacobian/ccd in turn until one reaches",
     {"hinge", "ball", NULL}, 2, IKD_MAX_JOINTS, 1},
    {IKD_SOLVER_TWO_BONE, "analytic law-of-cosines solve of a 3-joint chain; pole picks the bend plane", {NULL}, 3, 3, 0},
    {IKD_SOLVER_CCD, "cyclic coordinate descent, effector side first; free joint pairs solved in closed form",
     {"hinge", "ball", NULL}, 2, IKD_MAX_JOINTS, 0},
    {IKD_SOLVER_FABRIK, "forward and backward reaching passes with the root fixed", {"hinge", "ball", NULL}, 2,
     IKD_MAX_JOINTS, 0},
    {IKD_SOLVER_JACOBIAN, "damped least squares (or transpose) on the joint Jacobian; solves target.rotation too",
     {"hinge", "ball", NULL}, 2, IKD_MAX_JOINTS, 1},
};

/* One option of GET /v1/solvers: name, type, default, range or choices. */
static void emit_option(ikd_emitter *e, const ikd_option_info *o, const ikd_api_limits *lim)
{
    ikd_emit_map(e, o->type == IKD_OPT_ENUM ? 5 : 6);
    ikd_emit_key(e, "name");
    ikd_emit_str(e, o->name);
    ikd_emit_key(e, "type");
    ikd_emit_str(e, o->type == IKD_OPT_INT ? "integer" : o->type == IKD_OPT_NUMBER ? "number" : "string");
    ikd_emit_key(e, "default");
    if (o->type == IKD_OPT_ENUM) ikd_emit_str(e, o->choices[(int)o->def]);
    else ikd_emit_num(e, o->def);
    if (o->type == IKD_OPT_ENUM) {
        size_t nc = 0;
        while (o->choices[nc]) nc++;
        ikd_emit_key(e, "enum");
        ikd_emit_array(e, nc);
        for (size_t c = 0; c < nc; c++) ikd_emit_str(e, o->choices[c]);
        ikd_emit_end(e);
    } else {
        double max = o->max;
        if (o->type == IKD_OPT_INT && !strcmp(o->name, "max_iterations")) max = lim->max_iterations;
        ikd_emit_key(e, o->min_open ? "exclusive_minimum" : "minimum");
        ikd_emit_num(e, o->min);
        ikd_emit_key(e, o->max_open ? "exclusive_maximum" : "maximum");
        ikd_emit_num(e, max);
    }
    ikd_emit_key(e, "description");
    ikd_emit_str(e, o->doc);
    ikd_emit_end(e);
}

/* One solver row: its endpoint, what it solves and its options (those of
 * `opts` whose `solvers` mask meets `mask`; mask 0: all of them). */
static void emit_row(ikd_emitter *e, const char *name, const char *endpoint, const char *summary,
                     const char *const *cons, long long min_joints, long long max_joints, int rotation,
                     const ikd_option_info *opts, size_t nopt, unsigned mask, const ikd_api_limits *lim)
{
    size_t nmine = 0, ncons = 0;
    for (size_t i = 0; i < nopt; i++) nmine += !mask || (opts[i].solvers & mask) != 0;
    while (cons[ncons]) ncons++;
    ikd_emit_map(e, 8);
    ikd_emit_key(e, "name");
    ikd_emit_str(e, name);
    ikd_emit_key(e, "endpoint");
    ikd_emit_str(e, endpoint);
    ikd_emit_key(e, "description");
    ikd_emit_str(e, summary);
    ikd_emit_key(e, "constraints");
    ikd_emit_array(e, ncons);
    for (size_t c = 0; c < ncons; c++) ikd_emit_str(e, cons[c]);
    ikd_emit_end(e);
    ikd_emit_key(e, "min_joints");
    ikd_emit_int(e, min_joints);
    ikd_emit_key(e, "max_joints");
    ikd_emit_int(e, max_joints < (long long)lim->max_joints ? max_joints : (long long)lim->max_joints);
    ikd_emit_key(e, "target_rotation");
    ikd_emit_bool(e, rotation);
    ikd_emit_key(e, "options");
    ikd_emit_array(e, nmine);
    for (size_t i = 0; i < nopt; i++)
        if (!mask || (opts[i].solvers & mask)) emit_option(e, &opts[i], lim);
    ikd_emit_end(e);
    ikd_emit_end(e);
}

int ikd_api_solvers(const ikd_api_limits *lim, ikd_encoding enc, ikd_buf *out)
{
    const char *skel_constraints[IKD_LIMIT_EULER + 2]; /* every limit type's name, then NULL */
    for (int t = 0; t <= IKD_LIMIT_EULER; t++) skel_constraints[t] = ikd_limit_type_name((ikd_limit_type)t);
    skel_constraints[IKD_LIMIT_EULER + 1] = NULL;
    size_t nopt, nskel, nrows = sizeof solver_rows / sizeof solver_rows[0];
    const ikd_option_info *opts = ikd_options_table(&nopt), *skel_opts = ikd_multi_options_table(&nskel);
    ikd_emitter e;
    ikd_emit_reply(&e, enc, out);
    ikd_emit_map(&e, 2);
    ikd_emit_key(&e, "solvers");
    ikd_emit_array(&e, nrows + 2);
    for (size_t r = 0; r < nrows; r++) {
        ikd_solver sv = solver_rows[r].solver;
        emit_row(&e, ikd_solver_name(sv), "/v1/solve", solver_rows[r].summary, solver_rows[r].constraints,
                 solver_rows[r].min_joints, solver_rows[r].max_joints, solver_rows[r].orientation, opts, nopt,
                 sv == IKD_SOLVER_AUTO ? ~0u : (1u << sv), lim);
    }
    emit_row(&e, "skeleton", "/v1/solve/skeleton",
             "damped least squares over every goal of a joint tree at once (position, rotation, aim, ground, pole), "
             "each limit binding in its own terms, a pull toward the rest pose in the goals' null space",
             skel_constraints, 1, IKD_MAX_JOINTS, 1, skel_opts, nskel, 0, lim);
    ikd_option_info clip_opts[IKD_MULTI_OPTION_COUNT]; /* the skeleton's, but for the clip's defaults (ikd/motion.h) */
    for (size_t i = 0; i < nskel; i++) {
        clip_opts[i] = skel_opts[i];
        if (!strcmp(clip_opts[i].name, "pull_max_deg")) clip_opts[i].def = IKD_CLIP_PULL_MAX_DEG;
        if (!strcmp(clip_opts[i].name, "max_iterations")) clip_opts[i].def = IKD_CLIP_MAX_ITERATIONS;
        if (!strcmp(clip_opts[i].name, "stiffness")) clip_opts[i].def = IKD_CLIP_STIFFNESS;
    }
    emit_row(&e, "clip", "/v1/solve/clip",
             "the skeleton solver over frames of goals, each frame from the last (streams with Accept: "
             "application/x-ndjson or application/x-msgpack-stream); at most --max-frames frames",
             skel_constraints, 1, IKD_MAX_JOINTS, 1, clip_opts, nskel, 0, lim);
    ikd_emit_end(&e);
    ikd_emit_key(&e, "limits");
    ikd_emit_map(&e, 4);
    ikd_emit_key(&e, "max_frames");
    ikd_emit_int(&e, (long long)(lim->max_frames ? lim->max_frames : IKD_CLIP_MAX_FRAMES));
    ikd_emit_key(&e, "max_joints");
    ikd_emit_int(&e, (long long)lim->max_joints);
    ikd_emit_key(&e, "max_iterations");
    ikd_emit_int(&e, lim->max_iterations);
    ikd_emit_key(&e, "max_batch");
    ikd_emit_int(&e, (long long)lim->max_batch);
    ikd_emit_end(&e);
    ikd_emit_end(&e);
    return 200;
}
