/* humanoid.c - humanoid roles recognised in an imported skeleton: hands, feet and head by name, the rest by the tree. */
#include "humanoid.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const ikd_role_names[IKD_ROLE__COUNT] = {
    "hips",        "spine",       "chest",  "neck",   "head",        "shoulder_l",  "upper_arm_l",
    "lower_arm_l", "hand_l",      "upper_leg_l", "lower_leg_l", "foot_l", "toes_l", "shoulder_r",
    "upper_arm_r", "lower_arm_r", "hand_r", "upper_leg_r", "lower_leg_r", "foot_r", "toes_r"};

/* ---- names ---------------------------------------------------------------
 * A name is cut into words: at anything not a letter or digit, where a
 * lower-case letter meets an upper-case one ("LeftHand"), before the last
 * capital of a run that a lower-case letter follows ("LHip"), and between
 * letters and digits ("Spine1", "Bip01"). Digits alone say nothing; `left`,
 * `l`, `right` and `r` give the side; the prefixes of the common rigs
 * (Mixamo's `mixamorig`, Rigify's `DEF`/`ORG`/`MCH`, VRM's `J_Bip_C_`,
 * 3ds Max's `Bip01`) are dropped, and where that finds no humanoid, the
 * rig's own prefix too (rig_prefix). The rest, joined, is the base name:
 * `mixamorig:LeftHand`, `hand_l`, `J_Bip_L_Hand`, `DEF-hand.L`, `Bip01 L
 * Hand` and `lHand` are all the left `hand`; `LeftHandIndex1` is
 * `handindex`, a finger. */

enum { SIDE_NONE, SIDE_L, SIDE_R };
enum { KIND_OTHER, KIND_HAND, KIND_FOOT, KIND_HEAD, KIND_TOES, KIND_FOREARM };
#define HUMANOID_BASE 24 /* a name's base (its words but side, prefix and digits) kept up to this, NUL included */

static int boundary(const char *s, size_t i)
{
    unsigned char a = (unsigned char)s[i - 1], b = (unsigned char)s[i], c = (unsigned char)s[i + 1];
    return (islower(a) && isupper(b)) || (isupper(a) && isupper(b) && islower(c)) || (!!isdigit(a) != !!isdigit(b));
}

static void analyse(const char *name, int *side, int *kind, char *base_out)
{
    static const char *const dropped[] = {"mixamorig", "def", "org", "mch", "bip", "j", "c", "twist", "bend", "roll", NULL};
    static const struct { const char *base; int kind; } bases[] = {
        {"hand", KIND_HAND}, {"wrist", KIND_HAND}, {"foot", KIND_FOOT}, {"ankle", KIND_FOOT}, {"head", KIND_HEAD},
        {"toe", KIND_TOES},  {"toes", KIND_TOES},  {"toebase", KIND_TOES}, {"ball", KIND_TOES},
        {"forearm", KIND_FOREARM}, {"lowerarm", KIND_FOREARM}, {"elbow", KIND_FOREARM}};
    char base[HUMANOID_BASE];
    size_t bl = 0, len = name ? strlen(name) : 0;
    *side = SIDE_NONE, *kind = KIND_OTHER, base_out[0] = '\0';
    for (size_t i = 0; i < len;) {
        if (!isalnum((unsigned char)name[i])) {
            i++;
            continue;
        }
        char w[32];
        size_t wl = 0, j = i;
        do {
            if (wl < sizeof w - 1) w[wl++] = (char)tolower((unsigned char)name[j]);
            j++;
        } while (j < len && isalnum((unsigned char)name[j]) && !boundary(name, j));
        w[wl] = '\0';
        i = j;
        if (isdigit((unsigned char)w[0])) continue;
        if (!strcmp(w, "left") || !strcmp(w, "l")) { *side = SIDE_L; continue; }
        if (!strcmp(w, "right") || !strcmp(w, "r")) { *side = SIDE_R; continue; }
        int drop = 0; /* a prefix, or what names one segment of a bone (DAZ's lForearmBend, lForearmTwist) */
        for (int d = 0; dropped[d] && !drop; d++) drop = !strcmp(w, dropped[d]);
        if (drop) continue;
        if (bl + wl >= sizeof base) { /* longer than any base name known */
            base_out[0] = '\0';
            return;
        }
        memcpy(base + bl, w, wl), bl += wl;
    }
    base[bl] = '\0';
    memcpy(base_out, base, bl + 1);
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        if (!strcmp(base, bases[b].base)) *kind = bases[b].kind;
}

/* ---- the tree -------------------------------------------------------------- */

static int is_ancestor(const ikd_skeleton_joint *js, long a, long k) /* a is k or above it */
{
    for (; k >= 0; k = js[k].parent)
        if (k == a) return 1;
    return 0;
}

static long common_ancestor(const ikd_skeleton_joint *js, long a, long b)
{
    for (; a >= 0; a = js[a].parent)
        if (is_ancestor(js, a, b)) return a;
    return -1;
}

