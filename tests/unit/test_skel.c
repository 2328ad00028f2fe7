/* test_skel.c - libcheck suite: POST /v1/solve/skeleton through the service: bad input names its field, good input solves. */
#include <check.h>
#include <jansson.h>
#include <msgpack.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/buf.h"
#include "codec/codec.h"
#include "codec/skel.h"
#include "codec/skelpack.h"
#include "service/api.h"
#include "service/clip.h"
#include "humanoid.h"
#include "jsonpack.h"
#include "testutil.h"

static const char *const LEGS =
    "\"skeleton\":{\"joints\":["
    "{\"name\":\"pelvis\",\"position\":[0,1,0]},"
    "{\"name\":\"hip_l\",\"position\":[0.1,0.95,0],\"constraint\":{\"type\":\"ball\",\"max_deg\":90}},"
    "{\"name\":\"knee_l\",\"parent\":\"hip_l\",\"position\":[0.1,0.5,0.02],"
    "\"constraint\":{\"type\":\"hinge\",\"axis\":[1,0,0],\"min_deg\":0,\"max_deg\":150}},"
    "{\"name\":\"foot_l\",\"parent\":\"knee_l\",\"position\":[0.1,0.05,0]},"
    "{\"name\":\"hip_r\",\"parent\":\"pelvis\",\"position\":[-0.1,0.95,0]},"
    "{\"name\":\"knee_r\",\"position\":[-0.1,0.5,0.02]},"
    "{\"name\":\"foot_r\",\"position\":[-0.1,0.05,0]}]}";

static int run(const char *body, ikd_encoding enc, ikd_buf *out)
{
    ikd_api_limits lim = {64, 1000, 100, NULL, 0, 0, NULL, NULL};
    ikd_buf_reset(out);
    return ikd_api_skeleton(&lim, 0, enc, IKD_ENC_JSON, body, strlen(body), out, NULL);
}

/* The reply (JSON) to `body` (a JSON request); 200 and status "reached" asserted. */
static json_t *reached_reply(const char *body)
{
    ikd_buf out;
    ikd_buf_init(&out);
    ck_assert_int_eq(run(body, IKD_ENC_JSON, &out), 200);
    json_error_t e;
    json_t *d = json_loadb(out.data, out.len, 0, &e);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(json_string_value(json_object_get(d, "status")), "reached");
    ikd_buf_destroy(&out);
    return d;
}

/* The reply (JSON) to `body` (a JSON request) sent as MessagePack; 200 asserted. */
static json_t *skeleton_via_msgpack(const char *body)
{
    json_error_t e;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    json_t *req = json_loads(body, 0, &e);
    ck_assert_ptr_nonnull(req);
    tu_pack_json(&pk, req);
    ikd_api_limits lim = {64, 1000, 100, NULL, 0, 0, NULL, NULL};
    ikd_buf mp;
    ikd_buf_init(&mp);
    ck_assert_int_eq(ikd_api_skeleton(&lim, 0, IKD_ENC_MSGPACK, IKD_ENC_JSON, sb.data, sb.size, &mp, NULL), 200);
    json_t *d = json_loadb(mp.data, mp.len, 0, &e);
    ck_assert_ptr_nonnull(d);
    json_decref(req);
    msgpack_sbuffer_destroy(&sb);
    ikd_buf_destroy(&mp);
    return d;
}

/* Every bad skeleton request of issue 15 and the field it must name. */
static const struct {
const char *skeleton; /* NULL: LEGS */
const char *rest, *field;
} cases[] = {
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"parent\":3},[0,2,0],[0,3,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].parent"},
{"\"skeleton\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0],{\"position\":[0,3,0],\"parent\":3}]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[3].parent"},
{"\"skeleton\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0],{\"position\":[0,3,0],\"parent\":\"nobody\"}]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[3].parent"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"parent\":-1}]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].parent"},
{"\"skeleton\":{\"joints\":[{\"name\":\"a\",\"position\":[0,0,0]},{\"name\":\"a\",\"position\":[0,1,0]}]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].name"},
{NULL, "\"goals\":[{\"joint\":\"hand\",\"position\":[1,0,0]}]", "goals[0].joint"},
{NULL, "\"goals\":[{\"joint\":3,\"position\":[1,0,0]},{\"joint\":99,\"position\":[1,0,0]}]", "goals[1].joint"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0],\"ground\":{\"point\":[0,0,0]}}]", "goals[0].ground"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"rotation\":[0,0,0,1],\"aim\":{\"axis\":[0,0,1],\"at\":[0,2,1]}}]", "goals[0].aim"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"ground\":{\"point\":[0,0,0]},\"aim\":{\"axis\":[0,0,1],\"at\":[0,0,1]}}]", "goals[0].aim"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\"}]", "goals[0]"},
{"\"skeleton\":{\"joints\":[[0,0,0],[0,1,0],{\"position\":[0,2,0],\"constraint\":{\"type\":\"ball\"}}]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[2].constraint.axis"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"euler\",\"order\":\"xyy\"}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.order"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"euler\",\"order\":\"xyz\","
 "\"min_deg\":[0,-95,0],\"max_deg\":[10,10,10]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.min_deg"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"euler\",\"order\":\"xyz\","
 "\"min_deg\":[20,0,0],\"max_deg\":[10,10,10]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.min_deg"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"euler\",\"order\":\"xyz\","
 "\"min_deg\":[0,0,0],\"max_deg\":[10,10,10],\"neutral_deg\":[5,5,11]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.neutral_deg"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"euler\",\"order\":\"xyz\","
 "\"neutral_deg\":[5,5]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.neutral_deg"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"hinge\",\"axis\":[1,0,0],"
 "\"neutral_deg\":[0,0,0]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.neutral_deg"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"hinge\",\"axis\":[1,0,0],"
 "\"frame\":[0,0,0,1]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.frame"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"euler\",\"order\":\"xyz\","
 "\"frame\":[0,0,1]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.frame"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"euler\",\"order\":\"xyz\","
 "\"frame\":[0,0,1,1]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.frame"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"hinge\"}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.axis"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"constraint\":{\"type\":\"hinge\",\"axis\":[0,0,0]}},[0,2,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].constraint.axis"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"rotation\":[0,0,0,2]}]", "goals[0].rotation"},
{"\"skeleton\":{\"joints\":[[0,0,0],{\"position\":[0,1,0],\"rotation\":[0,0,1,1]}]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints[1].rotation"},
{NULL, "\"pose\":{\"rotations\":[[0,0,0,1]]},\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}]", "pose.rotations"},
{NULL, "\"root\":\"floating\",\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}]", "root"},
{"\"skeleton\":{\"joints\":[[0,0,0],[0,1,0]]}",
 "\"goals\":[{\"joint\":1,\"position\":[1,0,0]},{\"joint\":1,\"position\":[1,0,0]},{\"joint\":0,\"position\":[0,0,0]}]",
 "goals"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"rest_pull\":2}", "options.rest_pull"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"soften\":0}", "options.soften"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"stretch\":0.5}", "options.stretch"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"pull_max_deg\":181}", "options.pull_max_deg"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"pull_max_deg\":-1}", "options.pull_max_deg"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"stiffness\":\"stiff\"}", "options.stiffness"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"stiffness\":1}", "options.stiffness"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"speed\":1}", "options.speed"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"max_iterations\":1.5}", "options.max_iterations"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"max_iterations\":0}", "options.max_iterations"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":{\"damping\":\"high\"}", "options.damping"},
{NULL, "\"goals\":[{\"joint\":\"foot_l\",\"position\":[0,0,0]}],\"options\":[1]", "options"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"ground\":{\"point\":[0,0,0],\"normal\":[0,0,0]}}]", "goals[0].ground.normal"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"ground\":{\"point\":[0,0,0]}}],\"up\":[0,0,0]", "up"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"aim\":{\"axis\":[0,0,0],\"at\":[0,0,1]}}]", "goals[0].aim.axis"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"position\":[0,0,0],\"weight\":0}]", "goals[0].weight"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"position\":[1e300,0,0]}]", "goals[0].position"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"ground\":{\"point\":[0,-1e150,0]}}]", "goals[0].ground.point"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"ground\":{\"point\":[0,0,0],\"height\":1e300}}]", "goals[0].ground.height"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"aim\":{\"axis\":[0,1,0],\"at\":[0,0,1e300]}}]", "goals[0].aim.at"},
{NULL, "\"goals\":[{\"joint\":\"foot_r\",\"position\":[0,0,0],\"pole\":[1e300,0,0]}]", "goals[0].pole"},
{NULL, "\"pose\":{\"root\":[1e300,0,0]},\"goals\":[{\"joint\":\"foot_r\",\"position\":[0,0,0]}]", "pose.root"},
{"\"skeleton\":{\"joints\":[[0,0,0],[0,1e200,0]]}", "\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]", "skeleton.joints"},
{"\"skeleton\":{\"joints\":[[0,0,0],[0,1e-160,0],[0,2e-160,0]]}", "\"goals\":[{\"joint\":2,\"position\":[0,0,0]}]",
 "skeleton.joints"},
};

