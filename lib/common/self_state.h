/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-process state that must live exactly as long as MPI: it hangs on MPI_COMM_SELF,
 * whose attributes MPI_Finalize deletes first (MPI-3.1 §8.7.1), so it is freed while
 * MPI still works and nothing survives into a later use of the same address space. */
#ifndef MPIX_COMMON_SELF_STATE_H
#define MPIX_COMMON_SELF_STATE_H

#include <mpi.h>

typedef struct mpix_self_slot {
    int keyval;                         /* MPI_KEYVAL_INVALID until first use */
    int (*create)(void **state);        /* returns an MPI error code */
    void (*destroy)(void *state);       /* called inside MPI_Finalize */
} mpix_self_slot;

#define MPIX_SELF_SLOT_INIT(create_fn, destroy_fn) { MPI_KEYVAL_INVALID, (create_fn), (destroy_fn) }

/* The slot's state, created on first call. Thread-safe. Fails with MPI_ERR_OTHER when
 * MPI is not initialized or already finalized. */
int mpix_self_state(mpix_self_slot *slot, void **state);

/* Serialises lazy initialisation across threads of the process. */
void mpix_lock(void);
void mpix_unlock(void);

/* 1 between MPI_Init and MPI_Finalize. */
int mpix_mpi_is_active(void);

#endif
