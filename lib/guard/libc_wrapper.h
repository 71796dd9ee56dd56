/* SPDX-License-Identifier: BSD-3-Clause */
/* What guard's wrappers of C library functions share (release.c, system_calls.c): they
 * are built into libmpix and into the preloaded libraries, and ask whether guard has
 * transfers in flight before doing anything else. */
#ifndef MPIX_GUARD_LIBC_WRAPPER_H
#define MPIX_GUARD_LIBC_WRAPPER_H

#include "common/interpose.h"

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

#endif
