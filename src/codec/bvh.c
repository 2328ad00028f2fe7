/* bvh.c - BVH motion capture files read into a joint hierarchy and its frames of channel values. */
#include "bvh.h"

#include "buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A cursor over the text: tokens separated by blanks, line numbers counted
 * (CR, LF and CRLF all end a line). */
typedef struct bvh_lex {
    const char *p, *end;
    size_t line;
    char tok[IKD_BVH_NAME_MAX + 8];
    size_t tok_line;
    int tok_long; /* the token did not fit in tok */
} bvh_lex;

static int next(bvh_lex *lx)
{
    for (;;) {
        while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\f' || *lx->p == '\v')) lx->p++;
        if (lx->p >= lx->end) return 0;
        if (*lx->p == '\r' || *lx->p == '\n') {
            if (*lx->p == '\r' && lx->p + 1 < lx->end && lx->p[1] == '\n') lx->p++;
            lx->p++;
            lx->line++;
            continue;
        }
        break;
    }
    size_t n = 0;
    lx->tok_long = 0;
    lx->tok_line = lx->line;
    while (lx->p < lx->end && *lx->p != ' ' && *lx->p != '\t' && *lx->p != '\r' && *lx->p != '\n' && *lx->p != '\f' &&
           *lx->p != '\v') {
        if (n < sizeof lx->tok - 1) lx->tok[n++] = *lx->p;
        else lx->tok_long = 1;
        lx->p++;
    }
    lx->tok[n] = '\0';
    return 1;
}

static int fail(ikd_error *err, size_t line, int code, const char *fmt, const char *arg)
{
    char field[32];
    snprintf(field, sizeof field, "line %zu", line);
    return ikd_error_set(err, code, field, fmt, arg ? arg : "");
}

static int expect(bvh_lex *lx, const char *word, ikd_error *err)
{
    if (!next(lx)) return fail(err, lx->line, IKD_E_INVALID, "the file ends where %s was expected", word);
    if (strcasecmp(lx->tok, word) != 0) return fail(err, lx->tok_line, IKD_E_INVALID, "%s was expected", word);
    return 0;
}

/* s (the token read last, or its tail) as a finite number. */
static int token_number(const bvh_lex *lx, const char *s, double *out, ikd_error *err)
{
    char *e;
    double v = strtod(s, &e);
    if (lx->tok_long || e == s || *e || !isfinite(v)) return fail(err, lx->tok_line, IKD_E_INVALID, "'%.40s' is not a finite number", s);
    *out = v;
    return 0;
}

static int number(bvh_lex *lx, double *out, ikd_error *err)
{
    if (!next(lx)) return fail(err, lx->line, IKD_E_INVALID, "the file ends where a number was expected%s", NULL);
    return token_number(lx, lx->tok, out, err);
}

static int add_joint(ikd_bvh *b, size_t max_joints, int parent, const char *name, size_t line, ikd_error *err)
{
    if (b->count >= max_joints) {
        b->too_large = 1;
        return fail(err, line, IKD_E_INVALID, "more joints than --max-joints allows%s", NULL);
    }
    ikd_bvh_joint *js = realloc(b->joints, (b->count + 1) * sizeof *js);
    if (!js) return fail(err, line, IKD_E_NOMEM, "out of memory%s", NULL);
    b->joints = js;
    ikd_bvh_joint *j = &js[b->count++];
    memset(j, 0, sizeof *j);
    j->parent = parent;
    snprintf(j->name, sizeof j->name, "%s", name);
    return 0;
}

static int channel_kind(const char *t)
{
    static const char *names[6] = {"Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"};
    for (int i = 0; i < 6; i++)
        if (strcasecmp(t, names[i]) == 0) return i;
    return -1;
}

/* After an End Site's OFFSET: a "CHANNELS 0" some writers put there is
 * read; the closing brace is left for the caller. */
static int end_site_channels(bvh_lex *lx, ikd_error *err)
{
    bvh_lex at = *lx;
    if (!next(&at) || strcasecmp(at.tok, "CHANNELS") != 0) return 0;
    double n;
    int rc = number(&at, &n, err);
    if (rc != 0) return rc;
    if (n != 0) return fail(err, at.tok_line, IKD_E_INVALID, "an End Site has no channels, not %s", at.tok);
    *lx = at;
    return 0;
}

