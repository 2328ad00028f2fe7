/* call.h - one request through the API without a transport: head checks, body, inline or pooled solving, reply headers. */
#ifndef IKD_CALL_H
#define IKD_CALL_H

#include <stdatomic.h>
#include <stddef.h>

#include "api.h"
#include "batch.h"
#include "guard.h"
#include "import.h"
#include "route.h"
#include "task.h"

/* Why a request or connection was refused (ikd_rejections_total{reason}). */
typedef enum ikd_reject_reason {
    IKD_REJECT_QUEUE_FULL,
    IKD_REJECT_TOO_LARGE,
    IKD_REJECT_DEADLINE,
    IKD_REJECT_DRAINING,
    IKD_REJECT_CONNECTIONS, /* a connection over --max-connections, closed at once */
    IKD_REJECT_MEMORY,      /* a body or reply that would pass --memory-budget */
    IKD_REJECT__COUNT
} ikd_reject_reason;

typedef struct ikd_call ikd_call;

/* What the service needs from the server around it; every hook is called
 * from I/O or worker threads alike. */
typedef struct ikd_service_hooks {
    void *ctx;
    void (*solved)(void *ctx, ikd_solver solver, ikd_status status, double seconds); /* one solve done */
    /* one skeleton solve done: its status, its goals by ikd_goal_status */
    void (*skeleton_solved)(void *ctx, ikd_multi_status status, const unsigned goals[3], double seconds);
    /* one clip done: its frames by ikd_multi_status */
    void (*clip_solved)(void *ctx, const unsigned frames[3]);
    void (*rejected)(void *ctx, ikd_reject_reason why);                            /* one refusal */
    int (*submit)(void *ctx, ikd_task *task);  /* queue a task: 0, -1 queue full, -2 stopping */
    /* queue a task accepted before (a parked stream's producer) past the
     * queue's bound, ahead of new tasks: 0, or -2 stopping */
    int (*resume)(void *ctx, ikd_task *task);
    size_t (*idle)(void *ctx);                 /* workers neither running nor about to run a job */
    int (*queue_full)(void *ctx);              /* the queue has no free slot now */
    int (*ready)(void *ctx);                   /* serving and not draining (GET /readyz) */
    void (*metrics)(void *ctx, ikd_buf *out);  /* GET /metrics: the Prometheus text */
    void (*finished)(ikd_call *call);          /* a pooled call has its reply (any thread) */
} ikd_service_hooks;

/* The service's settings (the daemon fills them from its flags). */
/* A file the service serves as it is (the editor and the client: GET /,
 * /ui/..., /client/...); the server owns the table. */
typedef struct ikd_file {
    const char *path;  /* the URL path */
    const char *type;  /* Content-Type */
    const unsigned char *data;
    size_t len;
} ikd_file;

typedef struct ikd_service_settings {
    ikd_api_limits limits;
    long max_body;       /* bytes; a larger body gets 413 (routes without big_body) */
    long max_clip_body;  /* bytes; the same for routes with big_body (0: max_body) */
    long max_import_body; /* bytes; the same for POST /v1/import (0: max_clip_body) */
    long deadline_ms;    /* from arrival; 0 = none */
    long debug_delay_ms; /* testing: every pooled job sleeps this long first */
    long inline_us;      /* skeleton solves are answered on the I/O thread while their average is under this; 0 = never */
    long head_max;       /* most bytes of request line and headers (431 beyond); 0 = no limit */
    size_t memory_budget; /* bytes of request bodies and replies held at once; 0 = no limit */
    size_t skeleton_cache; /* bytes of skeletons kept by reference (POST /v1/skeletons); 0 = none */
    const char *cors_origins;
    const char *api_token;
    /* the editor's and client's files by URL path; NULL: none (404, --ui off) */
    const ikd_file *(*find_file)(const char *path);
} ikd_service_settings;

typedef struct ikd_service {
    ikd_api_limits limits;
    long max_body, max_clip_body, max_import_body, deadline_ms, debug_delay_ms, head_max, inline_us;
    atomic_ulong skeleton_avg_ns; /* moving average of skeleton solve times (each new one weighs 1/16) */
    const ikd_file *(*find_file)(const char *path);
    ikd_guard guard;
    ikd_buf solvers_doc[2]; /* GET /v1/solvers, rendered once per encoding */
    ikd_service_hooks hooks;
    atomic_int stop;        /* set by ikd_service_stop: solves stop, pooled calls get 503 */
    size_t budget;          /* --memory-budget; 0 = none */
    atomic_size_t held;     /* bytes of bodies and replies charged to the budget now */
    ikd_skelstore store;    /* skeletons by reference (--skeleton-cache), charged to `held` */
    atomic_ulong next_id;   /* for generated request ids */
    unsigned long id_salt;
} ikd_service;

/* 0, or -1 when out of memory (nothing left to destroy). */
int ikd_service_init(ikd_service *s, const ikd_service_settings *set, const ikd_service_hooks *hooks);
void ikd_service_destroy(ikd_service *s);
/* The end of a shutdown's grace: running solves stop at their next
 * iteration (status "deadline") and calls a worker takes from now on are
 * answered 503 shutting_down. Any thread. */
void ikd_service_stop(ikd_service *s);
/* Bytes of the memory budget held now. */
size_t ikd_service_held(const ikd_service *s);

