/* SPDX-License-Identifier: BSD-3-Clause */
/* The interposition libraries for Fortran callers whose MPI binding does not reach the
 * C wrappers by itself (see pmpi/fortran.h): the calls that complete, start or free
 * requests and that probe, MPI_INIT, MPI_INIT_THREAD and MPI_FINALIZE, and on Open MPI
 * the calls that post receives too, with Fortran arguments, made through this library's
 * C wrappers by their MPI_ names. zcopy needs every receive and every completion of the
 * program to pass by its wrappers (a zero-copy header lands in a receive's buffer and is
 * read back when the receive completes, and a zero-copy send's request is one the
 * library completes), and MPI_INIT to set it up; guard's fence is made by the C wrappers
 * too. Handles are converted with the MPI's f2c/c2f calls, statuses with the MPI's status
 * conversions, and indices of MPI_WAITANY and its kin become Fortran's (from 1).
 * tools/fortran_fenced.py leaves the names made here (BINDING, CHOICE_BINDING,
 * ON_REQUEST, NONBLOCKING) to this file.
 *
 * Built for one of two Fortran layers:
 * - Open MPI's (mpif.h and `use mpi` call mpi_<call>_; mpi_f08 calls ompi_<call>_f, and
 *   MPI_TEST, its kin, MPI_IPROBE and MPI_IMPROBE through the Fortran profiling names
 *   pmpi_<call>_, which are this file's wrappers too);
 * - MPICH's mpi_f08 layer (MPIX_FORTRAN_MPICH_F08), whose procedures mpi_<call>_f08_
 *   complete requests through the PMPI_ names; its calls with a choice buffer, and its
 *   mpif.h and `use mpi` layers, call the MPI_ names, the C wrappers, by themselves. Its
 *   TYPE(MPI_Status) is MPI_F08_status; an absent optional IERROR is NULL. */
#include <mpi.h>

#include "pmpi/fortran.h"

#include <stdlib.h>

#if defined(MPIX_FORTRAN_MPICH_F08)
#define FORTRAN_STATUS_IGNORE ((MPI_Fint *)MPI_F08_STATUS_IGNORE)
#define FORTRAN_STATUSES_IGNORE ((MPI_Fint *)MPI_F08_STATUSES_IGNORE)
enum { FORTRAN_STATUS_INTEGERS = sizeof(MPI_F08_status) / sizeof(MPI_Fint) };
/* MPI_Status_c2f08 lives in MPICH's Fortran library, which a C program does not load;
 * MPICH's TYPE(MPI_Status) is its C status, member for member, as its integer status
 * array is, so MPI_Status_c2f fills it (common/fortran.h). */
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPICH's mpi_f08 status is its C status");
#else
#define FORTRAN_STATUS_IGNORE MPI_F_STATUS_IGNORE
#define FORTRAN_STATUSES_IGNORE MPI_F_STATUSES_IGNORE
enum { FORTRAN_STATUS_INTEGERS = sizeof(MPI_Status) / sizeof(MPI_Fint) };
#endif

/* A C status for a Fortran STATUS argument, NULL-safe for FORTRAN_STATUS_IGNORE. */
static MPI_Status *c_status(MPI_Fint *status, MPI_Status *storage)
{
    return status == FORTRAN_STATUS_IGNORE ? MPI_STATUS_IGNORE : storage;
}

static int status_back(int rc, const MPI_Status *c, MPI_Fint *status)
{
    return mpix_fortran_status_back(rc, c, status, status == FORTRAN_STATUS_IGNORE);
}

/* Arrays of @count requests and statuses in C, filled from Fortran's. */
typedef struct c_arrays {
    MPI_Request *requests;
    MPI_Status *statuses;   /* MPI_STATUSES_IGNORE where Fortran ignores them */
    int *indices;
} c_arrays;

static int arrays_in(int count, const MPI_Fint *requests, MPI_Fint *statuses, int with_indices, c_arrays *c)
{
    int slots = count > 0 ? count : 1, ignored = statuses == FORTRAN_STATUSES_IGNORE;
    c->requests = malloc(slots * sizeof *c->requests);
    c->statuses = ignored ? MPI_STATUSES_IGNORE : malloc(slots * sizeof *c->statuses);
    c->indices = with_indices ? malloc(slots * sizeof *c->indices) : NULL;
    if (!c->requests || (!ignored && !c->statuses) || (with_indices && !c->indices)) {
        for (int i = 0; c->requests && i < count; i++)   /* arrays_out gives them back unchanged */
            c->requests[i] = PMPI_Request_f2c(requests[i]);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < count; i++)
        c->requests[i] = PMPI_Request_f2c(requests[i]);
    return MPI_SUCCESS;
}

