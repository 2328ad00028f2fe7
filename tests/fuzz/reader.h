/* reader.h - the fuzz harnesses' byte reader: fuzzer input as bytes and doubles (header-only, one copy per harness). */
#ifndef IKD_FUZZ_READER_H
#define IKD_FUZZ_READER_H

#include <stdint.h>
#include <string.h>

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

/* The next byte; 0 once the input is used up. */
static inline uint8_t byte(reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

/* A double: mostly small coordinates (a signed byte / 16), sometimes raw
 * bit patterns (NaN, Infinity, 1e300, denormals). */
static inline double num(reader *r)
{
    uint8_t mode = byte(r);
    if (mode < 200) return ((double)(int8_t)byte(r)) / 16.0;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) bits = (bits << 8) | byte(r);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

#endif
