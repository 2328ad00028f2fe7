/* bench.c - `make bench`: solver success rates and in-process solve times on generated problem sets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ikd/constraint.h"
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

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 1000;
    const char *only = argc > 2 && argv[2][0] ? argv[2] : NULL;
    int max_it = argc > 3 ? atoi(argv[3]) : 0; /* 0 = the default */
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
    free(joints);
    free(targets);
    free(far);
    free(times);
    free(work);
    return 0;
}