/* The joint below `top` on the way to `k` (k below top), -1 when that is k itself. */
static long next_below(const ikd_skeleton_joint *js, long top, long k)
{
    long c = k;
    while (c >= 0 && js[c].parent != top) c = js[c].parent;
    return c == k ? -1 : c;
}

/* The first of k's segments: k's parent while it is the same bone cut in
 * parts (its base name and side, Rigify's "DEF-forearm.L" above
 * "DEF-forearm.L.001"). */
static long first_segment(const ikd_skeleton_joint *js, const int *side, char (*base)[HUMANOID_BASE], long k)
{
    while (k >= 0 && js[k].parent >= 0 && base[k][0] && side[js[k].parent] == side[k] && !strcmp(base[js[k].parent], base[k]))
        k = js[k].parent;
    return k;
}

/* The parent of k's first segment, its own first segment (-1 at the top). */
static long bone_above(const ikd_skeleton_joint *js, const int *side, char (*base)[HUMANOID_BASE], long k)
{
    k = first_segment(js, side, base, k);
    return k >= 0 && js[k].parent >= 0 ? first_segment(js, side, base, js[k].parent) : -1;
}

/* A limb from its end up: end, middle, upper, and the joint above when it
 * is of the same side (a shoulder), a bone cut in segments counted once at
 * its first. 0 when the tree is not that deep. */
static int limb(const ikd_skeleton_joint *js, const int *side, char (*base)[HUMANOID_BASE], long end, long *mid,
                long *upper, long *above)
{
    *mid = bone_above(js, side, base, end);
    *upper = *mid >= 0 ? bone_above(js, side, base, *mid) : -1;
    if (*upper < 0) return 0;
    long a = bone_above(js, side, base, *upper);
    *above = a >= 0 && side[a] == side[end] ? a : -1;
    return 1;
}

/* No joint named head: the top of the chain of joints named spine or neck
 * above the chest that no arm hangs from (Rigify's DEF-spine.004 to .006
 * above DEF-spine.003), -1 when there is none. */
static long head_by_chain(const ikd_skeleton_joint *js, size_t n, char (*base)[HUMANOID_BASE], long chest,
                          const long role[IKD_ROLE__COUNT])
{
    long at = chest;
    for (;;) {
        long next = -1;
        for (size_t j = (size_t)at + 1; j < n; j++) {
            if (js[j].parent != at || (strcmp(base[j], "spine") && strcmp(base[j], "neck"))) continue;
            int arm = 0;
            for (int r = IKD_ROLE_SHOULDER_L; r < IKD_ROLE__COUNT && !arm; r++) arm = role[r] >= 0 && is_ancestor(js, (long)j, role[r]);
            if (arm) continue;
            if (next >= 0) return -1; /* two such chains: no telling which is the head */
            next = (long)j;
        }
        if (next < 0) return at == chest ? -1 : at;
        at = next;
    }
}

/* hips below chest below head, no limb joint among them (the limbs'
 * roles set); 0 with role cleared when not. */
static int trunk_ok(const ikd_skeleton_joint *js, long hips, long chest, long head, long role[IKD_ROLE__COUNT])
{
    int ok = hips >= 0 && chest >= 0 && chest != hips && is_ancestor(js, hips, chest) && head >= 0 && head != chest &&
             is_ancestor(js, chest, head);
    for (int r = IKD_ROLE_SHOULDER_L; ok && r < IKD_ROLE__COUNT; r++)
        ok = role[r] < 0 || (role[r] != hips && role[r] != chest && !is_ancestor(js, role[r], head));
    if (!ok)
        for (int r = 0; r < IKD_ROLE__COUNT; r++) role[r] = -1;
    return ok;
}

/* The rig's own prefix where the known ones are not enough
 * (MotionBuilder's `Character1_`, Reallusion's `CC_Base_`): what the names
 * of the feet (the first two joints whose names hold `foot`, any case)
 * share, cut before the first `foot` and back to a word's start; 0 when
 * they share none. */
static size_t rig_prefix(char *const *names, size_t n, const char **prefix)
{
    const char *f[2] = {NULL, NULL};
    for (size_t j = 0; names && j < n && !f[1]; j++)
        if (names[j] && strcasestr(names[j], "foot")) f[f[0] ? 1 : 0] = names[j];
    if (!f[1]) return 0;
    size_t l = 0, stop = (size_t)(strcasestr(f[0], "foot") - f[0]);
    while (l < stop && f[0][l] == f[1][l]) l++;
    while (l > 0 && isalnum((unsigned char)f[0][l - 1]) && !(l < stop && boundary(f[0], l))) l--;
    *prefix = f[0];
    return l;
}

/* ikd_humanoid_find with `plen` bytes of `prefix` dropped from each name
 * that starts with them. */
