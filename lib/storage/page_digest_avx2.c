/* SPDX-License-Identifier: BSD-3-Clause */
/* The page digest built for AVX2 (this file alone is compiled with -mavx2); page_digest.c
 * calls it where the processor has AVX2. xxHash's inline build picks its vector code at
 * compile time, so the two builds are two files. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "page_digest.h"

void mpix_page_digest_avx2(const char *page, long long page_bytes, uint64_t out[2])
{
    XXH128_hash_t hash = XXH3_128bits(page, (size_t)page_bytes);
    out[0] = hash.low64;
    out[1] = hash.high64;
}
