/* bench.c - `make bench`: solver success rates and in-process solve times on generated problem sets. */
#include <locale.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/buf.h"
#include "codec/codec.h"
#include "codec/emit.h"
#include "ikd/constraint.h"
#include "ikd/motion.h"
#include "service/api.h"
#include "service/clip.h"
#include "service/import.h"
#include "service/skelstore.h"
#include "../unit/humanoid.h"
#include "service/reply.h"
#include "service/route.h"
#include "../unit/problems.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats {
    int reach_n, reach_ok, far_n, far_ok, violations, broken;
    double iters;
} stats;

/* Per-request codec costs: decode (parse + shape checks + validation) and
 * reply encoding of a two-bone request, and of a 32-joint one, in both encodings. */
static void codec_bench(void)
{
    static const char *names[] = {"two_bone (3 joints)", "chain (32 joints)"};
    printf("\ncodec, ns per request (median of 15 runs of 2000)\n");
    printf("%-20s %-8s %12s %12s %10s\n", "request", "encoding", "decode_ns", "encode_ns", "bytes");
    ikd_api_limits lim = {4096, 100000, 1024, NULL, 0, 0, NULL, NULL};
    for (int kind = 0; kind < 2; kind++) {
        size_t n = kind ? 32 : 3;
        char json[8192];
        size_t len = (size_t)snprintf(json, sizeof json, "{\"chain\":{\"joints\":[");
        for (size_t i = 0; i < n; i++)
            len += (size_t)snprintf(json + len, sizeof json - len, "%s[%.6f,%.6f,0.1]", i ? "," : "", 0.3 * (double)i,
                                    (double)i);
        len += (size_t)snprintf(json + len, sizeof json - len, "]},\"target\":[1.5,%.1f,0.2],\"pole\":[0,1,3]}",
                                (double)n * 0.6);
        /* the same document in MessagePack, through our own emitter */
        ikd_buf mp;
        ikd_buf_init(&mp);
        ikd_emitter e;
        ikd_emit_init(&e, IKD_ENC_MSGPACK, &mp);
        ikd_emit_map(&e, 3);
        ikd_emit_key(&e, "chain");
        ikd_emit_map(&e, 1);
        ikd_emit_key(&e, "joints");
        ikd_emit_array(&e, n);
        for (size_t i = 0; i < n; i++) {
            double v[3] = {0.3 * (double)i, (double)i, 0.1};
            ikd_emit_nums(&e, v, 3);
        }
        ikd_emit_end(&e);
        ikd_emit_end(&e);
        ikd_emit_key(&e, "target");
        double t[3] = {1.5, (double)n * 0.6, 0.2};
        ikd_emit_nums(&e, t, 3);
        ikd_emit_key(&e, "pole");
        double pl[3] = {0, 1, 3};
        ikd_emit_nums(&e, pl, 3);
        ikd_emit_end(&e);
        for (int enc = 0; enc < 2; enc++) {
            const char *body = enc ? mp.data : json;
            size_t blen = enc ? mp.len : len;
            double dec[15], encd[15];
            ikd_buf out;
            ikd_buf_init(&out);
            ikd_pose_joint pose[32];
            static char work[32 * 512];
            for (int run = 0; run < 15; run++) {
                ikd_request req;
                ikd_error err;
                double t0 = now_ns();
                for (int k = 0; k < 2000; k++) {
                    ikd_api_decode(&lim, (ikd_encoding)enc, body, blen, &req, &err);
                    if (k < 1999) ikd_request_destroy(&req);
                }
                dec[run] = (now_ns() - t0) / 2000;
                ikd_result res;
                ikd_solve(&req.problem, work, sizeof work, pose, &res, &err);
                t0 = now_ns();
                for (int k = 0; k < 2000; k++) {
                    ikd_emitter em;
                    ikd_buf_reset(&out);
                    ikd_emit_init(&em, (ikd_encoding)enc, &out);
                    ikd_reply_solve(&em, &req, &res, pose, 1.0);
                }
                encd[run] = (now_ns() - t0) / 2000;
                ikd_request_destroy(&req);
            }
            qsort(dec, 15, sizeof(double), cmp_double);
            qsort(encd, 15, sizeof(double), cmp_double);
            printf("%-20s %-8s %12.0f %12.0f %10zu\n", names[kind], enc ? "msgpack" : "json", dec[7], encd[7], blen);
            ikd_buf_destroy(&out);
        }
        ikd_buf_destroy(&mp);
    }
}

/* A batch of 256 two-bone problems, as the load test sends it (full-precision
 * coordinates), through the whole batch handler and through the document
 * parse alone, in both encodings: how much of a JSON batch is jansson's. */
