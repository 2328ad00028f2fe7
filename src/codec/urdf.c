/* urdf.c - URDF robot descriptions read into their joint tree (origins, axes, limits), XML parsed safely. */
#include "urdf.h"

#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parse's state: where in the document we are and the first error. */
typedef struct urdf_parse {
    XML_Parser xp;
    ikd_urdf *u;
    ikd_error *err;
    double scale;
    size_t max_joints;
    int depth;          /* element depth: robot 1, joint/link 2, their children 3 */
    int in_robot;
    ikd_urdf_joint *joint; /* the <joint> being read (depth 2), or NULL */
    int failed;
} urdf_parse;

static void stop(urdf_parse *p)
{
    p->failed = 1;
    XML_StopParser(p->xp, XML_FALSE);
}

static void fail_at(urdf_parse *p, int code, const char *field, const char *fmt, const char *arg)
{
    if (p->failed) return;
    ikd_error_set(p->err, code, field, fmt, arg ? arg : "");
    stop(p);
}

static const char *attr(const XML_Char **a, const char *name)
{
    for (; a && *a; a += 2)
        if (strcmp(a[0], name) == 0) return a[1];
    return NULL;
}

/* "a b c" into three numbers: 1, or 0 when it is not three finite numbers. */
static int three(const char *s, ikd_vec3 *v)
{
    double d[3];
    char *e;
    for (int i = 0; i < 3; i++) {
        d[i] = strtod(s, &e);
        if (e == s || !isfinite(d[i])) return 0;
        s = e;
    }
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (*s) return 0;
    *v = ikd_vec3_make(d[0], d[1], d[2]);
    return 1;
}

