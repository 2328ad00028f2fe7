/* spd.h - small symmetric positive definite systems by Cholesky, shared by the chain Jacobian solver and the skeleton solver. */
#ifndef IKD__SPD_H
#define IKD__SPD_H

/* Solves a x = b for the n x n symmetric positive definite a (row i at
 * a + i * lda; its lower triangle read, then overwritten with the
 * Cholesky factor L, a = L L^T). Returns 0, or -1 when a is not positive
 * definite (x is then partly written). For a few unknowns: O(n^3), no
 * blocking. */
int ikd__spd_solve(double *a, int n, int lda, const double *b, double *x);

#endif
