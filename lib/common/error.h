/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix error codes: one MPI error class per MPIX_Error_kind, messages that carry the
 * offending value, and the calls that raise a code on the right object's handler. */
#ifndef MPIX_COMMON_ERROR_H
#define MPIX_COMMON_ERROR_H

#include <mpi.h>
#include <mpix/common.h>

/* A fresh error code of @kind whose MPI_Error_string is "mpix: " + the formatted text.
 * Never fails: without a working MPI it falls back to MPI_ERR_OTHER. */
int mpix_error(MPIX_Error_kind kind, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* The MPIX_Error_kind of @code, or -1 when it is not an mpix code. */
int mpix_error_kind_of(int code);

/* Call the error handler of the object (as MPI does) and return @code unchanged.
 * MPI_SUCCESS passes through without a call. */
int mpix_raise_comm(MPI_Comm comm, int code);
int mpix_raise_win(MPI_Win win, int code);
/* Errors not tied to an object go to MPI_COMM_WORLD, as in MPI-3.1 §8.3. */
int mpix_raise(int code);

#endif