/* OFFSET x y z, then (not for an End Site) CHANNELS n c1 .. cn; a joint
 * whose OFFSET is followed by JOINT, End Site or its '}' (a joint the writer
 * left without a CHANNELS line: a fixed one) has none, as CHANNELS 0. */
static int joint_body(bvh_lex *lx, ikd_bvh *b, double scale, ikd_error *err)
{
    ikd_bvh_joint *j = &b->joints[b->count - 1];
    double o[3];
    int rc;
    if ((rc = expect(lx, "OFFSET", err)) != 0) return rc;
    for (int i = 0; i < 3; i++)
        if ((rc = number(lx, &o[i], err)) != 0) return rc;
    j->offset = ikd_vec3_make(o[0] * scale, o[1] * scale, o[2] * scale);
    if (j->end_site) return end_site_channels(lx, err);
    bvh_lex at = *lx;
    if (next(&at) && (strcasecmp(at.tok, "JOINT") == 0 || strcasecmp(at.tok, "End") == 0 || strcmp(at.tok, "}") == 0)) {
        j->nchan = 0, j->chan_at = b->channels; /* the token is left for the caller */
        return 0;
    }
    if ((rc = expect(lx, "CHANNELS", err)) != 0) return rc;
    double n;
    if ((rc = number(lx, &n, err)) != 0) return rc;
    if (n != floor(n) || n < 0 || n > 6)
        return fail(err, lx->tok_line, IKD_E_INVALID, "a joint has 0 to 6 channels, not %s", lx->tok);
    j->nchan = (int)n;
    j->chan_at = b->channels;
    int seen = 0;
    for (int i = 0; i < j->nchan; i++) {
        if (!next(lx)) return fail(err, lx->line, IKD_E_INVALID, "the file ends in a CHANNELS list%s", NULL);
        int k = channel_kind(lx->tok);
        if (k < 0)
            return fail(err, lx->tok_line, IKD_E_INVALID,
                        "unknown channel '%.40s' (Xposition, Yposition, Zposition, Xrotation, Yrotation, Zrotation)",
                        lx->tok);
        if (seen & (1 << k)) return fail(err, lx->tok_line, IKD_E_INVALID, "channel %s is listed twice", lx->tok);
        seen |= 1 << k;
        j->chan[i] = (unsigned char)k;
    }
    b->channels += (size_t)j->nchan;
    return 0;
}

/* A joint's name from lx->tok on: every token to the end of its line or
 * to a '{' there (*brace set), joined by one space (3ds Max's Biped names:
 * "Bip01 L Thigh"). */
static int read_joint_name(bvh_lex *lx, char *name, int *brace, ikd_error *err)
{
    size_t line = lx->tok_line, n = 0;
    for (;;) {
        size_t len = strlen(lx->tok);
        if (lx->tok_long || n + (n > 0) + len >= IKD_BVH_NAME_MAX)
            return fail(err, line, IKD_E_INVALID, "a joint's name is longer than 256 bytes%s", NULL);
        if (n) name[n++] = ' ';
        memcpy(name + n, lx->tok, len + 1);
        n += len;
        bvh_lex at = *lx;
        if (!next(lx)) break;
        if (lx->tok_line == line && strcmp(lx->tok, "{") == 0) {
            *brace = 1;
            break;
        }
        if (lx->tok_line != line) { /* the next line's: read again by the caller */
            *lx = at;
            break;
        }
    }
    return 0;
}

/* 1 when the next token is another ROOT (read into lx->tok); else the
 * lexer is left where it was. */
static int another_root(bvh_lex *lx)
{
    bvh_lex at = *lx;
    if (next(lx) && strcasecmp(lx->tok, "ROOT") == 0) return 1;
    *lx = at;
    return 0;
}

/* Several ROOT hierarchies (a performer and a prop, two performers)
 * joined under a joint made at the origin, named "root" (a skeleton has
 * one root; each ROOT's channels then move it as a child's do), with a
 * `bvh_roots` warning. One ROOT: nothing to do. */