/* Every bad skeleton request of issue 15 gets 400 with its exact field. */
START_TEST(bad_input_names_the_field)
{
    ikd_buf out;
    ikd_buf_init(&out);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[2048];
        snprintf(body, sizeof body, "{%s,%s}", cases[i].skeleton ? cases[i].skeleton : LEGS, cases[i].rest);
        int st = run(body, IKD_ENC_JSON, &out);
        json_error_t e;
        json_t *d = json_loadb(out.data, out.len, 0, &e);
        ck_assert_msg(d != NULL, "case %zu: %s", i, out.data);
        const char *field = json_string_value(json_object_get(json_object_get(d, "error"), "field"));
        ck_assert_msg(st == 400 && field && !strcmp(field, cases[i].field), "case %zu: %d %s (want %s)", i, st, out.data,
                      cases[i].field);
        json_decref(d);
    }
    /* over --max-joints */
    ikd_api_limits small = {3, 1000, 100, NULL, 0, 0, NULL, NULL};
    char body[1024];
    snprintf(body, sizeof body, "{%s,\"goals\":[{\"joint\":1,\"position\":[1,0,0]}]}", LEGS);
    ikd_buf_reset(&out);
    ck_assert_int_eq(ikd_api_skeleton(&small, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &out, NULL), 400);
    ck_assert_ptr_nonnull(strstr(out.data, "\"skeleton.joints\""));
    /* options are read as /v1/solve reads its own (ikd_field_options): an
     * unknown one is named as such */
    snprintf(body, sizeof body, "{%s,\"goals\":[{\"joint\":1,\"position\":[1,0,0]}],\"options\":{\"speed\":1}}", LEGS);
    ikd_buf_reset(&out);
    ck_assert_int_eq(run(body, IKD_ENC_JSON, &out), 400);
    ck_assert_ptr_nonnull(strstr(out.data, "unknown option (see GET /v1/solvers)"));
    ikd_buf_destroy(&out);
}
END_TEST

/* A good request: both feet placed, a free root; the reply's pose fed back
 * with the same goals is (nearly) a fixed point; MessagePack gives the
 * same pose as JSON. */
START_TEST(good_requests_solve)
{
    char body[4096], again[8192];
    snprintf(body, sizeof body,
             "{%s,\"root\":\"free\",\"goals\":[{\"joint\":\"foot_l\",\"position\":[0.15,0.2,0.3]},"
             "{\"joint\":\"foot_r\",\"ground\":{\"point\":[0,0.1,0]}}]}",
             LEGS);
    json_t *d = reached_reply(body);
    json_t *goals = json_object_get(d, "goals");
    ck_assert_uint_eq(json_array_size(goals), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(goals, 0), "joint")), "foot_l");
    ck_assert_uint_eq(json_array_size(json_object_get(d, "joints")), 7);
    /* feed the pose back */
    char *pose = json_dumps(json_object_get(d, "pose"), JSON_COMPACT);
    snprintf(again, sizeof again,
             "{%s,\"root\":\"free\",\"pose\":%s,\"goals\":[{\"joint\":\"foot_l\",\"position\":[0.15,0.2,0.3]},"
             "{\"joint\":\"foot_r\",\"ground\":{\"point\":[0,0.1,0]}}]}",
             LEGS, pose);
    free(pose);
    ikd_buf out2;
    ikd_buf_init(&out2);
    ck_assert_int_eq(run(again, IKD_ENC_JSON, &out2), 200);
    json_error_t e;
    json_t *d2 = json_loadb(out2.data, out2.len, 0, &e);
    json_t *r1 = json_object_get(json_object_get(d, "pose"), "rotations"), *r2 = json_object_get(json_object_get(d2, "pose"), "rotations");
    for (size_t i = 0; i < json_array_size(r1); i++) {
        ikd_quat a, b;
        double *pa = &a.x, *pb = &b.x;
        for (int k = 0; k < 4; k++) pa[k] = json_number_value(json_array_get(json_array_get(r1, i), (size_t)k)),
                                    pb[k] = json_number_value(json_array_get(json_array_get(r2, i), (size_t)k));
        ck_assert_msg(ikd_quat_angle_between(a, b) * IKD_RAD2DEG < 1.0, "joint %zu moved %g deg when fed back", i,
                      ikd_quat_angle_between(a, b) * IKD_RAD2DEG);
    }
    json_decref(d2);
    ikd_buf_destroy(&out2);
    /* the same request in MessagePack */
    json_t *dm = skeleton_via_msgpack(body);
    ck_assert(json_equal(json_object_get(dm, "pose"), json_object_get(d, "pose")));
    json_decref(dm);
    json_decref(d);
}
END_TEST

