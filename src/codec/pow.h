/* pow.h - exact powers of 5 and 10 as 64-bit integers, for the number writer (buf.c) and strtod.c. */
#ifndef IKD_POW_H
#define IKD_POW_H

/* ikd_pow5[k] = 5^k for k in [0, 27] (5^27 < 2^63); ikd_pow10[k] = 10^k for k in [0, 19]. */
extern const unsigned long long ikd_pow5[28];
extern const unsigned long long ikd_pow10[20];

#endif
