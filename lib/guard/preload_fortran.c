/* SPDX-License-Identifier: BSD-3-Clause */
/* The guard part of the interposition libraries for Open MPI's Fortran callers (see
 * pmpi/fortran.h): MPI_SEND, MPI_RECV and MPI_SENDRECV become the C wrappers of
 * preload.c with Fortran arguments. Every call that preload.c fences is fenced for
 * Fortran too, by wrappers generated from preload.c's list (tools/fortran_fenced.py). A buffer at
 * the Fortran MPI_BOTTOM is a transfer of absolute addresses: it goes to the MPI's own
 * binding, after the guarded transfers completed, as a fenced call would. */
#include <mpi.h>
#include <mpix/guard.h>

#include "pmpi/fortran.h"

static int at_bottom(void *buf) { return buf && mpix_fortran_buffer(buf) == MPI_BOTTOM; }

typedef void fortran_send(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void fortran_recv(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                          MPI_Fint *);
typedef void fortran_sendrecv(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *,
                              MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

FORTRAN_EXPORT void mpi_send_(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *dest, MPI_Fint *tag,
                              MPI_Fint *comm, MPI_Fint *ierr)
{
    if (at_bottom(buf)) {
        static _Atomic(void *) next;
        int deferred = MPIX_Guard_complete_all();   /* as every fenced call (preload.c) */
        ((fortran_send *)mpix_fortran_next("ompi_send_f", &next))(buf, count, datatype, dest, tag, comm, ierr);
        mpix_fortran_deferred_error(ierr, deferred);
        return;
    }
    mpix_fortran_error(ierr, MPI_Send(buf, (int)*count, PMPI_Type_f2c(*datatype), (int)*dest, (int)*tag,
                                      PMPI_Comm_f2c(*comm)));
}
FORTRAN_ALIAS(ompi_send_f, mpi_send_);

FORTRAN_EXPORT void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *source, MPI_Fint *tag,
                              MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    if (at_bottom(buf)) {
        static _Atomic(void *) next;
        int deferred = MPIX_Guard_complete_all();
        ((fortran_recv *)mpix_fortran_next("ompi_recv_f", &next))(buf, count, datatype, source, tag, comm, status,
                                                                  ierr);
        mpix_fortran_deferred_error(ierr, deferred);
        return;
    }
    MPI_Status c_status;
    int ignore = status == MPI_F_STATUS_IGNORE;
    int rc = MPI_Recv(buf, (int)*count, PMPI_Type_f2c(*datatype), (int)*source, (int)*tag, PMPI_Comm_f2c(*comm),
                      ignore ? MPI_STATUS_IGNORE : &c_status);
    if (rc == MPI_SUCCESS && !ignore)
        rc = PMPI_Status_c2f(&c_status, status);
    mpix_fortran_error(ierr, rc);
}
FORTRAN_ALIAS(ompi_recv_f, mpi_recv_);

FORTRAN_EXPORT void mpi_sendrecv_(void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, MPI_Fint *dest,
                                  MPI_Fint *sendtag, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
                                  MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm, MPI_Fint *status,
                                  MPI_Fint *ierr)
{
    if (at_bottom(sendbuf) || at_bottom(recvbuf)) {
        static _Atomic(void *) next;
        int deferred = MPIX_Guard_complete_all();
        ((fortran_sendrecv *)mpix_fortran_next("ompi_sendrecv_f", &next))(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
            status, ierr);
        mpix_fortran_deferred_error(ierr, deferred);
        return;
    }
    MPI_Status c_status;
    int ignore = status == MPI_F_STATUS_IGNORE;
    int rc = MPI_Sendrecv(sendbuf, (int)*sendcount, PMPI_Type_f2c(*sendtype), (int)*dest, (int)*sendtag, recvbuf,
                          (int)*recvcount, PMPI_Type_f2c(*recvtype), (int)*source, (int)*recvtag,
                          PMPI_Comm_f2c(*comm), ignore ? MPI_STATUS_IGNORE : &c_status);
    if (rc == MPI_SUCCESS && !ignore)
        rc = PMPI_Status_c2f(&c_status, status);
    mpix_fortran_error(ierr, rc);
}
FORTRAN_ALIAS(ompi_sendrecv_f, mpi_sendrecv_);
