/* SPDX-License-Identifier: BSD-3-Clause */
/* The storage calls for Fortran programs: mpix_<call>_ for mpif.h and `use mpi` (integer
 * handles) and mpix_<call>_f08_, the same code, for the `use mpi_f08` interfaces of the
 * module mpix_storage (include/mpix/storage.f90), as in hy/fortran.c. A BASEPTR argument
 * is where the C call stores an address: TYPE(C_PTR) and INTEGER(KIND=MPI_ADDRESS_KIND)
 * alike are one pointer-sized word passed by reference, as the C calls' baseptr is. A
 * BASE argument is the memory itself (the address of its first element). Errors have
 * already gone through the communicator's or the window's handler in the C call;
 * IERROR carries its code. */
#include "common/api.h"
#include "common/fortran.h"

#include <mpi.h>
#include <mpix/storage.h>

MPIX_API void mpix_win_allocate_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                                 const MPI_Fint *comm, void **baseptr, MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_window_allocate(MPIX_Win_allocate, size, disp_unit, info, comm, baseptr, win, ierror);
}
FORTRAN_ALIAS(mpix_win_allocate_f08_, mpix_win_allocate_);

MPIX_API void mpix_win_allocate_shared_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                                        const MPI_Fint *comm, void **baseptr, MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_window_allocate(MPIX_Win_allocate_shared, size, disp_unit, info, comm, baseptr, win, ierror);
}
FORTRAN_ALIAS(mpix_win_allocate_shared_f08_, mpix_win_allocate_shared_);

MPIX_API void mpix_win_shared_query_(const MPI_Fint *win, const MPI_Fint *rank, MPI_Aint *size, MPI_Fint *disp_unit,
                                     void **baseptr, MPI_Fint *ierror)
{
    int c_disp_unit = 0;
    int rc = MPIX_Win_shared_query(PMPI_Win_f2c(*win), (int)*rank, size, &c_disp_unit, baseptr);
    if (rc == MPI_SUCCESS)
        *disp_unit = (MPI_Fint)c_disp_unit;
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_win_shared_query_f08_, mpix_win_shared_query_);

MPIX_API void mpix_alloc_mem_(const MPI_Aint *size, const MPI_Fint *info, void **baseptr, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Alloc_mem(*size, PMPI_Info_f2c(*info), baseptr));
}
FORTRAN_ALIAS(mpix_alloc_mem_f08_, mpix_alloc_mem_);

/* One procedure for every binding (module mpix_storage: no handle tells them apart). */
MPIX_API void mpix_free_mem_(void *base, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Free_mem(base));
}

MPIX_API void mpix_win_attach_(const MPI_Fint *win, void *base, const MPI_Aint *size, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Win_attach(PMPI_Win_f2c(*win), base, *size));
}
FORTRAN_ALIAS(mpix_win_attach_f08_, mpix_win_attach_);

MPIX_API void mpix_win_detach_(const MPI_Fint *win, const void *base, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Win_detach(PMPI_Win_f2c(*win), base));
}
FORTRAN_ALIAS(mpix_win_detach_f08_, mpix_win_detach_);

MPIX_API void mpix_win_sync_(const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Win_sync(PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_win_sync_f08_, mpix_win_sync_);

MPIX_API void mpix_win_free_(MPI_Fint *win, MPI_Fint *ierror)
{
    MPI_Win c_win = PMPI_Win_f2c(*win);
    int rc = MPIX_Win_free(&c_win);
    *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_win_free_f08_, mpix_win_free_);

MPIX_API void mpix_win_get_info_(const MPI_Fint *win, MPI_Fint *info_used, MPI_Fint *ierror)
{
    MPI_Info c_info = MPI_INFO_NULL;
    int rc = MPIX_Win_get_info(PMPI_Win_f2c(*win), &c_info);
    if (rc == MPI_SUCCESS)
        *info_used = PMPI_Info_c2f(c_info);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_win_get_info_f08_, mpix_win_get_info_);

MPIX_API void mpix_win_flush_storage_(const MPI_Fint *rank, const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Win_flush_storage((int)*rank, PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_win_flush_storage_f08_, mpix_win_flush_storage_);