static void batch_bench(void)
{
    enum { N = 256, REPS = 40, RUNS = 9 };
    printf("\nbatch of %d two-bone problems, us per batch (median of %d runs of %d), one core\n", N, RUNS, REPS);
    printf("%-8s %10s %12s %12s %14s %14s\n", "encoding", "bytes", "parse_us", "whole_us", "parse_share", "solves/s/core");
    unsigned long long st = 12345;
    ikd_api_limits lim = {64, 1000, 1024, NULL, 0, 0, NULL, NULL};
    ikd_api_scratch scratch;
    ikd_api_scratch_init(&scratch, 64);
    for (int enc = 0; enc < 2; enc++) {
        const char *only = getenv("IKD_BENCH_BATCH_ENC"); /* json or msgpack: one encoding, for profiling */
        if (only && strcmp(only, enc ? "msgpack" : "json") != 0) continue;
        ikd_buf body, out;
        ikd_buf_init(&body);
        ikd_buf_init(&out);
        ikd_emitter e;
        ikd_emit_init(&e, (ikd_encoding)enc, &body);
        ikd_emit_map(&e, 1);
        IKD_EMIT_KEY(&e, "problems");
        ikd_emit_array(&e, N);
        for (int i = 0; i < N; i++) {
            double v[9];
            for (int k = 0; k < 9; k++) {
                st = st * 6364136223846793005ull + 1442695040888963407ull;
                v[k] = (double)(st >> 11) / 9007199254740992.0 - 0.5;
            }
            double j0[3] = {0, 0, 0}, j1[3] = {v[0], 1 + v[1], v[2]}, j2[3] = {v[3], 2 + v[4], v[5]};
            double t[3] = {0.8 + v[6], 1.2 + v[7], v[8]}, pole[3] = {0, 0, 5};
            ikd_emit_map(&e, 3);
            IKD_EMIT_KEY(&e, "chain");
            ikd_emit_map(&e, 1);
            IKD_EMIT_KEY(&e, "joints");
            ikd_emit_array(&e, 3);
            ikd_emit_nums(&e, j0, 3);
            ikd_emit_nums(&e, j1, 3);
            ikd_emit_nums(&e, j2, 3);
            ikd_emit_end(&e);
            ikd_emit_end(&e);
            IKD_EMIT_KEY(&e, "target");
            ikd_emit_nums(&e, t, 3);
            IKD_EMIT_KEY(&e, "pole");
            ikd_emit_nums(&e, pole, 3);
            ikd_emit_end(&e);
        }
        ikd_emit_end(&e);
        ikd_emit_end(&e);
        double parse[RUNS], whole[RUNS];
        for (int run = 0; run < RUNS; run++) {
            double t0 = now_ns();
            for (int r = 0; r < REPS; r++) {
                ikd_doc doc;
                ikd_error err;
                ikd_doc_load(&doc, (ikd_encoding)enc, body.data, body.len, &err);
                ikd_doc_free(&doc);
            }
            parse[run] = (now_ns() - t0) / REPS / 1e3;
            t0 = now_ns();
            for (int r = 0; r < REPS; r++)
                if (ikd_api_batch(&scratch, &lim, (ikd_encoding)enc, (ikd_encoding)enc, body.data, body.len, &out) != 200)
                    printf("batch failed: %s\n", out.data);
            whole[run] = (now_ns() - t0) / REPS / 1e3;
        }
        qsort(parse, RUNS, sizeof(double), cmp_double);
        qsort(whole, RUNS, sizeof(double), cmp_double);
        double p = parse[RUNS / 2], w = whole[RUNS / 2];
        printf("%-8s %10zu %12.0f %12.0f %13.0f%% %14.0f\n", enc ? "msgpack" : "json", body.len, p, w, 100 * p / w,
               N / (w / 1e6));
        ikd_buf_destroy(&body);
        ikd_buf_destroy(&out);
    }
    ikd_api_scratch_destroy(&scratch);
}

/* strtod, which jansson calls for every JSON number: libc's (strtod_l in the
 * C locale) against ikd's interposed one (src/codec/strtod.c), on the numbers
 * a batch carries: full-precision coordinates written shortest, as clients
 * send them. */
static void strtod_bench(void)
{
    enum { N = 4096, RUNS = 9, REPS = 20 };
    static char text[N][32];
    unsigned long long st = 777;
    ikd_buf b;
    ikd_buf_init(&b);
    for (int i = 0; i < N; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        ikd_buf_reset(&b);
        ikd_buf_json_number(&b, ((double)(st >> 11) / 9007199254740992.0 - 0.5) * (i % 2 ? 1 : 3));
        snprintf(text[i], sizeof text[i], "%s", b.data);
    }
    ikd_buf_destroy(&b);
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    double libc_ns[RUNS], ikd_ns[RUNS], sink = 0;
    for (int run = 0; run < RUNS; run++) {
        double t0 = now_ns();
        for (int r = 0; r < REPS; r++)
            for (int i = 0; i < N; i++) sink += strtod_l(text[i], NULL, c);
        libc_ns[run] = (now_ns() - t0) / (N * REPS);
        t0 = now_ns();
        for (int r = 0; r < REPS; r++)
            for (int i = 0; i < N; i++) sink += strtod(text[i], NULL);
        ikd_ns[run] = (now_ns() - t0) / (N * REPS);
    }
    freelocale(c);
    qsort(libc_ns, RUNS, sizeof(double), cmp_double);
    qsort(ikd_ns, RUNS, sizeof(double), cmp_double);
    printf("\nstrtod on a batch's coordinates (e.g. %s), ns per number (median of %d runs of %d)\n", text[0], RUNS,
           N * REPS);
    printf("libc %.1f   ikd %.1f   (ratio %.2f)%s\n", libc_ns[RUNS / 2], ikd_ns[RUNS / 2],
           libc_ns[RUNS / 2] / ikd_ns[RUNS / 2], sink == 0.123 ? " " : "");
}

/* The JSON number writer by kind of value, ns per number: ordinary
 * coordinates, the rounding noise poses carry (small multiples of 2^-50 and
 * below), tiny random values, and values below 1e-37 (still written through
 * printf: the cost the other tiny kinds had before they got their own path). */
static void number_writer_bench(void)
{
    enum { N = 4096, RUNS = 9, REPS = 20, KINDS = 4 };
    static double vals[KINDS][N];
    static const char *names[KINDS] = {"coordinates in [-1, 1]", "noise, k * 2^-(50..59)", "random in [-5e-13, 5e-13]",
                                       "below 1e-37 (printf)"};
    unsigned long long st = 4242;
    for (int i = 0; i < N; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(st >> 11) / 9007199254740992.0;
        vals[0][i] = 2 * u - 1;
        vals[1][i] = ldexp((double)(st % 64 + 1), -50 - (int)(st / 64 % 10));
        vals[2][i] = (u - 0.5) * 1e-12;
        vals[3][i] = u * 1e-38;
    }
    ikd_buf b;
    ikd_buf_init(&b);
    printf("\nJSON number writer, ns per number (median of %d runs of %d)\n", RUNS, N * REPS);
    for (int k = 0; k < KINDS; k++) {
        double ns[RUNS];
        for (int run = 0; run < RUNS; run++) {
            double t0 = now_ns();
            for (int r = 0; r < REPS; r++) {
                ikd_buf_reset(&b);
                for (int i = 0; i < N; i++) ikd_buf_json_number(&b, vals[k][i]);
            }
            ns[run] = (now_ns() - t0) / (N * REPS);
        }
        qsort(ns, RUNS, sizeof(double), cmp_double);
        printf("%-28s %8.1f\n", names[k], ns[RUNS / 2]);
    }
    ikd_buf_destroy(&b);
}

/* IKD_BENCH_HASH=1: an FNV-1a hash of every local rotation the humanoid
 * sets and clips solved (bits, not values), printed with each table: a
 * refactor meant to change no result is checked by comparing them. */
static uint64_t pose_hash = 14695981039346656037ull;

static void hash_pose(const ikd_quat *q, size_t n)
{
    const unsigned char *b = (const unsigned char *)q;
    for (size_t i = 0; i < n * sizeof *q; i++) pose_hash = (pose_hash ^ b[i]) * 1099511628211ull;
}

static void print_hash(const char *what)
{
    if (getenv("IKD_BENCH_HASH")) printf("%s hash %016llx\n", what, (unsigned long long)pose_hash);
    pose_hash = 14695981039346656037ull;
}

