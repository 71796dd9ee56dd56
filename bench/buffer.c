/* SPDX-License-Identifier: BSD-3-Clause */
/* Message buffers for the benchmarks: malloc'd as a program would, or (--hugepages)
 * 2 MiB-aligned and advised to transparent huge pages, as on systems that run with THP
 * "always" or programs that ask for it. Kernel copies (zcopy) pin pages one by one, so
 * the page size changes their cost more than it changes a memcpy's. */
#include "bench.h"

#include <stdlib.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2 << 20 };

void bench_buffer_pair(const bench_options *options, size_t bytes, char **send, char **receive)
{
    *send = bench_buffer_alloc(options, bytes);
    *receive = bench_buffer_alloc(options, bytes);
    if (!*send || !*receive)
        MPI_Abort(options->comm, 1);
    for (size_t i = 0; i < bytes; i++)
        (*send)[i] = (char)i, (*receive)[i] = 0;
}

void *bench_buffer_alloc(const bench_options *options, size_t bytes)
{
    if (!options->hugepages)
        return malloc(bytes);
    size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *buffer = aligned_alloc(HUGE_PAGE, rounded);
    if (buffer)
        madvise(buffer, rounded, MADV_HUGEPAGE);
    return buffer;
}
