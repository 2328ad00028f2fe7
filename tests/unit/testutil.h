/* testutil.h - shared helpers for the unit suites: a seeded RNG, random chains and poses, pose checks. */
#ifndef IKD_TESTUTIL_H
#define IKD_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ikd/ikd.h"

typedef struct tu_rng {
    uint64_t s;
} tu_rng;

void tu_seed(tu_rng *r, uint64_t seed);
uint64_t tu_next(tu_rng *r);
double tu_uniform(tu_rng *r, double lo, double hi);
ikd_vec3 tu_unit_vec(tu_rng *r);
ikd_quat tu_unit_quat(tu_rng *r);
/* A rotation by an angle uniform in [0, max_rad] about a random axis. */
ikd_quat tu_small_quat(tu_rng *r, double max_rad);

/* A random chain of `n` joints: root in [-5,5]^3, bone lengths in
 * [lmin, lmax], random directions, random start rotations. */
void tu_random_chain(tu_rng *r, ikd_joint *joints, size_t n, double lmin, double lmax);

/* Largest deviation of a solved pose from its chain's bone lengths,
 * relative to the bone's length. */
double tu_max_length_error(const ikd_joint *joints, const ikd_pose_joint *pose, size_t n);

/* Largest deviation (vector norm) from the rotation rules of DESIGN.md:
 * unit quaternions, each bone's world rotation delta maps its start
 * direction onto its new one, world = parent world * local. */
double tu_max_rotation_error(const ikd_joint *joints, const ikd_pose_joint *pose, size_t n);

/* Largest limit violation of a pose in radians, computed here from DESIGN.md's
 * definitions, independently of the library's constraint module: a hinge
 * bone must lie in the plane normal to its axis (the start axis turned by
 * the parent bone's shortest-arc rotation) at a signed angle from the parent
 * direction within [min_deg, max_deg]; a ball bone within max_deg of the
 * parent direction; the root measured from its reference (default: its
 * start direction). */
double tu_limit_violation(const ikd_joint *joints, const ikd_pose_joint *pose, size_t n);

/* Run a libcheck suite (struct Suite *) and return the process exit status. */
struct Suite;
int tu_run_suite(struct Suite *s);

/* Read a whole file into a malloc'd NUL-terminated buffer (NULL on failure). */
char *tu_read_file(const char *path, size_t *len);

/* The fixtures folder: $IKD_TEST_FIXTURES or "tests/fixtures". */
const char *tu_fixtures_dir(void);

#endif