/* The editor's stretch-slider request (tests/fixtures/editor_stretch.json,
 * as the browser test sends it: the humanoid with both hands, both feet and
 * a head aim, the left hand's goal 1.35 x the arm's length from the
 * shoulder, stretch 1.5): every goal reached, the left arm lengthened. Four
 * limbs aimed near full extension at once; a change to the limit locks once
 * left the hand 4e-4 short (not_reached). */
START_TEST(the_editors_stretch_request_is_met)
{
    char path[512];
    snprintf(path, sizeof path, "%s/editor_stretch.json", tu_fixtures_dir());
    char *body = tu_read_file(path, NULL);
    ck_assert_msg(body != NULL, "%s", path);
    json_t *d = reached_reply(body), *g;
    free(body);
    size_t i;
    json_array_foreach(json_object_get(d, "goals"), i, g) {
        ck_assert_str_eq(json_string_value(json_object_get(g, "status")), "reached");
        if (!strcmp(json_string_value(json_object_get(g, "joint")), "hand_l"))
            ck_assert_double_gt(json_number_value(json_object_get(g, "stretch")), 1.05);
    }
    json_decref(d);
}
END_TEST

/* options.stretch through the service: a foot goal 1.1 x the leg's reach
 * below its hip, beyond the fixed pelvis' reach: `unreachable` and no
 * "stretch" key by default; with stretch 1.3 `reached`, the goal's
 * "stretch" factor reported, the foot in `joints` on the goal, the knee
 * where both bones lengthened alike put it; MessagePack agrees. */
START_TEST(stretch_through_the_service)
{
    double leg = 2 * sqrt(0.45 * 0.45 + 0.02 * 0.02), gy = 0.95 - 1.1 * leg;
    char body[4096];
    ikd_buf out;
    ikd_buf_init(&out);
    json_error_t e;
    for (int st = 0; st < 2; st++) {
        snprintf(body, sizeof body, "{%s,\"goals\":[{\"joint\":\"foot_l\",\"position\":[0.1,%.17g,0]}]%s}", LEGS, gy,
                 st ? ",\"options\":{\"stretch\":1.3}" : "");
        ck_assert_int_eq(run(body, IKD_ENC_JSON, &out), 200);
        json_t *d = json_loadb(out.data, out.len, 0, &e);
        ck_assert_ptr_nonnull(d);
        json_t *g0 = json_array_get(json_object_get(d, "goals"), 0);
        if (!st) {
            ck_assert_str_eq(json_string_value(json_object_get(g0, "status")), "unreachable");
            ck_assert_ptr_null(json_object_get(g0, "stretch"));
            json_decref(d);
            continue;
        }
        ck_assert_str_eq(json_string_value(json_object_get(g0, "status")), "reached");
        double k = json_number_value(json_object_get(g0, "stretch"));
        ck_assert_msg(k > 1.05 && k <= 1.3, "stretch %g", k);
        json_t *joints = json_object_get(d, "joints");
        ikd_vec3 p[4];
        for (int i = 0; i < 4; i++) {
            json_t *pos = json_object_get(json_array_get(joints, (size_t)i), "position");
            p[i] = ikd_vec3_make(json_number_value(json_array_get(pos, 0)), json_number_value(json_array_get(pos, 1)),
                                 json_number_value(json_array_get(pos, 2)));
        }
        ck_assert_double_le(ikd_vec3_dist(p[3], ikd_vec3_make(0.1, gy, 0)), 1e-3);
        ck_assert_double_le(fabs(ikd_vec3_dist(p[2], p[1]) - k * leg / 2), 1e-9);
        ck_assert_double_le(fabs(ikd_vec3_dist(p[3], p[2]) - k * leg / 2), 1e-9);
        /* MessagePack: the same reply */
        json_t *dm = skeleton_via_msgpack(body);
        ck_assert(json_equal(json_object_get(dm, "goals"), json_object_get(d, "goals")));
        ck_assert(json_equal(json_object_get(dm, "joints"), json_object_get(d, "joints")));
        json_decref(dm);
        json_decref(d);
    }
    ikd_buf_destroy(&out);
}
END_TEST

/* /v1/solve/batch with skeleton items among chain items: every bad
 * skeleton item has its own error slot naming problems[i] and the field; a
 * good one gives the pose /v1/solve/skeleton gives; chain items are solved
 * as before; MessagePack gives the same results. */
