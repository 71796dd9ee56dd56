/* SPDX-License-Identifier: BSD-3-Clause */
/* Questions about a window that MPI answers only through other objects. */
#ifndef MPIX_COMMON_WINDOW_H
#define MPIX_COMMON_WINDOW_H

#include <mpi.h>

/* The number of processes in @win's group, into *@ranks. A code, not raised. */
int mpix_win_group_size(MPI_Win win, int *ranks);

#endif