static int find_roles(const ikd_skeleton_joint *js, char *const *names, size_t n, const char *prefix, size_t plen,
                      long role[IKD_ROLE__COUNT])
{
    int side[512], kind[512];
    static _Thread_local char base[512][HUMANOID_BASE]; /* 12 KB: off the stack of a worker thread */
    for (int r = 0; r < IKD_ROLE__COUNT; r++) role[r] = -1;
    if (n > sizeof side / sizeof side[0]) return 0;
    long hand[3] = {-1, -1, -1}, fore[3] = {-1, -1, -1}, foot[3] = {-1, -1, -1}, head = -1;
    for (size_t j = 0; j < n; j++) {
        const char *name = names ? names[j] : NULL;
        if (name && plen && strncmp(name, prefix, plen) == 0) name += plen;
        analyse(name, &side[j], &kind[j], base[j]);
        if (kind[j] == KIND_HAND && side[j] && hand[side[j]] < 0) hand[side[j]] = (long)j;
        if (kind[j] == KIND_FOREARM && side[j] && fore[side[j]] < 0) fore[side[j]] = (long)j;
        if (kind[j] == KIND_FOOT && side[j] && foot[side[j]] < 0) foot[side[j]] = (long)j;
    }
    if (foot[SIDE_L] < 0 || foot[SIDE_R] < 0) return 0;
    static const ikd_role arm[2][4] = {{IKD_ROLE_HAND_L, IKD_ROLE_LOWER_ARM_L, IKD_ROLE_UPPER_ARM_L, IKD_ROLE_SHOULDER_L},
                                       {IKD_ROLE_HAND_R, IKD_ROLE_LOWER_ARM_R, IKD_ROLE_UPPER_ARM_R, IKD_ROLE_SHOULDER_R}};
    static const ikd_role leg[2][3] = {{IKD_ROLE_FOOT_L, IKD_ROLE_LOWER_LEG_L, IKD_ROLE_UPPER_LEG_L},
                                       {IKD_ROLE_FOOT_R, IKD_ROLE_LOWER_LEG_R, IKD_ROLE_UPPER_LEG_R}};
    for (int s = 0; s < 2; s++) {
        long m, u, a, x;
        if (hand[s + 1] >= 0) { /* the arm from its hand */
            if (!limb(js, side, base, hand[s + 1], &m, &u, &a)) return 0;
            role[arm[s][0]] = hand[s + 1], role[arm[s][1]] = m, role[arm[s][2]] = u, role[arm[s][3]] = a;
        } else { /* a rig whose arms end at the forearm (no hand bones) */
            if (fore[s + 1] < 0 || !limb(js, side, base, fore[s + 1], &u, &a, &x)) return 0;
            role[arm[s][1]] = fore[s + 1], role[arm[s][2]] = u, role[arm[s][3]] = side[a] == s + 1 ? a : -1;
        }
        if (!limb(js, side, base, foot[s + 1], &m, &u, &a)) return 0;
        role[leg[s][0]] = foot[s + 1], role[leg[s][1]] = m, role[leg[s][2]] = u;
        /* toes: a child of the foot named so, or named as a foot where the
         * foot is an ankle (SMPL's L_Ankle, L_Foot) */
        for (size_t j = (size_t)foot[s + 1] + 1; j < n; j++)
            if (js[j].parent == foot[s + 1] && (kind[j] == KIND_TOES || (kind[j] == KIND_FOOT && side[j] == s + 1))) {
                role[s ? IKD_ROLE_TOES_R : IKD_ROLE_TOES_L] = (long)j;
                break;
            }
    }
    long hips = common_ancestor(js, role[IKD_ROLE_UPPER_LEG_L], role[IKD_ROLE_UPPER_LEG_R]);
    long chest = common_ancestor(js, role[IKD_ROLE_UPPER_ARM_L], role[IKD_ROLE_UPPER_ARM_R]);
    /* the legs on a pelvis joint beside the spine (Reallusion's CC_Base_Pelvis
     * and CC_Base_Waist under CC_Base_Hip): the hips are where both hang */
    if (hips >= 0 && chest >= 0 && !is_ancestor(js, hips, chest)) hips = common_ancestor(js, hips, chest);
    for (size_t j = 0; j < n && head < 0; j++)
        if (kind[j] == KIND_HEAD && !side[j] && chest >= 0 && chest != (long)j && is_ancestor(js, chest, (long)j)) head = (long)j;
    if (head < 0 && chest >= 0) head = head_by_chain(js, n, base, chest, role);
    if (!trunk_ok(js, hips, chest, head, role)) return 0;
    role[IKD_ROLE_HIPS] = hips, role[IKD_ROLE_CHEST] = chest, role[IKD_ROLE_HEAD] = head;
    role[IKD_ROLE_SPINE] = next_below(js, hips, chest);
    role[IKD_ROLE_NECK] = next_below(js, chest, head);
    return 1;
}

int ikd_humanoid_find(const ikd_skeleton_joint *js, char *const *names, size_t n, long role[IKD_ROLE__COUNT])
{
    const char *prefix = NULL;
    size_t plen;
    if (find_roles(js, names, n, NULL, 0, role)) return 1;
    return (plen = rig_prefix(names, n, &prefix)) > 0 && find_roles(js, names, n, prefix, plen, role);
}

