/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI's progress engine run from a wait of mpix's own. */
#ifndef MPIX_COMMON_PROGRESS_H
#define MPIX_COMMON_PROGRESS_H

/* Runs MPI's progress engine once, so that this process's other transfers move while
 * mpix waits for something MPI does not see (a peer's answer in shared memory).
 *
 * MPI_Iprobe is not such a call: MPICH (ch4) and Open MPI (ob1) make progress in it only
 * when it finds no message, and MPICH none at all on a communicator of one process, so
 * one message that has come and is not yet received stops every probe's progress, and
 * a wait relying on probes can wait for ever for a peer that waits for this process's
 * own large send. Testing a request that is not complete makes progress in both: here a
 * generalized request started for the purpose, tested, completed and freed.
 *
 * Any thread at any thread level the caller may call MPI at. Returns MPI_SUCCESS or
 * the error code of the MPI call that failed. Cost: four MPI calls and one pass of the
 * progress engine; call it every few dozen polls, not at every one. */
int mpix_mpi_progress(void);

#endif