START_TEST(batch_items_with_a_skeleton)
{
    size_t nbad = sizeof cases / sizeof cases[0], cap = 1 << 16, at = 0;
    char *body = malloc(cap), good[2048];
    snprintf(good, sizeof good, "{%s,\"root\":\"free\",\"goals\":[{\"joint\":\"foot_l\",\"position\":[0.15,0.2,0.3]}]}",
             LEGS);
    at += (size_t)snprintf(body + at, cap - at, "{\"problems\":[%s", good);
    for (size_t i = 0; i < nbad; i++) /* item 2i+1: a chain; item 2i+2: bad case i */
        at += (size_t)snprintf(body + at, cap - at,
                               ",{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"target\":[1,1,0]},{%s,%s}",
                               cases[i].skeleton ? cases[i].skeleton : LEGS, cases[i].rest);
    at += (size_t)snprintf(body + at, cap - at, "]}");
    ck_assert_uint_lt(at, cap - 1);
    ikd_api_limits lim = {64, 1000, 256, NULL, 0, 0, NULL, NULL};
    ikd_api_scratch sc;
    ck_assert_int_eq(ikd_api_scratch_init(&sc, 64), 0);
    ikd_buf out, one, mp;
    ikd_buf_init(&out), ikd_buf_init(&one), ikd_buf_init(&mp);
    ck_assert_int_eq(ikd_api_batch(&sc, &lim, IKD_ENC_JSON, IKD_ENC_JSON, body, at, &out), 200);
    json_error_t e;
    json_t *d = json_loadb(out.data, out.len, 0, &e), *res = json_object_get(d, "results");
    ck_assert_uint_eq(json_array_size(res), 1 + 2 * nbad);
    for (size_t i = 0; i < nbad; i++) {
        json_t *chain = json_array_get(res, 2 * i + 1), *bad = json_array_get(res, 2 * i + 2);
        ck_assert_str_eq(json_string_value(json_object_get(chain, "status")), "reached");
        char want[256];
        snprintf(want, sizeof want, "problems[%zu].%s", 2 * i + 2, cases[i].field);
        const char *field = json_string_value(json_object_get(json_object_get(bad, "error"), "field"));
        ck_assert_msg(field && !strcmp(field, want), "case %zu: %s (want %s)", i, field ? field : "(none)", want);
    }
    ck_assert_int_eq(run(good, IKD_ENC_JSON, &one), 200);
    json_t *d1 = json_loadb(one.data, one.len, 0, &e);
    ck_assert(json_equal(json_object_get(json_array_get(res, 0), "pose"), json_object_get(d1, "pose")));
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(res, 0), "status")), "reached");
    /* MessagePack in, the same results (solve_us aside) */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    json_t *req = json_loadb(body, at, 0, &e);
    ck_assert_ptr_nonnull(req);
    tu_pack_json(&pk, req);
    ck_assert_int_eq(ikd_api_batch(&sc, &lim, IKD_ENC_MSGPACK, IKD_ENC_JSON, sb.data, sb.size, &mp), 200);
    json_t *dm = json_loadb(mp.data, mp.len, 0, &e), *resm = json_object_get(dm, "results");
    for (size_t i = 0; i < json_array_size(res); i++) {
        json_object_del(json_array_get(res, i), "solve_us");
        json_object_del(json_array_get(resm, i), "solve_us");
        ck_assert_msg(json_equal(json_array_get(res, i), json_array_get(resm, i)), "item %zu differs", i);
    }
    json_decref(dm), json_decref(req), json_decref(d1), json_decref(d);
    msgpack_sbuffer_destroy(&sb);
    ikd_buf_destroy(&out), ikd_buf_destroy(&one), ikd_buf_destroy(&mp);
    ikd_api_scratch_destroy(&sc);
    free(body);
}
END_TEST

static json_t *vec(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
    return a;
}

/* A generated problem (tests/unit/humanoid.c) as a request body. */
static json_t *problem_json(const humanoid_problem *hp)
{
    static const char *const types[] = {"none", "fixed", "hinge", "ball", "euler"};
    json_t *joints = json_array(), *goals = json_array();
    for (size_t i = 0; i < hp->skeleton.count; i++) {
        const ikd_skeleton_joint *j = &hp->joints[i];
        const ikd_limit *l = &j->limit;
        json_t *c = json_pack("{s:s}", "type", types[l->type]);
        if (l->has_axis) json_object_set_new(c, "axis", vec(&l->axis.x, 3));
        if (l->type == IKD_LIMIT_HINGE)
            json_object_set_new(c, "min_deg", json_real(l->min_deg)), json_object_set_new(c, "max_deg", json_real(l->max_deg));
        if (l->type == IKD_LIMIT_BALL) {
            json_object_set_new(c, "max_deg", json_real(l->max_deg));
            json_object_set_new(c, "twist_min_deg", json_real(l->twist_min_deg));
            json_object_set_new(c, "twist_max_deg", json_real(l->twist_max_deg));
        }
        if (l->type == IKD_LIMIT_EULER) {
            json_object_set_new(c, "order", json_string(ikd_limit_order_name(l->order)));
            json_object_set_new(c, "min_deg", vec(l->euler_min_deg, 3));
            json_object_set_new(c, "max_deg", vec(l->euler_max_deg, 3));
            if (l->has_neutral) json_object_set_new(c, "neutral_deg", vec(l->euler_neutral_deg, 3));
            if (l->has_frame) json_object_set_new(c, "frame", vec(&l->frame.x, 4));
        }
        json_t *o = json_pack("{s:o,s:o,s:o}", "position", vec(&j->position.x, 3), "rotation", vec(&j->rotation.x, 4),
                              "constraint", c);
        if (i) json_object_set_new(o, "parent", json_integer(j->parent));
        json_array_append_new(joints, o);
    }
    for (size_t g = 0; g < hp->goal_count; g++) {
        const ikd_goal *x = &hp->goals[g];
        json_t *o = json_pack("{s:I}", "joint", (json_int_t)x->joint);
        if (x->has_position) json_object_set_new(o, "position", vec(&x->position.x, 3));
        if (x->has_rotation) json_object_set_new(o, "rotation", vec(&x->rotation.x, 4));
        if (x->has_aim) json_object_set_new(o, "aim", json_pack("{s:o,s:o}", "axis", vec(&x->aim_axis.x, 3), "at", vec(&x->aim_at.x, 3)));
        if (x->has_ground)
            json_object_set_new(o, "ground", json_pack("{s:o,s:o}", "point", vec(&x->ground_point.x, 3), "normal",
                                                       vec(&x->ground_normal.x, 3)));
        json_array_append_new(goals, o);
    }
    json_t *req = json_pack("{s:{s:o},s:o,s:s,s:o}", "skeleton", "joints", joints, "goals", goals, "root",
                            hp->root_free ? "free" : "fixed", "up", vec(&hp->up.x, 3));
    json_t *rot = json_array();
    for (size_t i = 0; hp->has_start && i < hp->skeleton.count; i++) json_array_append_new(rot, vec(&hp->start[i].x, 4));
    json_object_set_new(req, "pose", json_pack("{s:o,s:o}", "root", vec(&hp->root.x, 3), "rotations", rot));
    if (!hp->has_start) json_object_del(json_object_get(req, "pose"), "rotations");
    return req;
}

/* Generated humanoid and arm problems (every set of make bench, 40 each)
 * sent in JSON and in MessagePack: the same reply (pose, goals and
 * iterations alike). */
