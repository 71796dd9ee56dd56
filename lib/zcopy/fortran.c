/* SPDX-License-Identifier: BSD-3-Clause */
/* The zcopy calls for Fortran programs. Each C function here is the procedure a Fortran
 * call reaches: mpix_<call>_ for mpif.h and `use mpi` (integer handles; gfortran's name,
 * lower case with one trailing underscore, which other Linux compilers share), and
 * mpix_<call>_f08_, the same code, for the `use mpi_f08` interfaces of the module
 * mpix_zcopy (include/mpix/zcopy.f90): a handle of mpi_f08 is a derived type whose
 * one member is the integer handle, passed by reference like the integer itself, and an
 * absent optional IERROR arrives as NULL. Both MPIs lay TYPE(MPI_Status) out as the
 * integer status array (MPICH: both are its C status), so statuses convert with
 * MPI_Status_c2f either way; only MPICH's mpi_f08 has an MPI_STATUS_IGNORE of its own.
 * Errors have already gone through the communicator's handler in the C call; IERROR
 * carries its code. */
#include "common/api.h"

#include <mpi.h>
#include <stddef.h>

/* The Fortran MPI_BOTTOMs, where the program's Fortran binding defines them: Open MPI's
 * (every binding), MPICH's mpif.h and `use mpi` one (a variable holding its address, set
 * when Fortran initializes MPI) and MPICH's mpi_f08 one. */
extern char mpi_fortran_bottom_ __attribute__((weak));
extern void *MPIR_F_MPI_BOTTOM __attribute__((weak));
extern int MPIR_F08_MPI_BOTTOM __attribute__((weak));

static void *c_buffer(void *buf)
{
    if (buf && ((&mpi_fortran_bottom_ && buf == (void *)&mpi_fortran_bottom_) ||
                (&MPIR_F_MPI_BOTTOM && buf == MPIR_F_MPI_BOTTOM) ||
                (&MPIR_F08_MPI_BOTTOM && buf == (void *)&MPIR_F08_MPI_BOTTOM)))
        return MPI_BOTTOM;
    return buf;
}

static int status_ignored(const MPI_Fint *status)
{
#if MPI_VERSION >= 4
    if (status == (const MPI_Fint *)MPI_F08_STATUS_IGNORE)
        return 1;
#endif
    return status == MPI_F_STATUS_IGNORE;
}

/* IERROR, where the caller passed one, gets @rc. */
static void set_error(MPI_Fint *ierror, int rc)
{
    if (ierror)
        *ierror = (MPI_Fint)rc;
}

/* The Fortran status from @c after a call that returned @rc. */
static int status_out(int rc, const MPI_Status *c, MPI_Fint *status)
{
    if (status_ignored(status))
        return rc;
    int convert_rc = PMPI_Status_c2f(c, status);
    return rc == MPI_SUCCESS ? convert_rc : rc;
}

#define FORTRAN_F08(name, function) \
    extern __typeof__(function) name __attribute__((alias(#function), visibility("default")))

MPIX_API void mpix_send_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *dest,
                               const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *ierror)
{
    set_error(ierror, MPIX_Send_zcopy(c_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*dest, (int)*tag,
                                      PMPI_Comm_f2c(*comm)));
}
FORTRAN_F08(mpix_send_zcopy_f08_, mpix_send_zcopy_);

MPIX_API void mpix_recv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *source,
                               const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    int rc = MPIX_Recv_zcopy(c_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*source, (int)*tag,
                             PMPI_Comm_f2c(*comm), status_ignored(status) ? MPI_STATUS_IGNORE : &c_status);
    set_error(ierror, status_out(rc, &c_status, status));
}
FORTRAN_F08(mpix_recv_zcopy_f08_, mpix_recv_zcopy_);

MPIX_API void mpix_isend_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *dest,
                                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request c_request = MPI_REQUEST_NULL;
    int rc = MPIX_Isend_zcopy(c_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*dest, (int)*tag,
                              PMPI_Comm_f2c(*comm), &c_request);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(c_request);
    set_error(ierror, rc);
}
FORTRAN_F08(mpix_isend_zcopy_f08_, mpix_isend_zcopy_);

MPIX_API void mpix_irecv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, const MPI_Fint *source,
                                const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request c_request = MPI_REQUEST_NULL;
    int rc = MPIX_Irecv_zcopy(c_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*source, (int)*tag,
                              PMPI_Comm_f2c(*comm), &c_request);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(c_request);
    set_error(ierror, rc);
}
FORTRAN_F08(mpix_irecv_zcopy_f08_, mpix_irecv_zcopy_);

