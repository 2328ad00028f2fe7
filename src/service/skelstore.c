/* skelstore.c - skeletons by reference: validated skeletons kept under their content hash (sk_<hex>), least recently used out first. */
#include "skelstore.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

struct ikd_skelstore_entry {
    char id[IKD_SKEL_ID_LEN + 1];
    ikd_skelstore_entry *next_in_bucket, *newer, *older;
    ikd_skeleton_joint *joints; /* validated: derived fields set */
    char **names;           /* NULL when no joint is named */
    size_t count, bytes;
    double size;            /* ikd_skeleton.size as validation set it */
};

static size_t bucket_of(const ikd_skelstore *st, const char *id, size_t len)
{
    size_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)id[i]) * 1099511628211ull;
    return h % st->nbuckets;
}

static void lookup_get(void *ctx, const char *id, size_t len, ikd_skel_request *req, int *found, int *nomem)
{
    *found = ikd_skelstore_get(ctx, id, len, req, nomem) == 0;
}

int ikd_skelstore_init(ikd_skelstore *st, size_t cap, atomic_size_t *held)
{
    memset(st, 0, sizeof *st);
    st->nbuckets = 1024;
    st->buckets = calloc(st->nbuckets, sizeof *st->buckets);
    if (!st->buckets) return -1;
    pthread_mutex_init(&st->lock, NULL);
    st->cap = cap;
    st->held = held;
    st->lookup = (ikd_skel_lookup){lookup_get, st};
    return 0;
}

static void entry_free(ikd_skelstore_entry *e)
{
    if (e->names)
        for (size_t i = 0; i < e->count; i++) free(e->names[i]);
    free(e->names);
    free(e->joints);
    free(e);
}

