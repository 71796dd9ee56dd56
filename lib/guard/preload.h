/* SPDX-License-Identifier: BSD-3-Clause */
/* What the interposition libraries' MPI wrappers share (guard/preload.c,
 * guard/preload_large_count.c, pmpi/storage.c): exporting a wrapper, whether guard is on
 * in this library, and the code a fenced call returns. */
#ifndef MPIX_GUARD_PRELOAD_H
#define MPIX_GUARD_PRELOAD_H

#include <mpi.h>
#include <mpix/guard.h>

#include "common/interpose.h"

#define EXPORT __attribute__((visibility("default")))

/* libmpix-guard.so guards by default, libmpix-pmpi.so when MPIX_PMPI names guard. */
static inline int guard_on(void)
{
    return mpix_interpose_modules(MPIX_INTERPOSE_DEFAULT) & MPIX_INTERPOSE_GUARD;
}

/* A fenced call returns, when it succeeds, the error of an earlier guarded transfer that
 * failed after its own call returned (@deferred, which MPI has given to the transfer's
 * handler already), so that a program checking codes sees it once. */
static inline int fenced_code(int code, int deferred)
{
    return code != MPI_SUCCESS ? code : deferred;
}

/* A call that makes a window, its last parameter `MPI_Win *win`: MPI makes it, then the
 * memory the window exposes in this process is recorded for guard (guard/exposed.h). */
#define WINDOW_CREATED(name, params, args)                                      \
    EXPORT int MPI_##name params                                                \
    {                                                                           \
        int code_ = PMPI_##name args;                                           \
        return guard_on() ? mpix_interpose_window_created(code_, win) : code_;  \
    }

#endif
