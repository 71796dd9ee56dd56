/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/spin.h
 * @brief Spin-synchronized shared windows: cheap leader-to-node signalling.
 *
 * On any window made by MPIX_Win_allocate_shared (memory or storage), rank 0 of the
 * window's group is the leader. The leader writes shared data with plain stores, then
 * calls MPIX_Win_spin_post(); every other process calls MPIX_Win_spin_wait() and then
 * reads the data. A post releases every store the leader made before it; a wait acquires
 * them (C11 release/acquire on a counter in shared memory; on a window of the separate
 * memory model, MPI_Win_sync as well). The n-th wait of a process returns after the
 * leader's n-th post, so posts are never lost, even when the leader runs ahead. Each
 * call first finishes the caller's guarded transfers (mpix/guard.h), as the blocking
 * calls had: a guarded receive into the shared memory lands before the others may read
 * it, and no send a peer waits for is left behind while this process waits.
 *
 * A waiting process polls a bounded number of times (yielding the CPU after the first
 * few), then sleeps on a futex until the post: correct and fast when ranks outnumber
 * cores. The budget is the hint `mpix_spin_polls` (info of MPIX_Win_allocate_shared) or
 * environment variable `MPIX_SPIN_POLLS` (default 2000); 0 sleeps at once.
 *
 * @par Fortran
 * The module mpix_spin (`use mpix_spin`, installed beside this header's folder) declares
 * these calls for `use mpi` and `use mpi_f08`.
 *
 * @par Errors
 * A window not made by MPIX_Win_allocate_shared, a post by a process other than the
 * leader, or a wait by the leader is an MPIX_ERRKIND_ARGUMENT error raised on the window.
 */
#ifndef MPIX_SPIN_H
#define MPIX_SPIN_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Leader (rank 0 of the window's group): publish every store made so far.
 * @param win a window from MPIX_Win_allocate_shared
 * @return MPI_SUCCESS or an error code, raised on @p win.
 * @par Complexity O(1): one atomic increment; one futex wake only if a waiter sleeps.
 */
int MPIX_Win_spin_post(MPI_Win win);

/**
 * @brief Non-leader: return once the leader's next post (the n-th, for this process's
 *        n-th wait) is visible; the leader's stores before it are then visible too.
 * @param win a window from MPIX_Win_allocate_shared
 * @return MPI_SUCCESS or an error code, raised on @p win.
 * @par Complexity polls up to `mpix_spin_polls` times, then sleeps until the post.
 */
int MPIX_Win_spin_wait(MPI_Win win);

/**
 * @brief All processes of the window's group: return once every one has entered.
 *
 * Stores made before the barrier by any process are visible to every process after it.
 * @param win a window from MPIX_Win_allocate_shared
 * @return MPI_SUCCESS or an error code, raised on @p win.
 * @par Complexity a combining tree of counters in groups of 4: one atomic increment per
 *      process, one more per level for the last of each group (log4 of the group size
 *      levels); the last at the top releases all and wakes sleepers.
 */
int MPIX_Win_spin_barrier(MPI_Win win);

#ifdef __cplusplus
}
#endif
#endif