int ikd_humanoid_from_vrm(const ikd_skeleton_joint *js, const char *const *bones, size_t n, long role[IKD_ROLE__COUNT])
{
    static const struct { const char *vrm; int role; } map[] = {
        {"hips", IKD_ROLE_HIPS},  {"spine", IKD_ROLE_SPINE}, {"neck", IKD_ROLE_NECK}, {"head", IKD_ROLE_HEAD},
        {"leftShoulder", IKD_ROLE_SHOULDER_L},   {"leftUpperArm", IKD_ROLE_UPPER_ARM_L},
        {"leftLowerArm", IKD_ROLE_LOWER_ARM_L},  {"leftHand", IKD_ROLE_HAND_L},
        {"leftUpperLeg", IKD_ROLE_UPPER_LEG_L},  {"leftLowerLeg", IKD_ROLE_LOWER_LEG_L},
        {"leftFoot", IKD_ROLE_FOOT_L},           {"leftToes", IKD_ROLE_TOES_L},
        {"rightShoulder", IKD_ROLE_SHOULDER_R},  {"rightUpperArm", IKD_ROLE_UPPER_ARM_R},
        {"rightLowerArm", IKD_ROLE_LOWER_ARM_R}, {"rightHand", IKD_ROLE_HAND_R},
        {"rightUpperLeg", IKD_ROLE_UPPER_LEG_R}, {"rightLowerLeg", IKD_ROLE_LOWER_LEG_R},
        {"rightFoot", IKD_ROLE_FOOT_R},          {"rightToes", IKD_ROLE_TOES_R}};
    for (int r = 0; r < IKD_ROLE__COUNT; r++) role[r] = -1;
    for (size_t j = 0; j < n; j++)
        for (size_t k = 0; bones[j] && k < sizeof map / sizeof map[0]; k++)
            if (!strcmp(bones[j], map[k].vrm)) role[map[k].role] = (long)j;
    static const int limbs[4][4] = {/* a limb's roles from the top down, each kept only below the last */
        {IKD_ROLE_SHOULDER_L, IKD_ROLE_UPPER_ARM_L, IKD_ROLE_LOWER_ARM_L, IKD_ROLE_HAND_L},
        {IKD_ROLE_SHOULDER_R, IKD_ROLE_UPPER_ARM_R, IKD_ROLE_LOWER_ARM_R, IKD_ROLE_HAND_R},
        {IKD_ROLE_UPPER_LEG_L, IKD_ROLE_LOWER_LEG_L, IKD_ROLE_FOOT_L, IKD_ROLE_TOES_L},
        {IKD_ROLE_UPPER_LEG_R, IKD_ROLE_LOWER_LEG_R, IKD_ROLE_FOOT_R, IKD_ROLE_TOES_R}};
    for (int l = 0; l < 4; l++) {
        long above = -1;
        for (int t = 0; t < 4; t++) {
            long k = role[limbs[l][t]];
            if (k < 0) continue;
            if (above >= 0 && (k == above || !is_ancestor(js, above, k))) role[limbs[l][t]] = -1;
            else above = k;
        }
    }
    int limbs_ok = role[IKD_ROLE_UPPER_ARM_L] >= 0 && role[IKD_ROLE_UPPER_ARM_R] >= 0 && role[IKD_ROLE_LOWER_ARM_L] >= 0 &&
                   role[IKD_ROLE_LOWER_ARM_R] >= 0 && role[IKD_ROLE_FOOT_L] >= 0 && role[IKD_ROLE_FOOT_R] >= 0 &&
                   role[IKD_ROLE_LOWER_LEG_L] >= 0 && role[IKD_ROLE_LOWER_LEG_R] >= 0 && role[IKD_ROLE_UPPER_LEG_L] >= 0 &&
                   role[IKD_ROLE_UPPER_LEG_R] >= 0;
    long chest = limbs_ok ? common_ancestor(js, role[IKD_ROLE_UPPER_ARM_L], role[IKD_ROLE_UPPER_ARM_R]) : -1;
    if (!limbs_ok || !trunk_ok(js, role[IKD_ROLE_HIPS], chest, role[IKD_ROLE_HEAD], role)) {
        for (int r = 0; r < IKD_ROLE__COUNT; r++) role[r] = -1;
        return 0;
    }
    role[IKD_ROLE_CHEST] = chest;
    if (role[IKD_ROLE_SPINE] >= 0 && (role[IKD_ROLE_SPINE] == chest || !is_ancestor(js, role[IKD_ROLE_SPINE], chest)))
        role[IKD_ROLE_SPINE] = next_below(js, role[IKD_ROLE_HIPS], chest);
    if (role[IKD_ROLE_NECK] >= 0 && !is_ancestor(js, chest, role[IKD_ROLE_NECK]))
        role[IKD_ROLE_NECK] = next_below(js, chest, role[IKD_ROLE_HEAD]);
    return 1;
}

