/* SPDX-License-Identifier: BSD-3-Clause */
/* The spin calls for Fortran programs: mpix_<call>_ for mpif.h and `use mpi` (integer
 * handles) and mpix_<call>_f08_, the same code, for the `use mpi_f08` interfaces of the
 * module mpix_spin (include/mpix/spin.f90). Errors have already gone through the
 * window's handler in the C call; IERROR carries its code. */
#include "common/api.h"
#include "common/fortran.h"

#include <mpi.h>
#include <mpix/spin.h>

MPIX_API void mpix_win_spin_post_(const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Win_spin_post(PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_win_spin_post_f08_, mpix_win_spin_post_);

MPIX_API void mpix_win_spin_wait_(const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Win_spin_wait(PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_win_spin_wait_f08_, mpix_win_spin_wait_);

MPIX_API void mpix_win_spin_barrier_(const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Win_spin_barrier(PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_win_spin_barrier_f08_, mpix_win_spin_barrier_);
