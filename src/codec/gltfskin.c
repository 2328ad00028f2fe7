/* gltfskin.c - which glTF nodes are the skeleton's joints: a skin's, the skins of one joint tree, or a skinless file's node tree. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "gltf_model.h"

/* A file without skins (an armature exported without its mesh, rigid
 * animated nodes): every node is a joint but a leaf that carries a mesh or
 * a camera (an object, not a bone); their count (0: none). */
static size_t node_tree_joints(gltf_model *m)
{
    json_t *nodes = json_object_get(m->root, "nodes");
    size_t nj = 0;
    for (size_t i = 0; i < m->nnodes; i++) {
        json_t *n = json_array_get(nodes, i), *ch = json_object_get(n, "children");
        if ((json_object_get(n, "mesh") || json_object_get(n, "camera")) && !json_array_size(ch)) continue;
        m->nodes[i].joint = -2, nj++;
    }
    return nj;
}

/* Node v of a skin's joints array entry, or -1 when the entry is no node. */
static long skin_node(const gltf_model *m, json_t *entry)
{
    json_int_t v = json_integer_value(entry);
    return json_is_integer(entry) && v >= 0 && (size_t)v < m->nnodes ? (long)v : -1;
}

/* Without ?skin=, the joints of every skin in one joint tree with skin
 * 0's are joints too: a character's meshes skinned each to the bones that
 * move it, as FBX converters write them (the face to the head alone).
 * Every node some skin lists is a bone; a bone's tree is that of the
 * nearest bone above it (through nodes that are none), so another
 * character's skin, even under the same scene root, is another tree. */
static int mark_armature(ikd_gltf *g, json_t *skins, size_t *nj, ikd_error *err)
{
    gltf_model *m = g->m;
    size_t ns = json_array_size(skins), k, s;
    json_t *entry;
    long *tree = malloc(2 * m->nnodes * sizeof *tree); /* a bone's tree (its topmost bone); -1: no bone */
    long *above = tree + m->nnodes;                    /* the nearest bone above a node, or -1 */
    char *mine = calloc(m->nnodes, 1);                 /* the trees skin 0 is in */
    if (!tree || !mine) {
        free(tree), free(mine);
        return ikd__gltf_fail(err, IKD_E_NOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < m->nnodes; i++) tree[i] = -1;
    for (s = 0; s < ns; s++) {
        json_array_foreach(json_object_get(json_array_get(skins, s), "joints"), k, entry) {
            long v = skin_node(m, entry);
            if (v < 0) {
                char f[64];
                snprintf(f, sizeof f, "skins[%zu].joints[%zu]", s, k);
                free(tree), free(mine);
                return ikd__gltf_fail(err, IKD_E_INVALID, f, "must be a node");
            }
            tree[v] = v;
        }
    }
    for (size_t oi = 0; oi < m->nnodes; oi++) { /* parents first */
        size_t i = m->order[oi];
        long p = m->nodes[i].parent;
        above[i] = p < 0 ? -1 : tree[p] >= 0 ? p : above[p];
        if (tree[i] >= 0 && above[i] >= 0) tree[i] = tree[above[i]];
    }
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].joint == -2) mine[tree[i]] = 1;
    size_t joined = 1;
    for (s = 1; s < ns; s++) {
        json_t *js = json_object_get(json_array_get(skins, s), "joints");
        int in = 0;
        json_array_foreach(js, k, entry) in |= mine[tree[skin_node(m, entry)]];
        if (!in) continue;
        json_array_foreach(js, k, entry) {
            long v = skin_node(m, entry);
            if (m->nodes[v].joint == -1) m->nodes[v].joint = -2, (*nj)++;
        }
        joined++;
    }
    free(tree), free(mine);
    if (joined > 1) {
        char msg[160];
        snprintf(msg, sizeof msg, "the joints of %zu skins of one joint tree are the skeleton (?skin=N takes one skin alone)", joined);
        ikd_file_warn(&g->warnings, "skins_joined", "skins", msg);
    }
    return IKD_E_OK;
}

/* The joints' nodes marked (joint -2): the chosen skin's (without ?skin=,
 * skin 0's and its joint tree's: mark_armature), or without skins the node
 * tree's (node_tree_joints); *nj their count. */
int ikd__gltf_mark_joints(ikd_gltf *g, const ikd_gltf_opts *o, size_t *nj, ikd_error *err)
{
    gltf_model *m = g->m;
    json_t *skins = json_object_get(m->root, "skins");
    long chosen = o->skin < 0 ? 0 : o->skin;
    json_t *skin = json_array_get(skins, (size_t)chosen);
    if (!json_array_size(skins) && chosen == 0) {
        if ((*nj = node_tree_joints(m)) == 0) /* only meshes and cameras without children: no bone anywhere */
            return ikd__gltf_fail(err, IKD_E_INVALID, "skins",
                                  "the file has no skin, and its nodes are meshes or cameras without children: no skeleton");
        ikd_file_warn(&g->warnings, "no_skin", "skins", "the file has no skin: its node tree is the skeleton");
        return IKD_E_OK;
    }
    if (!json_is_object(skin))
        return ikd__gltf_fail(err, IKD_E_INVALID, "query.skin", json_array_size(skins) ? "the file has no skin of that index" : "the file has no skin");
    json_t *js = json_object_get(skin, "joints");
    *nj = json_is_array(js) ? json_array_size(js) : 0;
    if (!*nj) {
        char f[64];
        snprintf(f, sizeof f, "skins[%ld].joints", chosen);
        return ikd__gltf_fail(err, IKD_E_INVALID, f, "must be a non-empty array of nodes");
    }
    for (size_t k = 0; k < *nj; k++) {
        long v = skin_node(m, json_array_get(js, k));
        if (v < 0 || m->nodes[v].joint != -1) {
            char f[64];
            snprintf(f, sizeof f, "skins[%ld].joints[%zu]", chosen, k);
            return ikd__gltf_fail(err, IKD_E_INVALID, f, "must be a node, listed once");
        }
        m->nodes[v].joint = -2; /* a joint; its ikd index comes below */
    }
    return o->skin < 0 ? mark_armature(g, skins, nj, err) : IKD_E_OK;
}
