/* SPDX-License-Identifier: BSD-3-Clause */
/* libmpix-pmpi.so, storage, for Fortran callers (see fortran.h): storage.c's calls
 * other than those that make and fill windows (fortran_windows.c), with Fortran
 * arguments. MPICH's mpif.h and `use mpi` layers reach storage.c by themselves. */
#include <mpi.h>

#include "pmpi/fortran.h"

FORTRAN_EXPORT void BINDING(win_shared_query)(MPI_Fint *win, MPI_Fint *rank, MPI_Aint *size, MPI_Fint *disp_unit,
                                              void *baseptr, MPI_Fint *ierr)
{
    MPI_Aint c_size = 0;
    int c_disp_unit = 0;
    int rc = MPI_Win_shared_query(PMPI_Win_f2c(*win), (int)*rank, &c_size, &c_disp_unit, baseptr);
    if (rc == MPI_SUCCESS) {
        *size = c_size;
        *disp_unit = (MPI_Fint)c_disp_unit;
    }
    mpix_fortran_error(ierr, rc);
}
OPEN_MPI_ALIAS(mpi_win_shared_query_cptr_, mpi_win_shared_query_);
OPEN_MPI_ALIAS(ompi_win_shared_query_f, mpi_win_shared_query_);
OPEN_MPI_ALIAS(ompi_win_shared_query_cptr_f, mpi_win_shared_query_);

FORTRAN_EXPORT void BINDING(alloc_mem)(MPI_Aint *size, MPI_Fint *info, void *baseptr, MPI_Fint *ierr)
{
    mpix_fortran_error(ierr, MPI_Alloc_mem(*size, PMPI_Info_f2c(*info), baseptr));
}
OPEN_MPI_ALIAS(mpi_alloc_mem_cptr_, mpi_alloc_mem_);
OPEN_MPI_ALIAS(ompi_alloc_mem_f, mpi_alloc_mem_);
OPEN_MPI_ALIAS(ompi_alloc_mem_cptr_f, mpi_alloc_mem_);

FORTRAN_EXPORT void CHOICE_BINDING(free_mem)(void *base, MPI_Fint *ierr)
{
    mpix_fortran_error(ierr, MPI_Free_mem(CHOICE_ADDRESS(base)));
}
OPEN_MPI_ALIAS(ompi_free_mem_f, mpi_free_mem_);

FORTRAN_EXPORT void BINDING(win_sync)(MPI_Fint *win, MPI_Fint *ierr)
{
    mpix_fortran_error(ierr, MPI_Win_sync(PMPI_Win_f2c(*win)));
}
OPEN_MPI_ALIAS(ompi_win_sync_f, mpi_win_sync_);

FORTRAN_EXPORT void BINDING(win_free)(MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win c_win = PMPI_Win_f2c(*win);
    int rc = MPI_Win_free(&c_win);
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierr, rc);
}
OPEN_MPI_ALIAS(ompi_win_free_f, mpi_win_free_);

FORTRAN_EXPORT void BINDING(win_get_info)(MPI_Fint *win, MPI_Fint *info_used, MPI_Fint *ierr)
{
    MPI_Info c_info = MPI_INFO_NULL;
    int rc = MPI_Win_get_info(PMPI_Win_f2c(*win), &c_info);
    if (rc == MPI_SUCCESS)
        *info_used = PMPI_Info_c2f(c_info);
    mpix_fortran_error(ierr, rc);
}
OPEN_MPI_ALIAS(ompi_win_get_info_f, mpi_win_get_info_);