/* Requests back to Fortran (the completed ones are null now), and @done statuses. */
static int arrays_out(int rc, int count, MPI_Fint *requests, MPI_Fint *statuses, int done, c_arrays *c)
{
    for (int i = 0; c->requests && i < count; i++)
        requests[i] = PMPI_Request_c2f(c->requests[i]);
    for (int i = 0; c->statuses != MPI_STATUSES_IGNORE && i < done; i++) {
        int convert_rc = PMPI_Status_c2f(&c->statuses[i], statuses + (size_t)i * FORTRAN_STATUS_INTEGERS);
        if (rc == MPI_SUCCESS)
            rc = convert_rc;
    }
    free(c->requests);
    if (c->statuses != MPI_STATUSES_IGNORE)
        free(c->statuses);
    free(c->indices);
    return rc;
}

FORTRAN_EXPORT void BINDING(init)(MPI_Fint *ierr) { mpix_fortran_error(ierr, MPI_Init(NULL, NULL)); }
OPEN_MPI_ALIAS(ompi_init_f, BINDING(init));

FORTRAN_EXPORT void BINDING(init_thread)(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int level = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(NULL, NULL, (int)*required, &level);
    *provided = level;
    mpix_fortran_error(ierr, rc);
}
OPEN_MPI_ALIAS(ompi_init_thread_f, BINDING(init_thread));

FORTRAN_EXPORT void BINDING(finalize)(MPI_Fint *ierr) { mpix_fortran_error(ierr, MPI_Finalize()); }
OPEN_MPI_ALIAS(ompi_finalize_f, BINDING(finalize));

#if !defined(MPIX_FORTRAN_MPICH_F08)
/* Calls with a choice buffer (MPICH's reach the C wrappers by themselves). */
#define NONBLOCKING(name, c_name, kind)                                                                        \
    FORTRAN_EXPORT void CHOICE_BINDING(name)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *peer,          \
                                      MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)        \
    {                                                                                                          \
        MPI_Request c_request = MPI_REQUEST_NULL;                                                              \
        int rc = c_name((kind)mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*peer,     \
                        (int)*tag, PMPI_Comm_f2c(*comm), &c_request);                                          \
        if (rc == MPI_SUCCESS)                                                                                 \
            *request = PMPI_Request_c2f(c_request);                                                            \
        mpix_fortran_error(ierr, rc);                                                                          \
    }                                                                                                          \
    FORTRAN_ALIAS(ompi_##name##_f, mpi_##name##_);
NONBLOCKING(isend, MPI_Isend, const void *)
NONBLOCKING(irecv, MPI_Irecv, void *)
NONBLOCKING(recv_init, MPI_Recv_init, void *)

FORTRAN_EXPORT void CHOICE_BINDING(sendrecv_replace)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *dest,
                                          MPI_Fint *sendtag, MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm,
                                          MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status c;
    int rc = MPI_Sendrecv_replace(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), (int)*dest,
                                  (int)*sendtag, (int)*source, (int)*recvtag, PMPI_Comm_f2c(*comm),
                                  c_status(status, &c));
    mpix_fortran_error(ierr, status_back(rc, &c, status));
}
OPEN_MPI_ALIAS(ompi_sendrecv_replace_f, CHOICE_BINDING(sendrecv_replace));
#endif

FORTRAN_EXPORT void BINDING(wait)(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status c;
    MPI_Request c_request = PMPI_Request_f2c(*request);
    int rc = MPI_Wait(&c_request, c_status(status, &c));
    *request = PMPI_Request_c2f(c_request);
    mpix_fortran_error(ierr, status_back(rc, &c, status));
}
OPEN_MPI_ALIAS(ompi_wait_f, BINDING(wait));

FORTRAN_EXPORT void BINDING(test)(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status c;
    int c_flag = 0;
    MPI_Request c_request = PMPI_Request_f2c(*request);
    int rc = MPI_Test(&c_request, &c_flag, c_status(status, &c));
    *request = PMPI_Request_c2f(c_request);
    *flag = c_flag;
    mpix_fortran_error(ierr, c_flag ? status_back(rc, &c, status) : rc);
}
OPEN_MPI_ALIAS(ompi_test_f, BINDING(test));
OPEN_MPI_ALIAS(pmpi_test_, BINDING(test)); /* what Open MPI's mpi_f08 layer calls */

FORTRAN_EXPORT void BINDING(request_get_status)(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status c;
    int c_flag = 0;
    int rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &c_flag, c_status(status, &c));
    *flag = c_flag;
    mpix_fortran_error(ierr, c_flag ? status_back(rc, &c, status) : rc);
}
OPEN_MPI_ALIAS(ompi_request_get_status_f, BINDING(request_get_status));

