/* SPDX-License-Identifier: BSD-3-Clause */
/* Both interposition libraries, for Fortran callers (see fortran.h): the calls that make
 * a window or give it memory, with Fortran arguments, made through this library's C
 * wrappers, which record the memory each window exposes for guard (guard/exposed.h) and,
 * in libmpix-pmpi.so, make storage windows. Without them a Fortran program's window is
 * unknown to guard where the MPI's binding calls the PMPI_ names (all of Open MPI's, and
 * MPICH's mpi_f08 MPI_WIN_ALLOCATE and MPI_WIN_ALLOCATE_SHARED): a receive into its
 * memory could still be in flight when another process reads the memory one-sided.
 * A BASEPTR argument is where the MPI stores the address (INTEGER(KIND=MPI_ADDRESS_KIND)
 * or TYPE(C_PTR) alike), which is what the C calls' baseptr is too. */
#include <mpi.h>

#include "pmpi/fortran.h"

FORTRAN_EXPORT void CHOICE_BINDING(win_create)(void *base, MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info,
                                               MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win c_win = MPI_WIN_NULL;
    int rc = MPI_Win_create(CHOICE_ADDRESS(base), *size, (int)*disp_unit, PMPI_Info_f2c(*info),
                            PMPI_Comm_f2c(*comm), &c_win);
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierr, rc);
}
OPEN_MPI_ALIAS(ompi_win_create_f, mpi_win_create_);

FORTRAN_EXPORT void BINDING(win_allocate)(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
                                          void *baseptr, MPI_Fint *win, MPI_Fint *ierr)
{
    mpix_fortran_window_allocate(MPI_Win_allocate, size, disp_unit, info, comm, baseptr, win, ierr);
}
OPEN_MPI_ALIAS(mpi_win_allocate_cptr_, mpi_win_allocate_);
OPEN_MPI_ALIAS(ompi_win_allocate_f, mpi_win_allocate_);
OPEN_MPI_ALIAS(ompi_win_allocate_cptr_f, mpi_win_allocate_);

FORTRAN_EXPORT void BINDING(win_allocate_shared)(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info,
                                                 MPI_Fint *comm, void *baseptr, MPI_Fint *win, MPI_Fint *ierr)
{
    mpix_fortran_window_allocate(MPI_Win_allocate_shared, size, disp_unit, info, comm, baseptr, win, ierr);
}
OPEN_MPI_ALIAS(mpi_win_allocate_shared_cptr_, mpi_win_allocate_shared_);
OPEN_MPI_ALIAS(ompi_win_allocate_shared_f, mpi_win_allocate_shared_);
OPEN_MPI_ALIAS(ompi_win_allocate_shared_cptr_f, mpi_win_allocate_shared_);

FORTRAN_EXPORT void CHOICE_BINDING(win_attach)(MPI_Fint *win, void *base, MPI_Aint *size, MPI_Fint *ierr)
{
    mpix_fortran_error(ierr, MPI_Win_attach(PMPI_Win_f2c(*win), CHOICE_ADDRESS(base), *size));
}
OPEN_MPI_ALIAS(ompi_win_attach_f, mpi_win_attach_);

FORTRAN_EXPORT void CHOICE_BINDING(win_detach)(MPI_Fint *win, void *base, MPI_Fint *ierr)
{
    mpix_fortran_error(ierr, MPI_Win_detach(PMPI_Win_f2c(*win), CHOICE_ADDRESS(base)));
}
OPEN_MPI_ALIAS(ompi_win_detach_f, mpi_win_detach_);
