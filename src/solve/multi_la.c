/* multi_la.c - the skeleton solver's dense linear algebra: J J^T, its Cholesky factor, locked columns (Woodbury), solves. */
#include <string.h>

#include "multi.h"
#include "spd.h"

/* Two doubles as one value (the GCC/clang vector extension: SSE2 on
 * x86-64, NEON on aarch64, pairs of scalars elsewhere), loaded from any
 * address. Lane l of a sum stepping k by 2 is the scalar partial sum over
 * k = l (mod 2): the kernels below add in the order scalar code with those
 * partial sums does (the same bits) in about half the instructions. */
typedef double v2d __attribute__((vector_size(16), aligned(8), may_alias));

static inline v2d v2_load(const double *p) { return *(const v2d *)p; }

/* The kernels below are inlined into every loop that calls them: most of
 * their calls are over a few entries (two goals' shared prefix, a factor
 * row's first columns), where the call itself cost as much as the sums
 * (clip frames 5% faster, the same bits). */
#define LA_KERNEL static inline __attribute__((always_inline))

/* a . b over n entries, four partial sums (independent chains: the
 * products of short rows are latency-bound, not throughput-bound): the
 * lanes of s01 and s23. */
LA_KERNEL double dot(const double *a, const double *b, size_t n)
{
    v2d s01 = {0, 0}, s23 = {0, 0};
    size_t k = 0;
    for (; k + 4 <= n; k += 4) s01 += v2_load(a + k) * v2_load(b + k), s23 += v2_load(a + k + 2) * v2_load(b + k + 2);
    double s0 = s01[0];
    for (; k < n; k++) s0 += a[k] * b[k];
    return (s0 + s01[1]) + (s23[0] + s23[1]);
}

/* a1 . b and a2 . b over n entries at once (b loaded once; two partial
 * sums each: the lanes of s and t). */
LA_KERNEL void dot2(const double *a1, const double *a2, const double *b, size_t n, double *r1, double *r2)
{
    v2d s = {0, 0}, t = {0, 0};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) {
        v2d bk = v2_load(b + k);
        s += v2_load(a1 + k) * bk, t += v2_load(a2 + k) * bk;
    }
    double s0 = s[0], t0 = t[0];
    if (k < n) s0 += a1[k] * b[k], t0 += a2[k] * b[k];
    *r1 = s0 + s[1], *r2 = t0 + t[1];
}

/* x[0..n) += a * y[0..n) (each entry on its own: the same bits as the
 * scalar loop). */
LA_KERNEL void axpy(double *x, double a, const double *y, size_t n)
{
    v2d av = {a, a};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) *(v2d *)(x + k) = v2_load(x + k) + v2_load(y + k) * av;
    if (k < n) x[k] += y[k] * a;
}

/* x[0..n) += a1 * y1[0..n), then += a2 * y2[0..n) (each entry as two
 * axpy calls would add: the same bits, x read and written once). */
LA_KERNEL void axpy2(double *x, double a1, const double *y1, double a2, const double *y2, size_t n)
{
    v2d av = {a1, a1}, bv = {a2, a2};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) *(v2d *)(x + k) = (v2_load(x + k) + v2_load(y1 + k) * av) + v2_load(y2 + k) * bv;
    if (k < n) x[k] = (x[k] + y1[k] * a1) + y2[k] * a2;
}

/* a1 . b1, a2 . b1, a1 . b2 and a2 . b2 over n entries at once (each as
 * dot2 adds it: the same bits), into r[0..3]. */
LA_KERNEL void dot22(const double *a1, const double *a2, const double *b1, const double *b2, size_t n, double r[4])
{
    v2d s11 = {0, 0}, s21 = {0, 0}, s12 = {0, 0}, s22 = {0, 0};
    size_t k = 0;
    for (; k + 2 <= n; k += 2) {
        v2d x1 = v2_load(a1 + k), x2 = v2_load(a2 + k), y1 = v2_load(b1 + k), y2 = v2_load(b2 + k);
        s11 += x1 * y1, s21 += x2 * y1, s12 += x1 * y2, s22 += x2 * y2;
    }
    double t11 = s11[0], t21 = s21[0], t12 = s12[0], t22 = s22[0];
    if (k < n) t11 += a1[k] * b1[k], t21 += a2[k] * b1[k], t12 += a1[k] * b2[k], t22 += a2[k] * b2[k];
    r[0] = t11 + s11[1], r[1] = t21 + s21[1], r[2] = t12 + s12[1], r[3] = t22 + s22[1];
}

