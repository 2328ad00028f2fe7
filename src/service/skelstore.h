/* skelstore.h - skeletons by reference: validated skeletons kept under their content hash (sk_<hex>), least recently used out first. */
#ifndef IKD_SKELSTORE_H
#define IKD_SKELSTORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "../codec/skel.h"

#define IKD_SKEL_ID_LEN 35 /* "sk_" and 32 hex digits (the first 128 bits of a SHA-256) */

typedef struct ikd_skelstore_entry ikd_skelstore_entry;

typedef struct ikd_skelstore {
    pthread_mutex_t lock;
    ikd_skelstore_entry **buckets; /* by the id's first bits */
    size_t nbuckets;
    ikd_skelstore_entry *newest, *oldest; /* recency list */
    size_t bytes, cap, count;
    atomic_size_t *held;          /* the memory budget's count, charged with `bytes`; NULL: none */
    ikd_skel_lookup lookup;       /* the decoder's hook onto ikd_skelstore_get */
} ikd_skelstore;

/* A store of at most `cap` bytes (0: keep nothing) whose bytes are also
 * added to *held (may be NULL). 0, or -1 out of memory. */
int ikd_skelstore_init(ikd_skelstore *st, size_t cap, atomic_size_t *held);
void ikd_skelstore_destroy(ikd_skelstore *st);

/* The id of a validated skeleton and its names (names may be NULL): a hash
 * of every joint's parent, rest position and rotation, limit and name, so
 * that the same skeleton gets the same id on any instance. id gets
 * IKD_SKEL_ID_LEN characters and a NUL. */
void ikd_skelstore_id(const ikd_skeleton *s, char *const *names, char id[IKD_SKEL_ID_LEN + 1]);

/* Keep a copy of a validated skeleton under `id` (the least recently used
 * go while the store is over its size). 0, or -1 when it is larger than
 * the whole store or memory ran out (it is then not kept). */
int ikd_skelstore_put(ikd_skelstore *st, const char *id, const ikd_skeleton *s, char *const *names);

/* The skeleton under id[0..len) copied into req (joints, names, count and
 * size, as validated: ikd_skel_request_validate need not run again; the
 * request owns the copies): 0, or -1 when this store does not hold it
 * (or memory ran out: *nomem set). */
int ikd_skelstore_get(ikd_skelstore *st, const char *id, size_t len, ikd_skel_request *req, int *nomem);

/* How many skeletons the store keeps now, and their bytes. */
void ikd_skelstore_usage(ikd_skelstore *st, size_t *count, size_t *bytes);

#endif
