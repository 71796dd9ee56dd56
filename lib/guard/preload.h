/* SPDX-License-Identifier: BSD-3-Clause */
/* What the interposition libraries' MPI wrappers share (guard/preload.c,
 * guard/preload_large_count.c, pmpi/storage.c, pmpi/zcopy.c): exporting a wrapper,
 * whether guard or zcopy's routes are on in this library, fenced calls and the calls
 * that make windows. */
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

/* libmpix-pmpi.so's zcopy part (pmpi/zcopy.c) defines mpix_zcopy_route_<call> for the
 * calls it takes over when MPIX_PMPI names zcopy (and not guard, which takes the same
 * calls); in libmpix-guard.so these weak references stay null. */
static inline int zcopy_on(void)
{
    int modules = mpix_interpose_modules(MPIX_INTERPOSE_DEFAULT);
    return (modules & MPIX_INTERPOSE_ZCOPY) && !(modules & MPIX_INTERPOSE_GUARD);
}
#define ZCOPY_ROUTE(name, params) __attribute__((weak, visibility("hidden"))) int mpix_zcopy_route_##name params
#define ZCOPY_ROUTED(name) (mpix_zcopy_route_##name && zcopy_on())

/* A fenced call returns, when it succeeds, the error of an earlier guarded transfer that
 * failed after its own call returned (@deferred, which MPI has given to the transfer's
 * handler already), so that a program checking codes sees it once. */
static inline int fenced_code(int code, int deferred)
{
    return code != MPI_SUCCESS ? code : deferred;
}

/* A fenced call: the guarded transfers complete first (fenced_code: their error is
 * reported once). Where zcopy routes the call, the route makes it. */
#define FENCED(name, params, args)                                                              \
    ZCOPY_ROUTE(name, params);                                                                  \
    EXPORT int MPI_##name params                                                                \
    {                                                                                           \
        int deferred_ = MPIX_Guard_complete_all();                                              \
        int code_ = ZCOPY_ROUTED(name) ? mpix_zcopy_route_##name args : PMPI_##name args;       \
        return fenced_code(code_, deferred_);                                                   \
    }

/* A call that makes a window, its last parameter `MPI_Win *win`: @exposing runs first
 * (the guarded transfers on memory the program gives it are finished), MPI makes it,
 * then the memory the window exposes in this process is recorded for guard
 * (guard/exposed.h). */
#define WINDOW_CREATED(name, params, args, exposing)                            \
    EXPORT int MPI_##name params                                                \
    {                                                                           \
        int guarded_ = guard_on();                                              \
        if (guarded_)                                                           \
            exposing;                                                           \
        int code_ = PMPI_##name args;                                           \
        return guarded_ ? mpix_interpose_window_created(code_, win) : code_;    \
    }
#define NOTHING_EXPOSED ((void)0)   /* memory MPI allocates */
#define EXPOSING(base, size) mpix_interpose_window_exposing(base, size)

#endif
