/* fuzz_strtod.c - libFuzzer harness: ikd's strtod (src/codec/strtod.c, interposed for the whole
 * process) against glibc's strtod_l in the C locale, on the input as a string (up to its first NUL,
 * at most 200 bytes). Every input must give the same bits (any NaN for a NaN), the same end
 * pointer and the same errno; the fast path must also agree with itself (ikd_strtod_fast). */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/strtod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static locale_t c;
    if (!c && !(c = newlocale(LC_ALL_MASK, "C", (locale_t)0))) abort();
    char s[201];
    size_t n = size < 200 ? size : 200;
    memcpy(s, data, n);
    s[n] = '\0';
    char *e1, *e2;
    errno = 0;
    double a = strtod(s, &e1);
    int err1 = errno;
    errno = 0;
    double b = strtod_l(s, &e2, c);
    int err2 = errno;
    if (memcmp(&a, &b, sizeof a) != 0 && !(isnan(a) && isnan(b))) abort();
    if (e1 != e2 || err1 != err2) abort();
    double f;
    size_t fast = ikd_strtod_fast(s, &f);
    if (fast && (fast != strlen(s) || memcmp(&f, &b, sizeof f) != 0)) abort();
    return 0;
}