/* ---- limits=humanoid ---------------------------------------------------------
 * Per-role limits in anatomical axes of the rest geometry: up (hips to
 * head), forward (the feet, else the knees' bend: ikd_humanoid_limits),
 * left (up x forward).
 * Every range is [the opposite motion, the named motion] in degrees, 0 the
 * rest pose, from the published ranges of motion of healthy adults (AAOS,
 * "Joint Motion: Method of Measuring and Recording", 1965; Ryf and Weymann,
 * "Range of Motion: AO Neutral-0 Method", 1999; the thoracolumbar and
 * cervical totals split between the two joints a rig has for each; the
 * clavicle's from Ludewig et al., J Bone Joint Surg 2009). docs/files.md
 * has the table with each row's source and what real motion does in it. */

typedef enum { ROM_HINGE, ROM_BALL, ROM_EULER } rom_kind;
typedef enum { AXIS_LEFT, AXIS_ELBOW, AXIS_ELEVATE } rom_hint; /* the flexion axis: left, the arm's elbow axis, bone x up */

typedef struct rom_row {
    ikd_role role;
    rom_kind kind;
    rom_hint hint;
    double flex[2];  /* hinge: its range; ball: [0, cone]; euler: about the flexion axis */
    double side[2];  /* euler: about the third axis (bend to the side, deviation, protraction) */
    double twist[2]; /* ball and euler: about the bone (spine, neck, head: about up) */
} rom_row;

static const rom_row rom_table[] = {
    {IKD_ROLE_SPINE, ROM_EULER, AXIS_LEFT, {-15, 40}, {-20, 20}, {-20, 20}},
    {IKD_ROLE_CHEST, ROM_EULER, AXIS_LEFT, {-10, 40}, {-15, 15}, {-25, 25}},
    {IKD_ROLE_NECK, ROM_EULER, AXIS_LEFT, {-30, 25}, {-25, 25}, {-35, 35}},
    {IKD_ROLE_HEAD, ROM_EULER, AXIS_LEFT, {-25, 20}, {-20, 20}, {-35, 35}},
    {IKD_ROLE_SHOULDER_L, ROM_EULER, AXIS_ELEVATE, {-10, 40}, {-25, 25}, {-30, 30}},
    {IKD_ROLE_SHOULDER_R, ROM_EULER, AXIS_ELEVATE, {-10, 40}, {-25, 25}, {-30, 30}},
    {IKD_ROLE_UPPER_ARM_L, ROM_BALL, AXIS_LEFT, {0, 120}, {0, 0}, {-90, 90}},
    {IKD_ROLE_UPPER_ARM_R, ROM_BALL, AXIS_LEFT, {0, 120}, {0, 0}, {-90, 90}},
    {IKD_ROLE_LOWER_ARM_L, ROM_HINGE, AXIS_ELBOW, {-10, 150}, {0, 0}, {0, 0}},
    {IKD_ROLE_LOWER_ARM_R, ROM_HINGE, AXIS_ELBOW, {-10, 150}, {0, 0}, {0, 0}},
    {IKD_ROLE_HAND_L, ROM_EULER, AXIS_ELBOW, {-75, 75}, {-30, 30}, {-80, 80}},
    {IKD_ROLE_HAND_R, ROM_EULER, AXIS_ELBOW, {-75, 75}, {-30, 30}, {-80, 80}},
    {IKD_ROLE_UPPER_LEG_L, ROM_BALL, AXIS_LEFT, {0, 120}, {0, 0}, {-45, 45}},
    {IKD_ROLE_UPPER_LEG_R, ROM_BALL, AXIS_LEFT, {0, 120}, {0, 0}, {-45, 45}},
    {IKD_ROLE_LOWER_LEG_L, ROM_HINGE, AXIS_LEFT, {-10, 135}, {0, 0}, {0, 0}},
    {IKD_ROLE_LOWER_LEG_R, ROM_HINGE, AXIS_LEFT, {-10, 135}, {0, 0}, {0, 0}},
    {IKD_ROLE_FOOT_L, ROM_EULER, AXIS_LEFT, {-20, 50}, {-15, 15}, {-25, 25}},
    {IKD_ROLE_FOOT_R, ROM_EULER, AXIS_LEFT, {-20, 50}, {-15, 15}, {-25, 25}},
    {IKD_ROLE_TOES_L, ROM_HINGE, AXIS_LEFT, {-70, 40}, {0, 0}, {0, 0}},
    {IKD_ROLE_TOES_R, ROM_HINGE, AXIS_LEFT, {-70, 40}, {0, 0}, {0, 0}},
};

/* The direction from joint k to its first child (the bone), or `or`. */
static ikd_vec3 bone_dir(const ikd_skeleton_joint *js, size_t n, long k, ikd_vec3 or)
{
    for (size_t c = (size_t)k + 1; c < n; c++)
        if (js[c].parent == k && ikd_vec3_len(ikd_vec3_sub(js[c].position, js[k].position)) > 0)
            return ikd_vec3_norm_or(ikd_vec3_sub(js[c].position, js[k].position), or);
    return or;
}

/* A hinge's axis and its rest bend: the flexion sense `hint`, or the plane
 * the rest pose already bends the limb in (more than 10 degrees), turned to
 * agree with the hint. *bend: the rest pose's flexion, degrees. */
