/* test_codec.c - libcheck suite: data-driven request fixtures through the API handler, and the JSON writers. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/buf.h"
#include "codec/json.h"
#include "server/api.h"
#include "testutil.h"

static json_t *load_cases(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/solve.json", tu_fixtures_dir());
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    ck_assert_msg(doc != NULL, "cannot load %s: %s", path, e.text);
    json_t *cases = json_object_get(doc, "cases");
    ck_assert(json_array_size(cases) >= 40);
    json_incref(cases);
    json_decref(doc);
    return cases;
}

/* The body of a case: "raw" text as is, else "body" serialised. Caller frees. */
static char *case_body(json_t *c)
{
    json_t *raw = json_object_get(c, "raw");
    if (raw) return strdup(json_string_value(raw));
    return json_dumps(json_object_get(c, "body"), JSON_COMPACT | JSON_ENCODE_ANY);
}

static void check_reply(json_t *c, int status, const char *reply, size_t len)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    json_error_t e;
    json_t *doc = json_loadb(reply, len, 0, &e);
    ck_assert_msg(doc != NULL, "%s: reply is not JSON: %s", name, reply);
    ck_assert_msg(status == json_integer_value(json_object_get(c, "status")), "%s: status %d, reply %s", name, status,
                  reply);
    if (status != 200) {
        json_t *err = json_object_get(doc, "error");
        ck_assert_msg(json_is_object(err), "%s: no error object", name);
        ck_assert_str_eq(json_string_value(json_object_get(err, "code")), json_string_value(json_object_get(c, "code")));
        ck_assert_msg(strcmp(json_string_value(json_object_get(err, "field")),
                             json_string_value(json_object_get(c, "field"))) == 0,
                      "%s: field '%s', expected '%s'", name, json_string_value(json_object_get(err, "field")),
                      json_string_value(json_object_get(c, "field")));
        ck_assert(strlen(json_string_value(json_object_get(err, "message"))) > 0);
    } else {
        json_t *expect = json_object_get(c, "expect");
        const char *key;
        json_t *v;
        json_object_foreach(expect, key, v) {
            if (strcmp(key, "names") == 0) continue;
            ck_assert_msg(json_equal(json_object_get(doc, key), v), "%s: %s differs in %s", name, key, reply);
        }
        json_t *joints = json_object_get(doc, "joints");
        json_t *body = json_object_get(c, "body");
        size_t n = json_array_size(json_object_get(json_object_get(body, "chain"), "joints"));
        ck_assert_uint_eq(json_array_size(joints), n);
        json_t *names = json_object_get(expect, "names");
        for (size_t i = 0; i < json_array_size(names); i++)
            ck_assert_str_eq(json_string_value(json_object_get(json_array_get(joints, i), "name")),
                             json_string_value(json_array_get(names, i)));
        ck_assert(json_is_number(json_object_get(doc, "error")));
        ck_assert(json_is_integer(json_object_get(doc, "iterations")));
        ck_assert(json_is_number(json_object_get(doc, "solve_us")));
    }
    json_decref(doc);
}

START_TEST(fixtures_through_the_handler)
{
    json_t *cases = load_cases();
    ikd_api_limits lim = {64, 100000, 100};
    ikd_api_scratch s;
    ck_assert_int_eq(ikd_api_scratch_init(&s, 64), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        char *body = case_body(c);
        int status = ikd_api_solve(&s, &lim, 0, body, strlen(body), &out, NULL);
        check_reply(c, status, out.data, out.len);
        free(body);
    }
    ikd_buf_destroy(&out);
    ikd_api_scratch_destroy(&s);
    json_decref(cases);
}
END_TEST