/* A0 = J J^T (lower triangle): two rows' product over the columns their
 * goals share, two by two where the columns' rows are of one goal too. */
void ikd__multi_form_product(multi_ws *w)
{
    size_t m = w->rows, cm = w->cmax;
    for (size_t r = 0; r < m;) {
        const int *pr = &w->pre[(size_t)w->row_goal[r] * w->g];
        const double *Jr = &w->J[r * cm];
        if (r + 1 < m && w->row_goal[r + 1] == w->row_goal[r]) { /* two rows of one goal at once */
            const double *Js = Jr + cm;
            for (size_t c = 0; c <= r;) {
                const double *Jc = &w->J[c * cm];
                size_t n = (size_t)pr[w->row_goal[c]];
                if (c + 1 < r && w->row_goal[c + 1] == w->row_goal[c]) {
                    double q[4];
                    dot22(Jr, Js, Jc, Jc + cm, n, q);
                    w->A0[r * m + c] = q[0], w->A0[(r + 1) * m + c] = q[1];
                    w->A0[r * m + c + 1] = q[2], w->A0[(r + 1) * m + c + 1] = q[3];
                    c += 2;
                } else {
                    dot2(Jr, Js, Jc, n, &w->A0[r * m + c], &w->A0[(r + 1) * m + c]);
                    c++;
                }
            }
            w->A0[(r + 1) * m + r + 1] = dot(Js, Js, (size_t)pr[w->row_goal[r]]);
            r += 2;
        } else {
            for (size_t c = 0; c <= r; c++) w->A0[r * m + c] = dot(Jr, &w->J[c * cm], (size_t)pr[w->row_goal[c]]);
            r++;
        }
    }
}

/* A = A0 + diag(w->rdamp), factored in place (Cholesky, lower; w->dinv the
 * reciprocals of its diagonal); 0, or -1 when not positive definite.
 * Column by column: column k's entries below the diagonal are dots of
 * their rows with row k over the first k entries, independent of one
 * another (two rows at a time against row k, read once for both). */
int ikd__multi_factor(multi_ws *w)
{
    size_t m = w->rows;
    const double *l2 = w->rdamp;
    for (size_t k = 0; k < m; k++) {
        double *Ak = &w->A[k * m];
        double s = w->A0[k * m + k] + l2[k] - dot(Ak, Ak, k);
        if (!(s > 0)) return -1;
        double d = Ak[k] = sqrt(s), id = w->dinv[k] = 1 / d;
        size_t i = k + 1;
        for (; i + 1 < m; i += 2) {
            double *Ai = &w->A[i * m], *Aj = Ai + m, r1, r2;
            dot2(Ai, Aj, Ak, k, &r1, &r2);
            Ai[k] = (w->A0[i * m + k] - r1) * id;
            Aj[k] = (w->A0[(i + 1) * m + k] - r2) * id;
        }
        if (i < m) w->A[i * m + k] = (w->A0[i * m + k] - dot(&w->A[i * m], Ak, k)) * id;
    }
    return 0;
}

/* x = A^-1 b with the factor; b and x may be the same. L^T x = y by rows
 * of L, two at a time: the entries above them updated once for both (in
 * the order one row at a time would: the same bits), so each entry's
 * next use waits on half as many stores. */