static int join_roots(ikd_bvh *b, size_t max_joints, ikd_error *err)
{
    size_t roots = 0;
    for (size_t j = 0; j < b->count; j++) roots += b->joints[j].parent < 0;
    if (roots < 2) return 0;
    int rc = add_joint(b, max_joints, -1, "root", 1, err);
    if (rc != 0) return rc;
    ikd_bvh_joint made = b->joints[b->count - 1];
    memmove(b->joints + 1, b->joints, (b->count - 1) * sizeof *b->joints);
    b->joints[0] = made;
    for (size_t j = 1; j < b->count; j++) b->joints[j].parent = b->joints[j].parent < 0 ? 0 : b->joints[j].parent + 1;
    char msg[96];
    snprintf(msg, sizeof msg, "the file has %zu ROOT hierarchies: joined under a root made at the origin", roots);
    ikd_file_warn(&b->warnings, "bvh_roots", "HIERARCHY", msg);
    return 0;
}

/* The HIERARCHY section: ROOT, JOINT and End Site blocks, nested by braces. */
static int hierarchy(bvh_lex *lx, ikd_bvh *b, double scale, size_t max_joints, ikd_error *err)
{
    int stack[256], depth = 0, rc;
    if ((rc = expect(lx, "HIERARCHY", err)) != 0) return rc;
    if ((rc = expect(lx, "ROOT", err)) != 0) return rc;
    for (;;) {
        /* at a ROOT/JOINT/End keyword already read in lx->tok */
        int end_site = strcasecmp(lx->tok, "End") == 0;
        size_t line = lx->tok_line;
        if (!next(lx)) return fail(err, lx->line, IKD_E_INVALID, "the file ends where a joint's name was expected%s", NULL);
        if (end_site && strcasecmp(lx->tok, "Site") != 0) return fail(err, lx->tok_line, IKD_E_INVALID, "End Site was expected%s", NULL);
        char name[IKD_BVH_NAME_MAX];
        int brace = 0; /* the '{' read already (on the name's line) */
        int parent = depth ? stack[depth - 1] : -1;
        if (end_site) {
            const char *pn = parent >= 0 ? b->joints[parent].name : "root";
            snprintf(name, sizeof name, "%.*s_End", (int)ikd_utf8_prefix(pn, 50), pn);
        }
        else if ((rc = read_joint_name(lx, name, &brace, err)) != 0) return rc;
        if ((rc = add_joint(b, max_joints, parent, name, line, err)) != 0) return rc;
        b->joints[b->count - 1].end_site = end_site;
        if (!brace && (rc = expect(lx, "{", err)) != 0) return rc;
        if (depth == (int)(sizeof stack / sizeof stack[0])) return fail(err, line, IKD_E_INVALID, "joints nested too deep%s", NULL);
        stack[depth++] = (int)b->count - 1;
        if ((rc = joint_body(lx, b, scale, err)) != 0) return rc;
        for (;;) { /* children, then the closing brace */
            if (!next(lx)) return fail(err, lx->line, IKD_E_INVALID, "the file ends inside a joint's braces%s", NULL);
            if (strcmp(lx->tok, "}") == 0) {
                depth--;
                if (depth == 0 && !another_root(lx)) return join_roots(b, max_joints, err);
                if (depth == 0) break;
                continue;
            }
            if (b->joints[stack[depth - 1]].end_site)
                return fail(err, lx->tok_line, IKD_E_INVALID, "an End Site has no children ('}' was expected)%s", NULL);
            if (strcasecmp(lx->tok, "JOINT") == 0 || strcasecmp(lx->tok, "End") == 0) break;
            return fail(err, lx->tok_line, IKD_E_INVALID, "JOINT, End Site or '}' was expected, not '%.40s'", lx->tok);
        }
    }
}

/* A label then a number: "Frames: 12", or written together, "Frames:12". */
static int labelled(bvh_lex *lx, const char *label, double *out, ikd_error *err)
{
    size_t n = strlen(label);
    if (!next(lx)) return fail(err, lx->line, IKD_E_INVALID, "the file ends where %s was expected", label);
    if (strncasecmp(lx->tok, label, n) != 0) return fail(err, lx->tok_line, IKD_E_INVALID, "%s was expected", label);
    return lx->tok[n] ? token_number(lx, lx->tok + n, out, err) : number(lx, out, err);
}

