/* SPDX-License-Identifier: BSD-3-Clause */
/* Bytes of a vector of @blocks blocks of @block bytes, one every @stride bytes, written
 * with a pattern of their block, index and a salt (the round, the sender), and checked
 * on arrival: a misplaced, stale or missing byte shows. */
#ifndef MPIX_TEST_ZCOPY_BLOCKS_H
#define MPIX_TEST_ZCOPY_BLOCKS_H

#include "mpix_test.h"

#include <stddef.h>

static inline void zcopy_blocks_fill(char *buffer, int blocks, int block, int stride, int salt)
{
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < block; i++)
            buffer[(size_t)b * stride + i] = (char)(b * 7 + i + salt);
}

static inline void zcopy_blocks_check(const char *buffer, int blocks, int block, int stride, int salt, const char *what,
                                      int round)
{
    long bad = -1;
    for (int b = 0; b < blocks && bad < 0; b++)
        for (int i = 0; i < block && bad < 0; i++)
            if (buffer[(size_t)b * stride + i] != (char)(b * 7 + i + salt))
                bad = (long)b * stride + i;
    CHECK(bad < 0, "%s, round %d: byte %ld wrong", what, round, bad);
}

#endif