MPIX_API void mpix_probe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *status,
                                MPI_Fint *ierror)
{
    MPI_Status c_status;
    int rc = MPIX_Probe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm),
                              status_ignored(status) ? MPI_STATUS_IGNORE : &c_status);
    set_error(ierror, status_out(rc, &c_status, status));
}
FORTRAN_F08(mpix_probe_zcopy_f08_, mpix_probe_zcopy_);

/* FLAG is a Fortran LOGICAL: gfortran's .TRUE. is 1, its .FALSE. 0. */
MPIX_API void mpix_iprobe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *flag,
                                 MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    int c_flag = 0;
    int rc = MPIX_Iprobe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_flag,
                               status_ignored(status) ? MPI_STATUS_IGNORE : &c_status);
    *flag = c_flag ? 1 : 0;
    set_error(ierror, rc == MPI_SUCCESS && c_flag ? status_out(rc, &c_status, status) : rc);
}
FORTRAN_F08(mpix_iprobe_zcopy_f08_, mpix_iprobe_zcopy_);

MPIX_API void mpix_type_commit_comm_(MPI_Fint *datatype, const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Datatype c_datatype = PMPI_Type_f2c(*datatype);
    int rc = MPIX_Type_commit_comm(&c_datatype, PMPI_Comm_f2c(*comm));
    *datatype = PMPI_Type_c2f(c_datatype);
    set_error(ierror, rc);
}
FORTRAN_F08(mpix_type_commit_comm_f08_, mpix_type_commit_comm_);

MPIX_API void mpix_type_free_comm_(MPI_Fint *datatype, const MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Datatype c_datatype = PMPI_Type_f2c(*datatype);
    int rc = MPIX_Type_free_comm(&c_datatype, PMPI_Comm_f2c(*comm));
    *datatype = PMPI_Type_c2f(c_datatype);
    set_error(ierror, rc);
}
FORTRAN_F08(mpix_type_free_comm_f08_, mpix_type_free_comm_);

MPIX_API void mpix_mprobe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *message,
                                 MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    MPI_Message c_message = MPI_MESSAGE_NULL;
    int rc = MPIX_Mprobe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_message,
                               status_ignored(status) ? MPI_STATUS_IGNORE : &c_status);
    if (rc == MPI_SUCCESS)
        *message = PMPI_Message_c2f(c_message);
    set_error(ierror, status_out(rc, &c_status, status));
}
FORTRAN_F08(mpix_mprobe_zcopy_f08_, mpix_mprobe_zcopy_);

MPIX_API void mpix_improbe_zcopy_(const MPI_Fint *source, const MPI_Fint *tag, const MPI_Fint *comm, MPI_Fint *flag,
                                  MPI_Fint *message, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    MPI_Message c_message = MPI_MESSAGE_NULL;
    int c_flag = 0;
    int rc = MPIX_Improbe_zcopy((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_flag, &c_message,
                                status_ignored(status) ? MPI_STATUS_IGNORE : &c_status);
    *flag = c_flag ? 1 : 0;
    if (rc == MPI_SUCCESS && c_flag)
        *message = PMPI_Message_c2f(c_message);
    set_error(ierror, rc == MPI_SUCCESS && c_flag ? status_out(rc, &c_status, status) : rc);
}
FORTRAN_F08(mpix_improbe_zcopy_f08_, mpix_improbe_zcopy_);

MPIX_API void mpix_mrecv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, MPI_Fint *message,
                                MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status c_status;
    MPI_Message c_message = PMPI_Message_f2c(*message);
    int rc = MPIX_Mrecv_zcopy(c_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &c_message,
                              status_ignored(status) ? MPI_STATUS_IGNORE : &c_status);
    *message = PMPI_Message_c2f(c_message);
    set_error(ierror, status_out(rc, &c_status, status));
}
FORTRAN_F08(mpix_mrecv_zcopy_f08_, mpix_mrecv_zcopy_);

MPIX_API void mpix_imrecv_zcopy_(void *buf, const MPI_Fint *count, const MPI_Fint *datatype, MPI_Fint *message,
                                 MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request c_request = MPI_REQUEST_NULL;
    MPI_Message c_message = PMPI_Message_f2c(*message);
    int rc = MPIX_Imrecv_zcopy(c_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &c_message, &c_request);
    *message = PMPI_Message_c2f(c_message);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(c_request);
    set_error(ierror, rc);
}
FORTRAN_F08(mpix_imrecv_zcopy_f08_, mpix_imrecv_zcopy_);
