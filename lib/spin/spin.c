/* Post / wait / barrier on the control block. Waiting polls, then yields, then sleeps on
 * a futex; a sleeper count lets the common case (nobody asleep) skip the wake syscall.
 * The Dekker pair (waker: bump counter, read sleepers; sleeper: bump sleepers, recheck
 * counter inside FUTEX_WAIT) is sequentially consistent, so no wake-up is lost. */
#include "control.h"
#include "common/api.h"
#include "common/error.h"
#include "common/relax.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Shared (not FUTEX_PRIVATE) futexes: the word is in memory mapped by several processes. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Wait until *word != @seen. */
static void wait_for_change(_Atomic uint32_t *word, _Atomic uint32_t *sleepers, uint32_t seen, int polls)
{
    for (int poll = 0; poll < polls; poll++) {
        if (atomic_load_explicit(word, memory_order_acquire) != seen)
            return;
        /* Spinning only pays while the poster runs on another core: after a short
         * burst, give the core away (ranks may outnumber cores). */
        if (poll < 64)
            mpix_cpu_relax();
        else
            sched_yield();
    }
    while (atomic_load_explicit(word, memory_order_seq_cst) == seen) {
        atomic_fetch_add_explicit(sleepers, 1, memory_order_seq_cst);
        futex_wait(word, seen);
        atomic_fetch_sub_explicit(sleepers, 1, memory_order_seq_cst);
    }
    atomic_thread_fence(memory_order_acquire);
}

static void wake_if_sleeping(_Atomic uint32_t *word, _Atomic uint32_t *sleepers)
{
    if (atomic_load_explicit(sleepers, memory_order_seq_cst) != 0)
        futex_wake_all(word);
}

enum role { ANYONE, LEADER_ONLY, FOLLOWERS_ONLY };

/* The state, or an error raised on @win naming what is wrong: no control block, or a
 * caller in the wrong role. */
static int state_for(MPI_Win win, const char *call, enum role role, mpix_spin_state **state)
{
    *state = mpix_spin_state_of(win);
    if (!*state)
        return mpix_raise_win(win, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                              "%s: the window was not made by MPIX_Win_allocate_shared", call));
    if (role == LEADER_ONLY && (*state)->rank != 0)
        return mpix_raise_win(win, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                              "%s: only the leader (rank 0 of the window's group) posts; this is "
                                              "rank %d",
                                              call, (*state)->rank));
    if (role == FOLLOWERS_ONLY && (*state)->rank == 0)
        return mpix_raise_win(win, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                              "%s: the leader (rank 0) posts, it does not wait", call));
    /* Separate memory model: public and private copies must meet around the atomics. */
    if ((*state)->separate_model)
        MPI_Win_sync(win);
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Win_spin_post(MPI_Win win)
{
    mpix_spin_state *state;
    int rc = state_for(win, "MPIX_Win_spin_post", LEADER_ONLY, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    atomic_fetch_add_explicit(&state->block->posts, 1, memory_order_seq_cst); /* releases earlier stores */
    wake_if_sleeping(&state->block->posts, &state->block->post_sleepers);
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Win_spin_wait(MPI_Win win)
{
    mpix_spin_state *state;
    int rc = state_for(win, "MPIX_Win_spin_wait", FOLLOWERS_ONLY, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    uint32_t target = state->waits_done + 1;
    /* Wrap-safe: done once posts has reached target, i.e. (posts - target) is "non-negative". */
    uint32_t posts;
    while ((int32_t)((posts = atomic_load_explicit(&state->block->posts, memory_order_acquire)) - target) < 0)
        wait_for_change(&state->block->posts, &state->block->post_sleepers, posts, state->polls);
    state->waits_done = target;
    if (state->separate_model)
        MPI_Win_sync(win);
    return MPI_SUCCESS;
}

int mpix_spin_arrive(MPI_Win win)
{
    mpix_spin_state *state;
    int rc = state_for(win, "mpix_spin_arrive", FOLLOWERS_ONLY, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Releases this process's earlier reads of the shared buffer. */
    atomic_fetch_add_explicit(&state->block->arrivals, 1, memory_order_seq_cst);
    wake_if_sleeping(&state->block->arrivals, &state->block->arrival_sleepers);
    return MPI_SUCCESS;
}

int mpix_spin_collect(MPI_Win win, int wait)
{
    mpix_spin_state *state;
    int rc = state_for(win, "mpix_spin_collect", LEADER_ONLY, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    state->arrivals_due += (uint32_t)state->size - 1;
    uint32_t arrivals;
    while (wait && (int32_t)((arrivals = atomic_load_explicit(&state->block->arrivals, memory_order_acquire)) -
                             state->arrivals_due) < 0)
        wait_for_change(&state->block->arrivals, &state->block->arrival_sleepers, arrivals, state->polls);
    if (state->separate_model)
        MPI_Win_sync(win);
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Win_spin_barrier(MPI_Win win)
{
    mpix_spin_state *state;
    int rc = state_for(win, "MPIX_Win_spin_barrier", ANYONE, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_spin_block *block = state->block;
    uint32_t generation = atomic_load_explicit(&block->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&block->arrived, 1, memory_order_acq_rel) == (uint32_t)state->size - 1) {
        /* Last in: reset for the next barrier before releasing this one. */
        atomic_store_explicit(&block->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&block->generation, 1, memory_order_seq_cst);
        wake_if_sleeping(&block->generation, &block->barrier_sleepers);
    } else {
        while (atomic_load_explicit(&block->generation, memory_order_acquire) == generation)
            wait_for_change(&block->generation, &block->barrier_sleepers, generation, state->polls);
    }
    if (state->separate_model)
        MPI_Win_sync(win);
    return MPI_SUCCESS;
}
