/* batch.h - POST /v1/solve/batch in steps: open (decode every item), solve ranges of items on any workers, write. */
#ifndef IKD_BATCH_H
#define IKD_BATCH_H

#include "api.h"

/* A batch is solved in three steps so that the middle one can be spread
 * over several workers: open (decode every item; a bad item keeps its
 * error), solve any range of items, write the reply. */
/* A skeleton item (one with a "skeleton" key): its request and results. */
typedef struct ikd_batch_skel {
    ikd_skel_request req;
    ikd_quat *local;         /* [joints], with pose and gr in one block */
    ikd_pose_joint *pose;    /* [joints] */
    ikd_goal_result *gr;     /* [goals] */
    ikd_multi_result res;
} ikd_batch_skel;

typedef struct ikd_batch_item {
    ikd_batch_skel *skel; /* NULL: a chain item (req) */
    ikd_request req;
    ikd_error err;     /* err.code != IKD_E_OK: this item failed */
    ikd_result res;
    ikd_pose_joint *pose;
    double solve_us;
} ikd_batch_item;

typedef struct ikd_batch {
    size_t count;
    ikd_batch_item *items;
    ikd_pose_joint *poses; /* one block for every item's pose */
    ikd_joint_pool joints; /* room for the items' joints (three each; longer chains allocate their own) */
    unsigned long long deadline_ns;
    int error;             /* when ikd_batch_open failed: the error's code */
} ikd_batch;

/* 0 on success (destroy the batch later), else the HTTP status with an error
 * body in `out` (nothing to destroy). */
int ikd_batch_open(const ikd_api_limits *lim, unsigned long long deadline_ns, ikd_encoding in_enc,
                       ikd_encoding out_enc, const char *body, size_t len, ikd_batch *b, ikd_buf *out);
void ikd_batch_solve(ikd_batch *b, size_t lo, size_t hi, ikd_api_scratch *s);
/* 200, or 500 with an error body when the reply could not be built. */
int ikd_batch_write(const ikd_batch *b, ikd_encoding out_enc, ikd_buf *out);
void ikd_batch_destroy(ikd_batch *b);
/* About how many bytes ikd_batch_write will write for this batch (at
 * least as many, for the replies ikd writes): the memory budget is charged
 * with it before solving. */
size_t ikd_batch_reply_size(const ikd_batch *b, ikd_encoding enc);

/* Items per slice when a batch is spread over idle workers. */
#define IKD_BATCH_SLICE 16

/* The number of slices to cut `n` items into when `idle` workers are free
 * besides the one holding the batch: slices of at least IKD_BATCH_SLICE
 * items, at most one per idle worker plus the holder's own, at least 1.
 * Only idle workers get slices: when every worker is busy (a loaded
 * server), handing slices around costs wake-ups and cache misses and gains
 * nothing. */
size_t ikd_batch_slices(size_t n, size_t idle);

#endif
