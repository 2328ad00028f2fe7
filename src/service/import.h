/* import.h - POST /v1/import: a file (BVH today) read into a skeleton and its clips, as the other endpoints take them. */
#ifndef IKD_IMPORT_H
#define IKD_IMPORT_H

#include <stddef.h>

#include "../codec/filewarn.h"
#include "api.h"

/* The query options of POST /v1/import, in the order of ikd_head.args. */
enum { IKD_IMPORT_FORMAT, IKD_IMPORT_SCALE, IKD_IMPORT_FPS, IKD_IMPORT_SKIN, IKD_IMPORT_HUMANOID, IKD_IMPORT_LIMITS,
       IKD_IMPORT__ARGS };
#define IKD_IMPORT_ARG_MAX 40 /* longest option value kept, NUL included */

typedef struct ikd_import_opts {
    char format[8];   /* "bvh", "glb", "gltf", "urdf"; "" = from Content-Type, else the first bytes */
    double scale;     /* lengths are multiplied by it; > 0 and finite; default 1 */
    double fps;       /* clips sampled at this rate, frames per second; 0 (default) = the file's own */
    long skin;        /* glTF skin index; default -1: skin 0 joined with the skins in its joint tree */
    char humanoid[8]; /* "auto" (default) or "off" */
    char limits[12];  /* "file", "humanoid", "none", "recording" (BVH); "" = the format's default */
} ikd_import_opts;

/* The query's names, for the transport ("format", "scale", ...). */
extern const char *const ikd_import_arg_names[IKD_IMPORT__ARGS];

/* Options from the query values (NULL: absent): IKD_E_OK, or
 * IKD_E_INVALID naming the option (field "query.scale"). */
int ikd_import_opts_parse(ikd_import_opts *o, const char *const args[IKD_IMPORT__ARGS], ikd_error *err);

/* The body's format: the option, else Content-Type (model/gltf-binary,
 * model/gltf+json, application/x-bvh, application/xml, text/xml), else the
 * first bytes ("glTF", a JSON object with "asset", "HIERARCHY", "<robot");
 * NULL when none of these says. */
const char *ikd_import_format(const ikd_import_opts *o, const char *content_type, const char *body, size_t len);

/* 1 when a Content-Type can be an import's (any of the above, or
 * application/octet-stream, text/plain, application/json, curl's default
 * application/x-www-form-urlencoded, or absent: the first bytes tell). */
int ikd_import_media_ok(const char *content_type);

/* "skeleton", "id", "humanoid", "effectors" of an import's reply: the joints
 * (parents first) as /v1/solve/skeleton takes them (with their constraints
 * when `constraints`), validated and kept by reference (a skeleton that does
 * not validate gets id null and a skeleton_invalid warning); with
 * `humanoid` (flags below), the roles (from `vrm`, the joints' VRM bone
 * names, when not NULL and they make a humanoid; else ikd_humanoid_find's;
 * null: none) and their limits, and the effectors a humanoid's hands, feet and
 * head, else the leaves. */
void ikd_import_skeleton(ikd_emitter *e, const ikd_api_limits *lim, ikd_skeleton_joint *js, char **names, size_t n,
                         int constraints, int humanoid, const char *const *vrm, ikd_file_warnings *ws);

/* ikd_import_skeleton's `humanoid` flags: recognise roles; set the humanoid
 * limits where a humanoid is recognised (limits=humanoid, the default for
 * BVH and glTF); limits=humanoid asked for (a warning when no humanoid). */
enum { IKD_IMPORT_ROLES = 1, IKD_IMPORT_HUMANOID_LIMITS = 2, IKD_IMPORT_LIMITS_ASKED = 4 };
int ikd_import_humanoid_flags(const ikd_import_opts *o);
/* "warnings": [{"code", "message", "field"}, ...]. */
void ikd_import_warnings(ikd_emitter *e, const ikd_file_warnings *ws);

/* The whole of POST /v1/import: the reply in `out` (out_enc), the HTTP
 * status; *error the code of an error reply. */
int ikd_api_import(const ikd_api_limits *lim, const ikd_import_opts *o, const char *content_type, ikd_encoding out_enc,
                   const char *body, size_t len, ikd_buf *out, int *error);

#endif