/* The request head as the transport read it; NULL = header absent. */
typedef struct ikd_head {
    const char *method, *path;
    const char *content_type, *content_length, *transfer_encoding, *accept;
    const char *authorization, *origin, *request_id, *cors_request_method;
    size_t head_bytes;   /* request line and headers as received, bytes (0 = unknown) */
    int bad_byte;        /* a header holds a NUL or a bare CR */
    int length_conflict; /* Content-Length given more than once with different values */
    const char *args[IKD_IMPORT__ARGS]; /* POST /v1/import's query options (NULL: absent) */
} ikd_head;

/* What the transport does next. */
typedef enum ikd_call_next {
    IKD_CALL_ANSWER, /* the reply is ready (status, reply, headers): send it */
    IKD_CALL_READ,   /* read the body into ikd_call_body, then ikd_call_body_end */
    IKD_CALL_POOL    /* park the connection, then ikd_call_submit; hooks.finished follows */
} ikd_call_next;

typedef struct ikd_header {
    const char *name, *value;
} ikd_header;
#define IKD_CALL_MAX_HEADERS 12

struct ikd_call {
    ikd_task task;          /* first member: the pool hands it back */
    ikd_service *svc;
    const ikd_route *route; /* NULL: no such path */
    unsigned long long t_start, t_worker, deadline_ns; /* ikd_clock_ns; t_worker 0 until a worker takes it */
    ikd_encoding in_enc;    /* the body's (Content-Type) */
    ikd_encoding out_enc;   /* the reply's (Accept, else in_enc) */
    int has_body;           /* the head declares a body (Content-Length > 0 or chunked) */
    int too_large;          /* the body passed max_body: the rest is dropped */
    int over_budget;        /* the body passed the memory budget: the rest is dropped */
    size_t charged;         /* bytes this call holds of the memory budget (released on destroy) */
    size_t decode_charge;   /* of which: the decoded document's estimate, released once it is freed */
    size_t reply_estimate;  /* a batch: the reply size charged before solving */
    int declared;           /* the body's length was declared (and charged) in the head */
    int decode_later;       /* an import that may be a GLB: its decoded document is charged on the worker, once read */
    int status;             /* the reply's HTTP status */
    const char *reply_type; /* the reply's media type; NULL = out_enc's */
    /* A clip asked for as a stream (Accept: application/x-ndjson, or
     * application/x-msgpack-stream): once every frame is valid the worker
     * sets `stream` (status 200, headers known), hands the call back with
     * hooks.finished and goes on solving into the stream; the transport
     * reads it (ikd_stream_read) and releases its reference when done. */
    int stream_wanted;
    int bvh_wanted;         /* a clip asked for as a BVH file (Accept: application/x-bvh) */
    struct ikd_stream *stream;
    const char *allow;      /* an Allow header, or NULL */
    int close;              /* close the connection after the reply (its body was not read) */
    int unframed;           /* the head's framing is bad (Transfer-Encoding, Content-Length): a body cannot be read */
    int preflight;          /* a CORS preflight: send the Access-Control-Allow-* headers */
    int cors_ok;            /* the Origin is allowed: send the CORS headers */
    ikd_buf body, reply;
    ikd_import_opts import;  /* POST /v1/import's options */
    char import_type[80];    /* and its Content-Type ("" when absent) */
    ikd_api_outcome outcome; /* the solve, for the log (batches: outcome.solved stays 0) */
    ikd_request req;        /* a solve decoded on the transport's thread */
    int req_ready;
    ikd_batch batch;
    struct ikd_call_slice *slices;
    atomic_int slices_left;
    char origin[IKD_GUARD_ORIGIN_MAX];
    char request_id[72];
};

/* A fresh call that arrived at `now` (ikd_clock_ns). */
void ikd_call_init(ikd_call *c, ikd_service *s, unsigned long long now);
void ikd_call_destroy(ikd_call *c);
/* The head's checks, in order: HTTP framing (431 head over head_max; 400
 * for a NUL or bare CR in a header, conflicting Content-Lengths, or both
 * Content-Length and Transfer-Encoding; 501 for a transfer coding other
 * than chunked: each closes the connection), route (404), CORS preflight
 * and OPTIONS, token (401), method (405), GET endpoints answered at once,
 * media type (415), declared length (413). */
ikd_call_next ikd_call_head(ikd_call *c, const ikd_head *h);
/* A piece of the body (beyond max_body, or beyond the memory budget, it is
 * dropped, and 413 or 503 follows; ikd_call_refused says so at once). */
void ikd_call_body(ikd_call *c, const char *data, size_t n);
/* 1 when the body is being dropped (413 or 503 waits for ikd_call_body_end). */
int ikd_call_refused(const ikd_call *c);
/* The whole body is in: ANSWER (an error, or an analytic solve answered on
 * this thread, which costs less than the hand-off) or POOL. */
ikd_call_next ikd_call_body_end(ikd_call *c);
/* Hand a POOL call to the workers; when the pool refuses it the reply is a
 * 503 and hooks.finished is called at once. */
void ikd_call_submit(ikd_call *c);
/* The reply's headers (besides Content-Length); `draining` adds
 * Connection: close. Returns how many were written to `out`. */
size_t ikd_call_headers(const ikd_call *c, int draining, ikd_header out[IKD_CALL_MAX_HEADERS]);
/* Answer with an error: `code`'s status and an error body whose message is
 * fmt's (NULL: the code's default); returns IKD_CALL_ANSWER. */
ikd_call_next ikd_call_error(ikd_call *c, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A solve is done: the service's hooks hear of it (metrics). */
void ikd_call_record(ikd_call *c);
/* The metrics slot of the call's route (IKD_ROUTE__COUNT = unmatched). */
int ikd_call_route_slot(const ikd_call *c);

#endif