/* MOTION, Frames: n, Frame Time: t, then the values. A Frame Time of 0 or
 * less (written by some tools for a single pose) is taken as 1/30 s, with a
 * warning. A file that ends after its hierarchy (a rig exported without
 * motion) has no frames, with a warning. */
static int motion(bvh_lex *lx, ikd_bvh *b, double scale, size_t max_frames, ikd_error *err)
{
    int rc;
    double declared, ft;
    bvh_lex peek = *lx;
    if (!next(&peek)) {
        ikd_file_warn(&b->warnings, "no_motion", "MOTION", "the file ends after its hierarchy: no frames");
        b->frame_time = 1.0 / 30;
        return 0;
    }
    if ((rc = expect(lx, "MOTION", err)) != 0) return rc;
    if ((rc = labelled(lx, "Frames:", &declared, err)) != 0) return rc;
    size_t frames_line = lx->tok_line;
    if ((rc = expect(lx, "Frame", err)) != 0) return rc;
    if ((rc = labelled(lx, "Time:", &ft, err)) != 0) return rc;
    if (ft <= 0) {
        char msg[120], field[32];
        snprintf(msg, sizeof msg, "Frame Time is %.40s: frames are taken 1/30 s apart", lx->tok);
        snprintf(field, sizeof field, "line %zu", lx->tok_line);
        ikd_file_warn(&b->warnings, "frame_time", field, msg);
        ft = 1.0 / 30;
    }
    b->frame_time = ft;
    size_t cap = 0, nv = 0, per = b->channels ? b->channels : 1;
    if (lx->end > lx->p) { /* about one value per 8 bytes of text */
        size_t guess = (size_t)(lx->end - lx->p) / 8 + 16;
        if ((b->motion = malloc(guess * sizeof *b->motion))) cap = guess;
    }
    for (;;) {
        double v;
        if (!next(lx)) break;
        if (b->channels == 0) return fail(err, lx->tok_line, IKD_E_INVALID, "values, but no joint has channels%s", NULL);
        if ((rc = token_number(lx, lx->tok, &v, err)) != 0) return rc;
        if (nv / per >= max_frames) {
            b->too_large = 1;
            return fail(err, lx->tok_line, IKD_E_INVALID, "more frames than --max-frames allows%s", NULL);
        }
        if (nv == cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            double *m = realloc(b->motion, ncap * sizeof *m);
            if (!m) return fail(err, lx->tok_line, IKD_E_NOMEM, "out of memory%s", NULL);
            b->motion = m;
            cap = ncap;
        }
        b->motion[nv++] = v;
    }
    if (b->channels && nv % b->channels) {
        char msg[120];
        snprintf(msg, sizeof msg, "the last frame has %zu of %zu values: it is left out", nv % b->channels, b->channels);
        ikd_file_warn(&b->warnings, "frame_cut", "line end", msg);
        nv -= nv % b->channels;
    }
    b->frames = b->channels ? nv / b->channels : 0;
    if (declared != (double)b->frames) {
        char msg[120], field[32];
        snprintf(msg, sizeof msg, "Frames: says %.0f, the data has %zu frames: the data wins", declared, b->frames);
        snprintf(field, sizeof field, "line %zu", frames_line);
        ikd_file_warn(&b->warnings, "frame_count", field, msg);
    }
    for (size_t j = 0; j < b->count; j++) /* scale the position channels */
        for (int c = 0; c < b->joints[j].nchan; c++)
            if (b->joints[j].chan[c] <= IKD_BVH_ZPOS)
                for (size_t k = 0; k < b->frames; k++) b->motion[k * b->channels + b->joints[j].chan_at + (size_t)c] *= scale;
    return 0;
}

int ikd_bvh_read(const char *text, size_t len, double scale, size_t max_joints, size_t max_frames, ikd_bvh *out,
                 ikd_error *err)
{
    memset(out, 0, sizeof *out);
    ikd_error_clear(err);
    bvh_lex lx = {text, text + len, 1, "", 1, 0};
    if (len >= 3 && (unsigned char)text[0] == 0xef && (unsigned char)text[1] == 0xbb && (unsigned char)text[2] == 0xbf)
        lx.p += 3; /* a UTF-8 byte order mark */
    int rc = hierarchy(&lx, out, scale, max_joints, err);
    if (rc == 0) rc = motion(&lx, out, scale, max_frames, err);
    return rc;
}