void ikd__multi_solve_factored(const multi_ws *w, const double *b, double *x)
{
    size_t m = w->rows, t = m;
    for (size_t i = 0; i < m; i++) { /* the last two entries after the dot over the rest (the chain from one
                                         entry to the next: two products, not a dot's sums) */
        const double *Li = &w->A[i * m];
        double v = b[i];
        if (i >= 2) v = (v - dot(Li, x, i - 2)) - Li[i - 2] * x[i - 2];
        if (i >= 1) v -= Li[i - 1] * x[i - 1];
        x[i] = v * w->dinv[i];
    }
    for (; t >= 2; t -= 2) {
        const double *L1 = &w->A[(t - 1) * m], *L0 = &w->A[(t - 2) * m];
        double x1 = x[t - 1] *= w->dinv[t - 1];
        double x0 = x[t - 2] = (x[t - 2] - x1 * L1[t - 2]) * w->dinv[t - 2];
        axpy2(x, -x1, L1, -x0, L0, t - 2);
    }
    if (t == 1) x[0] *= w->dinv[0];
}

/* out = J^T v over all columns (goal by goal: the goal's rows added into
 * its compact columns (w->zc) in row order, contiguous; then one scattered
 * add per compact column). */
void ikd__multi_jt(multi_ws *w, const double *v, double *out)
{
    memset(out, 0, w->cols * sizeof(double));
    for (size_t i = 0; i < w->g; i++) {
        size_t nr, r0 = multi_goal_rows(w, i, &nr), cm = w->cmax, n = (size_t)w->glen[i];
        const int *gc = &w->gcol[i * cm];
        double *acc = w->zc;
        memset(acc, 0, n * sizeof(double));
        for (size_t r = 0; r < nr; r++) axpy(acc, v[r0 + r], &w->J[(r0 + r) * cm], n);
        for (size_t c = 0; c < n; c++) out[gc[c]] += acc[c];
    }
}

/* y = e - k J z (goal by goal: z gathered once into the goal's compact
 * columns). */
void ikd__multi_residual(multi_ws *w, double k)
{
    for (size_t i = 0; i < w->g; i++) {
        size_t nr, r0 = multi_goal_rows(w, i, &nr), n = (size_t)w->glen[i];
        const int *gc = &w->gcol[i * w->cmax];
        for (size_t c = 0; c < n; c++) w->zc[c] = w->z[gc[c]] / w->cs[gc[c]];
        for (size_t r = r0; r < r0 + nr; r++) w->y[r] = w->e[r] - k * dot(&w->J[r * w->cmax], w->zc, n);
    }
}

/* Column col's entries over every row: taken out of J into t[0..rows)
 * (0 where its goals' rows have none; J's entries zeroed), or with `back`
 * put back into J from t. */
void ikd__multi_move_column(multi_ws *w, size_t col, double *t, int back)
{
    if (!back) memset(t, 0, w->rows * sizeof(double));
    for (size_t i = 0; i < w->g; i++) {
        int c = w->gidx[i * w->cols + col];
        if (c < 0) continue;
        size_t nr, r0 = multi_goal_rows(w, i, &nr);
        for (size_t r = r0; r < r0 + nr; r++) {
            double *x = &w->J[r * w->cmax + (size_t)c];
            if (back) *x = t[r];
            else t[r] = *x, *x = 0;
        }
    }
}

/* w->y = (A + W S W^T)^-1 (r - W f) by Woodbury's identity: A is the
 * factor in w->A (with w->y0 = A^-1 r), W the w->nt columns in w->t
 * (U = A^-1 W in w->tu, f in w->tf), S their signs (w->ts: +1 a guessed
 * column put back, -1 a locked one; the put-back ones come first):
 * y = v - U K^-1 W^T v, v = y0 - U f, K = S + W^T U (LDL^T, unpivoted).
 * The matrix is positive definite when K's pivots have S's signs: 0, or
 * -1 when one is not clearly so (a downdate failed there before). */