static void unlink_recency(ikd_skelstore *st, ikd_skelstore_entry *e)
{
    if (e->newer) e->newer->older = e->older;
    else st->newest = e->older;
    if (e->older) e->older->newer = e->newer;
    else st->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void link_newest(ikd_skelstore *st, ikd_skelstore_entry *e)
{
    e->older = st->newest;
    e->newer = NULL;
    if (st->newest) st->newest->newer = e;
    st->newest = e;
    if (!st->oldest) st->oldest = e;
}

/* Take e out of the store (the lock held) and free it. */
static void evict(ikd_skelstore *st, ikd_skelstore_entry *e)
{
    ikd_skelstore_entry **p = &st->buckets[bucket_of(st, e->id, IKD_SKEL_ID_LEN)];
    while (*p != e) p = &(*p)->next_in_bucket;
    *p = e->next_in_bucket;
    unlink_recency(st, e);
    st->bytes -= e->bytes;
    st->count--;
    if (st->held) atomic_fetch_sub(st->held, e->bytes);
    entry_free(e);
}

void ikd_skelstore_destroy(ikd_skelstore *st)
{
    if (!st->buckets) return;
    while (st->oldest) evict(st, st->oldest);
    free(st->buckets);
    pthread_mutex_destroy(&st->lock);
    memset(st, 0, sizeof *st);
}

static void put_f64(ikd_sha256 *h, double v)
{
    if (v == 0) v = 0; /* -0 and 0 are the same skeleton */
    unsigned char b[8];
    uint64_t u;
    memcpy(&u, &v, 8);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(u >> (8 * i)); /* little-endian on every host */
    ikd_sha256_update(h, b, 8);
}

static void put_i64(ikd_sha256 *h, long long v) { put_f64(h, (double)v); }

void ikd_skelstore_id(const ikd_skeleton *s, char *const *names, char id[IKD_SKEL_ID_LEN + 1])
{
    ikd_sha256 h;
    ikd_sha256_init(&h);
    ikd_sha256_update(&h, "ikd-skeleton-1", 14); /* the layout's version: a new layout, new ids */
    put_i64(&h, (long long)s->count);
    for (size_t i = 0; i < s->count; i++) {
        const ikd_skeleton_joint *j = &s->joints[i];
        const ikd_limit *l = &j->limit;
        put_i64(&h, j->parent);
        put_f64(&h, j->position.x), put_f64(&h, j->position.y), put_f64(&h, j->position.z);
        put_f64(&h, j->rotation.x), put_f64(&h, j->rotation.y), put_f64(&h, j->rotation.z), put_f64(&h, j->rotation.w);
        put_i64(&h, l->type);
        put_i64(&h, l->has_axis);
        put_f64(&h, l->axis.x), put_f64(&h, l->axis.y), put_f64(&h, l->axis.z);
        put_f64(&h, l->min_deg), put_f64(&h, l->max_deg), put_f64(&h, l->twist_min_deg), put_f64(&h, l->twist_max_deg);
        put_i64(&h, l->order);
        for (int k = 0; k < 3; k++) put_f64(&h, l->euler_min_deg[k]), put_f64(&h, l->euler_max_deg[k]);
        if (l->has_neutral) /* (only then: the ids of skeletons without it stay as they were) */
            for (int k = 0; k < 3; k++) put_f64(&h, l->euler_neutral_deg[k]);
        if (l->has_frame) /* (likewise; tagged, so a frame is never read as a neutral) */
            put_i64(&h, -2), put_f64(&h, l->frame.x), put_f64(&h, l->frame.y), put_f64(&h, l->frame.z), put_f64(&h, l->frame.w);
        const char *name = names && names[i] ? names[i] : NULL;
        put_i64(&h, name ? (long long)strlen(name) : -1);
        if (name) ikd_sha256_update(&h, name, strlen(name));
    }
    unsigned char d[32];
    ikd_sha256_final(&h, d);
    static const char hex[] = "0123456789abcdef";
    memcpy(id, "sk_", 3);
    for (int i = 0; i < 16; i++) id[3 + 2 * i] = hex[d[i] >> 4], id[4 + 2 * i] = hex[d[i] & 15];
    id[IKD_SKEL_ID_LEN] = '\0';
}

/* The entry under id (the lock held), or NULL. */
static ikd_skelstore_entry *find(ikd_skelstore *st, const char *id, size_t len)
{
    if (len != IKD_SKEL_ID_LEN) return NULL;
    for (ikd_skelstore_entry *e = st->buckets[bucket_of(st, id, len)]; e; e = e->next_in_bucket)
        if (memcmp(e->id, id, len) == 0) return e;
    return NULL;
}

/* Copies of joints and names: 0, or -1 out of memory (nothing left allocated). */
static int copy_skeleton(const ikd_skeleton_joint *joints, char *const *names, size_t n, ikd_skeleton_joint **jout,
                         char ***nout, size_t *bytes)
{
    *bytes = sizeof(ikd_skelstore_entry) + n * sizeof *joints;
    *jout = malloc(n * sizeof *joints);
    *nout = NULL;
    if (!*jout) return -1;
    memcpy(*jout, joints, n * sizeof *joints);
    if (!names) return 0;
    if (!(*nout = calloc(n, sizeof **nout))) goto fail;
    *bytes += n * sizeof **nout;
    for (size_t i = 0; i < n; i++) {
        if (!names[i]) continue;
        size_t len = strlen(names[i]) + 1;
        if (!((*nout)[i] = malloc(len))) goto fail;
        memcpy((*nout)[i], names[i], len);
        *bytes += len;
    }
    return 0;
fail:
    if (*nout)
        for (size_t i = 0; i < n; i++) free((*nout)[i]);
    free(*nout);
    free(*jout);
    return -1;
}

int ikd_skelstore_put(ikd_skelstore *st, const char *id, const ikd_skeleton *s, char *const *names)
{
    ikd_skelstore_entry *e = calloc(1, sizeof *e);
    if (!e) return -1;
    if (copy_skeleton(s->joints, names, s->count, &e->joints, &e->names, &e->bytes) != 0) {
        free(e);
        return -1;
    }
    memcpy(e->id, id, IKD_SKEL_ID_LEN + 1);
    e->count = s->count, e->size = s->size;
    pthread_mutex_lock(&st->lock);
    ikd_skelstore_entry *old = find(st, id, IKD_SKEL_ID_LEN);
    int rc = 0;
    if (old) { /* already kept: now the newest */
        unlink_recency(st, old);
        link_newest(st, old);
        entry_free(e);
    } else if (e->bytes > st->cap) {
        entry_free(e);
        rc = -1;
    } else {
        while (st->oldest && st->bytes + e->bytes > st->cap) evict(st, st->oldest);
        size_t b = bucket_of(st, id, IKD_SKEL_ID_LEN);
        e->next_in_bucket = st->buckets[b];
        st->buckets[b] = e;
        link_newest(st, e);
        st->bytes += e->bytes;
        st->count++;
        if (st->held) atomic_fetch_add(st->held, e->bytes);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int ikd_skelstore_get(ikd_skelstore *st, const char *id, size_t len, ikd_skel_request *req, int *nomem)
{
    *nomem = 0;
    pthread_mutex_lock(&st->lock);
    ikd_skelstore_entry *e = find(st, id, len);
    int rc = -1;
    if (e) {
        unlink_recency(st, e);
        link_newest(st, e);
        size_t bytes;
        if (copy_skeleton(e->joints, e->names, e->count, &req->joints, &req->names, &bytes) == 0) {
            req->skeleton.joints = req->joints;
            req->skeleton.count = e->count, req->skeleton.size = e->size;
            rc = 0;
        } else {
            *nomem = 1;
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

void ikd_skelstore_usage(ikd_skelstore *st, size_t *count, size_t *bytes)
{
    pthread_mutex_lock(&st->lock);
    *count = st->count, *bytes = st->bytes;
    pthread_mutex_unlock(&st->lock);
}
