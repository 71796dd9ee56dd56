/* SPDX-License-Identifier: BSD-3-Clause */
/* Node buffers laid out in cache lines start on a line boundary. A shared window's
 * segment does not everywhere: Open MPI 4.1 places it 264 bytes into its page, 8 bytes
 * past a line, which splits what a layout keeps on one line (a call number and its data)
 * and puts what it keeps apart (two processes' words) on one. The leader allocates
 * mpix_aligned_bytes(bytes, alignment); every process uses the buffer from
 * mpix_aligned(base, alignment). */
#ifndef MPIX_COMMON_LINES_H
#define MPIX_COMMON_LINES_H

#include <mpi.h>
#include <stdint.h>

/* A cache line on the processors mpix runs on (x86-64, arm64 servers). */
enum { MPIX_LINE_BYTES = 64 };

/* What to allocate for @bytes from an @alignment boundary (a power of two); 0 stays 0. */
static inline MPI_Aint mpix_aligned_bytes(MPI_Aint bytes, MPI_Aint alignment)
{
    return bytes > 0 ? bytes + alignment - 1 : 0;
}

/* The first @alignment boundary at or after @base. */
static inline void *mpix_aligned(void *base, uintptr_t alignment)
{
    return (void *)(((uintptr_t)base + alignment - 1) & ~(alignment - 1));
}

#endif