static ikd_vec3 hinge_axis(ikd_vec3 upper, ikd_vec3 lower, ikd_vec3 hint, double *bend)
{
    ikd_vec3 plane = ikd_vec3_cross(upper, lower);
    ikd_vec3 axis = hint;
    if (ikd_vec3_len(plane) > sin(10 * IKD_DEG2RAD)) {
        axis = ikd_vec3_norm_or(plane, hint);
        if (ikd_vec3_dot(axis, hint) < 0) axis = ikd_vec3_scale(axis, -1);
    }
    axis = ikd_vec3_norm_or(ikd_vec3_reject(axis, upper), hint);
    *bend = ikd_vec3_signed_angle(upper, lower, axis) * IKD_RAD2DEG;
    return axis;
}

/* Euler limit l's angle i: its range [lo, hi] (degrees) and its neutral
 * the anatomical zero, rest (the table's ranges are measured from it; the
 * middle where a range excludes it), not the middle of the range: a spine
 * flexed 12.5 degrees, clavicles raised 15. */
static void set_angle(ikd_limit *l, int i, double lo, double hi)
{
    l->euler_min_deg[i] = lo, l->euler_max_deg[i] = hi;
    l->euler_neutral_deg[i] = lo <= 0 && 0 <= hi ? 0 : 0.5 * (lo + hi);
    l->has_neutral = 1;
}

/* An euler limit on joint k whose anatomical axes a[0..3) (flexion, side,
 * twist: unit, orthogonal) each lie within 20 degrees of one of the joint's
 * own rest axes: order, ranges and neutral (rest) in those axes (a range turns over where
 * its axis is the joint's negated). 0 when they do not. */
static int euler_in_own_axes(const ikd_skeleton_joint *j, const ikd_vec3 a[3], const double (*range)[2], ikd_limit *l)
{
    static const char letters[] = "xyz";
    ikd_vec3 own[3] = {ikd_vec3_make(1, 0, 0), ikd_vec3_make(0, 1, 0), ikd_vec3_make(0, 0, 1)};
    int used = 0;
    for (int i = 0; i < 3; i++) own[i] = ikd_quat_rotate(j->rotation, own[i]);
    char order[4] = {0};
    ikd_limit_init(l, IKD_LIMIT_EULER);
    for (int i = 0; i < 3; i++) {
        int best = 0;
        for (int k = 1; k < 3; k++)
            if (fabs(ikd_vec3_dot(a[i], own[k])) > fabs(ikd_vec3_dot(a[i], own[best]))) best = k;
        double d = ikd_vec3_dot(a[i], own[best]);
        if (fabs(d) < cos(20 * IKD_DEG2RAD) || (used & (1 << best))) return 0;
        used |= 1 << best, order[i] = letters[best];
        if (d > 0) set_angle(l, i, range[i][0], range[i][1]);
        else set_angle(l, i, -range[i][1], -range[i][0]);
    }
    for (int o = 0; o <= IKD_EULER_ZYX; o++)
        if (!strcmp(ikd_limit_order_name((ikd_euler_order)o), order)) l->order = (ikd_euler_order)o;
    return 1;
}

/* An euler limit in the anatomical axes a[0..3) themselves (flexion, side,
 * twist: unit, orthogonal, right-handed), for a joint whose own rest axes
 * are not within 20 degrees of them (a glTF bone rolled about itself, a BVH
 * character facing 45 degrees off an axis): order xyz in a frame whose x,
 * y and z are a[0], a[1] and a[2]; ranges and neutral as the table gives
 * them. (Before frames, such a joint got a ball as wide as its widest
 * range, warned `limit_approximate`: a wrist that could bend 75 degrees
 * sideways where the table allows 30.) */
static void euler_in_frame(const ikd_vec3 a[3], const double (*range)[2], ikd_limit *l)
{
    ikd_limit_init(l, IKD_LIMIT_EULER);
    l->order = IKD_EULER_XYZ;
    for (int i = 0; i < 3; i++) set_angle(l, i, range[i][0], range[i][1]);
    l->frame = ikd_quat_from_axes(a[0], a[1]), l->has_frame = 1;
}

/* A limb's bones cut in segments (Rigify's DEF-forearm.L.001, DAZ's
 * lShldrTwist: joints between two of its roles) turn only about their
 * bone: a hinge on it with the twist the table gives that part of the limb
 * (upper arm +-90, forearm the wrist's pronation +-80, thigh +-45); the
 * shin's, which the table does not twist, fixed. Returns how many. */
