/* bvh.h - BVH motion capture files read into a joint hierarchy and its frames of channel values. */
#ifndef IKD_BVH_H
#define IKD_BVH_H

#include <stddef.h>

#include "filewarn.h"
#include "ikd/error.h"
#include "ikd/math.h"
#include "ikd/skeleton.h"

/* A channel of a BVH joint: a position along or a rotation about one of
 * the joint's parent-frame axes. */
typedef enum { IKD_BVH_XPOS, IKD_BVH_YPOS, IKD_BVH_ZPOS, IKD_BVH_XROT, IKD_BVH_YROT, IKD_BVH_ZROT } ikd_bvh_channel;

#define IKD_BVH_NAME_MAX 257  /* longest joint name kept, NUL included (a skeleton's longest, 256 bytes;
                                 longer: 400) */

typedef struct ikd_bvh_joint {
    char name[IKD_BVH_NAME_MAX];
    int parent;               /* index of an earlier joint; -1 for the root */
    ikd_vec3 offset;          /* OFFSET, times the scale: from the parent's origin, in its frame */
    int nchan;                /* 0..6 */
    unsigned char chan[6];    /* ikd_bvh_channel, in the file's order */
    size_t chan_at;           /* its first channel's index in a frame's values */
    int end_site;             /* an End Site: no channels, no children */
} ikd_bvh_joint;

typedef struct ikd_bvh {
    ikd_bvh_joint *joints;    /* owned; parents before children (file order) */
    size_t count;
    size_t channels;          /* values per frame */
    size_t frames;            /* frames read (the data wins over the Frames: line) */
    double frame_time;        /* seconds; > 0 */
    double *motion;           /* owned: frames x channels, positions times the scale, degrees */
    ikd_file_warnings warnings;
    int too_large;            /* the error was a count over max_joints or max_frames */
} ikd_bvh;

/* Parse a BVH file (`text`, `len` bytes; CRLF or LF; any channel order per
 * joint; six channels on any joint; End Sites). Lengths are multiplied by
 * `scale`. More than max_joints joints (End Sites included) or max_frames
 * frames: IKD_E_INVALID with too_large set. Errors name the line: field "line 12". `out` is
 * set up either way: free it with ikd_bvh_free. */
int ikd_bvh_read(const char *text, size_t len, double scale, size_t max_joints, size_t max_frames, ikd_bvh *out,
                 ikd_error *err);
void ikd_bvh_free(ikd_bvh *b);

/* Joint j's local rotation at frame k (its rotation channels composed in
 * the file's order: R = R_c1 R_c2 R_c3), and its translation from its
 * parent (OFFSET plus its position channels, scaled); *moved = 1 when the
 * joint has position channels. */
void ikd_bvh_joint_at(const ikd_bvh *b, size_t j, size_t k, ikd_quat *rotation, ikd_vec3 *translation, int *moved);

/* ---- writing ---- */

struct ikd_buf;

/* The HIERARCHY of a skeleton (validated): its rest pose as OFFSETs (each
 * joint's rest position less its parent's, world axes), channels
 * "Xposition Yposition Zposition Zrotation Yrotation Xrotation" on the root
 * and "Zrotation Yrotation Xrotation" on the others, an End Site of OFFSET
 * 0 0 0 under each leaf; names[j] or "joint<j>" (NULL names: all so). A
 * leaf named "<parent>_End" (an End Site as the importer names it), its
 * parent's only child, is written as that End Site. Then MOTION with
 * `frames` and `frame_time`. order[0..n) gets the joints written with
 * channels, in the file's order (depth first), for ikd_bvh_write_frame;
 * returns n. */
size_t ikd_bvh_write_head(struct ikd_buf *out, const ikd_skeleton *s, char *const *names, size_t frames,
                          double frame_time, size_t *order);
/* One frame: the root's world position and every joint's local rotation
 * (ikd's, relative to the rest pose's rotations: the BVH rotation of joint j
 * is rest_p local_j rest_j^-1, so that the file's kinematics put every
 * joint where ikd's put it). */
void ikd_bvh_write_frame(struct ikd_buf *out, const ikd_skeleton *s, const size_t *order, size_t n, ikd_vec3 root,
                         const ikd_quat *local);

#endif
