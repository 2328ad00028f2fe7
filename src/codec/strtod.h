/* strtod.h - a correctly rounded strtod for plain decimals, also interposed as strtod itself. */
/* strtod.c defines strtod itself, so that
 * jansson's number conversions (and every other strtod call in the process) take it. */
#ifndef IKD_STRTOD_H
#define IKD_STRTOD_H

#include <stddef.h>

/* The fast path alone: when the whole of s (up to its NUL) is a plain decimal
 * -?digits(.digits)?([eE][+-]?digits)? with at most 19 significant digits and
 * decimal exponent within +-27 of them, stores the correctly rounded double
 * (ties to even) in *out and returns strlen(s) (> 0); otherwise returns 0 and
 * leaves *out alone. */
size_t ikd_strtod_fast(const char *s, double *out);

/* strtod(3): the fast path, else libc's strtod (same result, end and errno as libc's for every input). */
double ikd_strtod(const char *s, char **end);

#endif
