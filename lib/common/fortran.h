/* SPDX-License-Identifier: BSD-3-Clause */
/* What every C procedure a Fortran program calls needs, in the explicit bindings
 * (lib/<module>/fortran.c) and the interposition libraries (pmpi/fortran.h) alike:
 * IERROR, STATUS, the Fortran MPI_BOTTOM and MPI_IN_PLACE. Names are gfortran's (lower
 * case, one trailing underscore), which other compilers on Linux share. */
#ifndef MPIX_COMMON_FORTRAN_H
#define MPIX_COMMON_FORTRAN_H

#include <mpi.h>

/* Exports @other_name as another name of the Fortran-callable @function (same file). */
#define FORTRAN_ALIAS(other_name, function) \
    extern __typeof__(function) other_name __attribute__((alias(#function), visibility("default")))

/* Stores an MPI return code into a Fortran IERROR argument; an absent optional IERROR
 * (mpi_f08) is NULL. */
static inline void mpix_fortran_error(MPI_Fint *ierr, int rc)
{
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

/* Fills the Fortran @status from @c after a call that returned @rc, unless the caller
 * passed its binding's STATUS_IGNORE (@ignored); the conversion's error is reported
 * where the call itself succeeded. Both MPIs lay a Fortran status, TYPE(MPI_Status)
 * included, out as the integer status array (MPICH: as its C status), which
 * MPI_Status_c2f fills. */
static inline int mpix_fortran_status_back(int rc, const MPI_Status *c, MPI_Fint *status, int ignored)
{
    if (ignored)
        return rc;
    int convert_rc = PMPI_Status_c2f(c, status);
    return rc == MPI_SUCCESS ? convert_rc : rc;
}

/* A window allocation with MPI_Win_allocate's arguments (that call, its _shared twin, or
 * mpix's storage versions). */
typedef int mpix_fortran_window_allocation(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                           MPI_Win *win);

/* @call with Fortran arguments: BASEPTR is where the address goes, as the C baseptr is;
 * WIN is set where the call succeeds, IERROR always. */
static inline void mpix_fortran_window_allocate(mpix_fortran_window_allocation *call, const MPI_Aint *size,
                                                const MPI_Fint *disp_unit, const MPI_Fint *info,
                                                const MPI_Fint *comm, void *baseptr, MPI_Fint *win, MPI_Fint *ierr)
{
    MPI_Win c_win = MPI_WIN_NULL;
    int rc = call(*size, (int)*disp_unit, PMPI_Info_f2c(*info), PMPI_Comm_f2c(*comm), baseptr, &c_win);
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierr, rc);
}

/* Whether a Fortran STATUS argument of an explicit binding's procedure (any binding) is
 * MPI_STATUS_IGNORE; only MPICH's mpi_f08 has one of its own. */
static inline int mpix_fortran_status_ignored(const MPI_Fint *status)
{
#if MPI_VERSION >= 4
    if (status == (const MPI_Fint *)MPI_F08_STATUS_IGNORE)
        return 1;
#endif
    return status == MPI_F_STATUS_IGNORE;
}

/* The C status to pass for such a STATUS argument: @storage, or MPI_STATUS_IGNORE. */
static inline MPI_Status *mpix_fortran_c_status(const MPI_Fint *status, MPI_Status *storage)
{
    return mpix_fortran_status_ignored(status) ? MPI_STATUS_IGNORE : storage;
}

/* mpix_fortran_status_back for such a STATUS argument. */
static inline int mpix_fortran_status_out(int rc, const MPI_Status *c, MPI_Fint *status)
{
    return mpix_fortran_status_back(rc, c, status, mpix_fortran_status_ignored(status));
}

/* The Fortran MPI_BOTTOMs and MPI_IN_PLACEs, where the program's Fortran binding defines
 * them: Open MPI's (every binding), MPICH's mpif.h and `use mpi` ones (variables holding
 * their addresses, set when Fortran initializes MPI) and MPICH's mpi_f08 ones. */
extern char mpi_fortran_bottom_ __attribute__((weak));
extern void *MPIR_F_MPI_BOTTOM __attribute__((weak));
extern int MPIR_F08_MPI_BOTTOM __attribute__((weak));
extern char mpi_fortran_in_place_ __attribute__((weak));
extern void *MPIR_F_MPI_IN_PLACE __attribute__((weak));
extern int MPIR_F08_MPI_IN_PLACE __attribute__((weak));

/* The C buffer for a Fortran choice argument: MPI_BOTTOM where it is Fortran's. */
static inline void *mpix_fortran_buffer(void *buf)
{
    if (buf && ((&mpi_fortran_bottom_ && buf == (void *)&mpi_fortran_bottom_) ||
                (&MPIR_F_MPI_BOTTOM && buf == MPIR_F_MPI_BOTTOM) ||
                (&MPIR_F08_MPI_BOTTOM && buf == (void *)&MPIR_F08_MPI_BOTTOM)))
        return MPI_BOTTOM;
    return buf;
}

/* The C send buffer for a Fortran choice argument that may be MPI_IN_PLACE: that, or as
 * mpix_fortran_buffer. */
static inline const void *mpix_fortran_send_buffer(void *buf)
{
    if (buf && ((&mpi_fortran_in_place_ && buf == (void *)&mpi_fortran_in_place_) ||
                (&MPIR_F_MPI_IN_PLACE && buf == MPIR_F_MPI_IN_PLACE) ||
                (&MPIR_F08_MPI_IN_PLACE && buf == (void *)&MPIR_F08_MPI_IN_PLACE)))
        return MPI_IN_PLACE;
    return mpix_fortran_buffer(buf);
}

#endif
