/* SPDX-License-Identifier: BSD-3-Clause */
/* Post / wait / barrier and the collective pieces (arrive, collect, signal) on the
 * control block. Waiting polls, then yields, then sleeps on a futex; a sleeper count
 * lets the common case (nobody asleep) skip the wake syscall. Each Dekker pair (waker:
 * store the word, read the sleepers; sleeper: count itself, recheck the word before
 * FUTEX_WAIT) is sequentially consistent, so no wake-up is lost. */
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

static void wake_if_sleeping(_Atomic uint32_t *word, _Atomic uint32_t *sleepers)
{
    if (atomic_load_explicit(sleepers, memory_order_seq_cst) != 0)
        futex_wake_all(word);
}

/* Wrap-safe "@counter has reached @target". */
static int reached(uint32_t counter, uint32_t target)
{
    return (int32_t)(counter - target) >= 0;
}

/* Wait until *word has reached @target. */
static void wait_for(_Atomic uint32_t *word, _Atomic uint32_t *sleepers, uint32_t target, int polls)
{
    for (int poll = 0; poll < polls; poll++) {
        if (reached(atomic_load_explicit(word, memory_order_acquire), target))
            return;
        mpix_backoff((unsigned long)poll, MPIX_BACKOFF_SPINS);
    }
    uint32_t seen;
    while (!reached(seen = atomic_load_explicit(word, memory_order_seq_cst), target)) {
        atomic_fetch_add_explicit(sleepers, 1, memory_order_seq_cst);
        futex_wait(word, seen);
        atomic_fetch_sub_explicit(sleepers, 1, memory_order_seq_cst);
    }
    atomic_thread_fence(memory_order_acquire);
}

/* Whether every process but this one has entered step @target; *from is where the last
 * look stopped, so a wait reads each arrived word once. */
static int all_arrived(const mpix_spin_state *state, uint32_t target, int *from, memory_order order)
{
    for (; *from < state->size; ++*from)
        if (*from != state->rank &&
            !reached(atomic_load_explicit(&state->block->words[*from].value, order), target))
            return 0;
    return 1;
}

/* Wait until every other process has entered step @target: poll their words; then sleep
 * on the doorbell, which an arrival rings only while somebody sleeps on it. */
static void wait_for_arrivals(const mpix_spin_state *state, uint32_t target)
{
    mpix_spin_block *block = state->block;
    int from = 0;
    for (int poll = 0; poll < state->polls; poll++) {
        if (all_arrived(state, target, &from, memory_order_acquire))
            return;
        mpix_backoff((unsigned long)poll, MPIX_BACKOFF_SPINS);
    }
    for (;;) {
        uint32_t bell = atomic_load_explicit(&block->doorbell, memory_order_seq_cst);
        atomic_fetch_add_explicit(&block->collector_sleepers, 1, memory_order_seq_cst);
        int done = all_arrived(state, target, &from, memory_order_seq_cst);
        if (!done)
            futex_wait(&block->doorbell, bell);
        atomic_fetch_sub_explicit(&block->collector_sleepers, 1, memory_order_seq_cst);
        if (done)
            break;
    }
    atomic_thread_fence(memory_order_acquire);
}

/* This process enters the next step: publishes its earlier stores and reads. */
static uint32_t arrive(mpix_spin_state *state)
{
    mpix_spin_block *block = state->block;
    uint32_t step = ++state->arrived;
    atomic_store_explicit(&block->words[state->rank].value, step, memory_order_seq_cst);
    if (atomic_load_explicit(&block->collector_sleepers, memory_order_seq_cst) != 0) {
        atomic_fetch_add_explicit(&block->doorbell, 1, memory_order_seq_cst);
        futex_wake_all(&block->doorbell);
    }
    return step;
}

static void signal_posts(mpix_spin_state *state)
{
    atomic_fetch_add_explicit(&state->block->posts, 1, memory_order_seq_cst); /* releases earlier stores */
    state->waits_done++;
    wake_if_sleeping(&state->block->posts, &state->block->post_sleepers);
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
    return MPI_SUCCESS;
}

/* On the separate memory model the window's public and private copies meet around the
 * atomics: before publishing and after acquiring. */
static int sync_copies(const mpix_spin_state *state)
{
    return state->separate_model ? mpix_raise_win(state->win, PMPI_Win_sync(state->win)) : MPI_SUCCESS;
}

