/* SPDX-License-Identifier: BSD-3-Clause */
/* libmpix-pmpi.so, zcopy: with MPIX_PMPI=zcopy an unchanged program's point-to-point
 * calls become zcopy's interposed ones (lib/zcopy/interposed.c): a large non-contiguous
 * message to a process of the node is read by the receiver straight from the sender's
 * memory, everything else is MPI's. guard/preload.c defines the MPI_ functions and
 * calls these routes where MPIX_PMPI names zcopy; MPI_Init and MPI_Init_thread are
 * defined here, as only zcopy needs them: they learn which processes of the node can
 * read one another. */
#include <mpi.h>

#include "common/interpose.h"
#include "guard/preload.h"

#include <limits.h>

#define ROUTE __attribute__((visibility("hidden")))

/* Whether pmpi/fortran_requests.c wraps the MPI's Fortran receives and completions. */
#ifdef MPIX_FORTRAN_REQUESTS_WRAPPED
#define FORTRAN_WRAPPED 1
#else
#define FORTRAN_WRAPPED 0
#endif

/* MPI_Init has no communicator to raise an error on: a failed setup leaves zero-copy
 * off in this process, which mpix_interpose_zcopy_init reports under MPIX_VERBOSE. */
EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS && zcopy_on())
        (void)mpix_interpose_zcopy_init(FORTRAN_WRAPPED);
    return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS && zcopy_on())
        (void)mpix_interpose_zcopy_init(FORTRAN_WRAPPED);
    return rc;
}

ROUTE int mpix_zcopy_route_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return mpix_interpose_zcopy_send(buf, count, datatype, dest, tag, comm);
}

ROUTE int mpix_zcopy_route_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                MPI_Status *status)
{
    return mpix_interpose_zcopy_recv(buf, count, datatype, source, tag, comm, status);
}

ROUTE int mpix_zcopy_route_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                    MPI_Comm comm, MPI_Status *status)
{
    return mpix_interpose_zcopy_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                         source, recvtag, comm, status);
}

ROUTE int mpix_zcopy_route_Isend(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r)
{
    return mpix_interpose_zcopy_isend(b, c, t, d, g, m, r);
}

ROUTE int mpix_zcopy_route_Irecv(void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Request *r)
{
    return mpix_interpose_zcopy_irecv(b, c, t, s, g, m, r);
}

ROUTE int mpix_zcopy_route_Recv_init(void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Request *r)
{
    return mpix_interpose_zcopy_recv_init(b, c, t, s, g, m, r);
}

ROUTE int mpix_zcopy_route_Sendrecv_replace(void *b, int c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m,
                                            MPI_Status *st)
{
    return mpix_interpose_zcopy_sendrecv_replace(b, c, t, d, sg, s, rg, m, st);
}

ROUTE int mpix_zcopy_route_Mrecv(void *b, int c, MPI_Datatype t, MPI_Message *msg, MPI_Status *st)
{
    return mpix_interpose_zcopy_mrecv(b, c, t, msg, st);
}

ROUTE int mpix_zcopy_route_Imrecv(void *b, int c, MPI_Datatype t, MPI_Message *msg, MPI_Request *r)
{
    return mpix_interpose_zcopy_imrecv(b, c, t, msg, r);
}

ROUTE int mpix_zcopy_route_Start(MPI_Request *r) { return mpix_interpose_zcopy_start(r); }
ROUTE int mpix_zcopy_route_Startall(int n, MPI_Request r[]) { return mpix_interpose_zcopy_startall(n, r); }
ROUTE int mpix_zcopy_route_Wait(MPI_Request *r, MPI_Status *st) { return mpix_interpose_zcopy_wait(r, st); }
ROUTE int mpix_zcopy_route_Waitall(int n, MPI_Request r[], MPI_Status st[]) { return mpix_interpose_zcopy_waitall(n, r, st); }

ROUTE int mpix_zcopy_route_Waitany(int n, MPI_Request r[], int *i, MPI_Status *st)
{
    return mpix_interpose_zcopy_waitany(n, r, i, st);
}

ROUTE int mpix_zcopy_route_Waitsome(int n, MPI_Request r[], int *o, int i[], MPI_Status st[])
{
    return mpix_interpose_zcopy_waitsome(n, r, o, i, st);
}

ROUTE int mpix_zcopy_route_Test(MPI_Request *r, int *f, MPI_Status *st) { return mpix_interpose_zcopy_test(r, f, st); }

ROUTE int mpix_zcopy_route_Testall(int n, MPI_Request r[], int *f, MPI_Status st[])
{
    return mpix_interpose_zcopy_testall(n, r, f, st);
}

ROUTE int mpix_zcopy_route_Testany(int n, MPI_Request r[], int *i, int *f, MPI_Status *st)
{
    return mpix_interpose_zcopy_testany(n, r, i, f, st);
}

ROUTE int mpix_zcopy_route_Testsome(int n, MPI_Request r[], int *o, int i[], MPI_Status st[])
{
    return mpix_interpose_zcopy_testsome(n, r, o, i, st);
}