/* One skeleton problem solved by ikd_multi_solve: its time (us), whether
 * every reachable goal was met and every out-of-reach goal reported
 * unreachable (*far_n, *far_ok), the worst limit violation, iterations. */
typedef struct hstats {
    int met, far_n, far_ok;
    double worst, iters;
} hstats;

static double solve_one(humanoid_problem *hp, hstats *st, const char *label, int k)
{
    static double work[1 << 15];
    ikd_quat local[HUMANOID_JOINTS];
    ikd_pose_joint pose[HUMANOID_JOINTS];
    ikd_goal_result gr[HUMANOID_MAX_GOALS];
    ikd_multi_problem p;
    ikd_error err;
    ikd_multi_result res;
    if (humanoid_setup(&p, hp, hp->goals, hp->goal_count, hp->has_start ? hp->start : NULL, hp->root, &err) != IKD_E_OK)
        abort();
    if (getenv("IKD_BENCH_ITERS")) p.max_iterations = atoi(getenv("IKD_BENCH_ITERS"));
    if (getenv("IKD_BENCH_PULL")) p.rest_pull = atof(getenv("IKD_BENCH_PULL"));
    double t0 = now_ns();
    ikd_multi_solve(&p, work, sizeof work, local, pose, gr, &res, &err);
    double us = (now_ns() - t0) / 1e3;
    hash_pose(local, hp->skeleton.count);
    static int dump = -1; /* IKD_BENCH_DUMP=1: each problem's set, index, iterations and us to stderr */
    if (dump < 0) dump = getenv("IKD_BENCH_DUMP") != NULL;
    if (dump) fprintf(stderr, "%s\t%d\t%d\t%.2f\n", label, k, res.iterations, us);
    st->iters += res.iterations;
    st->worst = fmax(st->worst, ikd_skeleton_max_violation(&hp->skeleton, local));
    int ok = 1;
    for (size_t g = 0; g < hp->goal_count; g++) {
        if ((int)g == hp->far_goal) {
            st->far_n++;
            st->far_ok += gr[g].status == IKD_GOAL_UNREACHABLE;
        } else {
            ok &= gr[g].status == IKD_GOAL_REACHED;
        }
    }
    st->met += ok;
    if (!ok && getenv("IKD_BENCH_DEBUG")) {
        fprintf(stderr, "%s #%d far=%d it=%d:", label, k, hp->far_goal, res.iterations);
        for (size_t g = 0; g < hp->goal_count; g++) fprintf(stderr, " %.2g/%.2g", gr[g].error, gr[g].rotation_error_deg);
        fprintf(stderr, "\n");
    }
    return us;
}

static void print_hrow(const char *label, int count, const hstats *st, double *times)
{
    qsort(times, (size_t)count, sizeof(double), cmp_double);
    printf("%-14s %7.1f%% %11.1f%% %10.2g %9.1f %9.1f %7.1f\n", label, 100.0 * st->met / count,
           st->far_n ? 100.0 * st->far_ok / st->far_n : 100.0, st->worst, times[count / 2],
           times[(size_t)(count * 0.99)], st->iters / count);
}

/* The humanoid sets of issue 15 (tests/unit/humanoid.c) and the 6R/7R
 * arms: per set the share of problems whose every reachable goal is met
 * (position 1e-4, rotation and aim 0.1 degrees), out-of-reach goals
 * reported unreachable, the worst limit violation, and the median and p99
 * solve time of ikd_multi_solve. */
static void humanoid_bench(int count)
{
    static humanoid_problem hp;
    double *times = malloc(sizeof(double) * (size_t)count);
    printf("\nhumanoid (%d joints), %d problems per set, 10%% with a hand goal beyond reach (fixed roots)\n",
           HUMANOID_JOINTS, count);
    printf("%-14s %8s %12s %10s %9s %9s %7s\n", "set", "met%", "unreachable%", "worst_viol", "median_us", "p99_us",
           "iters");
    const char *only = getenv("IKD_BENCH_HSET"); /* one set by name, e.g. "positions" (profiling) */
    for (int kind = 0; kind < HSET__COUNT; kind++) {
        if (only && strcmp(only, hset_name((hset_kind)kind))) continue;
        tu_rng r;
        tu_seed(&r, 4000 + (uint64_t)kind);
        hstats st = {0};
        for (int k = 0; k < count; k++) {
            humanoid_make(&r, (hset_kind)kind, k % 10 == 9, &hp);
            times[k] = solve_one(&hp, &st, hset_name((hset_kind)kind), k);
        }
        print_hrow(hset_name((hset_kind)kind), count, &st, times);
    }
    printf("\narms: hinge joints with rest-pose axes and ranges, a 6-DoF goal on the flange (POST /v1/solve/skeleton "
           "without parents); the family: arms drawn as URDFs draw them, a quarter of the goals position only\n");
    /* the bench's arms, then the arm family: every problem another arm
     * drawn as URDFs draw them (tests/unit/humanoid.c, arm_family_make) */
    for (int set = 0; set < 4; set++) {
        int dof = 6 + set % 2, family = set / 2;
        char label[32];
        snprintf(label, sizeof label, family ? "%dR family" : "%dR arm", dof);
        if (only && strcmp(only, label)) continue;
        tu_rng r;
        tu_seed(&r, (family ? 5100 : 5000) + (uint64_t)dof);
        hstats st = {0};
        for (int k = 0; k < count; k++) {
            if (family) arm_family_make(&r, dof, &hp);
            else arm_make(&r, dof, &hp);
            times[k] = solve_one(&hp, &st, label, k);
        }
        print_hrow(label, count, &st, times);
    }
    print_hash("humanoid sets and arms:");
    printf("\nhumanoid family: every problem a different rig (stature 0.5-2 x, spine, arms and legs 0.8-1.25 x each, "
           "ranges 0.6-1.3 x, rest T, A or sitting, half turned; tests/unit/humanoid.c), %d problems per set\n", count);
    for (int kind = 0; kind < HSET__COUNT; kind++) {
        if (only && strcmp(only, hset_name((hset_kind)kind))) continue;
        tu_rng r;
        tu_seed(&r, 6000 + (uint64_t)kind);
        hstats st = {0};
        for (int k = 0; k < count; k++) {
            humanoid_family_make(&r, (hset_kind)kind, &hp);
            times[k] = solve_one(&hp, &st, hset_name((hset_kind)kind), k);
        }
        print_hrow(hset_name((hset_kind)kind), count, &st, times);
    }
    free(times);
}

