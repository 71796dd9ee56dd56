/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory of this process that other processes reach without a message to it: the local
 * memory of every window, every segment of a shared window mapped here, and memory
 * attached to a dynamic window. A guarded transfer on such memory is finished before its
 * call returns (lib/guard/transfer.c): page protection holds back only this process's
 * own touches, and the program may tell another process, by any message, that the data
 * is there for it to read or to overwrite with RMA. The windows mpix makes register
 * themselves; the interposition libraries and <mpix/guard_inject.h> register MPI's. */
#ifndef MPIX_GUARD_EXPOSED_H
#define MPIX_GUARD_EXPOSED_H

#include <mpi.h>
#include <stdint.h>

/* Record what @win exposes here (after its creation; again is harmless). A code. */
int mpix_guard_expose_window(MPI_Win win);
/* @size bytes at @base that @win exposes: memory attached to a dynamic window
 * (@attached true, forgotten again by mpix_guard_expose_detached) or one of the
 * window's own segments (storage windows, whose MPI window does not know them all). A
 * code. */
int mpix_guard_expose_memory(MPI_Win win, const void *base, MPI_Aint size, int attached);
void mpix_guard_expose_detached(MPI_Win win, const void *base);
/* Whether [lo, hi) meets exposed memory. Unlocked: guard runs only at
 * MPI_THREAD_SINGLE, where nothing registers concurrently. */
int mpix_guard_exposed(uintptr_t lo, uintptr_t hi);

#endif
