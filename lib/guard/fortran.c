/* SPDX-License-Identifier: BSD-3-Clause */
/* The guard calls for Fortran programs: mpix_<call>_ for mpif.h and `use mpi` (integer
 * handles) and mpix_<call>_f08_, the same code, for the `use mpi_f08` interfaces of the
 * module mpix_guard (include/mpix/guard.f90), as in zcopy/fortran.c. A buffer is the
 * address of its first element, or the binding's MPI_BOTTOM. Errors have already gone
 * through the communicator's handler in the C call; IERROR carries its code. */
#include "common/api.h"
#include "common/fortran.h"

#include <mpi.h>
#include <mpix/guard.h>

MPIX_API void mpix_send_guarded_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *dest,
                                 const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Send_guarded(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype),
                                                 (int)*dest, (int)*tag, PMPI_Comm_f2c(*comm)));
}
FORTRAN_ALIAS(mpix_send_guarded_f08_, mpix_send_guarded_);

MPIX_API void mpix_recv_guarded_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *source,
                                 const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    int rc = MPIX_Recv_guarded(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*source,
                               (int)*tag, PMPI_Comm_f2c(*comm), mpix_fortran_c_status(status, &c_status));
    mpix_fortran_error(ierror, mpix_fortran_status_out(rc, &c_status, status));
}
FORTRAN_ALIAS(mpix_recv_guarded_f08_, mpix_recv_guarded_);

MPIX_API void mpix_sendrecv_guarded_(void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                                     const MPI_Fint *dest, const MPI_Fint *sendtag, void *recvbuf,
                                     const MPI_Fint *recvcount, const MPI_Fint *recvtype, const MPI_Fint *source,
                                     const MPI_Fint *recvtag, const MPI_Fint *comm, MPI_Fint *status,
                                     MPI_Fint *ierror)
{
    MPI_Status c_status;
    int rc = MPIX_Sendrecv_guarded(mpix_fortran_buffer(sendbuf), (int)*sendcount, PMPI_Type_f2c(*sendtype),
                                   (int)*dest, (int)*sendtag, mpix_fortran_buffer(recvbuf), (int)*recvcount,
                                   PMPI_Type_f2c(*recvtype), (int)*source, (int)*recvtag, PMPI_Comm_f2c(*comm),
                                   mpix_fortran_c_status(status, &c_status));
    mpix_fortran_error(ierror, mpix_fortran_status_out(rc, &c_status, status));
}
FORTRAN_ALIAS(mpix_sendrecv_guarded_f08_, mpix_sendrecv_guarded_);

/* One procedure for every binding (module mpix_guard: no handle tells them apart). */
MPIX_API void mpix_guard_complete_(const void *buf, const MPI_Aint *len, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Guard_complete(buf, *len));
}

MPIX_API void mpix_guard_complete_all_(MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Guard_complete_all());
}
