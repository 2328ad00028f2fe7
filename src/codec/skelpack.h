/* skelpack.h - a clip's goals packed: only the parts each goal has, so that long clips hold little memory. */
#ifndef IKD_SKELPACK_H
#define IKD_SKELPACK_H

#include "skel.h"

/* Append the next frame's n goals, and its preferred pose when pref->has
 * (pref may be NULL), to the request's pack (frame_count goes up by one).
 * 0, or -1 out of memory. */
int ikd_skelpack_frame(ikd_skel_request *req, const ikd_goal *goals, size_t n, const ikd_frame_pref *pref);
/* Move a clip decoded whole (ikd_clip_decode) into the pack: `goals` is
 * freed. 0, or -1 out of memory. */
int ikd_skelpack_all(ikd_skel_request *req);
/* Give back the room the pack grew into beyond what it holds. */
void ikd_skelpack_trim(ikd_skel_request *req);
/* Frame k's goals (frame_first[k + 1] - frame_first[k] of them) into out,
 * and (pref not NULL) its preferred pose: pref->has, has_root, root,
 * has_trans, the rotations into pref->rot and the translations into
 * pref->trans (room for one per joint each). */
void ikd_skelpack_unpack(const ikd_skel_request *req, size_t k, ikd_goal *out, ikd_frame_pref *pref);

#endif