START_TEST(messagepack_and_json_give_the_same_pose)
{
    static humanoid_problem hp;
    ikd_api_limits lim = {64, 10000, 100, NULL, 0, 0, NULL, NULL};
    ikd_buf a, b;
    ikd_buf_init(&a), ikd_buf_init(&b);
    int n = 0;
    for (int kind = 0; kind < HSET__COUNT + 2; kind++) {
        tu_rng r;
        tu_seed(&r, 900 + (uint64_t)kind);
        for (int k = 0; k < 40; k++, n++) {
            if (kind < HSET__COUNT) humanoid_make(&r, (hset_kind)kind, k % 10 == 9, &hp);
            else arm_make(&r, kind == HSET__COUNT ? 6 : 7, &hp);
            if (k % 3 == 1) { /* euler boxes in frames of their own */
                for (size_t i = 0; i < hp.skeleton.count; i++)
                    if (hp.joints[i].limit.type == IKD_LIMIT_EULER) hp.joints[i].limit.has_frame = 1, hp.joints[i].limit.frame = tu_unit_quat(&r);
                ikd_error verr;
                ck_assert_int_eq(ikd_skeleton_validate(&hp.skeleton, &verr), IKD_E_OK);
            }
            json_t *req = problem_json(&hp);
            char *text = json_dumps(req, JSON_COMPACT);
            msgpack_sbuffer sb;
            msgpack_sbuffer_init(&sb);
            msgpack_packer pk;
            msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
            tu_pack_json(&pk, req);
            ikd_buf_reset(&a), ikd_buf_reset(&b);
            ck_assert_int_eq(ikd_api_skeleton(&lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, text, strlen(text), &a, NULL), 200);
            ck_assert_int_eq(ikd_api_skeleton(&lim, 0, IKD_ENC_MSGPACK, IKD_ENC_JSON, sb.data, sb.size, &b, NULL), 200);
            json_error_t e;
            json_t *da = json_loadb(a.data, a.len, 0, &e), *db = json_loadb(b.data, b.len, 0, &e);
            ck_assert(da && db);
            ck_assert_msg(json_equal(json_object_get(da, "pose"), json_object_get(db, "pose")), "kind %d #%d: poses differ", kind, k);
            ikd_quat got[HUMANOID_JOINTS]; /* the reply keeps the limits as the library reads them (frames too) */
            json_t *rots = json_object_get(json_object_get(da, "pose"), "rotations");
            ck_assert_uint_eq(json_array_size(rots), hp.skeleton.count);
            for (size_t i = 0; i < hp.skeleton.count; i++) {
                json_t *q = json_array_get(rots, i);
                got[i] = ikd_quat_make(json_number_value(json_array_get(q, 0)), json_number_value(json_array_get(q, 1)),
                                       json_number_value(json_array_get(q, 2)), json_number_value(json_array_get(q, 3)));
            }
            ck_assert_msg(ikd_skeleton_max_violation(&hp.skeleton, got) <= 1e-6, "kind %d #%d: %g rad outside", kind, k, ikd_skeleton_max_violation(&hp.skeleton, got));
            ck_assert(json_equal(json_object_get(da, "goals"), json_object_get(db, "goals")));
            ck_assert_int_eq(json_integer_value(json_object_get(da, "iterations")),
                             json_integer_value(json_object_get(db, "iterations")));
            json_decref(da), json_decref(db), json_decref(req);
            free(text);
            msgpack_sbuffer_destroy(&sb);
        }
    }
    ck_assert_int_eq(n, 280);
    ikd_buf_destroy(&a), ikd_buf_destroy(&b);
}
END_TEST

/* A clip body: the LEGS skeleton, a free root, `n` frames of the left foot
 * moving along a circle (about 1% of the skeleton's size a frame), the
 * right foot on the ground (a ground goal, or with `planted` a position
 * goal where that puts it); frame `bad` (if < n) names an unknown joint. */
static char *clip_body(size_t n, size_t bad, int planted)
{
    size_t cap = 256 + n * 200, at = 0;
    char *b = malloc(cap);
    at += (size_t)snprintf(b + at, cap - at, "{%s,\"root\":\"free\",\"frames\":[", LEGS);
    for (size_t k = 0; k < n; k++) {
        double a = 2 * IKD_PI * (double)k / 120.0;
        at += (size_t)snprintf(b + at, cap - at,
                               "%s{\"goals\":[{\"joint\":\"%s\",\"position\":[%.6f,%.6f,%.6f]},"
                               "{\"joint\":\"foot_r\",%s}]}",
                               k ? "," : "", k == bad ? "nobody" : "foot_l", 0.1 + 0.05 * cos(a), 0.25 + 0.05 * sin(a), 0.2,
                               planted ? "\"position\":[-0.1,0.05,0]" : "\"ground\":{\"point\":[0,0.05,0]}");
    }
    snprintf(b + at, cap - at, "]}");
    return b;
}

/* A reply's "pose" ({"root", "rotations"}) as the solve read it: rotations
 * normalised as the decoder normalises a request's. */
static void read_pose(json_t *pose, size_t n, ikd_quat *q, ikd_vec3 *root)
{
    json_t *r = json_object_get(pose, "root"), *rot = json_object_get(pose, "rotations");
    ck_assert_uint_eq(json_array_size(rot), n);
    *root = ikd_vec3_make(json_number_value(json_array_get(r, 0)), json_number_value(json_array_get(r, 1)),
                          json_number_value(json_array_get(r, 2)));
    for (size_t j = 0; j < n; j++) {
        json_t *x = json_array_get(rot, j);
        q[j] = ikd_quat_norm(ikd_quat_make(json_number_value(json_array_get(x, 0)), json_number_value(json_array_get(x, 1)),
                                           json_number_value(json_array_get(x, 2)), json_number_value(json_array_get(x, 3))));
    }
}

/* The start /v1/solve/clip gives frame k >= 2 from frames k-2 and k-1's
 * reply poses, as a request's "pose" (JSON text, every bit kept; free it). */
static char *predicted_pose(const ikd_skeleton *s, json_t *before, json_t *last)
{
    ikd_quat a[16], b[16];
    ikd_vec3 ra, rb, root;
    ck_assert_uint_le(s->count, 16);
    read_pose(before, s->count, a, &ra);
    read_pose(last, s->count, b, &rb);
    ikd_skeleton_predict(s, a, b, ra, rb, IKD_CLIP_PREDICT_MAX_DEG, b, &root);
    char *t = malloc(4096);
    size_t at = (size_t)snprintf(t, 4096, "{\"root\":[%.17g,%.17g,%.17g],\"rotations\":[", root.x, root.y, root.z);
    for (size_t j = 0; j < s->count; j++)
        at += (size_t)snprintf(t + at, 4096 - at, "%s[%.17g,%.17g,%.17g,%.17g]", j ? "," : "", b[j].x, b[j].y, b[j].z, b[j].w);
    snprintf(t + at, 4096 - at, "]}");
    return t;
}

/* POST /v1/solve/clip through the service: a bad frame anywhere is a 400
 * naming it before anything is solved; more frames than --max-frames is
 * 413; a good clip solves every frame, each from the one before (frame k
 * solved alone from the start predicted from frames k-2 and k-1, with the
 * clip's pull_max_deg, gives the same pose when no goal is a ground goal,
 * whose heading the clip takes from frame k-1 itself), the summary
 * adds up, MessagePack gives the same reply. */
