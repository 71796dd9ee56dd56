/* SPDX-License-Identifier: BSD-3-Clause */
/* A request of mpix's own that carries no data. */
#ifndef MPIX_COMMON_EMPTY_REQUEST_H
#define MPIX_COMMON_EMPTY_REQUEST_H

#include <mpi.h>

/* Starts a generalized request that carries nothing: complete once its holder calls
 * MPI_Grequest_complete, with the status of an empty message (source and tag
 * MPI_UNDEFINED, no bytes, not cancelled); MPI_Cancel does nothing to it. Its callbacks
 * call no MPI function but the status ones (MPICH runs them inside its own critical
 * section). Returns MPI_Grequest_start's code. */
int mpix_empty_request_start(MPI_Request *request);

#endif
