/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Pvar_read's modules: each answers for the names of its prefix ("zcopy.",
 * "guard."), given without the prefix. 1 and *value set if @name is one of its
 * variables, 0 if not; *rc is an MPI error met while reading. */
#ifndef MPIX_COMMON_PVAR_H
#define MPIX_COMMON_PVAR_H

#include <mpi.h>

int mpix_zcopy_pvar_read(const char *name, MPI_Comm comm, MPI_Count *value, int *rc);
int mpix_guard_pvar_read(const char *name, MPI_Count *value);

#endif