START_TEST(clips)
{
    ikd_api_limits lim = {64, 1000, 100, NULL, 50, 0, NULL, NULL};
    ikd_buf out, one;
    ikd_buf_init(&out), ikd_buf_init(&one);
    char *bad = clip_body(40, 12, 0);
    ck_assert_int_eq(ikd_api_clip(&lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, bad, strlen(bad), &out, NULL), 400);
    ck_assert_ptr_nonnull(strstr(out.data, "\"field\":\"frames[12].goals[0].joint\""));
    free(bad);
    /* caught by validation (a weight of 0) rather than by the decoder:
     * still named with its frame */
    char *good = clip_body(40, 99, 0), *at = good;
    for (int k = 0; k <= 7; k++) at = strstr(at + 1, "{\"goals\""); /* frame 7 */
    at = strstr(at, "\"ground\"");
    size_t head = (size_t)(at - good), len = strlen(good);
    char *heavy = malloc(len + 32);
    snprintf(heavy, len + 32, "%.*s\"weight\":0,%s", (int)head, good, at);
    ikd_buf_reset(&out);
    ck_assert_int_eq(ikd_api_clip(&lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, heavy, strlen(heavy), &out, NULL), 400);
    ck_assert_msg(strstr(out.data, "\"field\":\"frames[7].goals[1].weight\""), "%s", out.data);
    free(good), free(heavy);
    char *many = clip_body(51, 99, 0);
    ikd_buf_reset(&out);
    ck_assert_int_eq(ikd_api_clip(&lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, many, strlen(many), &out, NULL), 413);
    ck_assert_ptr_nonnull(strstr(out.data, "\"field\":\"frames\""));
    free(many);
    /* with its right foot on the ground: every frame met */
    char *body = clip_body(50, 99, 0);
    ikd_buf_reset(&out);
    ck_assert_int_eq(ikd_api_clip(&lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &out, NULL), 200);
    ck_assert_ptr_nonnull(strstr(out.data, "\"frames\":50,\"reached\":50,"));
    free(body);
    /* planted by a position goal (a ground goal takes its heading from frame
     * k-1's pose, not the predicted start: alone it would differ) */
    body = clip_body(50, 99, 1);
    ikd_skel_request skel; /* the clip's skeleton, validated (for its size) */
    ikd_error perr;
    ck_assert_int_eq(ikd_clip_open(&lim, IKD_ENC_JSON, body, strlen(body), &skel, &perr), IKD_E_OK);
    ikd_buf_reset(&out);
    ikd_api_outcome oc;
    ck_assert_int_eq(ikd_api_clip(&lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &out, &oc), 200);
    ck_assert(oc.clip && oc.frames[IKD_MULTI_REACHED] == 50);
    json_error_t e;
    json_t *d = json_loadb(out.data, out.len, 0, &e), *frames = json_object_get(d, "frames");
    json_t *sum = json_object_get(d, "summary");
    ck_assert_uint_eq(json_array_size(frames), 50);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "frames")), 50);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "reached")), 50);
    long its = 0;
    for (size_t k = 0; k < 50; k++) {
        json_t *f = json_array_get(frames, k);
        ck_assert_int_eq(json_integer_value(json_object_get(f, "frame")), (json_int_t)k);
        ck_assert_str_eq(json_string_value(json_object_get(f, "status")), "reached");
        its += (long)json_integer_value(json_object_get(f, "iterations"));
        if (k % 10 != 5) continue;
        /* frame k alone, from frames k-2 and k-1's poses carried on
         * (ikd_skeleton_predict, as the clip starts frame k): the same pose */
        char *pose = predicted_pose(&skel.skeleton, json_object_get(json_array_get(frames, k - 2), "pose"),
                                    json_object_get(json_array_get(frames, k - 1), "pose"));
        json_t *req = json_loads(body, 0, &e), *goals = json_object_get(json_array_get(json_object_get(req, "frames"), k), "goals");
        char *gtext = json_dumps(goals, JSON_COMPACT), alone[8192];
        snprintf(alone, sizeof alone, "{%s,\"root\":\"free\",\"pose\":%s,\"goals\":%s,\"options\":{\"pull_max_deg\":%g,"
                 "\"stiffness\":\"range\"}}", LEGS, pose, gtext, IKD_CLIP_PULL_MAX_DEG); /* the clip's defaults after frame 0 */
        ikd_buf_reset(&one);
        ck_assert_int_eq(run(alone, IKD_ENC_JSON, &one), 200);
        json_t *d1 = json_loadb(one.data, one.len, 0, &e);
        ck_assert_msg(json_equal(json_object_get(d1, "pose"), json_object_get(f, "pose")), "frame %zu differs alone", k);
        json_decref(d1), json_decref(req);
        free(pose), free(gtext);
    }
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "iterations")), its);
    ck_assert_double_le(json_number_value(json_object_get(sum, "max_change_deg")), 30);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "flips")), 0);
    /* MessagePack in: the same frames (solve_us aside) */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    json_t *req = json_loads(body, 0, &e);
    tu_pack_json(&pk, req);
    ikd_buf_reset(&one);
    ck_assert_int_eq(ikd_api_clip(&lim, 0, IKD_ENC_MSGPACK, IKD_ENC_JSON, sb.data, sb.size, &one, NULL), 200);
    json_t *dm = json_loadb(one.data, one.len, 0, &e);
    for (size_t k = 0; k < 50; k++) {
        json_t *a = json_array_get(frames, k), *b = json_array_get(json_object_get(dm, "frames"), k);
        ck_assert(json_equal(json_object_get(a, "pose"), json_object_get(b, "pose")));
    }
    json_decref(dm), json_decref(req), json_decref(d);
    msgpack_sbuffer_destroy(&sb);
    free(body);
    ikd_skel_request_destroy(&skel);
    ikd_buf_destroy(&out), ikd_buf_destroy(&one);
}
END_TEST

/* options.pull_max_deg through /v1/solve/clip: frame 0 sets the left
 * leg's swivel with a goal on the knee (45 degrees out), frame 1 keeps only
 * the foot's goal, so the rest pull swivels the leg back. By default (6
 * degrees after frame 0) no joint turns more than that in frame 1; with
 * pull_max_deg 0 the leg swings back in one frame. */
/* The clip reply's summary.max_change_deg for `frames` (a JSON array) on
 * LEGS, with `options` (JSON, or ""); every frame reached asserted. */
/* ---- a clip decoded a frame at a time ------------------------------------ */

/* A random clip document: a 6-joint chain, 1-30 frames of 1-4 goals each
 * with random parts (position, rotation, aim, ground with or without a
 * height, pole, weight), joints by index or name. */
