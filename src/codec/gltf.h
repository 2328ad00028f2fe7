/* gltf.h - glTF 2.0 (.glb, and .gltf with data: buffers) read into a skin's joint tree and its animations sampled as poses. */
#ifndef IKD_GLTF_H
#define IKD_GLTF_H

#include <stddef.h>

#include "emit.h"
#include "filewarn.h"
#include "ikd/error.h"
#include "ikd/math.h"

#define IKD_GLTF_NAME_MAX 257 /* longest joint name kept, NUL included (a skeleton's longest, 256 bytes; a
                                 longer node name is cut on a character's boundary) */

/* A joint of the imported skeleton: parents first; joint 0 is the root
 * (the skin's one top joint, or one made for a skin whose joints form
 * several trees, at their nearest common ancestor node, else the origin). */
typedef struct ikd_gltf_joint {
    char name[IKD_GLTF_NAME_MAX];
    long parent;              /* an earlier joint; -1 for joint 0 */
    long node;                /* its node; -1 for a made root at the origin */
    ikd_vec3 position;        /* rest, world (times the scale) */
    ikd_quat rotation;        /* rest, world, unit (node scales left out) */
} ikd_gltf_joint;

typedef struct ikd_gltf_opts {
    double scale;             /* lengths times this; default 1 */
    double fps;               /* sampling rate of the clips; 0 = 30 */
    long skin;                /* which skin alone; -1: skin 0 and every skin in one joint tree with it */
    size_t max_joints, max_frames;
} ikd_gltf_opts;

struct gltf_model;

typedef struct ikd_gltf {
    ikd_gltf_joint *joints;   /* owned */
    size_t count;
    size_t animations;        /* clips ikd_gltf_emit_clips writes */
    ikd_file_warnings warnings;
    int too_large;            /* the error was a count over max_joints or max_frames */
    int binary;               /* a .glb */
    struct gltf_model *m;     /* owned: the document, its buffers, its nodes */
} ikd_gltf;

/* Parse a glTF file (GLB container or JSON) and make its skeleton. Errors
 * name the place: "glb", "glb.chunks[1]", "nodes[3].rotation",
 * "accessors[2]", "skins[0].joints[4]"; only data: URIs in the body are
 * read. Free `out` with ikd_gltf_free either way. */
int ikd_gltf_read(const char *data, size_t len, const ikd_gltf_opts *o, ikd_gltf *out, ikd_error *err);
/* Each animation as {"name", "fps", "frame_time", "poses": [{"root",
 * "rotations"[, "translations"]}]} into the array being emitted by `e`:
 * the animation's channels sampled at o->fps (LINEAR, STEP, CUBICSPLINE)
 * and put through the node hierarchy; a joint's animated scale is warned
 * of (poses do not carry scales). IKD_E_OK, or an error naming the
 * animation's field (the reply is then abandoned). */
int ikd_gltf_emit_clips(ikd_gltf *g, const ikd_gltf_opts *o, ikd_emitter *e, ikd_error *err);
/* Every frame of every animation, sampled as ikd_gltf_emit_clips samples
 * them, as the joints' local rotations: *out (malloc'd, the caller frees
 * it) holds frame k's joint j at [k * count + j], *frames the frames of all
 * animations together (0 and NULL without animations). IKD_E_OK, or an
 * error as ikd_gltf_emit_clips's. */
int ikd_gltf_sample_rotations(ikd_gltf *g, const ikd_gltf_opts *o, ikd_quat **out, size_t *frames, ikd_error *err);
/* The VRM humanoid extension's bone names (VRM 1.0's VRMC_vrm, else VRM
 * 0.x's VRM: "hips", "leftUpperArm", ...) of each joint, by its node, into
 * bones[0..count) (NULL where none; the strings live as long as g).
 * Returns how many joints got one (0: the file has no such extension). */
size_t ikd_gltf_vrm_bones(const ikd_gltf *g, const char **bones);
void ikd_gltf_free(ikd_gltf *g);
/* What an import of the GLB `data` decodes, in bytes: its JSON chunk and
 * the bufferViews its skins' inverseBindMatrices and its animations'
 * samplers read (sparse parts included; a compressed view at its decoded
 * size), each view once; meshes and pictures are not read. 0 when `data`
 * is not a GLB whose header gives its length and whose first chunk is
 * JSON (the importer says what is wrong with it). */
size_t ikd_gltf_glb_weight(const char *data, size_t len);

#endif