FORTRAN_EXPORT void BINDING(waitall)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
    c_arrays c;
    int rc = arrays_in((int)*count, requests, statuses, 0, &c);
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall((int)*count, c.requests, c.statuses);
    mpix_fortran_error(ierr, arrays_out(rc, (int)*count, requests, statuses, (int)*count, &c));
}
OPEN_MPI_ALIAS(ompi_waitall_f, BINDING(waitall));

FORTRAN_EXPORT void BINDING(testall)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                                 MPI_Fint *ierr)
{
    c_arrays c;
    int c_flag = 0, rc = arrays_in((int)*count, requests, statuses, 0, &c);
    if (rc == MPI_SUCCESS)
        rc = MPI_Testall((int)*count, c.requests, &c_flag, c.statuses);
    *flag = c_flag;
    mpix_fortran_error(ierr, arrays_out(rc, (int)*count, requests, statuses, c_flag ? (int)*count : 0, &c));
}
OPEN_MPI_ALIAS(ompi_testall_f, BINDING(testall));
OPEN_MPI_ALIAS(pmpi_testall_, BINDING(testall)); /* what Open MPI's mpi_f08 layer calls */

/* Waitany and Testany: one status, a Fortran index. */
static void any(int wait, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                MPI_Fint *ierr)
{
    c_arrays c;
    MPI_Status one;
    int c_index = MPI_UNDEFINED, c_flag = 0, rc = arrays_in((int)*count, requests, FORTRAN_STATUSES_IGNORE, 0, &c);
    if (rc == MPI_SUCCESS)
        rc = wait ? MPI_Waitany((int)*count, c.requests, &c_index, c_status(status, &one))
                  : MPI_Testany((int)*count, c.requests, &c_index, &c_flag, c_status(status, &one));
    rc = arrays_out(rc, (int)*count, requests, FORTRAN_STATUSES_IGNORE, 0, &c);
    *index = c_index == MPI_UNDEFINED ? MPI_UNDEFINED : c_index + 1;
    if (flag)
        *flag = c_flag;
    mpix_fortran_error(ierr, c_index != MPI_UNDEFINED ? status_back(rc, &one, status) : rc);
}

FORTRAN_EXPORT void BINDING(waitany)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                                 MPI_Fint *ierr)
{
    any(1, count, requests, index, NULL, status, ierr);
}
OPEN_MPI_ALIAS(ompi_waitany_f, BINDING(waitany));

FORTRAN_EXPORT void BINDING(testany)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                                 MPI_Fint *status, MPI_Fint *ierr)
{
    any(0, count, requests, index, flag, status, ierr);
}
OPEN_MPI_ALIAS(ompi_testany_f, BINDING(testany));
OPEN_MPI_ALIAS(pmpi_testany_, BINDING(testany)); /* what Open MPI's mpi_f08 layer calls */

/* Waitsome and Testsome: Fortran indices. */
static void some(int wait, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                 MPI_Fint *statuses, MPI_Fint *ierr)
{
    c_arrays c;
    int done = 0, rc = arrays_in((int)*count, requests, statuses, 1, &c);
    if (rc == MPI_SUCCESS)
        rc = (wait ? MPI_Waitsome : MPI_Testsome)((int)*count, c.requests, &done, c.indices, c.statuses);
    for (int i = 0; rc == MPI_SUCCESS && done != MPI_UNDEFINED && i < done; i++)
        indices[i] = c.indices[i] + 1;
    *outcount = done;
    mpix_fortran_error(ierr, arrays_out(rc, (int)*count, requests, statuses, done == MPI_UNDEFINED ? 0 : done, &c));
}

FORTRAN_EXPORT void BINDING(waitsome)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                                  MPI_Fint *statuses, MPI_Fint *ierr)
{
    some(1, count, requests, outcount, indices, statuses, ierr);
}
OPEN_MPI_ALIAS(ompi_waitsome_f, BINDING(waitsome));

FORTRAN_EXPORT void BINDING(testsome)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                                  MPI_Fint *statuses, MPI_Fint *ierr)
{
    some(0, count, requests, outcount, indices, statuses, ierr);
}
OPEN_MPI_ALIAS(ompi_testsome_f, BINDING(testsome));
OPEN_MPI_ALIAS(pmpi_testsome_, BINDING(testsome)); /* what Open MPI's mpi_f08 layer calls */