ROUTE int mpix_zcopy_route_Probe(int s, int g, MPI_Comm m, MPI_Status *st) { return mpix_interpose_zcopy_probe(s, g, m, st); }

ROUTE int mpix_zcopy_route_Iprobe(int s, int g, MPI_Comm m, int *f, MPI_Status *st)
{
    return mpix_interpose_zcopy_iprobe(s, g, m, f, st);
}

ROUTE int mpix_zcopy_route_Mprobe(int s, int g, MPI_Comm m, MPI_Message *msg, MPI_Status *st)
{
    return mpix_interpose_zcopy_mprobe(s, g, m, msg, st);
}

ROUTE int mpix_zcopy_route_Improbe(int s, int g, MPI_Comm m, int *f, MPI_Message *msg, MPI_Status *st)
{
    return mpix_interpose_zcopy_improbe(s, g, m, f, msg, st);
}

ROUTE int mpix_zcopy_route_Cancel(MPI_Request *r) { return mpix_interpose_zcopy_cancel(r); }
ROUTE int mpix_zcopy_route_Request_free(MPI_Request *r) { return mpix_interpose_zcopy_request_free(r); }

/* Staged messages are read by their receivers before MPI goes away. */
ROUTE int mpix_zcopy_route_Finalize(void)
{
    int rc = mpix_interpose_zcopy_finalize();
    int finalize_rc = PMPI_Finalize();
    return finalize_rc != MPI_SUCCESS ? finalize_rc : rc;
}

/* Only zcopy completes requests of its own; guard leaves this call to MPI. */
EXPORT int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    return zcopy_on() ? mpix_interpose_zcopy_request_get_status(request, flag, status)
                      : PMPI_Request_get_status(request, flag, status);
}

#if MPI_VERSION >= 4
/* MPI-4's large-count receives (guard/preload_large_count.c): one for at most INT_MAX
 * elements is zcopy's, as its int-count twin is, since a zero-copy header may land there
 * as anywhere; a larger one, or one with a count MPI rejects, is MPI's. */
static int fits(MPI_Count count)
{
    return count >= 0 && count <= INT_MAX;
}

ROUTE int mpix_zcopy_route_Recv_c(void *b, MPI_Count c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Status *st)
{
    return fits(c) ? mpix_interpose_zcopy_recv(b, (int)c, t, s, g, m, st) : PMPI_Recv_c(b, c, t, s, g, m, st);
}

ROUTE int mpix_zcopy_route_Irecv_c(void *b, MPI_Count c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Request *r)
{
    return fits(c) ? mpix_interpose_zcopy_irecv(b, (int)c, t, s, g, m, r) : PMPI_Irecv_c(b, c, t, s, g, m, r);
}

ROUTE int mpix_zcopy_route_Recv_init_c(void *b, MPI_Count c, MPI_Datatype t, int s, int g, MPI_Comm m,
                                       MPI_Request *r)
{
    return fits(c) ? mpix_interpose_zcopy_recv_init(b, (int)c, t, s, g, m, r) : PMPI_Recv_init_c(b, c, t, s, g, m, r);
}

ROUTE int mpix_zcopy_route_Sendrecv_c(const void *sb, MPI_Count sc, MPI_Datatype st, int d, int sg, void *rb,
                                      MPI_Count rc, MPI_Datatype rt, int s, int rg, MPI_Comm m, MPI_Status *status)
{
    if (fits(sc) && fits(rc))
        return mpix_interpose_zcopy_sendrecv(sb, (int)sc, st, d, sg, rb, (int)rc, rt, s, rg, m, status);
    return PMPI_Sendrecv_c(sb, sc, st, d, sg, rb, rc, rt, s, rg, m, status);
}

ROUTE int mpix_zcopy_route_Sendrecv_replace_c(void *b, MPI_Count c, MPI_Datatype t, int d, int sg, int s, int rg,
                                              MPI_Comm m, MPI_Status *st)
{
    return fits(c) ? mpix_interpose_zcopy_sendrecv_replace(b, (int)c, t, d, sg, s, rg, m, st)
                   : PMPI_Sendrecv_replace_c(b, c, t, d, sg, s, rg, m, st);
}

ROUTE int mpix_zcopy_route_Mrecv_c(void *b, MPI_Count c, MPI_Datatype t, MPI_Message *msg, MPI_Status *st)
{
    return fits(c) ? mpix_interpose_zcopy_mrecv(b, (int)c, t, msg, st) : PMPI_Mrecv_c(b, c, t, msg, st);
}

ROUTE int mpix_zcopy_route_Imrecv_c(void *b, MPI_Count c, MPI_Datatype t, MPI_Message *msg, MPI_Request *r)
{
    return fits(c) ? mpix_interpose_zcopy_imrecv(b, (int)c, t, msg, r) : PMPI_Imrecv_c(b, c, t, msg, r);
}
#endif
