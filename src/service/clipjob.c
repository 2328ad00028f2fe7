/* clipjob.c - a clip on the worker pool: into one reply, or streamed by a job that parks while its reader is behind. */
#include "clipjob.h"

#include <stdlib.h>

#include "budget.h"
#include "clip.h"
#include "reply.h"
#include "stream.h"
#include "wire.h"

/* A streamed clip's producer: a pool job that owns the decoded request
 * and the run, solves frames into the stream, and returns its worker
 * whenever the stream parks it (a reader behind); the stream's resume hook
 * queues it again, its abandon hook frees it. */
typedef struct clip_job {
    ikd_task task; /* first member: the pool hands it back */
    ikd_service *svc;
    ikd_stream *st;
    ikd_encoding enc;
    ikd_skel_request req;
    ikd_clip_run run;
    size_t charged; /* bytes of the memory budget the request and run hold */
} clip_job;

static void clip_job_free(clip_job *j)
{
    ikd_service *s = j->svc;
    if (s->hooks.clip_solved) s->hooks.clip_solved(s->hooks.ctx, j->run.by_status);
    ikd_clip_end(&j->run);
    ikd_skel_request_destroy(&j->req);
    atomic_fetch_sub(&s->held, j->charged);
    ikd_stream_release(j->st);
    free(j);
}

static void clip_job_run(ikd_task *task, void *worker_data)
{
    clip_job *j = (clip_job *)task;
    (void)worker_data;
    if (ikd_clip_stream(&j->req, &j->run, j->enc, j->st) == 0) clip_job_free(j);
}

/* The reader caught up: back on the pool (past the queue's bound: the
 * job was accepted already); a stopping pool ends the stream here. */
static void clip_job_resume(void *ctx)
{
    clip_job *j = ctx;
    if (j->svc->hooks.resume(j->svc->hooks.ctx, &j->task) == 0) return;
    ikd_stream_push(j->st, "", 0, 1);
    clip_job_free(j);
}

/* The client left while the job was parked. */
static void clip_job_abandon(void *ctx)
{
    clip_job *j = ctx;
    ikd_stream_push(j->st, "", 0, 1);
    clip_job_free(j);
}

/* A streamed clip: every frame validated first (an error is an ordinary
 * reply), then the body freed, the call handed back with its stream, and
 * the frames solved into it by a clip_job, starting on this worker. From
 * hooks.finished on, the call is the transport's. */
void ikd_clipjob_stream(ikd_call *c)
{
    ikd_service *s = c->svc;
    clip_job *j = calloc(1, sizeof *j);
    ikd_stream *st = NULL;
    if (!j) {
        c->outcome.error = IKD_E_NOMEM;
        c->status = ikd_reply_errorf(&c->reply, c->out_enc, IKD_E_NOMEM, "", "out of memory for the clip");
        ikd_budget_decoded(c);
        s->hooks.finished(c);
        return;
    }
    j->svc = s;
    j->enc = c->out_enc;
    ikd_clip_reserve reserve = {ikd_budget_clip_reserve, c};
    c->status = ikd_clip_prepare(&s->limits, c->deadline_ns, c->in_enc, j->enc, c->body.data ? c->body.data : "",
                                 c->body.len, &reserve, &j->req, &j->run, &c->reply, &c->outcome.error);
    ikd_budget_decoded(c);
    if (c->status == 0 && !(st = ikd_stream_new())) {
        ikd_clip_end(&j->run);
        c->outcome.error = IKD_E_NOMEM;
        c->status = ikd_reply_errorf(&c->reply, j->enc, IKD_E_NOMEM, "", "out of memory for the clip's stream");
    }
    if (!st) {
        ikd_skel_request_destroy(&j->req);
        free(j);
        s->hooks.finished(c);
        return;
    }
    ikd_buf_destroy(&c->body); /* decoded: its memory and charge go now, not when the stream ends */
    ikd_budget_release(c, c->charged);
    j->charged = ikd_clip_held(&j->run, &j->req);
    atomic_fetch_add(&s->held, j->charged);
    j->st = st;
    j->task.run = clip_job_run;
    ikd_stream_account(st, &s->held); /* unread frames count against --memory-budget */
    ikd_stream_producer(st, clip_job_resume, clip_job_abandon, j);
    c->status = 200;
    c->stream = st;
    c->reply_type = j->enc == IKD_ENC_JSON ? IKD_CLIP_NDJSON : IKD_CLIP_MSGPACK_STREAM;
    s->hooks.finished(c);
    clip_job_run(&j->task, NULL);
}

/* A clip into one reply: decoded, the body freed, the reply's size
 * charged before any frame is solved (413 when it could never fit the
 * budget, 503 when it does not fit now). */
void ikd_clipjob_whole(ikd_call *c)
{
    ikd_service *s = c->svc;
    ikd_skel_request req;
    ikd_clip_run run;
    ikd_clip_reserve reserve = {ikd_budget_clip_reserve, c};
    c->status = ikd_clip_prepare(&s->limits, c->deadline_ns, c->in_enc, c->out_enc, c->body.data ? c->body.data : "",
                                 c->body.len, &reserve, &req, &run, &c->reply, &c->outcome.error);
    ikd_budget_decoded(c);
    if (c->status == 0) {
        ikd_buf_destroy(&c->body);
        ikd_budget_release(c, c->charged);
        size_t est = ikd_clip_reply_size(&run, &req, c->out_enc) + ikd_clip_held(&run, &req);
        if (ikd_budget_charge_reply(c, est, "frames",
                                    "send fewer frames, or ask for the stream (Accept: " IKD_CLIP_NDJSON ")")) {
            if (c->bvh_wanted) {
                c->status = ikd_clip_write_bvh(&req, &run, &c->reply, &c->outcome);
                if (c->status == 200) c->reply_type = IKD_CLIP_BVH;
            } else {
                c->status = ikd_clip_write(&req, &run, c->out_enc, &c->reply, &c->outcome);
            }
            ikd_budget_release(c, est);
            ikd_call_record(c);
            ikd_budget_charge(c, c->reply.len, 1);
        }
        ikd_clip_end(&run);
    }
    ikd_skel_request_destroy(&req);
}

