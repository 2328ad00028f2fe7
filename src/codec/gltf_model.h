/* gltf_model.h - a parsed glTF document as gltf.c and gltfanim.c share it (internal to src/codec/). */
#ifndef IKD_GLTF_MODEL_H
#define IKD_GLTF_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "gltf.h"

/* A node: its rest TRS (or matrix), its parent. */
typedef struct gnode {
    ikd_vec3 t, s;
    ikd_quat r;
    int has_matrix;
    double m[16];             /* column-major, as glTF writes it */
    long parent;              /* -1: a scene root */
    long joint;               /* its ikd joint, or -1 */
} gnode;

typedef struct gltf_model {
    json_t *root;
    unsigned char **buf;      /* decoded buffers (GLB's BIN chunk is borrowed: buf_owned 0) */
    size_t *buf_len;
    char *buf_owned;
    size_t nbuf;
    gnode *nodes;
    size_t nnodes;
    long made_root_node;      /* a made root's ancestor node, or -1 (the origin) */
    size_t *order;            /* the nodes, parents before children */
    unsigned char **decoded;  /* per bufferView: its EXT_meshopt_compression data decoded, or NULL (made on first read) */
    size_t decoded_bytes;     /* their bytes together */
    double size;
} gltf_model;

int ikd__gltf_fail(ikd_error *err, int code, const char *field, const char *msg);
/* A GLB's little-endian 32-bit word at p. */
static inline uint32_t ikd__gltf_le32(const unsigned char *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
/* Accessor `a` as doubles (*count elements of *ncomp components, malloc'd in *out). */
int ikd__gltf_read_accessor(gltf_model *m, long a, double **out, size_t *count, int *ncomp, ikd_error *err);
/* The bytes of the file's buffers, all together (a fallback's: none). */
size_t ikd__gltf_buffer_bytes(const gltf_model *m);
/* bufferView vi (bv) compressed with EXT_meshopt_compression (ext): its
 * bytes decoded, the bufferView's byteLength of them, in *out (held by m). */
int ikd__gltf_meshopt_view(gltf_model *m, size_t vi, json_t *bv, json_t *ext, const unsigned char **out, ikd_error *err);
/* The joints' nodes marked (joint -2) and their count: the chosen skin's,
 * without ?skin= skin 0's joint tree's, without skins the node tree's. */
int ikd__gltf_mark_joints(ikd_gltf *g, const ikd_gltf_opts *o, size_t *nj, ikd_error *err);
/* A world matrix's position and its rotation with scale left out. */
void ikd__gltf_decompose(const double *m, ikd_vec3 *p, ikd_quat *q);
/* World matrices of every node for local TRS t, r, s (matrix nodes: theirs). */
void ikd__gltf_world_all(const gltf_model *m, const ikd_vec3 *t, const ikd_quat *r, const ikd_vec3 *s, double *world);

#endif