START_TEST(max_joints_limit)
{
    ikd_api_scratch s;
    ck_assert_int_eq(ikd_api_scratch_init(&s, 3), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    const char *body = "{\"chain\":{\"joints\":[[0,0,0],[0,1,0],[0,2,0],[0,3,0]]},\"target\":[1,1,0]}";
    ikd_api_limits lim3 = {3, 1000, 10};
    ck_assert_int_eq(ikd_api_solve(&s, &lim3, 0, body, strlen(body), &out, NULL), 400);
    ck_assert_ptr_nonnull(strstr(out.data, "\"field\":\"chain.joints\""));
    ck_assert_ptr_nonnull(strstr(out.data, "--max-joints"));
    ikd_buf_destroy(&out);
    ikd_api_scratch_destroy(&s);
}
END_TEST

START_TEST(reply_round_trips_the_pose)
{
    /* The reply's numbers read back to exactly the solver's doubles. */
    ikd_joint j[3] = {{.position = {0, 0, 0}}, {.position = {0.1, 1, 0}}, {.position = {0, 2, 0.3}}};
    for (int i = 0; i < 3; i++) j[i].rotation = ikd_quat_identity();
    ikd_request req;
    ikd_request_init(&req);
    req.problem.joints = j;
    req.problem.joint_count = 3;
    req.problem.target = ikd_vec3_make(0.7, 1.1, 0.3);
    ikd_error err;
    ikd_result res;
    ikd_pose_joint pose[3];
    ck_assert_int_eq(ikd_validate(&req.problem, &err), 0);
    ck_assert_int_eq(ikd_solve(&req.problem, NULL, 0, pose, &res, &err), 0);
    ikd_buf out;
    ikd_buf_init(&out);
    ikd_json_write_solve(&out, &req, &res, pose, 1.5);
    ck_assert(!out.failed);
    json_error_t e;
    json_t *doc = json_loadb(out.data, out.len, 0, &e);
    ck_assert_ptr_nonnull(doc);
    json_t *joints = json_object_get(doc, "joints");
    for (size_t i = 0; i < 3; i++) {
        json_t *p = json_object_get(json_array_get(joints, i), "position");
        ck_assert(json_real_value(json_array_get(p, 0)) == pose[i].position.x ||
                  json_integer_value(json_array_get(p, 0)) == pose[i].position.x);
        ck_assert(json_number_value(json_array_get(p, 1)) == pose[i].position.y);
        ck_assert(json_number_value(json_array_get(p, 2)) == pose[i].position.z);
        json_t *q = json_object_get(json_array_get(joints, i), "rotation");
        ck_assert(json_number_value(json_array_get(q, 3)) == pose[i].rotation.w);
    }
    ck_assert_ptr_null(json_object_get(json_array_get(joints, 0), "name"));
    json_decref(doc);
    ikd_buf_destroy(&out);
}
END_TEST

START_TEST(number_writer_shortest_and_exact)
{
    tu_rng r;
    tu_seed(&r, 11);
    ikd_buf b;
    ikd_buf_init(&b);
    ikd_buf_json_number(&b, 0.1);
    ck_assert_str_eq(b.data, "0.1");
    ikd_buf_reset(&b);
    ikd_buf_json_number(&b, -0.0);
    ck_assert_str_eq(b.data, "0");
    for (int i = 0; i < 10000; i++) {
        double v = tu_uniform(&r, -1, 1) * pow(10, tu_uniform(&r, -300, 300));
        ikd_buf_reset(&b);
        ikd_buf_json_number(&b, v);
        ck_assert(strtod(b.data, NULL) == v);
    }
    ikd_buf_reset(&b);
    ikd_buf_json_number(&b, NAN);
    ck_assert(b.failed);
    ikd_buf_destroy(&b);
}
END_TEST

START_TEST(string_writer_escapes_and_repairs_utf8)
{
    ikd_buf b;
    ikd_buf_init(&b);
    ikd_buf_json_string(&b, "a\"b\\c\n\x01\xc3\xa9\xff\xe2\x82");
    ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\\ufffd\\ufffd\\ufffd\"");
    json_error_t e;
    json_t *v = json_loadb(b.data, b.len, JSON_DECODE_ANY, &e);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
    ikd_buf_destroy(&b);
}
END_TEST

START_TEST(content_type_and_routes)
{
    ck_assert(ikd_api_json_content_type(NULL));
    ck_assert(ikd_api_json_content_type("application/json"));
    ck_assert(ikd_api_json_content_type("Application/JSON; charset=utf-8"));
    ck_assert(!ikd_api_json_content_type("application/jsonx"));
    ck_assert(!ikd_api_json_content_type("text/plain"));
    ck_assert(!ikd_api_json_content_type("application/x-www-form-urlencoded"));
    const ikd_route *r = ikd_api_route("/v1/solve");
    ck_assert_ptr_nonnull(r);
    ck_assert(ikd_api_method_allowed(r, "POST"));
    ck_assert(!ikd_api_method_allowed(r, "GET"));
    ck_assert(!ikd_api_method_allowed(r, "POS"));
    ck_assert_ptr_null(ikd_api_route("/v1/solve/"));
    ck_assert(ikd_api_method_allowed(ikd_api_route("/healthz"), "HEAD"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, fixtures_through_the_handler);
    tcase_add_test(tc, max_joints_limit);
    tcase_add_test(tc, reply_round_trips_the_pose);
    tcase_add_test(tc, number_writer_shortest_and_exact);
    tcase_add_test(tc, string_writer_escapes_and_repairs_utf8);
    tcase_add_test(tc, content_type_and_routes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
