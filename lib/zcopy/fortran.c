/* SPDX-License-Identifier: BSD-3-Clause */
/* The zcopy calls for Fortran programs. Each C function here is the procedure a Fortran
 * call reaches: mpix_<call>_ for mpif.h and `use mpi` (integer handles; gfortran's name,
 * lower case with one trailing underscore, which other Linux compilers share), and
 * mpix_<call>_f08_, the same code, for the `use mpi_f08` interfaces of the module
 * mpix_zcopy (include/mpix/zcopy.f90): a handle of mpi_f08 is a derived type whose
 * one member is the integer handle, passed by reference like the integer itself, and an
 * absent optional IERROR arrives as NULL. Statuses convert alike for every binding
 * (common/fortran.h); only MPICH's mpi_f08 has an MPI_STATUS_IGNORE of its own.
 * Errors have already gone through the communicator's handler in the C call; IERROR
 * carries its code. */
#include "common/api.h"
#include "common/fortran.h"

#include <mpi.h>
#include <stddef.h>

MPIX_API void mpix_send_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *dest,
                               const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Send_zcopy(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype),
                                               (int)*dest, (int)*tag, PMPI_Comm_f2c(*comm)));
}
FORTRAN_ALIAS(mpix_send_zcopy_f08_, mpix_send_zcopy_);

MPIX_API void mpix_recv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *source,
                               const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    int rc = MPIX_Recv_zcopy(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*source, (int)*tag,
                             PMPI_Comm_f2c(*comm), mpix_fortran_c_status(status, &c_status));
    mpix_fortran_error(ierror, mpix_fortran_status_out(rc, &c_status, status));
}
FORTRAN_ALIAS(mpix_recv_zcopy_f08_, mpix_recv_zcopy_);

MPIX_API void mpix_isend_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *dest,
                                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request c_request = MPI_REQUEST_NULL;
    int rc = MPIX_Isend_zcopy(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*dest, (int)*tag,
                              PMPI_Comm_f2c(*comm), &c_request);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(c_request);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_isend_zcopy_f08_, mpix_isend_zcopy_);

MPIX_API void mpix_irecv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *source,
                                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request c_request = MPI_REQUEST_NULL;
    int rc = MPIX_Irecv_zcopy(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*source, (int)*tag,
                              PMPI_Comm_f2c(*comm), &c_request);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(c_request);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_irecv_zcopy_f08_, mpix_irecv_zcopy_);

MPIX_API void mpix_probe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *status,
                                MPI_Fint *ierror)
{
    MPI_Status c_status;
    int rc = MPIX_Probe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm),
                              mpix_fortran_c_status(status, &c_status));
    mpix_fortran_error(ierror, mpix_fortran_status_out(rc, &c_status, status));
}
FORTRAN_ALIAS(mpix_probe_zcopy_f08_, mpix_probe_zcopy_);

/* FLAG is a Fortran LOGICAL: gfortran's .TRUE. is 1, its .FALSE. 0. */
MPIX_API void mpix_iprobe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *flag,
                                 MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    int c_flag = 0;
    int rc = MPIX_Iprobe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_flag,
                               mpix_fortran_c_status(status, &c_status));
    *flag = c_flag ? 1 : 0;
    mpix_fortran_error(ierror, rc == MPI_SUCCESS && c_flag ? mpix_fortran_status_out(rc, &c_status, status) : rc);
}
FORTRAN_ALIAS(mpix_iprobe_zcopy_f08_, mpix_iprobe_zcopy_);

MPIX_API void mpix_type_commit_comm_(MPI_Fint *datatype, const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Datatype c_datatype = PMPI_Type_f2c(*datatype);
    int rc = MPIX_Type_commit_comm(&c_datatype, PMPI_Comm_f2c(*comm));
    *datatype = PMPI_Type_c2f(c_datatype);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_type_commit_comm_f08_, mpix_type_commit_comm_);

MPIX_API void mpix_type_free_comm_(MPI_Fint *datatype, const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Datatype c_datatype = PMPI_Type_f2c(*datatype);
    int rc = MPIX_Type_free_comm(&c_datatype, PMPI_Comm_f2c(*comm));
    *datatype = PMPI_Type_c2f(c_datatype);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_type_free_comm_f08_, mpix_type_free_comm_);

MPIX_API void mpix_mprobe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *message,
                                 MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    MPI_Message c_message = MPI_MESSAGE_NULL;
    int rc = MPIX_Mprobe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_message,
                               mpix_fortran_c_status(status, &c_status));
    if (rc == MPI_SUCCESS)
        *message = PMPI_Message_c2f(c_message);
    mpix_fortran_error(ierror, mpix_fortran_status_out(rc, &c_status, status));
}
FORTRAN_ALIAS(mpix_mprobe_zcopy_f08_, mpix_mprobe_zcopy_);

MPIX_API void mpix_improbe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *flag,
                                  MPI_Fint *message, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    MPI_Message c_message = MPI_MESSAGE_NULL;
    int c_flag = 0;
    int rc = MPIX_Improbe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_flag, &c_message,
                                mpix_fortran_c_status(status, &c_status));
    *flag = c_flag ? 1 : 0;
    if (rc == MPI_SUCCESS && c_flag)
        *message = PMPI_Message_c2f(c_message);
    mpix_fortran_error(ierror, rc == MPI_SUCCESS && c_flag ? mpix_fortran_status_out(rc, &c_status, status) : rc);
}
FORTRAN_ALIAS(mpix_improbe_zcopy_f08_, mpix_improbe_zcopy_);

MPIX_API void mpix_mrecv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, MPI_Fint *message,
                                MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    MPI_Message c_message = PMPI_Message_f2c(*message);
    int rc = MPIX_Mrecv_zcopy(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &c_message,
                              mpix_fortran_c_status(status, &c_status));
    *message = PMPI_Message_c2f(c_message);
    mpix_fortran_error(ierror, mpix_fortran_status_out(rc, &c_status, status));
}
FORTRAN_ALIAS(mpix_mrecv_zcopy_f08_, mpix_mrecv_zcopy_);

MPIX_API void mpix_imrecv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, MPI_Fint *message,
                                 MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request c_request = MPI_REQUEST_NULL;
    MPI_Message c_message = PMPI_Message_f2c(*message);
    int rc = MPIX_Imrecv_zcopy(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &c_message, &c_request);
    *message = PMPI_Message_c2f(c_message);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(c_request);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_imrecv_zcopy_f08_, mpix_imrecv_zcopy_);