/* The largest turn of any joint between two poses, degrees. */
static double pose_change_deg(const ikd_quat *a, const ikd_quat *b, size_t n)
{
    double m = 0;
    for (size_t j = 0; j < n; j++) m = fmax(m, ikd_quat_angle_between(a[j], b[j]) * IKD_RAD2DEG);
    return m;
}

/* Issue 16's coherence table: clips from smooth periodic joint trajectories
 * inside the limits (tests/unit/humanoid.c), two loops of 240 frames, each
 * frame solved from the last (warm) and from the rest pose (cold). Per set:
 * frames met warm and cold, flips (a joint turning over 30 degrees between
 * frames), the largest per-frame turn against the trajectory's own, loop
 * drift (frame 240 against frame 0; the second loop against the first),
 * median us per frame warm and cold, mean iterations per frame warm and
 * cold (deterministic, unlike the times), and frames/s warm (one core). */
static void coherence_bench(int clips)
{
    enum { LOOP = 240, FRAMES = 2 * LOOP };
    static clip_problem cp;
    static double work[1 << 15];
    static ikd_quat sol[FRAMES][HUMANOID_JOINTS];
    double *warm_t = malloc(sizeof(double) * FRAMES * (size_t)clips), *cold_t = malloc(sizeof(double) * FRAMES * (size_t)clips);
    printf("\nclips: %d per set, two loops of %d frames from smooth joint trajectories inside the limits\n", clips, LOOP);
    printf("%-14s %6s %6s %5s %8s %8s %9s %9s %9s %8s %8s %7s %7s %9s\n", "set", "warm%", "cold%", "flips", "max_deg",
           "traj_deg", "loop_deg", "loop_size", "loop2_deg", "warm_us", "cold_us", "warm_it", "cold_it", "frames/s");
    const char *only = getenv("IKD_BENCH_CLIP"); /* one set by name, e.g. "chain free" */
    /* warm frames after the first are bounded as /v1/solve/clip bounds them;
     * IKD_BENCH_PULL_MAX_DEG: another bound (0: none) */
    const char *bound = getenv("IKD_BENCH_PULL_MAX_DEG");
    double pull_max_deg = bound ? atof(bound) : IKD_CLIP_PULL_MAX_DEG;
    /* IKD_BENCH_PREDICT=0: every warm frame from the last frame's pose as is */
    int predict = !getenv("IKD_BENCH_PREDICT") || atoi(getenv("IKD_BENCH_PREDICT")) != 0;
    /* IKD_BENCH_SEED: another base seed (7000: the table's) for other clips of each set */
    uint64_t seed = getenv("IKD_BENCH_SEED") ? (uint64_t)atoll(getenv("IKD_BENCH_SEED")) : 7000;
    for (int kind = 0; kind < CLIP__COUNT; kind++) {
        if (only && strcmp(only, clip_kind_name((clip_kind)kind))) continue;
        tu_rng r;
        tu_seed(&r, seed + (uint64_t)kind);
        int met_w = 0, met_c = 0, flips = 0;
        double max_change = 0, max_truth = 0, loop = 0, loop_pos = 0, loop2 = 0, warm_total = 0;
        size_t nt = 0;
        long iterations[2] = {0, 0}; /* warm, cold */
        for (int c = 0; c < clips; c++) {
            clip_make(&r, (clip_kind)kind, FRAMES, LOOP, &cp);
            const ikd_skeleton *s = &cp.hp.skeleton;
            size_t n = s->count;
            ikd_quat local[HUMANOID_JOINTS];
            _Alignas(double) unsigned char motion_mem[IKD_MOTION_MEMORY(HUMANOID_JOINTS)];
            ikd_pose_joint pose[HUMANOID_JOINTS];
            ikd_goal_result gr[HUMANOID_MAX_GOALS];
            ikd_motion m; /* the warm frames, as /v1/solve/clip solves them */
            ikd_motion_init(&m, s, NULL, cp.hp.root, motion_mem);
            m.pull_max_deg = pull_max_deg;
            if (!predict) m.predict_max_deg = 0;
            for (int cold = 0; cold < (getenv("IKD_BENCH_WARM_ONLY") ? 1 : 2); cold++) /* warm only: profiling */
                for (int k = 0; k < FRAMES; k++) {
                    ikd_multi_problem p;
                    ikd_goal goals[HUMANOID_MAX_GOALS];
                    memcpy(goals, &cp.goals[(size_t)k * cp.goal_count], cp.goal_count * sizeof *goals);
                    ikd_error err;
                    ikd_multi_result res;
                    if (humanoid_setup(&p, &cp.hp, goals, cp.goal_count, NULL, cp.hp.root, &err) != IKD_E_OK) abort();
                    if (!cold) ikd_motion_frame(&m, &p); /* cold: from rest, no bound */
                    double t0 = now_ns();
                    ikd_multi_solve(&p, work, sizeof work, local, pose, gr, &res, &err);
                    double us = (now_ns() - t0) / 1e3;
                    hash_pose(local, n);
                    iterations[cold] += res.iterations;
                    if (cold) {
                        cold_t[(size_t)c * FRAMES + (size_t)k] = us;
                        met_c += res.status == IKD_MULTI_REACHED;
                        continue;
                    }
                    warm_t[nt++] = us;
                    warm_total += us;
                    met_w += res.status == IKD_MULTI_REACHED;
                    const ikd_quat *prev = m.last;
                    if (k > 0) {
                        double ch = pose_change_deg(prev, local, n);
                        max_change = fmax(max_change, ch);
                        for (size_t j = 0; j < n; j++) {
                            double dj = ikd_quat_angle_between(prev[j], local[j]) * IKD_RAD2DEG;
                            flips += dj > 30;
                            if (dj > 30 && getenv("IKD_BENCH_DEBUG"))
                                fprintf(stderr, "%s clip %d frame %d joint %zu: %.1f deg (iterations %d, status %d)\n",
                                        clip_kind_name((clip_kind)kind), c, k, j, dj, res.iterations, res.status);
                        }
                        max_truth = fmax(max_truth, pose_change_deg(&cp.truth[(size_t)(k - 1) * n], &cp.truth[(size_t)k * n], n));
                    }
                    memcpy(sol[k], local, n * sizeof *local);
                    ikd_motion_push(&m, local, res.root);
                }
            loop = fmax(loop, pose_change_deg(sol[0], sol[LOOP], n));
            for (size_t j = 0; j < n && getenv("IKD_BENCH_DEBUG"); j++)
                if (ikd_quat_angle_between(sol[0][j], sol[LOOP][j]) * IKD_RAD2DEG > 5)
                    fprintf(stderr, "%s clip %d joint %zu: loop open by %.1f deg\n", clip_kind_name((clip_kind)kind), c, j,
                            ikd_quat_angle_between(sol[0][j], sol[LOOP][j]) * IKD_RAD2DEG);
            loop_pos = fmax(loop_pos, clip_positions_apart(s, cp.hp.root, sol[0], sol[LOOP]));
            for (int k = 0; k < LOOP; k++) loop2 = fmax(loop2, pose_change_deg(sol[k], sol[k + LOOP], n));
            clip_free(&cp);
        }
        size_t total = (size_t)clips * FRAMES;
        qsort(warm_t, total, sizeof(double), cmp_double);
        qsort(cold_t, total, sizeof(double), cmp_double);
        printf("%-14s %5.1f%% %5.1f%% %5d %8.2f %8.2f %9.3f %9.1e %9.3f %8.1f %8.1f %7.2f %7.2f %9.0f\n",
               clip_kind_name((clip_kind)kind), 100.0 * met_w / (double)total, 100.0 * met_c / (double)total, flips, max_change,
               max_truth, loop, loop_pos, loop2, warm_t[total / 2], cold_t[total / 2], iterations[0] / (double)total,
               iterations[1] / (double)total, total / (warm_total / 1e6));
    }
    print_hash("clips:");
    free(warm_t);
    free(cold_t);
}