static json_t *random_clip(tu_rng *r)
{
    json_t *joints = json_array();
    for (int j = 0; j < 6; j++) {
        char name[8];
        snprintf(name, sizeof name, "j%d", j);
        json_array_append_new(joints, json_pack("{s:s,s:[f,f,f]}", "name", name, "position", 0.0, (double)j, 0.0));
    }
    json_t *frames = json_array();
    size_t nf = 1 + tu_next(r) % 30;
    for (size_t k = 0; k < nf; k++) {
        json_t *goals = json_array();
        size_t ng = 1 + tu_next(r) % 4;
        for (size_t g = 0; g < ng; g++) {
            json_t *goal = json_object();
            int joint = 1 + (int)(tu_next(r) % 5);
            if (tu_next(r) % 2) json_object_set_new(goal, "joint", json_integer(joint));
            else json_object_set_new(goal, "joint", json_sprintf("j%d", joint));
            static const unsigned kinds[] = {1, 2, 3, 4, 8, 1 | 16, 3 | 16}; /* the combinations a goal may have */
            unsigned parts = kinds[tu_next(r) % 7] | (tu_next(r) % 2 ? 32 : 0);
            if (parts & 1) json_object_set_new(goal, "position", json_pack("[f,f,f]", tu_uniform(r, -3, 3), tu_uniform(r, -3, 3), tu_uniform(r, -3, 3)));
            if (parts & 2) {
                ikd_quat q = tu_unit_quat(r);
                json_object_set_new(goal, "rotation", json_pack("[f,f,f,f]", q.x, q.y, q.z, q.w));
            }
            if (parts & 4) {
                ikd_vec3 a = tu_unit_vec(r);
                json_object_set_new(goal, "aim", json_pack("{s:[f,f,f],s:[f,f,f]}", "axis", a.x, a.y, a.z, "at", 1.0, 2.0, tu_uniform(r, -3, 3)));
            }
            if (parts & 8) {
                json_t *gr = json_pack("{s:[f,f,f],s:[f,f,f]}", "point", 0.0, tu_uniform(r, -1, 1), 0.0, "normal", 0.1, 1.0, 0.0);
                if (tu_next(r) % 2) json_object_set_new(gr, "height", json_real(tu_uniform(r, 0, 0.2)));
                json_object_set_new(goal, "ground", gr);
            }
            if (parts & 16) json_object_set_new(goal, "pole", json_pack("[f,f,f]", 0.0, 1.0, 5.0));
            if (parts & 32) json_object_set_new(goal, "weight", json_real(tu_uniform(r, 0.1, 3)));
            json_array_append_new(goals, goal);
        }
        json_array_append_new(frames, json_pack("{s:o}", "goals", goals));
    }
    return json_pack("{s:{s:o},s:o,s:s,s:{s:i}}", "skeleton", "joints", joints, "frames", frames, "root", "free",
                     "options", "max_iterations", 50);
}

/* Two goals decoded from the same text are the same. */
static int same_goal(const ikd_goal *a, const ikd_goal *b)
{
    return a->joint == b->joint && a->has_position == b->has_position &&
           (!a->has_position || !memcmp(&a->position, &b->position, sizeof a->position)) &&
           a->has_rotation == b->has_rotation && (!a->has_rotation || !memcmp(&a->rotation, &b->rotation, sizeof a->rotation)) &&
           a->has_aim == b->has_aim && (!a->has_aim || (!memcmp(&a->aim_axis, &b->aim_axis, sizeof a->aim_axis) &&
                                                        !memcmp(&a->aim_at, &b->aim_at, sizeof a->aim_at))) &&
           a->has_ground == b->has_ground &&
           (!a->has_ground || (!memcmp(&a->ground_point, &b->ground_point, sizeof a->ground_point) &&
                               !memcmp(&a->ground_normal, &b->ground_normal, sizeof a->ground_normal))) &&
           a->has_ground_height == b->has_ground_height && (!a->has_ground_height || a->ground_height == b->ground_height) &&
           a->has_pole == b->has_pole && (!a->has_pole || !memcmp(&a->pole, &b->pole, sizeof a->pole)) &&
           a->weight == b->weight;
}

/* ikd_clip_open (frames found without parsing, parsed one at a time,
 * packed) gives every frame's goals exactly as decoding the whole body
 * does, in JSON (compact, indented, the name "frames" escaped) and
 * MessagePack; truncated bodies are malformed, never a crash. */
