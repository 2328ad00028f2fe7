/* spd.c - small symmetric positive definite systems by Cholesky (see spd.h). */
#include "spd.h"

#include <math.h>
#include <stddef.h>

int ikd__spd_solve(double *a, int n, int lda, const double *b, double *x)
{
    for (int i = 0; i < n; i++) {
        double *ai = a + (size_t)i * (size_t)lda;
        for (int k = 0; k <= i; k++) {
            const double *ak = a + (size_t)k * (size_t)lda;
            double s = ai[k];
            for (int t = 0; t < k; t++) s -= ai[t] * ak[t];
            if (i == k) {
                if (!(s > 0)) return -1;
                ai[i] = sqrt(s);
            } else {
                ai[k] = s / ak[k];
            }
        }
    }
    for (int i = 0; i < n; i++) { /* L y = b, y in x */
        const double *ai = a + (size_t)i * (size_t)lda;
        double s = b[i];
        for (int t = 0; t < i; t++) s -= ai[t] * x[t];
        x[i] = s / ai[i];
    }
    for (int i = n; i-- > 0;) { /* L^T x = y */
        double s = x[i];
        for (int t = i + 1; t < n; t++) s -= a[(size_t)t * (size_t)lda + (size_t)i] * x[t];
        x[i] = s / a[(size_t)i * (size_t)lda + (size_t)i];
    }
    return 0;
}
