/* The spin control block of a shared window: created with the window, hung on it. */
#ifndef MPIX_SPIN_CONTROL_H
#define MPIX_SPIN_CONTROL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

/* In shared memory, written by every process of the node. The counters the futex sleeps
 * on are 32 bits, as futexes require; comparisons are wrap-safe. Post and barrier words
 * live on separate cache lines so a barrier does not disturb waiters. */
typedef struct mpix_spin_block {
    _Atomic uint32_t posts;            /* leader's posts so far */
    _Atomic uint32_t post_sleepers;    /* processes asleep on posts */
    char pad_posts[56];
    _Atomic uint32_t arrived;          /* barrier arrivals in this generation */
    _Atomic uint32_t generation;       /* barriers completed */
    _Atomic uint32_t barrier_sleepers; /* processes asleep on generation */
    char pad_barrier[52];
    _Atomic uint32_t arrivals;         /* followers' arrivals so far (mpix_spin_arrive) */
    _Atomic uint32_t arrival_sleepers; /* the leader asleep on arrivals */
    char pad_arrivals[56];
} mpix_spin_block;

typedef struct mpix_spin_state {
    MPI_Win control_win;     /* the small shared window holding the block */
    mpix_spin_block *block;
    int rank, size;
    uint32_t waits_done;     /* this process's completed waits */
    uint32_t arrivals_due;   /* leader: followers' arrivals its collects have counted */
    int polls;               /* polls before sleeping */
    int separate_model;      /* the user window needs MPI_Win_sync around the atomics */
} mpix_spin_state;

/* Collective over @comm: create the control block for @win (just made over @comm) and
 * hang it on @win. A code, not raised. */
int mpix_spin_attach(MPI_Win win, MPI_Comm comm, MPI_Info info);

/* The state of @win, or NULL when it has none (not from MPIX_Win_allocate_shared). */
mpix_spin_state *mpix_spin_state_of(MPI_Win win);

/* Half of a barrier, for collectives whose leader alone must know that its followers
 * have reached a point (stopped reading the last result) while the followers need not
 * wait for one another: each follower arrives, without waiting; the leader collects one
 * arrival of every follower per call, waiting for them only when @wait (a leader that
 * writes nothing this call counts them without waiting). Misuse is raised on @win as by
 * the public calls. */
int mpix_spin_arrive(MPI_Win win);
int mpix_spin_collect(MPI_Win win, int wait);

#endif