static int woodbury_solve(multi_ws *w)
{
    size_t m = w->rows;
    int p = w->nt, n = MULTI_WB;
    double *K = w->tc, *g = w->tc + MULTI_WB * MULTI_WB;
    for (int a = 0; a < p; a++) /* K = L D L^T: L below the diagonal, D on it */
        for (int b = 0; b <= a; b++) {
            double s = (a == b ? w->ts[a] : 0) + dot(&w->t[(size_t)a * m], &w->tu[(size_t)b * m], m);
            for (int q = 0; q < b; q++) s -= K[a * n + q] * K[b * n + q] * K[q * n + q];
            if (a == b) {
                if (!(s * w->ts[a] > 1e-10)) return -1;
                K[a * n + a] = s;
            } else {
                K[a * n + b] = s / K[b * n + b];
            }
        }
    memcpy(w->y, w->y0, m * sizeof(double)); /* v = y0 - U f */
    for (int a = 0; a < p; a++) axpy(w->y, -w->tf[a], &w->tu[(size_t)a * m], m);
    for (int a = 0; a < p; a++) { /* g = K^-1 W^T v */
        double s = dot(&w->t[(size_t)a * m], w->y, m);
        for (int q = 0; q < a; q++) s -= K[a * n + q] * g[q];
        g[a] = s;
    }
    for (int a = 0; a < p; a++) g[a] /= K[a * n + a];
    for (int a = p - 1; a >= 0; a--)
        for (int q = a + 1; q < p; q++) g[a] -= K[q * n + a] * g[q];
    for (int a = 0; a < p; a++) axpy(w->y, -g[a], &w->tu[(size_t)a * m], m); /* y = v - U g */
    return 0;
}

/* Every newly locked column out of the system (its compact entries
 * zeroed, its fixed step moved into the task error, its z zeroed), and
 * w->y solved again without them. The factor in w->A stays that of the
 * round the lock rounds started from; the columns locked since go in by
 * Woodbury's identity (woodbury_solve, sign -1; their residual's change
 * f = fix - k z each). Each lock costs one solve with the factor; before,
 * each was a rank-one downdate of the factor and the residual and solve
 * were done again. Returns 0, or -1 when more than MULTI_WB columns are
 * in since the factor or the system is not clearly positive definite:
 * A0 is then formed anew from J without the locked columns and must be
 * factored, and w->y is not solved. */
int ikd__multi_lock_columns(multi_ws *w, double k)
{
    size_t m = w->rows;
    int over = 0;
    for (size_t col = 0; col < w->cols; col++) {
        if (w->locked[col] != 1) continue;
        w->locked[col] = 2;
        /* past MULTI_WB columns w->y is the scratch: it is solved anew after the product */
        double *t = w->nt < MULTI_WB ? &w->t[(size_t)w->nt * m] : w->y;
        ikd__multi_move_column(w, col, t, 0); /* the column over every row */
        for (size_t r = 0; r < m; r++) w->e[r] -= t[r] * w->fix[col] / w->cs[col]; /* what its step does is done */
        if (t == w->y) {
            over = 1;
        } else {
            w->tf[w->nt] = (w->fix[col] - k * w->z[col]) / w->cs[col], w->ts[w->nt] = -1;
            ikd__multi_solve_factored(w, t, &w->tu[(size_t)w->nt * m]);
            w->nt++;
        }
        w->z[col] = 0;
    }
    if (over || woodbury_solve(w) != 0) {
        ikd__multi_form_product(w);
        return -1;
    }
    return 0;
}

/* The guessed locks (prelock: psave holds their columns) all put back,
 * as if none were made, and w->y solved again: by Woodbury's identity
 * over the factor without them (sign +1; their residual's change k z
 * each), instead of forming the product and factoring again. 0, or -1
 * as ikd__multi_lock_columns (A0 formed anew with them). */
_Static_assert(MULTI_PRELOCK <= MULTI_WB, "every guess fits in w->t");

int ikd__multi_unguess(multi_ws *w, int np, double k)
{
    size_t m = w->rows;
    for (int a = 0; a < np; a++) { /* (w->nt is 0: the guesses are checked before any lock round) */
        size_t col = (size_t)w->pcol[a];
        double *ps = &w->psave[(size_t)a * m];
        ikd__multi_move_column(w, col, ps, 1);
        w->locked[col] = 0;
        memcpy(&w->t[(size_t)w->nt * m], ps, m * sizeof(double));
        w->tf[w->nt] = k * w->z[col] / w->cs[col], w->ts[w->nt] = 1;
        ikd__multi_solve_factored(w, ps, &w->tu[(size_t)w->nt * m]);
        w->nt++;
    }
    if (woodbury_solve(w) != 0) {
        ikd__multi_form_product(w);
        return -1;
    }
    return 0;
}