/* `bench SEED clip-json`: one request body of POST /v1/solve/clip, the
 * humanoid 6-DoF clip of the coherence table (240 frames, seed SEED), for
 * the load test's --clip humanoid. */
/* A limit's fields as a request's "constraint" object. */
static void emit_constraint(ikd_emitter *e, const ikd_limit *l)
{
    size_t n = 1 + (size_t)l->has_axis + (l->type == IKD_LIMIT_HINGE ? 2 : l->type == IKD_LIMIT_BALL ? 3 :
                                           l->type == IKD_LIMIT_EULER ? 3 : 0);
    ikd_emit_map(e, n);
    IKD_EMIT_KEY(e, "type");
    ikd_emit_str(e, ikd_limit_type_name(l->type));
    if (l->has_axis) IKD_EMIT_KEY(e, "axis"), ikd_emit_nums(e, &l->axis.x, 3);
    if (l->type == IKD_LIMIT_HINGE) {
        IKD_EMIT_KEY(e, "min_deg"), ikd_emit_num(e, l->min_deg);
        IKD_EMIT_KEY(e, "max_deg"), ikd_emit_num(e, l->max_deg);
    }
    if (l->type == IKD_LIMIT_BALL) {
        IKD_EMIT_KEY(e, "max_deg"), ikd_emit_num(e, l->max_deg);
        IKD_EMIT_KEY(e, "twist_min_deg"), ikd_emit_num(e, l->twist_min_deg);
        IKD_EMIT_KEY(e, "twist_max_deg"), ikd_emit_num(e, l->twist_max_deg);
    }
    if (l->type == IKD_LIMIT_EULER) {
        IKD_EMIT_KEY(e, "order"), ikd_emit_str(e, ikd_limit_order_name(l->order));
        IKD_EMIT_KEY(e, "min_deg"), ikd_emit_nums(e, l->euler_min_deg, 3);
        IKD_EMIT_KEY(e, "max_deg"), ikd_emit_nums(e, l->euler_max_deg, 3);
    }
    ikd_emit_end(e);
}

/* `bench SEED clip-json`: one request body of POST /v1/solve/clip, the
 * humanoid 6-DoF clip of the coherence table (240 frames, seed SEED), for
 * the load test's --clip humanoid (written by the service's emitter). */
static void clip_json(unsigned seed)
{
    static clip_problem cp;
    tu_rng r;
    tu_seed(&r, seed);
    clip_make(&r, CLIP_HUMANOID_FULL, 240, 240, &cp);
    const ikd_skeleton *s = &cp.hp.skeleton;
    ikd_buf b;
    ikd_emitter e;
    ikd_buf_init(&b);
    ikd_emit_init(&e, IKD_ENC_JSON, &b);
    ikd_emit_map(&e, 2);
    IKD_EMIT_KEY(&e, "skeleton");
    ikd_emit_map(&e, 1);
    IKD_EMIT_KEY(&e, "joints");
    ikd_emit_array(&e, s->count);
    for (size_t i = 0; i < s->count; i++) {
        const ikd_skeleton_joint *j = &s->joints[i];
        ikd_emit_map(&e, i ? 5 : 4);
        IKD_EMIT_KEY(&e, "name"), ikd_emit_str(&e, humanoid_names[i]);
        if (i) IKD_EMIT_KEY(&e, "parent"), ikd_emit_str(&e, humanoid_names[j->parent]);
        IKD_EMIT_KEY(&e, "position"), ikd_emit_nums(&e, &j->position.x, 3);
        IKD_EMIT_KEY(&e, "rotation"), ikd_emit_nums(&e, &j->rotation.x, 4);
        IKD_EMIT_KEY(&e, "constraint"), emit_constraint(&e, &j->limit);
        ikd_emit_end(&e);
    }
    ikd_emit_end(&e);
    ikd_emit_end(&e);
    IKD_EMIT_KEY(&e, "frames");
    ikd_emit_array(&e, cp.frames);
    for (size_t k = 0; k < cp.frames; k++) {
        ikd_emit_map(&e, 1);
        IKD_EMIT_KEY(&e, "goals");
        ikd_emit_array(&e, cp.goal_count);
        for (size_t g = 0; g < cp.goal_count; g++) {
            const ikd_goal *goal = &cp.goals[k * cp.goal_count + g];
            ikd_emit_map(&e, 3);
            IKD_EMIT_KEY(&e, "joint"), ikd_emit_str(&e, humanoid_names[goal->joint]);
            IKD_EMIT_KEY(&e, "position"), ikd_emit_nums(&e, &goal->position.x, 3);
            IKD_EMIT_KEY(&e, "rotation"), ikd_emit_nums(&e, &goal->rotation.x, 4);
            ikd_emit_end(&e);
        }
        ikd_emit_end(&e);
        ikd_emit_end(&e);
    }
    ikd_emit_end(&e);
    ikd_emit_end(&e);
    if (b.failed) abort();
    fwrite(b.data, 1, b.len, stdout);
    putchar('\n');
    ikd_buf_destroy(&b);
    clip_free(&cp);
}

