/* SPDX-License-Identifier: BSD-3-Clause */
/* What guard's wrappers of C library functions share (release.c, system_calls.c,
 * thread_create.c, signal_action.c): they are built into libmpix and into the preloaded
 * libraries, find the real function after their own, and ask whether guard has
 * transfers in flight before doing anything else. */
#ifndef MPIX_GUARD_LIBC_WRAPPER_H
#define MPIX_GUARD_LIBC_WRAPPER_H

#include "common/interpose.h"

#include <dlfcn.h>
#include <stdatomic.h>

/* Whether guard has transfers in flight: libmpix asks its state at once; a preloaded
 * library (MPIX_INTERPOSE_DEFAULT) asks libmpix. */
#if defined(MPIX_INTERPOSE_DEFAULT)
#define GUARD_BUSY() mpix_interpose_guard_busy()
#else
#include "guard.h"
#define GUARD_BUSY() mpix_guard_busy()
#endif

/* A definition that takes the C library's place. */
#define EXPORTED __attribute__((visibility("default")))

/* The next definition of @name after this object's (dlsym RTLD_NEXT: the C library's,
 * or a library preloaded after this one), looked up at its first use into *@cache. */
static inline void *mpix_next_definition(const char *name, _Atomic(void *) *cache)
{
    void *function = atomic_load_explicit(cache, memory_order_acquire);
    if (!function) {
        function = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, function, memory_order_release);
    }
    return function;
}

#endif