/* Anderson mixing (type II) of a settle's steps. Settling is a fixed-point
 * iteration q -> q + g(q) that converges linearly, as slowly as 0.6 a step
 * where the pull presses a limb against its goal (a knee near straight,
 * pulled toward rest); the pose moves 1e-3 rad or less meanwhile, so the
 * columns of successive steps are compared as they are. With the changes
 * dG_i of the last plain steps g and the steps dQ_i taken before each,
 * gamma minimises |g - dG gamma| and the step taken is
 * g - (dQ + dG) gamma: where the linear model of the last steps converges.
 * One pair is Aitken's extrapolation along the last step; three also
 * cover the modes beside it. */

/* A settling step's start: the pair its step (w->dq) makes with the last
 * one goes into the ring (none at a settle's first step: w->mixn -1). */
void ikd__multi_mix_push(multi_ws *w)
{
    size_t n = w->cols;
    if (w->mixn >= 0) {
        double *g = &w->mixg[(size_t)w->mixpos * n], *q = &w->mixq[(size_t)w->mixpos * n];
        for (size_t c = 0; c < n; c++) g[c] = w->dq[c] - w->mixraw[c], q[c] = w->mixtook[c];
        w->mixpos = (w->mixpos + 1) % MULTI_MIX;
        if (w->mixn < MULTI_MIX) w->mixn++;
    }
    memcpy(w->mixraw, w->dq, n * sizeof(double));
}

/* The step as it will be taken (w->dq after any mixing or leap; apply's
 * cap on a turn is far above a settle's steps) kept for the next pair. */
void ikd__multi_mix_took(multi_ws *w)
{
    memcpy(w->mixtook, w->dq, w->cols * sizeof(double));
    if (w->mixn < 0) w->mixn = 0;
}

/* w->dq mixed with the ring's pairs; 1 when it was: the fit explains at
 * least MULTI_MIX_FIT of |g|^2 and the mixed step is at most 6 |g| (else
 * dq is left as it is, and 0). */
int ikd__multi_mix(multi_ws *w)
{
    size_t n = w->cols;
    int h = w->mixn;
    if (h < 1) return 0;
    const double *G[MULTI_MIX], *Q[MULTI_MIX];
    double M[MULTI_MIX][MULTI_MIX], b[MULTI_MIX], gam[MULTI_MIX], gg = dot(w->dq, w->dq, n), tr = 0, fit = 0;
    for (int i = 0; i < h; i++) { /* newest first */
        size_t slot = (size_t)((w->mixpos - 1 - i + 2 * MULTI_MIX) % MULTI_MIX);
        G[i] = &w->mixg[slot * n], Q[i] = &w->mixq[slot * n];
    }
    for (int i = 0; i < h; i++) {
        for (int j = 0; j <= i; j++) M[i][j] = dot(G[i], G[j], n);
        b[i] = dot(G[i], w->dq, n), tr += M[i][i];
    }
    if (!(tr > 0)) return 0;
    for (int i = 0; i < h; i++) M[i][i] += 1e-10 * tr; /* dG^T dG, a little damped: pairs nearly parallel */
    if (ikd__spd_solve(&M[0][0], h, MULTI_MIX, b, gam) != 0) return 0;
    for (int i = 0; i < h; i++) fit += b[i] * gam[i]; /* |dG gamma|^2: what the fit takes out of |g|^2 */
    if (!(fit > MULTI_MIX_FIT * gg)) return 0;
    double *x = w->zc, xx = 0;
    for (size_t c = 0; c < n; c++) {
        double v = w->dq[c];
        for (int i = 0; i < h; i++) v -= gam[i] * (Q[i][c] + G[i][c]);
        x[c] = v, xx += v * v;
    }
    if (!(xx <= 36 * gg)) return 0; /* at most 6 times the step, as extrapolate stretches */
    memcpy(w->dq, x, n * sizeof(double));
    return 1;
}
