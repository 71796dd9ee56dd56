/* SPDX-License-Identifier: BSD-3-Clause */
/* The spin control block of a shared window: created with the window, hung on it. */
#ifndef MPIX_SPIN_CONTROL_H
#define MPIX_SPIN_CONTROL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

/* Two cache lines: x86's adjacent-line prefetcher moves lines in pairs, so words that
 * different processes write sit 128 bytes apart. */
enum { MPIX_SPIN_STRIDE = 128 };

/* A word on lines of its own. */
typedef struct mpix_spin_word {
    _Atomic uint32_t value;
    char pad[MPIX_SPIN_STRIDE - sizeof(uint32_t)];
} mpix_spin_word;

/* The barrier is a combining tree of counters: processes in groups of this many share a
 * counter, the last of a group goes on to its group's counter one level up, and the last
 * at the top releases everyone. Up to this many processes that is one counter, the
 * fastest barrier measured at 2 processes; with more, no counter takes more than this
 * many read-modify-writes per barrier, where one shared counter serializes them all. */
enum { MPIX_SPIN_FAN_IN = 4 };

/* In shared memory. The words sleepers wait on are 32 bits, as futexes require;
 * comparisons are wrap-safe. Each group sits on its own pair of lines. */
typedef struct mpix_spin_block {
    _Atomic uint32_t posts;           /* signals so far (MPIX_Win_spin_post, mpix_spin_signal) */
    _Atomic uint32_t post_sleepers;   /* processes asleep on posts */
    char pad_posts[MPIX_SPIN_STRIDE - 2 * sizeof(uint32_t)];
    /* The top of the barrier tree: its counter shares the line with the release count,
     * so the last arrival, which owns the line after counting itself, releases without
     * fetching another line (measured 0.21 against 0.34 us a barrier at 2 processes). */
    _Atomic uint32_t top_count;       /* arrivals at the top of the tree in this barrier */
    _Atomic uint32_t released;        /* barriers released */
    _Atomic uint32_t release_sleepers;
    char pad_released[MPIX_SPIN_STRIDE - 3 * sizeof(uint32_t)];
    _Atomic uint32_t doorbell;        /* rung by an arrival while a process sleeps waiting for arrivals */
    _Atomic uint32_t collector_sleepers; /* processes asleep on the doorbell */
    char pad_doorbell[MPIX_SPIN_STRIDE - 2 * sizeof(uint32_t)];
    /* words[0 .. size): each process's steps entered (arrive, collect), written only by
     * its owner and read by whoever collects: arrivals never contend for one line;
     * words[size .. 2 size): the barrier tree's counters below the top, level by level. */
    mpix_spin_word words[];
} mpix_spin_block;

typedef struct mpix_spin_state {
    MPI_Win win;             /* the window this state hangs on (errors are raised on it) */
    MPI_Win control_win;     /* the small shared window holding the block */
    mpix_spin_block *block;
    int rank, size;
    uint32_t arrived;        /* this process's steps entered (its word in the block) */
    uint32_t waits_done;     /* posts this process has consumed */
    int polls;               /* polls before sleeping */
    int separate_model;      /* the user window needs MPI_Win_sync around the atomics */
} mpix_spin_state;

/* Collective over @comm: create the control block for @win (just made over @comm) and
 * hang it on @win. A code, not raised. */
int mpix_spin_attach(MPI_Win win, MPI_Comm comm, MPI_Info info);

/* The state of @win, or NULL when it has none (not from MPIX_Win_allocate_shared). */
mpix_spin_state *mpix_spin_state_of(MPI_Win win);

/* The pieces the hybrid collectives build on, called with the state of their window
 * (looked up once, when the collective is set up). Every process of the group goes
 * through the same sequence of steps; in each step each process either arrives (says it
 * has reached this point, without waiting) or collects (arrives and waits until every
 * other process has arrived); MPIX_Win_spin_barrier is a step in which every process
 * collects. Any process may collect and any may signal, which the public post does not
 * allow. Each returns MPI_SUCCESS or a code raised on the window (MPI_Win_sync failing
 * on a window of the separate memory model).
 *
 * mpix_spin_signal publishes every store its caller made before it, as a post does;
 * a signal counts as a post for the waits, so per step one process signals and the
 * others wait, and the caller of a signal has consumed it. */
int mpix_spin_arrive(mpix_spin_state *state);
int mpix_spin_collect(mpix_spin_state *state);
int mpix_spin_barrier(mpix_spin_state *state);
int mpix_spin_signal(mpix_spin_state *state);
int mpix_spin_wait(mpix_spin_state *state); /* MPIX_Win_spin_wait for any process, the leader too */
/* Both halves of a step for a process that neither collects nor signals: arrive, then
 * wait for the signal; the first failure's code. */
int mpix_spin_arrive_and_wait(mpix_spin_state *state);

#endif
