/* humanoid.c - humanoid roles recognised in an imported skeleton: hands, feet and head by name, the rest by the tree. */
#include "humanoid.h"

#include <ctype.h>
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
 * 3ds Max's `Bip01`) are dropped. The rest, joined, is the base name:
 * `mixamorig:LeftHand`, `hand_l`, `J_Bip_L_Hand`, `DEF-hand.L`, `Bip01 L
 * Hand` and `lHand` are all the left `hand`; `LeftHandIndex1` is
 * `handindex`, a finger. */

enum { SIDE_NONE, SIDE_L, SIDE_R };
enum { KIND_OTHER, KIND_HAND, KIND_FOOT, KIND_HEAD, KIND_TOES, KIND_FOREARM };

static int boundary(const char *s, size_t i)
{
    unsigned char a = (unsigned char)s[i - 1], b = (unsigned char)s[i], c = (unsigned char)s[i + 1];
    return (islower(a) && isupper(b)) || (isupper(a) && isupper(b) && islower(c)) || (!!isdigit(a) != !!isdigit(b));
}

static void analyse(const char *name, int *side, int *kind)
{
    static const char *const dropped[] = {"mixamorig", "def", "org", "mch", "bip", "j", "c", NULL};
    static const struct { const char *base; int kind; } bases[] = {
        {"hand", KIND_HAND}, {"wrist", KIND_HAND}, {"foot", KIND_FOOT}, {"ankle", KIND_FOOT}, {"head", KIND_HEAD},
        {"toe", KIND_TOES},  {"toes", KIND_TOES},  {"toebase", KIND_TOES}, {"ball", KIND_TOES},
        {"forearm", KIND_FOREARM}, {"lowerarm", KIND_FOREARM}, {"elbow", KIND_FOREARM}};
    char base[32];
    size_t bl = 0, len = name ? strlen(name) : 0;
    *side = SIDE_NONE, *kind = KIND_OTHER;
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
        int drop = 0;
        for (int d = 0; dropped[d] && !drop; d++) drop = !strcmp(w, dropped[d]);
        if (drop) continue;
        if (bl + wl >= sizeof base) return; /* longer than any base name known */
        memcpy(base + bl, w, wl), bl += wl;
    }
    base[bl] = '\0';
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

/* A limb from its end up: end, middle, upper, and the joint above when it
 * is of the same side (a shoulder). 0 when the tree is not that deep. */
static int limb(const ikd_skeleton_joint *js, const int *side, long end, long *mid, long *upper, long *above)
{
    *mid = js[end].parent;
    *upper = *mid >= 0 ? js[*mid].parent : -1;
    if (*upper < 0) return 0;
    long a = js[*upper].parent;
    *above = a >= 0 && side[a] == side[end] ? a : -1;
    return 1;
}

int ikd_humanoid_find(const ikd_skeleton_joint *js, char *const *names, size_t n, long role[IKD_ROLE__COUNT])
{
    int side[512], kind[512];
    for (int r = 0; r < IKD_ROLE__COUNT; r++) role[r] = -1;
    if (n > sizeof side / sizeof side[0]) return 0;
    long hand[3] = {-1, -1, -1}, fore[3] = {-1, -1, -1}, foot[3] = {-1, -1, -1}, head = -1;
    for (size_t j = 0; j < n; j++) {
        analyse(names ? names[j] : NULL, &side[j], &kind[j]);
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
            if (!limb(js, side, hand[s + 1], &m, &u, &a)) return 0;
            role[arm[s][0]] = hand[s + 1], role[arm[s][1]] = m, role[arm[s][2]] = u, role[arm[s][3]] = a;
        } else { /* a rig whose arms end at the forearm (no hand bones) */
            if (fore[s + 1] < 0 || !limb(js, side, fore[s + 1], &u, &a, &x)) return 0;
            role[arm[s][1]] = fore[s + 1], role[arm[s][2]] = u, role[arm[s][3]] = side[a] == s + 1 ? a : -1;
        }
        if (!limb(js, side, foot[s + 1], &m, &u, &a)) return 0;
        role[leg[s][0]] = foot[s + 1], role[leg[s][1]] = m, role[leg[s][2]] = u;
        for (size_t j = (size_t)foot[s + 1] + 1; j < n; j++) /* toes: a named child of the foot */
            if (js[j].parent == foot[s + 1] && kind[j] == KIND_TOES) {
                role[s ? IKD_ROLE_TOES_R : IKD_ROLE_TOES_L] = (long)j;
                break;
            }
    }
    long hips = common_ancestor(js, role[IKD_ROLE_UPPER_LEG_L], role[IKD_ROLE_UPPER_LEG_R]);
    long chest = common_ancestor(js, role[IKD_ROLE_UPPER_ARM_L], role[IKD_ROLE_UPPER_ARM_R]);
    for (size_t j = 0; j < n && head < 0; j++)
        if (kind[j] == KIND_HEAD && !side[j] && chest >= 0 && chest != (long)j && is_ancestor(js, chest, (long)j)) head = (long)j;
    /* hips below chest below head; no limb joint among them */
    int ok = hips >= 0 && chest != hips && is_ancestor(js, hips, chest) && head >= 0;
    for (int r = IKD_ROLE_SHOULDER_L; ok && r < IKD_ROLE__COUNT; r++)
        ok = role[r] < 0 || (role[r] != hips && role[r] != chest && !is_ancestor(js, role[r], head));
    if (!ok) {
        for (int r = 0; r < IKD_ROLE__COUNT; r++) role[r] = -1;
        return 0;
    }
    role[IKD_ROLE_HIPS] = hips, role[IKD_ROLE_CHEST] = chest, role[IKD_ROLE_HEAD] = head;
    role[IKD_ROLE_SPINE] = next_below(js, hips, chest);
    role[IKD_ROLE_NECK] = next_below(js, chest, head);
    return 1;
}