static int limit_segments(ikd_skeleton_joint *js, size_t n, const long role[IKD_ROLE__COUNT])
{
    static const struct { ikd_role top, bottom, twist; } parts[] = {
        {IKD_ROLE_UPPER_ARM_L, IKD_ROLE_LOWER_ARM_L, IKD_ROLE_UPPER_ARM_L}, {IKD_ROLE_LOWER_ARM_L, IKD_ROLE_HAND_L, IKD_ROLE_HAND_L},
        {IKD_ROLE_UPPER_LEG_L, IKD_ROLE_LOWER_LEG_L, IKD_ROLE_UPPER_LEG_L}, {IKD_ROLE_LOWER_LEG_L, IKD_ROLE_FOOT_L, IKD_ROLE_LOWER_LEG_L},
        {IKD_ROLE_UPPER_ARM_R, IKD_ROLE_LOWER_ARM_R, IKD_ROLE_UPPER_ARM_R}, {IKD_ROLE_LOWER_ARM_R, IKD_ROLE_HAND_R, IKD_ROLE_HAND_R},
        {IKD_ROLE_UPPER_LEG_R, IKD_ROLE_LOWER_LEG_R, IKD_ROLE_UPPER_LEG_R}, {IKD_ROLE_LOWER_LEG_R, IKD_ROLE_FOOT_R, IKD_ROLE_LOWER_LEG_R}};
    int set = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        long top = role[parts[i].top], bottom = role[parts[i].bottom];
        if (top < 0 || bottom < 0 || !is_ancestor(js, top, bottom)) continue;
        const double *twist = NULL;
        for (size_t r = 0; r < sizeof rom_table / sizeof rom_table[0]; r++)
            if (rom_table[r].role == parts[i].twist) twist = rom_table[r].twist;
        for (long k = js[bottom].parent; k >= 0 && k != top; k = js[k].parent) {
            ikd_vec3 bone = bone_dir(js, n, k, ikd_vec3_make(0, 0, 0));
            if (!(ikd_vec3_len(bone) > 0)) continue;
            ikd_limit *l = &js[k].limit;
            if (!twist || twist[1] <= twist[0]) {
                ikd_limit_init(l, IKD_LIMIT_FIXED);
            } else {
                ikd_limit_init(l, IKD_LIMIT_HINGE);
                l->has_axis = 1, l->axis = bone, l->min_deg = twist[0], l->max_deg = twist[1];
            }
            set++;
        }
    }
    return set;
}

/* A rest pose whose feet are not below its hips by a quarter of the leg (a
 * zero pose in one line) gives the table's axes and zeros no meaning: said
 * (warning rest_not_standing), not guessed. */
static void warn_not_standing(const ikd_skeleton_joint *js, const long role[IKD_ROLE__COUNT], ikd_vec3 up,
                              ikd_file_warnings *ws)
{
    for (int sd = 0; sd < 2; sd++) {
        long f = role[sd ? IKD_ROLE_FOOT_R : IKD_ROLE_FOOT_L], hp = role[sd ? IKD_ROLE_UPPER_LEG_R : IKD_ROLE_UPPER_LEG_L];
        long kn = js[f].parent;
        double leg = kn < 0 ? 0 : ikd_vec3_dist(js[f].position, js[kn].position) + ikd_vec3_dist(js[kn].position, js[hp].position);
        if (ikd_vec3_dot(ikd_vec3_sub(js[f].position, js[hp].position), up) < -0.25 * leg) continue;
        ikd_file_warn(ws, "rest_not_standing", "hips",
                      "the rest pose is no standing pose (its feet are not below its hips): the humanoid limits, "
                      "measured from it, may not fit; ?limits=recording (a BVH take's own), limits of your own or ?limits=none");
        return;
    }
}

