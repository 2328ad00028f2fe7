/* sha256.h - SHA-256 (FIPS 180-4), for skeleton ids that every instance computes alike. */
#ifndef IKD_SHA256_H
#define IKD_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ikd_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t fill;
} ikd_sha256;

void ikd_sha256_init(ikd_sha256 *s);
void ikd_sha256_update(ikd_sha256 *s, const void *data, size_t n);
void ikd_sha256_final(ikd_sha256 *s, unsigned char out[32]);

#endif