/* Import: MB/s per format on a generated 60 s, 30 fps BVH take (22 joints and their End Sites,
 * values written with 8 decimals) and a generated 14-arm URDF, then on Debian's real BVH clips
 * (assimp-testmodels) and the shared samples' GLB characters when they are there; median of 7
 * runs of ikd_api_import (parse, reply, skeleton kept). */
static double import_once(const ikd_api_limits *lim, const char *format, const char *body, size_t len, size_t *reply_len)
{
    const char *args[IKD_IMPORT__ARGS] = {format, NULL, NULL, NULL, NULL, NULL};
    ikd_import_opts o;
    ikd_error err;
    ikd_import_opts_parse(&o, args, &err);
    double t[7];
    for (int k = 0; k < 7; k++) {
        ikd_buf out;
        ikd_buf_init(&out);
        int error = 0;
        double t0 = now_ns();
        int status = ikd_api_import(lim, &o, NULL, IKD_ENC_JSON, body, len, &out, &error);
        t[k] = (now_ns() - t0) / 1e6;
        if (status != 200) fprintf(stderr, "import %s: %d %.200s\n", format, status, out.data ? out.data : "");
        *reply_len = out.len;
        ikd_buf_destroy(&out);
    }
    qsort(t, 7, sizeof t[0], cmp_double);
    return t[3];
}

static void import_row(const ikd_api_limits *lim, const char *label, const char *format, const char *body, size_t len)
{
    size_t reply = 0;
    double ms = import_once(lim, format, body, len, &reply);
    printf("%-26s %-5s %9.2f %9.2f %9.1f %9.2f\n", label, format, len / 1e6, ms, len / 1e6 / (ms / 1e3), reply / 1e6);
}

static void import_bench(void)
{
    static ikd_skelstore store;
    ikd_skelstore_init(&store, 64u << 20, NULL);
    ikd_api_limits lim = {1024, 10000, 1024, NULL, 1000000, 0, &store.lookup, &store};
    ikd_buf b;
    ikd_buf_init(&b);
    /* a 25-joint body: hips (6 channels), spine x3, neck, head, 2 x (clavicle, arm, forearm, hand), 2 x (thigh, shin, foot, toe) */
    static const char *names[] = {"Hips", "Spine", "Spine1", "Spine2", "Neck", "Head", "LClav", "LArm", "LFore", "LHand",
                                  "RClav", "RArm", "RFore", "RHand", "LThigh", "LShin", "LFoot", "LToe", "RThigh", "RShin",
                                  "RFoot", "RToe"};
    static const int parent[] = {-1, 0, 1, 2, 3, 4, 3, 6, 7, 8, 3, 10, 11, 12, 0, 14, 15, 16, 0, 18, 19, 20};
    int n = (int)(sizeof names / sizeof names[0]);
    ikd_buf_puts(&b, "HIERARCHY\n");
    int depth = 0, stack[32];
    for (int j = 0; j < n; j++) {
        while (depth && stack[depth - 1] != parent[j]) { /* close the joints that are not this one's parent */
            int leaf = 1;
            for (int k = 0; k < n; k++) leaf &= parent[k] != stack[depth - 1];
            if (leaf) ikd_buf_puts(&b, "End Site\n{\nOFFSET 0 5 0\n}\n");
            ikd_buf_puts(&b, "}\n");
            depth--;
        }
        char line[160];
        snprintf(line, sizeof line, "%s %s\n{\nOFFSET %.4f %.4f %.4f\nCHANNELS %s\n", j ? "JOINT" : "ROOT", names[j],
                 j ? 3.0 + j % 3 : 0.0, j ? 7.5 + j % 5 : 90.0, j ? 0.5 * (j % 2) : 0.0,
                 j ? "3 Zrotation Xrotation Yrotation" : "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation");
        ikd_buf_puts(&b, line);
        stack[depth++] = j;
    }
    while (depth) {
        int leaf = 1;
        for (int k = 0; k < n; k++) leaf &= parent[k] != stack[depth - 1];
        if (leaf) ikd_buf_puts(&b, "End Site\n{\nOFFSET 0 5 0\n}\n");
        ikd_buf_puts(&b, "}\n");
        depth--;
    }
    int frames = 1800;
    char line[64];
    snprintf(line, sizeof line, "MOTION\nFrames: %d\nFrame Time: 0.0333333\n", frames);
    ikd_buf_puts(&b, line);
    for (int k = 0; k < frames; k++) {
        for (int c = 0; c < 3 + 3 * n; c++) {
            snprintf(line, sizeof line, "%s%.8f", c ? " " : "", 170 * sin(0.01 * k * (1 + c % 7) + c));
            ikd_buf_puts(&b, line);
        }
        ikd_buf_puts(&b, "\n");
    }
    printf("\nimport (POST /v1/import in-process: parse, reply, skeleton kept), median of 7 runs\n");
    printf("%-26s %-5s %9s %9s %9s %9s\n", "file", "fmt", "MB", "ms", "MB/s", "reply_MB");
    import_row(&lim, "generated take, 60 s 30 fps", "bvh", b.data, b.len);
    ikd_buf_reset(&b);
    ikd_buf_puts(&b, "<?xml version=\"1.0\"?>\n<robot name=\"bench\">\n<link name=\"torso\"/>\n");
    for (int a = 0; a < 14; a++)
        for (int k = 0; k < 7; k++) {
            char j[640], parent_link[32];
            if (k) snprintf(parent_link, sizeof parent_link, "a%d_l%d", a, k - 1);
            else snprintf(parent_link, sizeof parent_link, "torso");
            snprintf(j, sizeof j,
                     "<link name=\"a%d_l%d\"><visual><geometry><mesh filename=\"package://x/a%d_l%d.dae\"/></geometry></visual></link>\n"
                     "<joint name=\"a%d_j%d\" type=\"revolute\"><parent link=\"%s\"/><child link=\"a%d_l%d\"/>"
                     "<origin xyz=\"0.1 0.02 0.3\" rpy=\"0.1 -0.2 0.3\"/><axis xyz=\"0 0 1\"/>"
                     "<limit lower=\"-2.9\" upper=\"2.9\" effort=\"87\" velocity=\"2.175\"/></joint>\n",
                     a, k, a, k, a, k, parent_link, a, k);
            ikd_buf_puts(&b, j);
        }
    ikd_buf_puts(&b, "</robot>\n");
    import_row(&lim, "generated 14-arm robot", "urdf", b.data, b.len);
    static const struct {
        const char *path, *format;
    } real[] = {{"/usr/share/assimp/models/BVH/01_01.bvh", "bvh"},
                {"/usr/share/assimp/models/BVH/01_03.bvh", "bvh"},
                {"/usr/share/assimp/models/BVH/Boxing_Toes.bvh", "bvh"},
                {"../shared/samples/mannequiny.glb", "glb"},
                {"../shared/samples/godot_platformer_player.glb", "glb"}};
    int absent = 0;
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        size_t len;
        char *data = tu_read_file(real[i].path, &len);
        if (!data) {
            absent++;
            continue;
        }
        import_row(&lim, strrchr(real[i].path, '/') + 1, real[i].format, data, len);
        free(data);
    }
    if (absent)
        printf("(%d real files absent: Debian's BVH clips come with apt-get install assimp-testmodels, the GLB "
               "characters with ../shared/samples/)\n", absent);
    ikd_buf_destroy(&b);
    ikd_skelstore_destroy(&store);
}