/* Calls on one request handle that may change it. */
#define ON_REQUEST(name, c_name)                                                   \
    FORTRAN_EXPORT void BINDING(name)(MPI_Fint *request, MPI_Fint *ierr)           \
    {                                                                              \
        MPI_Request c_request = PMPI_Request_f2c(*request);                        \
        int rc = c_name(&c_request);                                               \
        *request = PMPI_Request_c2f(c_request);                                    \
        mpix_fortran_error(ierr, rc);                                              \
    }                                                                              \
    OPEN_MPI_ALIAS(ompi_##name##_f, BINDING(name));
ON_REQUEST(request_free, MPI_Request_free)
ON_REQUEST(cancel, MPI_Cancel)
ON_REQUEST(start, MPI_Start)

FORTRAN_EXPORT void BINDING(startall)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
    c_arrays c;
    int rc = arrays_in((int)*count, requests, FORTRAN_STATUSES_IGNORE, 0, &c);
    if (rc == MPI_SUCCESS)
        rc = MPI_Startall((int)*count, c.requests);
    mpix_fortran_error(ierr, arrays_out(rc, (int)*count, requests, FORTRAN_STATUSES_IGNORE, 0, &c));
}
OPEN_MPI_ALIAS(ompi_startall_f, BINDING(startall));

FORTRAN_EXPORT void BINDING(probe)(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status c;
    int rc = MPI_Probe((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), c_status(status, &c));
    mpix_fortran_error(ierr, status_back(rc, &c, status));
}
OPEN_MPI_ALIAS(ompi_probe_f, BINDING(probe));

FORTRAN_EXPORT void BINDING(iprobe)(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *status,
                                MPI_Fint *ierr)
{
    MPI_Status c;
    int c_flag = 0;
    int rc = MPI_Iprobe((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_flag, c_status(status, &c));
    *flag = c_flag;
    mpix_fortran_error(ierr, c_flag ? status_back(rc, &c, status) : rc);
}
OPEN_MPI_ALIAS(ompi_iprobe_f, BINDING(iprobe));
OPEN_MPI_ALIAS(pmpi_iprobe_, BINDING(iprobe)); /* what Open MPI's mpi_f08 layer calls */

FORTRAN_EXPORT void BINDING(mprobe)(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *message, MPI_Fint *status,
                                MPI_Fint *ierr)
{
    MPI_Status c;
    MPI_Message c_message = MPI_MESSAGE_NULL;
    int rc = MPI_Mprobe((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_message, c_status(status, &c));
    if (rc == MPI_SUCCESS)
        *message = PMPI_Message_c2f(c_message);
    mpix_fortran_error(ierr, status_back(rc, &c, status));
}
OPEN_MPI_ALIAS(ompi_mprobe_f, BINDING(mprobe));

FORTRAN_EXPORT void BINDING(improbe)(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag, MPI_Fint *message,
                                 MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status c;
    MPI_Message c_message = MPI_MESSAGE_NULL;
    int c_flag = 0;
    int rc = MPI_Improbe((int)*source, (int)*tag, PMPI_Comm_f2c(*comm), &c_flag, &c_message, c_status(status, &c));
    *flag = c_flag;
    if (rc == MPI_SUCCESS && c_flag)
        *message = PMPI_Message_c2f(c_message);
    mpix_fortran_error(ierr, c_flag ? status_back(rc, &c, status) : rc);
}
OPEN_MPI_ALIAS(ompi_improbe_f, BINDING(improbe));
OPEN_MPI_ALIAS(pmpi_improbe_, BINDING(improbe)); /* what Open MPI's mpi_f08 layer calls */

#if !defined(MPIX_FORTRAN_MPICH_F08)
FORTRAN_EXPORT void CHOICE_BINDING(mrecv)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *message, MPI_Fint *status,
                               MPI_Fint *ierr)
{
    MPI_Status c;
    MPI_Message c_message = PMPI_Message_f2c(*message);
    int rc = MPI_Mrecv(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &c_message,
                       c_status(status, &c));
    *message = PMPI_Message_c2f(c_message);
    mpix_fortran_error(ierr, status_back(rc, &c, status));
}
OPEN_MPI_ALIAS(ompi_mrecv_f, CHOICE_BINDING(mrecv));

FORTRAN_EXPORT void CHOICE_BINDING(imrecv)(void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *message, MPI_Fint *request,
                                MPI_Fint *ierr)
{
    MPI_Request c_request = MPI_REQUEST_NULL;
    MPI_Message c_message = PMPI_Message_f2c(*message);
    int rc = MPI_Imrecv(mpix_fortran_buffer(buf), (int)*count, PMPI_Type_f2c(*datatype), &c_message, &c_request);
    *message = PMPI_Message_c2f(c_message);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(c_request);
    mpix_fortran_error(ierr, rc);
}
OPEN_MPI_ALIAS(ompi_imrecv_f, CHOICE_BINDING(imrecv));
#endif