static int one(const char *s, double *v)
{
    char *e;
    *v = strtod(s, &e);
    while (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r') e++;
    return e != s && !*e && isfinite(*v);
}

static void joint_field(const urdf_parse *p, const char *child, char *out, size_t n)
{
    snprintf(out, n, "robot.joint[%s]%s%s", p->joint->name, child ? "." : "", child ? child : "");
}

static void start_joint(urdf_parse *p, const XML_Char **a)
{
    ikd_urdf *u = p->u;
    const char *name = attr(a, "name"), *type = attr(a, "type");
    char field[IKD_URDF_NAME_MAX + 32];
    snprintf(field, sizeof field, "robot.joint[%zu]", u->joint_count);
    if (!name || !*name) return fail_at(p, IKD_E_INVALID, field, "a joint needs a name%s", NULL);
    if (strlen(name) >= IKD_URDF_NAME_MAX) return fail_at(p, IKD_E_INVALID, field, "a joint's name is longer than 256 bytes%s", NULL);
    if (u->joint_count >= p->max_joints) {
        u->too_large = 1;
        return fail_at(p, IKD_E_INVALID, field, "more joints than --max-joints allows%s", NULL);
    }
    for (size_t i = 0; i < u->joint_count; i++)
        if (strcmp(u->joints[i].name, name) == 0) {
            snprintf(field, sizeof field, "robot.joint[%s]", name);
            return fail_at(p, IKD_E_INVALID, field, "two joints are named %s", name);
        }
    ikd_urdf_joint *js = realloc(u->joints, (u->joint_count + 1) * sizeof *js);
    if (!js) return fail_at(p, IKD_E_NOMEM, field, "out of memory%s", NULL);
    u->joints = js;
    ikd_urdf_joint *j = &js[u->joint_count++];
    memset(j, 0, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", name);
    j->axis = ikd_vec3_make(1, 0, 0);
    p->joint = j;
    static const char *types[] = {"revolute", "continuous", "prismatic", "fixed", "floating", "planar"};
    int t = -1;
    for (int i = 0; type && i < 6; i++)
        if (strcmp(type, types[i]) == 0) t = i;
    snprintf(field, sizeof field, "robot.joint[%s]", name);
    if (t < 0) return fail_at(p, IKD_E_INVALID, field, "type must be revolute, continuous, prismatic, fixed, floating or planar, not '%.40s'", type ? type : "(none)");
    j->type = (ikd_urdf_type)t;
}

static void joint_child(urdf_parse *p, const char *el, const XML_Char **a)
{
    ikd_urdf_joint *j = p->joint;
    char field[IKD_URDF_NAME_MAX + 32];
    joint_field(p, el, field, sizeof field);
    const char *v;
    if (strcmp(el, "parent") == 0 || strcmp(el, "child") == 0) {
        const char *link = attr(a, "link");
        if (!link || !*link || strlen(link) >= IKD_URDF_NAME_MAX) return fail_at(p, IKD_E_INVALID, field, "needs a link name%s", NULL);
        snprintf(el[0] == 'p' ? j->parent : j->child, IKD_URDF_NAME_MAX, "%s", link);
    } else if (strcmp(el, "origin") == 0) {
        if ((v = attr(a, "xyz")) && !three(v, &j->xyz)) return fail_at(p, IKD_E_INVALID, field, "xyz must be three numbers, not '%.40s'", v);
        if ((v = attr(a, "rpy")) && !three(v, &j->rpy)) return fail_at(p, IKD_E_INVALID, field, "rpy must be three numbers, not '%.40s'", v);
        j->xyz = ikd_vec3_scale(j->xyz, p->scale);
    } else if (strcmp(el, "axis") == 0) {
        if ((v = attr(a, "xyz")) && (!three(v, &j->axis) || ikd_vec3_len(j->axis) == 0))
            return fail_at(p, IKD_E_INVALID, field, "xyz must be three numbers, not all 0: '%.40s'", v);
    } else if (strcmp(el, "limit") == 0) {
        if ((v = attr(a, "lower"))) {
            if (!one(v, &j->lower)) return fail_at(p, IKD_E_INVALID, field, "lower must be a number, not '%.40s'", v);
            j->has_lower = 1;
        }
        if ((v = attr(a, "upper"))) {
            if (!one(v, &j->upper)) return fail_at(p, IKD_E_INVALID, field, "upper must be a number, not '%.40s'", v);
            j->has_upper = 1;
        }
    } else if (strcmp(el, "mimic") == 0) {
        j->mimic = 1;
    }
}

static void start_link(urdf_parse *p, const XML_Char **a)
{
    ikd_urdf *u = p->u;
    const char *name = attr(a, "name");
    char field[64];
    snprintf(field, sizeof field, "robot.link[%zu]", u->link_count);
    if (!name || !*name || strlen(name) >= IKD_URDF_NAME_MAX) return fail_at(p, IKD_E_INVALID, field, "a link needs a name (up to 256 bytes)%s", NULL);
    if (u->link_count >= 4 * p->max_joints + 4) return fail_at(p, IKD_E_INVALID, field, "too many links%s", NULL);
    char (*ls)[IKD_URDF_NAME_MAX] = realloc(u->links, (u->link_count + 1) * sizeof *ls);
    if (!ls) return fail_at(p, IKD_E_NOMEM, field, "out of memory%s", NULL);
    u->links = ls;
    snprintf(ls[u->link_count++], IKD_URDF_NAME_MAX, "%s", name);
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **a)
{
    urdf_parse *p = ud;
    if (p->failed) return;
    p->depth++;
    if (p->depth == 1) {
        if (strcmp(el, "robot") != 0) return fail_at(p, IKD_E_INVALID, "robot", "the document's element must be <robot>, not <%.40s>", el);
        const char *name = attr(a, "name");
        snprintf(p->u->name, sizeof p->u->name, "%s", name ? name : "");
        p->in_robot = 1;
    } else if (p->depth == 2 && strcmp(el, "joint") == 0) {
        start_joint(p, a);
    } else if (p->depth == 2 && strcmp(el, "link") == 0) {
        start_link(p, a);
    } else if (p->depth == 3 && p->joint) {
        joint_child(p, el, a);
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *el)
{
    urdf_parse *p = ud;
    (void)el;
    if (p->depth == 2) p->joint = NULL;
    p->depth--;
}

/* Any entity declaration (the billion laughs, an external entity): refused at once. */
static void XMLCALL on_entity(void *ud, const XML_Char *name, int is_param, const XML_Char *value, int value_len,
                              const XML_Char *base, const XML_Char *system_id, const XML_Char *public_id,
                              const XML_Char *notation)
{
    urdf_parse *p = ud;
    (void)is_param, (void)value, (void)value_len, (void)base, (void)system_id, (void)public_id, (void)notation;
    char field[64];
    snprintf(field, sizeof field, "line %lu", (unsigned long)XML_GetCurrentLineNumber(p->xp));
    fail_at(p, IKD_E_INVALID, field, "XML entity declarations are not read (entity '%.40s')", name);
}

int ikd_urdf_read(const char *text, size_t len, double scale, size_t max_joints, ikd_urdf *out, ikd_error *err)
{
    memset(out, 0, sizeof *out);
    ikd_error_clear(err);
    XML_Parser xp = XML_ParserCreate(NULL);
    if (!xp) return ikd_error_set(err, IKD_E_NOMEM, "", "out of memory for the XML parser");
    urdf_parse p = {xp, out, err, scale, max_joints, 0, 0, NULL, 0};
    XML_SetUserData(xp, &p);
    XML_SetElementHandler(xp, on_start, on_end);
    XML_SetEntityDeclHandler(xp, on_entity);
    XML_SetParamEntityParsing(xp, XML_PARAM_ENTITY_PARSING_NEVER); /* no external DTD is ever read */
    int rc = IKD_E_OK;
    if (len > (size_t)0x7fffffff) {
        rc = ikd_error_set(err, IKD_E_INVALID, "", "the file is too large");
    } else if (XML_Parse(xp, text, (int)len, XML_TRUE) == XML_STATUS_ERROR && !p.failed) {
        char field[32];
        snprintf(field, sizeof field, "line %lu", (unsigned long)XML_GetCurrentLineNumber(xp));
        rc = ikd_error_set(err, IKD_E_INVALID, field, "the XML is not well formed: %s", XML_ErrorString(XML_GetErrorCode(xp)));
    } else if (p.failed) {
        rc = err->code;
    } else if (!p.in_robot) {
        rc = ikd_error_set(err, IKD_E_INVALID, "robot", "the document has no <robot>");
    }
    XML_ParserFree(xp);
    return rc;
}

void ikd_urdf_free(ikd_urdf *u)
{
    free(u->links);
    free(u->joints);
    memset(u, 0, sizeof *u);
}