int ikd_humanoid_limits(ikd_skeleton_joint *js, size_t n, const long role[IKD_ROLE__COUNT], ikd_file_warnings *ws)
{
    ikd_vec3 hips = js[role[IKD_ROLE_HIPS]].position;
    ikd_vec3 up = ikd_vec3_norm_or(ikd_vec3_sub(js[role[IKD_ROLE_HEAD]].position, hips), ikd_vec3_make(0, 1, 0));
    ikd_vec3 lr = ikd_vec3_sub(js[role[IKD_ROLE_UPPER_LEG_L]].position, js[role[IKD_ROLE_UPPER_LEG_R]].position);
    if (ikd_vec3_len(ikd_vec3_reject(lr, up)) < 1e-9 * ikd_vec3_len(lr) || !(ikd_vec3_len(lr) > 0))
        lr = ikd_vec3_sub(js[role[IKD_ROLE_UPPER_ARM_L]].position, js[role[IKD_ROLE_UPPER_ARM_R]].position);
    ikd_vec3 left = ikd_vec3_norm_or(ikd_vec3_reject(lr, up), ikd_vec3_make(1, 0, 0));
    warn_not_standing(js, role, up, ws);
    /* forward: where the feet point (toward the toes), else where the rest
     * pose's knees bend out of the hip-ankle line; only where neither says
     * does it come from the names' sides (left x up): a rig's l and r may
     * be the viewer's (the shared Godot sample's knees bend the other way) */
    ikd_vec3 feet = ikd_vec3_make(0, 0, 0), knees = feet;
    for (int sd = 0; sd < 2; sd++) {
        long f = role[sd ? IKD_ROLE_FOOT_R : IKD_ROLE_FOOT_L], kn = role[sd ? IKD_ROLE_LOWER_LEG_R : IKD_ROLE_LOWER_LEG_L];
        long hp = role[sd ? IKD_ROLE_UPPER_LEG_R : IKD_ROLE_UPPER_LEG_L];
        feet = ikd_vec3_add(feet, ikd_vec3_reject(bone_dir(js, n, f, feet), up));
        ikd_vec3 line = ikd_vec3_norm_or(ikd_vec3_sub(js[f].position, js[hp].position), up);
        knees = ikd_vec3_add(knees, ikd_vec3_reject(ikd_vec3_sub(js[kn].position, js[hp].position), line));
    }
    knees = ikd_vec3_reject(knees, up);
    ikd_vec3 forward = ikd_vec3_cross(left, up);
    double legs = ikd_vec3_len(ikd_vec3_sub(js[role[IKD_ROLE_FOOT_L]].position, js[role[IKD_ROLE_UPPER_LEG_L]].position));
    if (ikd_vec3_len(feet) > 0.5) forward = ikd_vec3_norm_or(feet, forward);
    else if (ikd_vec3_len(knees) > 0.01 * legs) forward = ikd_vec3_norm_or(knees, forward);
    left = ikd_vec3_norm_or(ikd_vec3_cross(up, forward), left);
    int set = 0;
    for (size_t r = 0; r < sizeof rom_table / sizeof rom_table[0]; r++) {
        const rom_row *row = &rom_table[r];
        long k = role[row->role];
        if (k < 0) continue;
        int spine = row->role <= IKD_ROLE_HEAD, right = row->role >= IKD_ROLE_SHOULDER_R;
        ikd_vec3 bone = spine ? up : bone_dir(js, n, k, ikd_vec3_make(0, 0, 0));
        if (!(ikd_vec3_len(bone) > 0)) continue; /* a leaf: no direction to limit about */
        ikd_vec3 hint = left;
        if (row->hint == AXIS_ELEVATE) hint = ikd_vec3_cross(bone, up);
        if (row->hint == AXIS_ELBOW) { /* the arm's: its upper arm turned toward forward */
            long ua = role[right ? IKD_ROLE_UPPER_ARM_R : IKD_ROLE_UPPER_ARM_L];
            ikd_vec3 u = bone_dir(js, n, ua, bone);
            hint = ikd_vec3_cross(u, forward);
            if (ikd_vec3_len(hint) < 0.3) hint = ikd_vec3_cross(u, up);
        }
        hint = ikd_vec3_norm_or(hint, left);
        ikd_limit *l = &js[k].limit;
        if (row->kind == ROM_HINGE) {
            long p = js[k].parent;
            ikd_vec3 upper = p >= 0 ? ikd_vec3_norm_or(ikd_vec3_sub(js[k].position, js[p].position), bone) : bone;
            double bend;
            ikd_vec3 axis = hinge_axis(upper, bone, hint, &bend);
            ikd_limit_init(l, IKD_LIMIT_HINGE);
            l->has_axis = 1, l->axis = axis;
            l->min_deg = fmax(fmin(row->flex[0] - bend, 0), -180), l->max_deg = fmin(fmax(row->flex[1] - bend, 0), 180);
        } else if (row->kind == ROM_BALL) {
            ikd_limit_init(l, IKD_LIMIT_BALL);
            l->has_axis = 1, l->axis = bone;
            l->max_deg = row->flex[1], l->twist_min_deg = row->twist[0], l->twist_max_deg = row->twist[1];
        } else {
            int foot = row->role == IKD_ROLE_FOOT_L || row->role == IKD_ROLE_FOOT_R;
            ikd_vec3 a[3];
            /* an ankle's axes are the body's: its twist axis the foot's heading (level) */
            a[2] = foot ? ikd_vec3_norm_or(ikd_vec3_reject(bone, up), bone) : bone;
            a[0] = ikd_vec3_norm_or(ikd_vec3_reject(hint, a[2]), ikd_vec3_make(0, 0, 0));
            a[1] = ikd_vec3_cross(a[2], a[0]);
            double range[3][2] = {{row->flex[0], row->flex[1]}, {row->side[0], row->side[1]}, {row->twist[0], row->twist[1]}};
            if (!(ikd_vec3_len(a[0]) > 0.5)) continue;
            if (foot) {
                /* an ankle's 0 is the foot's bone square to the shin: a rest pose
                 * that points the foot down (BVH zero poses often do) is already
                 * plantarflexed by that much. (Taking 0 where the bone falls 20
                 * degrees below square, as the ankle-to-ball line of a flat foot
                 * does, left 20% and 34% of the CMU clips' foot frames inside,
                 * against 82% and 67%.) */
                long p = js[k].parent;
                ikd_vec3 shin = p >= 0 ? ikd_vec3_norm_or(ikd_vec3_sub(js[k].position, js[p].position), up) : up;
                double rest = ikd_vec3_signed_angle(shin, bone, a[0]) * IKD_RAD2DEG + 90;
                range[0][0] = fmin(range[0][0] - rest, 0), range[0][1] = fmax(range[0][1] - rest, 0);
            }
            if (!euler_in_own_axes(&js[k], a, range, l)) euler_in_frame(a, range, l); /* its own axes are not anatomical */
        }
        set++;
    }
    return set + limit_segments(js, n, role);
}
