/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-process state that must live exactly as long as MPI: it hangs on MPI_COMM_SELF,
 * whose attributes MPI_Finalize deletes first (MPI-3.1 §8.7.1), so it is freed while
 * MPI still works and nothing survives into a later use of the same address space. In a
 * program of MPI-4 sessions alone it hangs on a communicator of this process from a
 * session of the library's own, freed at process exit (self_state.c). */
#ifndef MPIX_COMMON_SELF_STATE_H
#define MPIX_COMMON_SELF_STATE_H

#include <mpi.h>
#include <stdatomic.h>

typedef struct mpix_self_slot {
    int keyval;                         /* MPI_KEYVAL_INVALID until first use */
    int (*create)(void **state);        /* returns an MPI error code */
    void (*destroy)(void *state);       /* called inside MPI_Finalize */
    /* The attribute's value while it is set: cleared by its deletion, before the state
     * is destroyed, so it never outlives the attribute. */
    void *_Atomic state;
} mpix_self_slot;

#define MPIX_SELF_SLOT_INIT(create_fn, destroy_fn) { MPI_KEYVAL_INVALID, (create_fn), (destroy_fn), NULL }

/* The slot's state, created on first call. Thread-safe. Fails with MPI_ERR_OTHER when
 * MPI_Finalize was called, or, with an MPI before MPI-4, when MPI is not initialized
 * (from MPI-4 on, a process without MPI_Init gets the library's own session). Once made,
 * one atomic load: per-call paths (interposed MPI_Send/MPI_Recv) look their process state
 * up on every call, and the lookup through MPI (MPI_Initialized, MPI_Finalized, the lock,
 * MPI_Comm_get_attr) took 3-5 us with Open MPI 4.1 on a 2-core VM. */
int mpix_self_state(mpix_self_slot *slot, void **state);

/* A communicator of this process alone, for local work MPI does through a communicator
 * (a copy by MPI_Sendrecv, MPI_Pack): MPI_COMM_SELF, or in a program of MPI-4 sessions
 * alone the library's own. Until first found, fails as mpix_self_state does; then one
 * atomic load. */
int mpix_self_comm(MPI_Comm *self);

/* Serialises lazy initialisation across threads of the process. */
void mpix_lock(void);
void mpix_unlock(void);

/* 1 between MPI_Init and MPI_Finalize (the world model; 0 in a program of sessions
 * alone). */
int mpix_mpi_is_active(void);

#endif
