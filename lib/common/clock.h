/* SPDX-License-Identifier: BSD-3-Clause */
/* A monotonic clock in seconds, for code that must not call MPI_Wtime: a helper thread
 * makes no MPI call, and a fault handler runs in the middle of any call. */
#ifndef MPIX_COMMON_CLOCK_H
#define MPIX_COMMON_CLOCK_H

#include <time.h>

static inline double mpix_clock_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

#endif
