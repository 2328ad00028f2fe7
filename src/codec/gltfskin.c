/* gltfskin.c - which glTF nodes are the skeleton's joints: a skin's, the skins of one armature, or a skinless file's node tree. */
#include <jansson.h>
#include <stdio.h>

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

/* The top node (a scene root) above node v. */
static long top_node(const gltf_model *m, long v)
{
    for (size_t steps = 0; m->nodes[v].parent >= 0 && steps < m->nnodes; steps++) v = m->nodes[v].parent;
    return v;
}

/* Without ?skin=, the joints of every other skin under skin 0's top node
 * (one armature: a character's meshes skinned each to the bones that move
 * it, as FBX converters write them) are joints too. */
static int mark_armature(ikd_gltf *g, json_t *skins, size_t *nj, ikd_error *err)
{
    gltf_model *m = g->m;
    long top = top_node(m, (long)json_integer_value(json_array_get(json_object_get(json_array_get(skins, 0), "joints"), 0)));
    size_t joined = 1;
    for (size_t s = 1; s < json_array_size(skins); s++) {
        json_t *js = json_object_get(json_array_get(skins, s), "joints");
        json_t *first = json_array_get(js, 0);
        if (!json_is_integer(first) || json_integer_value(first) < 0 || (size_t)json_integer_value(first) >= m->nnodes ||
            top_node(m, (long)json_integer_value(first)) != top)
            continue;
        for (size_t k = 0; k < json_array_size(js); k++) {
            json_int_t v = json_integer_value(json_array_get(js, k));
            if (!json_is_integer(json_array_get(js, k)) || v < 0 || (size_t)v >= m->nnodes) {
                char f[64];
                snprintf(f, sizeof f, "skins[%zu].joints[%zu]", s, k);
                return ikd__gltf_fail(err, IKD_E_INVALID, f, "must be a node");
            }
            if (m->nodes[v].joint == -1) m->nodes[v].joint = -2, (*nj)++;
        }
        joined++;
    }
    if (joined > 1) {
        char msg[160];
        snprintf(msg, sizeof msg, "the joints of %zu skins of one armature are the skeleton (?skin=N takes one skin alone)", joined);
        ikd_file_warn(&g->warnings, "skins_joined", "skins", msg);
    }
    return IKD_E_OK;
}

/* The joints' nodes marked (joint -2): the chosen skin's (without ?skin=,
 * skin 0's and its armature's: mark_armature), or without skins the node
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
        json_int_t v = json_integer_value(json_array_get(js, k));
        if (!json_is_integer(json_array_get(js, k)) || v < 0 || (size_t)v >= m->nnodes || m->nodes[v].joint != -1) {
            char f[64];
            snprintf(f, sizeof f, "skins[%ld].joints[%zu]", chosen, k);
            return ikd__gltf_fail(err, IKD_E_INVALID, f, "must be a node, listed once");
        }
        m->nodes[v].joint = -2; /* a joint; its ikd index comes below */
    }
    return o->skin < 0 ? mark_armature(g, skins, nj, err) : IKD_E_OK;
}