void ikd_bvh_free(ikd_bvh *b)
{
    free(b->joints);
    free(b->motion);
    memset(b, 0, sizeof *b);
}

void ikd_bvh_joint_at(const ikd_bvh *b, size_t j, size_t k, ikd_quat *rotation, ikd_vec3 *translation, int *moved)
{
    static const ikd_vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const ikd_bvh_joint *jt = &b->joints[j];
    const double *v = b->motion ? b->motion + k * b->channels + jt->chan_at : NULL;
    ikd_quat q = ikd_quat_identity();
    ikd_vec3 t = jt->offset;
    *moved = 0;
    for (int c = 0; c < jt->nchan; c++) {
        int kind = jt->chan[c];
        if (kind >= IKD_BVH_XROT) {
            q = ikd_quat_mul(q, ikd_quat_axis_angle(axes[kind - IKD_BVH_XROT], v[c] * IKD_DEG2RAD));
        } else {
            double *d = kind == IKD_BVH_XPOS ? &t.x : kind == IKD_BVH_YPOS ? &t.y : &t.z;
            *d += v[c];
            *moved = 1;
        }
    }
    *rotation = ikd_quat_norm(q);
    *translation = t;
}

/* ---- writing ------------------------------------------------------------ */

static void put_num(ikd_buf *out, double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.17g", v == 0 ? 0.0 : v);
    ikd_buf_puts(out, b);
}

static void indent(ikd_buf *out, int depth)
{
    for (int i = 0; i < depth; i++) ikd_buf_puts(out, "\t");
}

static void joint_name(ikd_buf *out, char *const *names, size_t j)
{
    char b[32];
    if (names && names[j]) {
        for (const char *p = names[j]; *p; p++) { /* BVH names end at a blank */
            char c = *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '{' || *p == '}' ? '_' : *p;
            ikd_buf_append(out, &c, 1);
        }
        return;
    }
    snprintf(b, sizeof b, "joint%zu", j);
    ikd_buf_puts(out, b);
}

/* 1 when leaf k, the only child of j, is named as this importer names an
 * End Site ("<parent>_End", the parent's name cut at 50 bytes, on a
 * character's boundary): written
 * back as j's End Site, so that a BVH imported and written again keeps its
 * joints (a leaf's rotation moves no joint). */
static int end_site_of(const ikd_skeleton *s, char *const *names, size_t j, size_t k)
{
    if (!names || !names[j] || !names[k]) return 0;
    for (size_t c = k + 1; c < s->count; c++)
        if (s->joints[c].parent == (long)k) return 0;
    size_t n = ikd_utf8_prefix(names[j], 50);
    return strlen(names[k]) == n + 4 && strncmp(names[k], names[j], n) == 0 && strcmp(names[k] + n, "_End") == 0;
}

static void write_end_site(ikd_buf *out, int depth, ikd_vec3 off)
{
    indent(out, depth);
    ikd_buf_puts(out, "End Site\n");
    indent(out, depth);
    ikd_buf_puts(out, "{\n");
    indent(out, depth + 1);
    ikd_buf_puts(out, "OFFSET ");
    put_num(out, off.x), ikd_buf_puts(out, " "), put_num(out, off.y), ikd_buf_puts(out, " "), put_num(out, off.z);
    ikd_buf_puts(out, "\n");
    indent(out, depth);
    ikd_buf_puts(out, "}\n");
}