/* `bench REPS requests FILE`: skeleton requests (one JSON body a line, the
 * skeleton by value; tests/bench/arms.py --bench writes them) decoded once,
 * then solved by ikd_multi_solve alone in REPS rounds over the file; per
 * problem its fastest round (the solve itself, without the HTTP path), and
 * over the file the goals met, mean iterations, median and p99. */
static int requests_bench(int reps, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    ikd_api_limits lim = {IKD_MAX_JOINTS, 100000, 100, NULL, 0, 0, NULL, NULL};
    size_t n = 0, cap = 0;
    ikd_skel_request *reqs = NULL;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) > 0) {
        if (n == cap) reqs = realloc(reqs, (cap = cap ? 2 * cap : 256) * sizeof *reqs);
        ikd_doc doc;
        ikd_error err;
        ikd_api_skel_init(&reqs[n], &lim);
        if (ikd_doc_load(&doc, IKD_ENC_JSON, line, (size_t)len, &err) != IKD_E_OK ||
            ikd_api_skel_decode(doc.root, &lim, -1, &reqs[n], &err) != IKD_E_OK) {
            fprintf(stderr, "%s line %zu: %s %s\n", path, n + 1, err.field, err.message);
            return 1;
        }
        ikd_doc_free(&doc);
        n++;
    }
    free(line);
    fclose(f);
    double *best = malloc(sizeof(double) * (n ? n : 1));
    long iterations = 0;
    int met = 0;
    for (int r = 0; r < reps; r++) /* every problem once a round: its caches cold as over HTTP */
        for (size_t i = 0; i < n; i++) {
            ikd_multi_problem *p = &reqs[i].problem;
            p->skeleton = &reqs[i].skeleton; /* the array moved since decoding */
            size_t joints = reqs[i].skeleton.count, ws = ikd_multi_workspace_size(joints, reqs[i].goal_count);
            void *work = malloc(ws);
            ikd_quat *local = malloc(joints * sizeof *local);
            ikd_pose_joint *pose = malloc(joints * sizeof *pose);
            ikd_goal_result *gr = malloc(reqs[i].goal_count * sizeof *gr);
            ikd_multi_result res;
            ikd_error err;
            double t0 = now_ns();
            ikd_multi_solve(p, work, ws, local, pose, gr, &res, &err);
            double us = (now_ns() - t0) / 1e3;
            best[i] = r ? fmin(best[i], us) : us;
            if (r == 0) met += res.status == IKD_MULTI_REACHED, iterations += res.iterations;
            free(work), free(local), free(pose), free(gr);
        }
    for (size_t i = 0; i < n; i++) ikd_skel_request_destroy(&reqs[i]);
    qsort(best, n, sizeof(double), cmp_double);
    printf("requests %s: %zu solved in process, %d met, %.1f iterations on average, median %.1f us, p99 %.1f us "
           "(each the fastest of %d rounds)\n",
           path, n, met, n ? (double)iterations / (double)n : 0.0, n ? best[n / 2] : 0.0, n ? best[n * 99 / 100] : 0.0,
           reps);
    free(best);
    free(reqs);
    return 0;
}

/* `bench REPS clip FILE`: one POST /v1/solve/clip body (JSON, the skeleton
 * by value; tests/bench/mocap.py --dump writes them) decoded once, then
 * solved frame by frame as the service solves it (ikd_clip_step) in REPS
 * rounds; per frame its fastest round, and over the clip the frames
 * reached, mean iterations, median and p99 (the solves alone). */
static int clip_file_bench(int reps, const char *path)
{
    size_t len;
    char *body = tu_read_file(path, &len);
    if (!body) {
        perror(path);
        return 1;
    }
    ikd_api_limits lim = {IKD_MAX_JOINTS, 1000000, 100, NULL, 0, 0, NULL, NULL};
    ikd_skel_request req;
    ikd_error err;
    int rc = ikd_clip_open(&lim, IKD_ENC_JSON, body, len, &req, &err);
    free(body);
    if (rc != IKD_E_OK) {
        fprintf(stderr, "%s: %s %s\n", path, err.field, err.message);
        ikd_skel_request_destroy(&req);
        return 1;
    }
    size_t n = req.frame_count;
    double *best = malloc(sizeof(double) * (n ? n : 1));
    long iterations = 0;
    size_t reached = 0, flips = 0;
    for (int r = 0; r < reps; r++) {
        ikd_clip_run run;
        if (ikd_clip_begin(&run, &req, 0) != 0) {
            fprintf(stderr, "%s: out of memory\n", path);
            free(best);
            ikd_skel_request_destroy(&req);
            return 1;
        }
        for (size_t k = 0; k < n; k++) {
            ikd_clip_step(&run, &req, k);
            best[k] = r ? fmin(best[k], run.solve_us) : run.solve_us;
        }
        if (r == 0) iterations = run.summary.iterations, reached = run.summary.reached, flips = run.summary.flips;
        ikd_clip_end(&run);
    }
    qsort(best, n, sizeof(double), cmp_double);
    printf("clip %s: %zu frames, %zu reached, %zu turns over %.0f degrees, %.2f iterations on average, median %.1f us, "
           "p99 %.1f us (each frame the fastest of %d rounds)\n",
           path, n, reached, flips, IKD_CLIP_FLIP_DEG, n ? (double)iterations / (double)n : 0.0, n ? best[n / 2] : 0.0,
           n ? best[n * 99 / 100] : 0.0, reps);
    free(best);
    ikd_skel_request_destroy(&req);
    return 0;
}