/* Every step begins here. A guarded transfer (guard) of this process still in flight
 * is finished first, as the blocking call had finished it: a guarded receive still owes
 * stores to its buffer, which may be this shared memory, where page protection in this
 * process stops no other process from reading it; an in-place guarded send still reads
 * its buffer, which another process may write once this step lets it; and a step that
 * waits does so outside MPI, where a send that needs this process's progress (MPICH's
 * rendezvous) would never finish, nor the peer's receive that waits for it. A load and a
 * test when guard has nothing in flight. An earlier guarded transfer's failure, given to
 * its own handler already, is returned as the fenced MPI calls return it. */
static int begin_step(const mpix_spin_state *state)
{
    int deferred = MPIX_Guard_complete_all(), rc = sync_copies(state);
    return rc != MPI_SUCCESS ? rc : deferred;
}

int mpix_spin_signal(mpix_spin_state *state)
{
    int rc = begin_step(state);
    signal_posts(state);
    return rc;
}

int mpix_spin_wait(mpix_spin_state *state)
{
    int rc = begin_step(state);
    wait_for(&state->block->posts, &state->block->post_sleepers, state->waits_done + 1, state->polls);
    state->waits_done++;
    int synced = sync_copies(state);
    return rc != MPI_SUCCESS ? rc : synced;
}

int mpix_spin_arrive(mpix_spin_state *state)
{
    int rc = begin_step(state);
    arrive(state);
    return rc;
}

int mpix_spin_arrive_and_wait(mpix_spin_state *state)
{
    int rc = mpix_spin_arrive(state), waited = mpix_spin_wait(state);
    return rc != MPI_SUCCESS ? rc : waited;
}

int mpix_spin_collect(mpix_spin_state *state)
{
    int rc = begin_step(state);
    wait_for_arrivals(state, arrive(state));
    int synced = sync_copies(state);
    return rc != MPI_SUCCESS ? rc : synced;
}

/* The combining tree (control.h): climb while last in the group, release from the top,
 * otherwise wait for the release. The release count is read before arriving, so it
 * cannot have moved past this barrier yet. */
int mpix_spin_barrier(mpix_spin_state *state)
{
    mpix_spin_block *block = state->block;
    int rc = begin_step(state);
    uint32_t released = atomic_load_explicit(&block->released, memory_order_acquire);
    int index = state->rank, width = state->size, level_start = state->size;
    for (;;) {
        int group = index / MPIX_SPIN_FAN_IN, groups = (width + MPIX_SPIN_FAN_IN - 1) / MPIX_SPIN_FAN_IN;
        int members = width - group * MPIX_SPIN_FAN_IN < MPIX_SPIN_FAN_IN ? width - group * MPIX_SPIN_FAN_IN
                                                                          : MPIX_SPIN_FAN_IN;
        _Atomic uint32_t *count = groups == 1 ? &block->top_count : &block->words[level_start + group].value;
        if (atomic_fetch_add_explicit(count, 1, memory_order_acq_rel) != (uint32_t)members - 1) {
            wait_for(&block->released, &block->release_sleepers, released + 1, state->polls);
            int synced = sync_copies(state);
            return rc != MPI_SUCCESS ? rc : synced;
        }
        /* Last of the group: reset the counter for the next barrier, which nobody can
         * enter before this one is released. */
        atomic_store_explicit(count, 0, memory_order_relaxed);
        if (groups == 1)
            break;
        level_start += groups;
        index = group;
        width = groups;
    }
    atomic_fetch_add_explicit(&block->released, 1, memory_order_seq_cst);
    wake_if_sleeping(&block->released, &block->release_sleepers);
    return rc;
}

MPIX_API int MPIX_Win_spin_post(MPI_Win win)
{
    mpix_spin_state *state;
    int rc = state_for(win, "MPIX_Win_spin_post", LEADER_ONLY, &state);
    return rc == MPI_SUCCESS ? mpix_spin_signal(state) : rc;
}

MPIX_API int MPIX_Win_spin_wait(MPI_Win win)
{
    mpix_spin_state *state;
    int rc = state_for(win, "MPIX_Win_spin_wait", FOLLOWERS_ONLY, &state);
    return rc == MPI_SUCCESS ? mpix_spin_wait(state) : rc;
}

MPIX_API int MPIX_Win_spin_barrier(MPI_Win win)
{
    mpix_spin_state *state;
    int rc = state_for(win, "MPIX_Win_spin_barrier", ANYONE, &state);
    return rc == MPI_SUCCESS ? mpix_spin_barrier(state) : rc;
}
