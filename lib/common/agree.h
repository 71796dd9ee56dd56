/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective calls agree on failure (SPEC): one rank that cannot proceed makes every
 * rank return an error instead of leaving the others waiting in a later step. */
#ifndef MPIX_COMMON_AGREE_H
#define MPIX_COMMON_AGREE_H

#include <mpi.h>

/* Collective over @comm. Returns MPI_SUCCESS when no rank failed; @local_code on a rank
 * that failed; elsewhere a fresh code of the failing rank's mpix class (MPIX_ERRKIND_PEER
 * for a plain MPI code) whose text names the lowest failing rank and its message.
 * Costs one MPI_Allreduce of two ints when nothing failed. Raises nothing. */
int mpix_agree(MPI_Comm comm, int local_code);

#endif
