/* humanoid.h - humanoid roles (hips, hands, feet, ...) recognised in an imported skeleton from its joint names and its tree. */
#ifndef IKD_HUMANOID_ROLES_H
#define IKD_HUMANOID_ROLES_H

#include <stddef.h>

#include "ikd/skeleton.h"
#include "../codec/filewarn.h"

/* DESIGN.md's roles, in the order the import reply lists them. */
typedef enum ikd_role {
    IKD_ROLE_HIPS, IKD_ROLE_SPINE, IKD_ROLE_CHEST, IKD_ROLE_NECK, IKD_ROLE_HEAD,
    IKD_ROLE_SHOULDER_L, IKD_ROLE_UPPER_ARM_L, IKD_ROLE_LOWER_ARM_L, IKD_ROLE_HAND_L,
    IKD_ROLE_UPPER_LEG_L, IKD_ROLE_LOWER_LEG_L, IKD_ROLE_FOOT_L, IKD_ROLE_TOES_L,
    IKD_ROLE_SHOULDER_R, IKD_ROLE_UPPER_ARM_R, IKD_ROLE_LOWER_ARM_R, IKD_ROLE_HAND_R,
    IKD_ROLE_UPPER_LEG_R, IKD_ROLE_LOWER_LEG_R, IKD_ROLE_FOOT_R, IKD_ROLE_TOES_R,
    IKD_ROLE__COUNT
} ikd_role;

/* "hips", "spine", ..., "toes_r". */
extern const char *const ikd_role_names[IKD_ROLE__COUNT];

/* The roles of a skeleton of n joints (parents first; names[j] may be
 * NULL) into role[r]: a joint index, or -1 where the rig has none (spine,
 * neck, shoulders and toes may be absent; hands where the arms end at a
 * named forearm). Returns 1 when it is a humanoid: a head and both hands
 * (or forearms) and feet named, each limb three joints deep, hips
 * (where the legs meet) below chest (where the arms meet) below the head.
 * The whatever-the-rest-pose part: only names and the tree are read. */
int ikd_humanoid_find(const ikd_skeleton_joint *js, char *const *names, size_t n, long role[IKD_ROLE__COUNT]);

/* The roles of a skeleton whose joints carry the VRM humanoid extension's
 * bone names (bones[j], NULL where none: ikd_gltf_vrm_bones): VRM's hips,
 * spine, neck, head and limbs are the roles of the same names, chest is
 * where the upper arms meet (VRM's upperChest or chest). Returns 1 when
 * they make a humanoid by ikd_humanoid_find's rules (head, hands or lower
 * arms, feet; hips below chest below head), else 0 with role all -1. */
int ikd_humanoid_from_vrm(const ikd_skeleton_joint *js, const char *const *bones, size_t n, long role[IKD_ROLE__COUNT]);

/* limits=humanoid: each role's limit (humanoid.c's table) set on js from
 * the rest geometry: knees, elbows and toes hinges on their flexion axis,
 * hips and shoulders balls about the bone with twist ranges, spine, neck,
 * head, clavicles, wrists and ankles euler in the anatomical axes (in the
 * joint's own axes where they lie within 20 degrees of them, else with a
 * `frame`). Other joints are left as they are.
 * Returns how many limits it set. */
int ikd_humanoid_limits(ikd_skeleton_joint *js, size_t n, const long role[IKD_ROLE__COUNT], ikd_file_warnings *ws);

#endif