int main(int argc, char **argv)
{
    /* the daemon's heap settings (src/server/main.c): batches' buffers stay in the heap
     * instead of being mapped and faulted in again for every batch */
    mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
    int count = argc > 1 ? atoi(argv[1]) : 1000;
    const char *only = argc > 2 && argv[2][0] ? argv[2] : NULL;
    int max_it = argc > 3 ? atoi(argv[3]) : 0; /* 0 = the default */
    if (only && !strcmp(only, "clip-json")) {
        clip_json((unsigned)count);
        return 0;
    }
    if (only && !strcmp(only, "requests") && argc > 3) return requests_bench(count, argv[3]);
    if (only && !strcmp(only, "clip") && argc > 3) return clip_file_bench(count, argv[3]);
    if (count < 1) {
        fprintf(stderr, "usage: %s [N [SET [MAX_ITERATIONS]]]: N >= 1 problems per set (default 1000); SET a solver\n"
                        "name, humanoid, clips, or clip-json (N is then the seed); or %s REPS requests|clip FILE\n",
                argv[0], argv[0]);
        return 2;
    }
    static const size_t sizes[] = {4, 8, 16, 32};
    static const struct {
        const char *label;
        ikd_solver solver;
        ikd_jacobian_method method;
    } solvers[] = {
        {"ccd", IKD_SOLVER_CCD, IKD_JACOBIAN_DLS},
        {"fabrik", IKD_SOLVER_FABRIK, IKD_JACOBIAN_DLS},
        {"jacobian-dls", IKD_SOLVER_JACOBIAN, IKD_JACOBIAN_DLS},
        {"jacobian-transpose", IKD_SOLVER_JACOBIAN, IKD_JACOBIAN_TRANSPOSE},
        {"auto", IKD_SOLVER_AUTO, IKD_JACOBIAN_DLS},
    };
    ikd_joint *joints = malloc(sizeof(ikd_joint) * 32 * (size_t)count);
    ikd_vec3 *targets = malloc(sizeof(ikd_vec3) * (size_t)count);
    int *far = malloc(sizeof(int) * (size_t)count);
    double *times = malloc(sizeof(double) * (size_t)count);
    ikd_pose_joint pose[32];
    size_t wsize = ikd_workspace_size(32);
    void *work = malloc(wsize);

    printf("ikd solver benchmark: %d problems per set (10%% out of reach), fixed seed\n", count);
    printf("success = lengths kept (1e-9 rel), root fixed, effector within 1e-3 x chain length, no limit violated\n");
    printf("far = out-of-reach targets ending straight (excess over ideal <= 1e-4 x length)\n\n");
    printf("%-6s %3s %-19s %9s %8s %9s %9s %8s %6s\n", "set", "n", "solver", "reach%", "far%", "median_us", "p99_us",
           "iters", "viol");
    for (int kind = PSET_FREE; kind <= PSET_BALL; kind++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            tu_rng r;
            tu_seed(&r, 1000 + (uint64_t)kind * 100 + n);
            for (int k = 0; k < count; k++) {
                far[k] = k % 10 == 9;
                pset_make(&r, (pset_kind)kind, n, far[k], &joints[(size_t)k * 32], &targets[k]);
            }
            for (size_t s = 0; s < sizeof solvers / sizeof solvers[0]; s++) {
                if (only && !strstr(solvers[s].label, only)) continue;
                stats st = {0};
                for (int k = 0; k < count; k++) {
                    ikd_joint *j = &joints[(size_t)k * 32];
                    ikd_problem p;
                    ikd_error err;
                    ikd_result res;
                    ikd_problem_init(&p);
                    p.solver = solvers[s].solver;
                    p.options.jacobian_method = solvers[s].method;
                    if (max_it > 0) p.options.max_iterations = max_it;
                    p.joints = j;
                    p.joint_count = n;
                    p.target = targets[k];
                    if (ikd_validate(&p, &err) != IKD_E_OK) {
                        fprintf(stderr, "invalid problem: %s %s\n", err.field, err.message);
                        return 1;
                    }
                    double t0 = now_ns();
                    ikd_solve(&p, work, wsize, pose, &res, &err);
                    times[k] = (now_ns() - t0) / 1000.0;
                    double L = ikd_chain_length(j, n);
                    int intact = tu_max_length_error(j, pose, n) <= 1e-9 &&
                                 ikd_vec3_dist(pose[0].position, j[0].position) == 0;
                    double vmax = ikd_chain_max_violation(j, n, pose);
                    int viol = vmax > 1e-6;
                    if (viol && getenv("IKD_BENCH_DEBUG")) fprintf(stderr, "violation %g at problem %d (far %d)\n", vmax, k, far[k]);
                    st.violations += viol;
                    st.broken += !intact;
                    st.iters += res.iterations;
                    double e = ikd_vec3_dist(pose[n - 1].position, targets[k]);
                    if (far[k]) {
                        st.far_n++;
                        double ideal = ikd_vec3_dist(targets[k], j[0].position) - L;
                        st.far_ok += intact && !viol && (kind != PSET_FREE || e - ideal <= 1e-4 * L);
                    } else {
                        st.reach_n++;
                        st.reach_ok += intact && !viol && e <= 1e-3 * L;
                    }
                }
                qsort(times, (size_t)count, sizeof(double), cmp_double);
                printf("%-6s %3zu %-19s %8.1f%% %7.1f%% %9.2f %9.2f %8.1f %6d%s\n", pset_name((pset_kind)kind), n,
                       solvers[s].label, 100.0 * st.reach_ok / st.reach_n, 100.0 * st.far_ok / st.far_n,
                       times[count / 2], times[(size_t)(count * 0.99)], st.iters / count, st.violations,
                       st.broken ? "  BROKEN" : "");
            }
        }
    }
    if (!getenv("IKD_BENCH_BATCH_ONLY") && (!only || !strcmp(only, "humanoid"))) humanoid_bench(count);
    if (!getenv("IKD_BENCH_BATCH_ONLY") && (!only || !strcmp(only, "clips"))) coherence_bench(count >= 1000 ? 10 : 3);
    /* IKD_BENCH_BATCH_ONLY=1: the batch handler alone (with IKD_BENCH_BATCH_ENC=json|msgpack, one encoding) */
    /* a solver's name (second argument) runs its tables only */
    int codec = !getenv("IKD_BENCH_BATCH_ONLY") && !only;
    if (codec) codec_bench();
    if (codec) strtod_bench();
    if (codec) number_writer_bench();
    if (!only || getenv("IKD_BENCH_BATCH_ONLY")) batch_bench();
    if ((codec || (only && !strcmp(only, "import"))) && !getenv("IKD_BENCH_BATCH_ONLY")) import_bench();
    free(joints);
    free(targets);
    free(far);
    free(times);
    free(work);
    return 0;
}