START_TEST(clip_frames_one_at_a_time)
{
    ikd_api_limits lim = {64, 1000, 100, NULL, 1000, 1, NULL, NULL}; /* every body a frame at a time */
    tu_rng r;
    tu_seed(&r, 4242);
    for (int it = 0; it < 400; it++) {
        json_t *doc = random_clip(&r);
        int form = it % 4; /* compact, indented, escaped name, MessagePack */
        char *text = json_dumps(doc, form == 1 ? JSON_INDENT(2) : JSON_COMPACT);
        if (form == 2) { /* "frames" as "fr\u0061mes" */
            char *at = strstr(text, "\"frames\"");
            size_t n = strlen(text);
            char *t2 = malloc(n + 6);
            size_t pre = (size_t)(at - text);
            memcpy(t2, text, pre);
            memcpy(t2 + pre, "\"fr\\u0061mes\"", 13);
            memcpy(t2 + pre + 13, at + 8, n - pre - 8 + 1);
            free(text);
            text = t2;
        }
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        const char *body = text;
        size_t len = strlen(text);
        ikd_encoding enc = IKD_ENC_JSON;
        if (form == 3) {
            msgpack_packer pk;
            msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
            tu_pack_json(&pk, doc);
            body = sb.data, len = sb.size, enc = IKD_ENC_MSGPACK;
        }
        ikd_skel_request a, b;
        ikd_error ea, eb;
        ck_assert_msg(ikd_clip_open(&lim, enc, body, len, &a, &ea) == IKD_E_OK, "case %d: %s at %s", it, ea.message, ea.field);
        ikd_doc whole;
        ikd_api_skel_init(&b, &lim);
        ck_assert_int_eq(ikd_doc_load(&whole, enc, body, len, &eb), IKD_E_OK);
        ck_assert_int_eq(ikd_clip_decode(whole.root, 64, &b, &eb), IKD_E_OK);
        ikd_doc_free(&whole);
        ck_assert_ptr_null(a.goals);
        ck_assert_uint_eq(a.frame_count, b.frame_count);
        ck_assert_uint_eq(a.skeleton.count, b.skeleton.count);
        ck_assert(a.problem.root_free && a.problem.max_iterations == 50);
        for (size_t k = 0; k < a.frame_count; k++) {
            size_t n = a.frame_first[k + 1] - a.frame_first[k];
            ck_assert_uint_eq(n, b.frame_first[k + 1] - b.frame_first[k]);
            ikd_goal g[IKD_SKEL_MAX_GOALS];
            ikd_skelpack_unpack(&a, k, g, NULL);
            ikd_multi_problem p = b.problem;
            p.goal_count = n;
            ck_assert_int_eq(ikd_multi_validate(&p, b.goals + b.frame_first[k], &eb), IKD_E_OK); /* as clip_open did */
            for (size_t i = 0; i < n; i++) ck_assert_msg(same_goal(&g[i], &b.goals[b.frame_first[k] + i]), "case %d frame %zu goal %zu", it, k, i);
        }
        ikd_skel_request_destroy(&a);
        ikd_skel_request_destroy(&b);
        /* cut short anywhere: an error (malformed or a field's), never a crash */
        for (int cut = 0; cut < 8; cut++) {
            size_t at = (size_t)(tu_next(&r) % len);
            ck_assert_int_ne(ikd_clip_open(&lim, enc, body, at, &a, &ea), IKD_E_OK);
            ikd_skel_request_destroy(&a);
        }
        msgpack_sbuffer_destroy(&sb);
        free(text);
        json_decref(doc);
    }
    /* a malformed frame names its line and column in the whole body */
    const char *bad = "{\"skeleton\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\n\"frames\":[\n{\"goals\":[{\"joint\":2,\"position\":[1,1,0]}]},\n {\"goals\":[{\"joint\":2,\"position\":[1,1,]}]}]}";
    ikd_skel_request q;
    ikd_error e;
    ck_assert_int_eq(ikd_clip_open(&lim, IKD_ENC_JSON, bad, strlen(bad), &q, &e), IKD_E_MALFORMED);
    ck_assert_msg(strstr(e.message, "line 4 column") != NULL, "%s", e.message);
    ikd_skel_request_destroy(&q);
    const char *twice = "{\"frames\":[{\"goals\":[{\"joint\":2,\"position\":[1,1,0]}]}],\"frames\":[]}";
    ck_assert_int_eq(ikd_clip_open(&lim, IKD_ENC_JSON, twice, strlen(twice), &q, &e), IKD_E_MALFORMED);
    ck_assert_ptr_nonnull(strstr(e.message, "duplicate"));
    ikd_skel_request_destroy(&q);
    const char *none = "{\"skeleton\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]}}";
    ck_assert_int_eq(ikd_clip_open(&lim, IKD_ENC_JSON, none, strlen(none), &q, &e), IKD_E_INVALID);
    ck_assert_str_eq(e.field, "frames");
    ikd_skel_request_destroy(&q);
    const char *notarray = "{\"skeleton\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0]]},\"frames\":{\"goals\":[]}}";
    ck_assert_int_eq(ikd_clip_open(&lim, IKD_ENC_JSON, notarray, strlen(notarray), &q, &e), IKD_E_INVALID);
    ck_assert_str_eq(e.field, "frames");
    ikd_skel_request_destroy(&q);
}
END_TEST

static double clip_turn(const char *frames, int nframes, const char *options)
{
    ikd_api_limits lim = {64, 1000, 100, NULL, 50, 0, NULL, NULL};
    char body[4096];
    snprintf(body, sizeof body, "{%s,\"frames\":%s%s}", LEGS, frames, options);
    ikd_buf out;
    ikd_buf_init(&out);
    ck_assert_int_eq(ikd_api_clip(&lim, 0, IKD_ENC_JSON, IKD_ENC_JSON, body, strlen(body), &out, NULL), 200);
    json_error_t e;
    json_t *d = json_loadb(out.data, out.len, 0, &e), *sum = json_object_get(d, "summary");
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "reached")), nframes);
    double turned = json_number_value(json_object_get(sum, "max_change_deg"));
    json_decref(d);
    ikd_buf_destroy(&out);
    return turned;
}

START_TEST(clip_pull_is_rate_limited)
{
    static const char *const frames = "[{\"goals\":[{\"joint\":\"foot_l\",\"position\":[0.1,0.25,0.2]},"
                                      "{\"joint\":\"knee_l\",\"position\":[0.287609,0.65154,0.280392]}]},"
                                      "{\"goals\":[{\"joint\":\"foot_l\",\"position\":[0.1,0.25,0.2]}]}]";
    double bounded = clip_turn(frames, 2, ""), unbounded = clip_turn(frames, 2, ",\"options\":{\"pull_max_deg\":0}");
    if (getenv("IKD_DEBUG")) fprintf(stderr, "frame 1 turns %g deg (pull_max_deg 0: %g)\n", bounded, unbounded);
    ck_assert_double_le(bounded, IKD_CLIP_PULL_MAX_DEG + 0.5);
    ck_assert_double_ge(unbounded, 3 * IKD_CLIP_PULL_MAX_DEG);
}
END_TEST

/* A goal dropped between frames leaves its limb to the pull alone: the limb
 * turns back toward rest at the clip's bound, not in one frame (from frame 2
 * on the start carries the last frame's turn on, up to
 * IKD_CLIP_PREDICT_MAX_DEG more: at most the two bounds' sum a frame). */
START_TEST(clip_idle_joints_are_rate_limited)
{
    static const char *const frames = "[{\"goals\":[{\"joint\":\"foot_l\",\"position\":[0.1,0.25,0.2]},"
                                      "{\"joint\":\"foot_r\",\"position\":[-0.1,0.05,0]}]},"
                                      "{\"goals\":[{\"joint\":\"foot_r\",\"position\":[-0.1,0.05,0]}]},"
                                      "{\"goals\":[{\"joint\":\"foot_r\",\"position\":[-0.1,0.05,0]}]}]";
    double bounded = clip_turn(frames, 3, ""), unbounded = clip_turn(frames, 3, ",\"options\":{\"pull_max_deg\":0}");
    if (getenv("IKD_DEBUG")) fprintf(stderr, "idle leg turns %g deg (pull_max_deg 0: %g)\n", bounded, unbounded);
    ck_assert_double_le(bounded, IKD_CLIP_PULL_MAX_DEG + IKD_CLIP_PREDICT_MAX_DEG + 0.5);
    ck_assert_double_ge(unbounded, 3 * IKD_CLIP_PULL_MAX_DEG);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("skel");
    TCase *tc = tcase_create("skeleton_requests");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, bad_input_names_the_field);
    tcase_add_test(tc, clip_pull_is_rate_limited);
    tcase_add_test(tc, clip_idle_joints_are_rate_limited);
    tcase_add_test(tc, good_requests_solve);
    tcase_add_test(tc, stretch_through_the_service);
    tcase_add_test(tc, the_editors_stretch_request_is_met);
    tcase_add_test(tc, batch_items_with_a_skeleton);
    tcase_add_test(tc, messagepack_and_json_give_the_same_pose);
    tcase_add_test(tc, clips);
    tcase_add_test(tc, clip_frames_one_at_a_time);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