static void write_joint(ikd_buf *out, const ikd_skeleton *s, char *const *names, size_t j, int depth, size_t *order,
                        size_t *at)
{
    order[(*at)++] = j;
    const ikd_skeleton_joint *jt = &s->joints[j];
    indent(out, depth);
    ikd_buf_puts(out, jt->parent < 0 ? "ROOT " : "JOINT ");
    joint_name(out, names, j);
    ikd_buf_puts(out, "\n");
    indent(out, depth);
    ikd_buf_puts(out, "{\n");
    ikd_vec3 off = jt->parent < 0 ? jt->position : ikd_vec3_sub(jt->position, s->joints[jt->parent].position);
    indent(out, depth + 1);
    ikd_buf_puts(out, "OFFSET ");
    put_num(out, off.x), ikd_buf_puts(out, " "), put_num(out, off.y), ikd_buf_puts(out, " "), put_num(out, off.z);
    ikd_buf_puts(out, "\n");
    indent(out, depth + 1);
    ikd_buf_puts(out, jt->parent < 0 ? "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n"
                                     : "CHANNELS 3 Zrotation Yrotation Xrotation\n");
    size_t kids = 0, kid = 0;
    for (size_t k = j + 1; k < s->count; k++)
        if (s->joints[k].parent == (long)j) kids++, kid = k;
    if (kids == 1 && end_site_of(s, names, j, kid)) {
        write_end_site(out, depth + 1, ikd_vec3_sub(s->joints[kid].position, jt->position));
    } else {
        for (size_t k = j + 1; k < s->count; k++)
            if (s->joints[k].parent == (long)j) write_joint(out, s, names, k, depth + 1, order, at);
        if (!kids) write_end_site(out, depth + 1, ikd_vec3_make(0, 0, 0));
    }
    indent(out, depth);
    ikd_buf_puts(out, "}\n");
}

size_t ikd_bvh_write_head(ikd_buf *out, const ikd_skeleton *s, char *const *names, size_t frames, double frame_time,
                          size_t *order)
{
    char b[96];
    size_t at = 0;
    ikd_buf_puts(out, "HIERARCHY\n");
    write_joint(out, s, names, 0, 0, order, &at);
    snprintf(b, sizeof b, "MOTION\nFrames: %zu\nFrame Time: %.17g\n", frames, frame_time);
    ikd_buf_puts(out, b);
    return at;
}

/* R = Rz(a) Ry(b) Rx(c) of a unit quaternion, degrees (b in [-90, 90]). */
static void zyx_angles(ikd_quat q, double deg[3])
{
    double x = q.x, y = q.y, z = q.z, w = q.w;
    double r00 = 1 - 2 * (y * y + z * z), r10 = 2 * (x * y + w * z), r20 = 2 * (x * z - w * y);
    double r21 = 2 * (y * z + w * x), r22 = 1 - 2 * (x * x + y * y);
    double r01 = 2 * (x * y - w * z), r11 = 1 - 2 * (x * x + z * z);
    double sb = -r20;
    if (sb > 1) sb = 1;
    if (sb < -1) sb = -1;
    double b = asin(sb), a, c;
    if (fabs(sb) < 0.9999999) {
        a = atan2(r10, r00);
        c = atan2(r21, r22);
    } else { /* gimbal lock: the rotation about z and x is one; put it all in z */
        c = 0;
        a = atan2(-r01, r11);
    }
    deg[0] = a * 180 / IKD_PI, deg[1] = b * 180 / IKD_PI, deg[2] = c * 180 / IKD_PI;
}

void ikd_bvh_write_frame(ikd_buf *out, const ikd_skeleton *s, const size_t *order, size_t n, ikd_vec3 root,
                         const ikd_quat *local)
{
    ikd_vec3 d = ikd_vec3_sub(root, s->joints[0].position); /* the channels move the root from its OFFSET */
    put_num(out, d.x), ikd_buf_puts(out, " "), put_num(out, d.y), ikd_buf_puts(out, " "), put_num(out, d.z);
    for (size_t i = 0; i < n; i++) {
        size_t j = order[i];
        const ikd_skeleton_joint *jt = &s->joints[j];
        ikd_quat rp = jt->parent < 0 ? ikd_quat_identity() : s->joints[jt->parent].rotation;
        ikd_quat r = ikd_quat_norm(ikd_quat_mul(ikd_quat_mul(rp, local[j]), ikd_quat_conj(jt->rotation)));
        double deg[3];
        zyx_angles(r, deg);
        for (int k = 0; k < 3; k++) ikd_buf_puts(out, " "), put_num(out, deg[k]);
    }
    ikd_buf_puts(out, "\n");
}
