/* SPDX-License-Identifier: BSD-3-Clause */
/* The statuses MPI defines for calls that received no message. */
#ifndef MPIX_COMMON_STATUS_H
#define MPIX_COMMON_STATUS_H

#include <mpi.h>

/* Fills *@status as MPI fills one that no message came into: @source and @tag, no
 * bytes, not cancelled (MPI_ERROR left as it is). A receive from MPI_PROC_NULL gives
 * (MPI_PROC_NULL, MPI_ANY_TAG); an empty status (no active request) is
 * (MPI_ANY_SOURCE, MPI_ANY_TAG) with MPI_ERROR MPI_SUCCESS, which the caller sets.
 * Returns the code of MPI's status calls. */
int mpix_status_nothing(MPI_Status *status, int source, int tag);

#endif
