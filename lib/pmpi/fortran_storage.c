/* SPDX-License-Identifier: BSD-3-Clause */
/* libmpix-pmpi.so, storage, for Fortran callers (see fortran.h): the window calls of
 * storage.c with Fortran arguments. A BASEPTR argument is where the MPI stores the
 * address (INTEGER(KIND=MPI_ADDRESS_KIND) or TYPE(C_PTR) alike), which is what the C
 * calls' baseptr is too.
 *
 * Built for one of two Fortran layers:
 * - Open MPI's: mpi_<call>_, with the names Open MPI gives the same code as aliases
 *   (ompi_<call>_f, which its mpi_f08 layer calls; the `use mpi` TYPE(C_PTR) variants);
 * - MPICH's mpi_f08 layer (MPIX_FORTRAN_MPICH_F08): Fortran subroutines mpi_<call>_f08_,
 *   or mpi_<call>_f08ts_ where they take a choice buffer, which arrives as an array
 *   descriptor whose first member is the address of the data (true of gfortran's
 *   descriptor and of ISO_Fortran_binding's CFI_cdesc_t alike; the memory these calls
 *   take is contiguous, so that address is all they need). An absent optional IERROR is
 *   NULL. MPICH's mpif.h and `use mpi` layers reach storage.c by themselves. */
#include <mpi.h>

#include "pmpi/fortran.h"

#if defined(MPIX_FORTRAN_MPICH_F08)
#define BINDING(call) mpi_##call##_f08_
#define CHOICE_BINDING(call) mpi_##call##_f08ts_
#define CHOICE_ADDRESS(argument) (*(void **)(argument))
#define OPEN_MPI_ALIAS(other_name, function) _Static_assert(1, "Open MPI only")
#else
#define BINDING(call) mpi_##call##_
#define CHOICE_BINDING(call) mpi_##call##_
#define CHOICE_ADDRESS(argument) (argument)
#define OPEN_MPI_ALIAS(other_name, function) FORTRAN_ALIAS(other_name, function)
#endif

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
