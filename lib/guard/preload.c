/* SPDX-License-Identifier: BSD-3-Clause */
/* The guard part of libmpix-pmpi.so and libmpix-guard.so: guarded transfers for
 * unchanged programs, through the MPI profiling interface. LD_PRELOAD puts these definitions in front of MPI's: MPI_Send, MPI_Recv and
 * MPI_Sendrecv become the guarded calls, and every other call that may read or write a
 * buffer, or drive MPI's progress (which may complete the program's own requests into a
 * page shared with guarded memory), first completes the guarded transfers, so MPI itself
 * never meets a protected page. The same list, as macros, is <mpix/guard_inject.h>;
 * tools/guard_lists.py checks that the two agree. */
#include <mpi.h>
#include <mpix/guard.h>

#include "guard/preload.h"

ZCOPY_ROUTE(Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
ZCOPY_ROUTE(Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status));
ZCOPY_ROUTE(Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status));

EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    if (!guard_on())
        return ZCOPY_ROUTED(Send) ? mpix_zcopy_route_Send(buf, count, datatype, dest, tag, comm)
                                  : PMPI_Send(buf, count, datatype, dest, tag, comm);
    return MPIX_Send_guarded(buf, count, datatype, dest, tag, comm);
}

EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Status *status)
{
    if (!guard_on())
        return ZCOPY_ROUTED(Recv) ? mpix_zcopy_route_Recv(buf, count, datatype, source, tag, comm, status)
                                  : PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    return MPIX_Recv_guarded(buf, count, datatype, source, tag, comm, status);
}

EXPORT int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                        MPI_Status *status)
{
    if (!guard_on() && ZCOPY_ROUTED(Sendrecv))
        return mpix_zcopy_route_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                         source, recvtag, comm, status);
    if (!guard_on())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                             recvtag, comm, status);
    return MPIX_Sendrecv_guarded(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                 recvtag, comm, status);
}

/* Fenced calls (guard/preload.h); their large-count twins are in preload_large_count.c. */
/* Point to point */
FENCED(Bsend, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m), (b, c, t, d, g, m))
FENCED(Ssend, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m), (b, c, t, d, g, m))
FENCED(Rsend, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m), (b, c, t, d, g, m))
FENCED(Isend, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Ibsend, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Issend, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Irsend, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Irecv, (void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Request *r), (b, c, t, s, g, m, r))
FENCED(Sendrecv_replace, (void *b, int c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m, MPI_Status *st),
       (b, c, t, d, sg, s, rg, m, st))
FENCED(Mrecv, (void *b, int c, MPI_Datatype t, MPI_Message *msg, MPI_Status *st), (b, c, t, msg, st))
FENCED(Imrecv, (void *b, int c, MPI_Datatype t, MPI_Message *msg, MPI_Request *r), (b, c, t, msg, r))
FENCED(Send_init, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Bsend_init, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Ssend_init, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Rsend_init, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r), (b, c, t, d, g, m, r))
FENCED(Recv_init, (void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Request *r), (b, c, t, s, g, m, r))
FENCED(Start, (MPI_Request *r), (r))
FENCED(Startall, (int n, MPI_Request r[]), (n, r))
FENCED(Wait, (MPI_Request *r, MPI_Status *st), (r, st))
FENCED(Waitall, (int n, MPI_Request r[], MPI_Status st[]), (n, r, st))
FENCED(Waitany, (int n, MPI_Request r[], int *i, MPI_Status *st), (n, r, i, st))
FENCED(Waitsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status st[]), (n, r, o, i, st))
FENCED(Test, (MPI_Request *r, int *f, MPI_Status *st), (r, f, st))
FENCED(Testall, (int n, MPI_Request r[], int *f, MPI_Status st[]), (n, r, f, st))
FENCED(Testany, (int n, MPI_Request r[], int *i, int *f, MPI_Status *st), (n, r, i, f, st))
FENCED(Testsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status st[]), (n, r, o, i, st))
FENCED(Probe, (int s, int g, MPI_Comm m, MPI_Status *st), (s, g, m, st))
FENCED(Iprobe, (int s, int g, MPI_Comm m, int *f, MPI_Status *st), (s, g, m, f, st))
FENCED(Mprobe, (int s, int g, MPI_Comm m, MPI_Message *msg, MPI_Status *st), (s, g, m, msg, st))
FENCED(Improbe, (int s, int g, MPI_Comm m, int *f, MPI_Message *msg, MPI_Status *st), (s, g, m, f, msg, st))
FENCED(Cancel, (MPI_Request *r), (r))
FENCED(Request_free, (MPI_Request *r), (r))

/* Collectives */
FENCED(Barrier, (MPI_Comm m), (m))
FENCED(Bcast, (void *b, int c, MPI_Datatype t, int root, MPI_Comm m), (b, c, t, root, m))
FENCED(Gather, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm m),
       (sb, sc, st, rb, rc, rt, root, m))
FENCED(Gatherv, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[], MPI_Datatype rt,
                 int root, MPI_Comm m), (sb, sc, st, rb, rc, d, rt, root, m))
FENCED(Scatter, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm m),
       (sb, sc, st, rb, rc, rt, root, m))
FENCED(Scatterv, (const void *sb, const int sc[], const int d[], MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  int root, MPI_Comm m), (sb, sc, d, st, rb, rc, rt, root, m))
FENCED(Allgather, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m),
       (sb, sc, st, rb, rc, rt, m))
FENCED(Allgatherv, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[], MPI_Datatype rt,
                    MPI_Comm m), (sb, sc, st, rb, rc, d, rt, m))
FENCED(Alltoall, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m),
       (sb, sc, st, rb, rc, rt, m))
FENCED(Alltoallv, (const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb, const int rc[],
                   const int rd[], MPI_Datatype rt, MPI_Comm m), (sb, sc, sd, st, rb, rc, rd, rt, m))
FENCED(Alltoallw, (const void *sb, const int sc[], const int sd[], const MPI_Datatype st[], void *rb, const int rc[],
                   const int rd[], const MPI_Datatype rt[], MPI_Comm m), (sb, sc, sd, st, rb, rc, rd, rt, m))
FENCED(Reduce, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m),
       (sb, rb, c, t, o, root, m))
FENCED(Allreduce, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m), (sb, rb, c, t, o, m))
FENCED(Reduce_scatter_block, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m),
       (sb, rb, c, t, o, m))
FENCED(Reduce_scatter, (const void *sb, void *rb, const int c[], MPI_Datatype t, MPI_Op o, MPI_Comm m),
       (sb, rb, c, t, o, m))
FENCED(Scan, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m), (sb, rb, c, t, o, m))
FENCED(Exscan, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m), (sb, rb, c, t, o, m))
FENCED(Reduce_local, (const void *ib, void *iob, int c, MPI_Datatype t, MPI_Op o), (ib, iob, c, t, o))
FENCED(Ibarrier, (MPI_Comm m, MPI_Request *r), (m, r))
FENCED(Ibcast, (void *b, int c, MPI_Datatype t, int root, MPI_Comm m, MPI_Request *r), (b, c, t, root, m, r))
FENCED(Iallgather, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m,
                    MPI_Request *r), (sb, sc, st, rb, rc, rt, m, r))
FENCED(Ialltoall, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m,
                   MPI_Request *r), (sb, sc, st, rb, rc, rt, m, r))
FENCED(Ireduce, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m, MPI_Request *r),
       (sb, rb, c, t, o, root, m, r))
FENCED(Iallreduce, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Request *r),
       (sb, rb, c, t, o, m, r))
FENCED(Igather, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm m,
                 MPI_Request *r), (sb, sc, st, rb, rc, rt, root, m, r))
FENCED(Igatherv, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[], MPI_Datatype rt,
                  int root, MPI_Comm m, MPI_Request *r), (sb, sc, st, rb, rc, d, rt, root, m, r))
FENCED(Iscatter, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm m,
                  MPI_Request *r), (sb, sc, st, rb, rc, rt, root, m, r))
FENCED(Iscatterv, (const void *sb, const int sc[], const int d[], MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                   int root, MPI_Comm m, MPI_Request *r), (sb, sc, d, st, rb, rc, rt, root, m, r))
FENCED(Iallgatherv, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[], MPI_Datatype rt,
                     MPI_Comm m, MPI_Request *r), (sb, sc, st, rb, rc, d, rt, m, r))
FENCED(Ialltoallv, (const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb, const int rc[],
                    const int rd[], MPI_Datatype rt, MPI_Comm m, MPI_Request *r), (sb, sc, sd, st, rb, rc, rd, rt, m, r))
FENCED(Ialltoallw, (const void *sb, const int sc[], const int sd[], const MPI_Datatype st[], void *rb, const int rc[],
                    const int rd[], const MPI_Datatype rt[], MPI_Comm m, MPI_Request *r),
       (sb, sc, sd, st, rb, rc, rd, rt, m, r))
FENCED(Ireduce_scatter_block, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Request *r),
       (sb, rb, c, t, o, m, r))
FENCED(Ireduce_scatter, (const void *sb, void *rb, const int c[], MPI_Datatype t, MPI_Op o, MPI_Comm m,
                         MPI_Request *r), (sb, rb, c, t, o, m, r))
FENCED(Iscan, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Request *r),
       (sb, rb, c, t, o, m, r))
FENCED(Iexscan, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Request *r),
       (sb, rb, c, t, o, m, r))

/* Neighbourhood collectives (halo exchanges on a process topology) */
FENCED(Neighbor_allgather, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m),
       (sb, sc, st, rb, rc, rt, m))
FENCED(Neighbor_allgatherv, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[],
                             MPI_Datatype rt, MPI_Comm m), (sb, sc, st, rb, rc, d, rt, m))
FENCED(Neighbor_alltoall, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m),
       (sb, sc, st, rb, rc, rt, m))
FENCED(Neighbor_alltoallv, (const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb, const int rc[],
                            const int rd[], MPI_Datatype rt, MPI_Comm m), (sb, sc, sd, st, rb, rc, rd, rt, m))
FENCED(Neighbor_alltoallw, (const void *sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void *rb,
                            const int rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm m),
       (sb, sc, sd, st, rb, rc, rd, rt, m))
FENCED(Ineighbor_allgather, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m,
                             MPI_Request *r), (sb, sc, st, rb, rc, rt, m, r))
FENCED(Ineighbor_allgatherv, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[],
                              MPI_Datatype rt, MPI_Comm m, MPI_Request *r), (sb, sc, st, rb, rc, d, rt, m, r))
FENCED(Ineighbor_alltoall, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m,
                            MPI_Request *r), (sb, sc, st, rb, rc, rt, m, r))
FENCED(Ineighbor_alltoallv, (const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                             const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm m, MPI_Request *r),
       (sb, sc, sd, st, rb, rc, rd, rt, m, r))
FENCED(Ineighbor_alltoallw, (const void *sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void *rb,
                             const int rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm m, MPI_Request *r),
       (sb, sc, sd, st, rb, rc, rd, rt, m, r))

/* MPI-4: the nonblocking send-receives, persistent collectives (their MPI_Start is
 * fenced above; made as MPI_Send_init is) and partitioned transfers, whose MPI_Pready
 * calls hand a partition to MPI. */
#if MPI_VERSION >= 4
/* MPICH before 4.1 declares MPI_Pready_list's partitions without const. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define PREADY_PARTITIONS int
#else
#define PREADY_PARTITIONS const int
#endif
FENCED(Isendrecv, (const void *sb, int sc, MPI_Datatype st, int d, int sg, void *rb, int rc, MPI_Datatype rt, int s,
                   int rg, MPI_Comm m, MPI_Request *r), (sb, sc, st, d, sg, rb, rc, rt, s, rg, m, r))
FENCED(Isendrecv_replace, (void *b, int c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m, MPI_Request *r),
       (b, c, t, d, sg, s, rg, m, r))
FENCED(Barrier_init, (MPI_Comm m, MPI_Info i, MPI_Request *r), (m, i, r))
FENCED(Bcast_init, (void *b, int c, MPI_Datatype t, int root, MPI_Comm m, MPI_Info i, MPI_Request *r),
       (b, c, t, root, m, i, r))
FENCED(Gather_init, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm m,
                     MPI_Info i, MPI_Request *r), (sb, sc, st, rb, rc, rt, root, m, i, r))
FENCED(Gatherv_init, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[],
                      MPI_Datatype rt, int root, MPI_Comm m, MPI_Info i, MPI_Request *r),
       (sb, sc, st, rb, rc, d, rt, root, m, i, r))
FENCED(Scatter_init, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
                      MPI_Comm m, MPI_Info i, MPI_Request *r), (sb, sc, st, rb, rc, rt, root, m, i, r))
FENCED(Scatterv_init, (const void *sb, const int sc[], const int d[], MPI_Datatype st, void *rb, int rc,
                       MPI_Datatype rt, int root, MPI_Comm m, MPI_Info i, MPI_Request *r),
       (sb, sc, d, st, rb, rc, rt, root, m, i, r))
FENCED(Allgather_init, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m,
                        MPI_Info i, MPI_Request *r), (sb, sc, st, rb, rc, rt, m, i, r))
FENCED(Allgatherv_init, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[],
                         MPI_Datatype rt, MPI_Comm m, MPI_Info i, MPI_Request *r), (sb, sc, st, rb, rc, d, rt, m, i, r))
FENCED(Alltoall_init, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm m,
                       MPI_Info i, MPI_Request *r), (sb, sc, st, rb, rc, rt, m, i, r))
FENCED(Alltoallv_init, (const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb, const int rc[],
                        const int rd[], MPI_Datatype rt, MPI_Comm m, MPI_Info i, MPI_Request *r),
       (sb, sc, sd, st, rb, rc, rd, rt, m, i, r))
FENCED(Alltoallw_init, (const void *sb, const int sc[], const int sd[], const MPI_Datatype st[], void *rb,
                        const int rc[], const int rd[], const MPI_Datatype rt[], MPI_Comm m, MPI_Info i,
                        MPI_Request *r), (sb, sc, sd, st, rb, rc, rd, rt, m, i, r))
FENCED(Reduce_init, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m, MPI_Info i,
                     MPI_Request *r), (sb, rb, c, t, o, root, m, i, r))
FENCED(Allreduce_init, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Info i,
                        MPI_Request *r), (sb, rb, c, t, o, m, i, r))
FENCED(Reduce_scatter_block_init, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Info i,
                                   MPI_Request *r), (sb, rb, c, t, o, m, i, r))
FENCED(Reduce_scatter_init, (const void *sb, void *rb, const int c[], MPI_Datatype t, MPI_Op o, MPI_Comm m,
                             MPI_Info i, MPI_Request *r), (sb, rb, c, t, o, m, i, r))
FENCED(Scan_init, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Info i, MPI_Request *r),
       (sb, rb, c, t, o, m, i, r))
FENCED(Exscan_init, (const void *sb, void *rb, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m, MPI_Info i,
                     MPI_Request *r), (sb, rb, c, t, o, m, i, r))
FENCED(Neighbor_allgather_init, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                                 MPI_Comm m, MPI_Info i, MPI_Request *r), (sb, sc, st, rb, rc, rt, m, i, r))
FENCED(Neighbor_allgatherv_init, (const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int d[],
                                  MPI_Datatype rt, MPI_Comm m, MPI_Info i, MPI_Request *r),
       (sb, sc, st, rb, rc, d, rt, m, i, r))
FENCED(Neighbor_alltoall_init, (const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                                MPI_Comm m, MPI_Info i, MPI_Request *r), (sb, sc, st, rb, rc, rt, m, i, r))
FENCED(Neighbor_alltoallv_init, (const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                                 const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm m, MPI_Info i,
                                 MPI_Request *r), (sb, sc, sd, st, rb, rc, rd, rt, m, i, r))
FENCED(Neighbor_alltoallw_init, (const void *sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[],
                                 void *rb, const int rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm m,
                                 MPI_Info i, MPI_Request *r), (sb, sc, sd, st, rb, rc, rd, rt, m, i, r))
FENCED(Psend_init, (const void *b, int p, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Info i,
                    MPI_Request *r), (b, p, c, t, d, g, m, i, r))
FENCED(Precv_init, (void *b, int p, MPI_Count c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Info i,
                    MPI_Request *r), (b, p, c, t, s, g, m, i, r))
FENCED(Pready, (int p, MPI_Request r), (p, r))
FENCED(Pready_range, (int lo, int hi, MPI_Request r), (lo, hi, r))
FENCED(Pready_list, (int n, PREADY_PARTITIONS p[], MPI_Request r), (n, p, r))
FENCED(Parrived, (MPI_Request r, int p, int *f), (r, p, f))
#endif

/* Packing, one-sided, I/O, and the objects transfers hold */
FENCED(Pack, (const void *ib, int ic, MPI_Datatype t, void *ob, int os, int *p, MPI_Comm m), (ib, ic, t, ob, os, p, m))
FENCED(Unpack, (const void *ib, int is, int *p, void *ob, int oc, MPI_Datatype t, MPI_Comm m), (ib, is, p, ob, oc, t, m))
FENCED(Pack_external, (const char d[], const void *ib, int ic, MPI_Datatype t, void *ob, MPI_Aint os, MPI_Aint *p),
       (d, ib, ic, t, ob, os, p))
FENCED(Unpack_external, (const char d[], const void *ib, MPI_Aint is, MPI_Aint *p, void *ob, int oc, MPI_Datatype t),
       (d, ib, is, p, ob, oc, t))
/* The buffered-send buffer: MPI writes into it, and detaching waits for the messages. */
FENCED(Buffer_attach, (void *b, int s), (b, s))
FENCED(Buffer_detach, (void *b, int *s), (b, s))
FENCED(Put, (const void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w),
       (ob, oc, ot, tr, td, tc, tt, w))
FENCED(Get, (void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w),
       (ob, oc, ot, tr, td, tc, tt, w))
FENCED(Accumulate, (const void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Op o,
                    MPI_Win w), (ob, oc, ot, tr, td, tc, tt, o, w))
FENCED(Get_accumulate, (const void *ob, int oc, MPI_Datatype ot, void *rb, int rc, MPI_Datatype rt, int tr,
                        MPI_Aint td, int tc, MPI_Datatype tt, MPI_Op o, MPI_Win w),
       (ob, oc, ot, rb, rc, rt, tr, td, tc, tt, o, w))
FENCED(Fetch_and_op, (const void *ob, void *rb, MPI_Datatype t, int tr, MPI_Aint td, MPI_Op o, MPI_Win w),
       (ob, rb, t, tr, td, o, w))
FENCED(Compare_and_swap, (const void *ob, const void *cb, void *rb, MPI_Datatype t, int tr, MPI_Aint td, MPI_Win w),
       (ob, cb, rb, t, tr, td, w))
FENCED(Win_fence, (int a, MPI_Win w), (a, w))
FENCED(Win_lock, (int l, int r, int a, MPI_Win w), (l, r, a, w))
FENCED(Win_unlock, (int r, MPI_Win w), (r, w))
FENCED(Win_lock_all, (int a, MPI_Win w), (a, w))
FENCED(Win_unlock_all, (MPI_Win w), (w))
FENCED(Win_flush, (int r, MPI_Win w), (r, w))
FENCED(Win_flush_all, (MPI_Win w), (w))
FENCED(Win_flush_local, (int r, MPI_Win w), (r, w))
FENCED(Win_flush_local_all, (MPI_Win w), (w))
FENCED(Win_post, (MPI_Group g, int a, MPI_Win w), (g, a, w))
FENCED(Win_start, (MPI_Group g, int a, MPI_Win w), (g, a, w))
FENCED(Win_complete, (MPI_Win w), (w))
FENCED(Win_wait, (MPI_Win w), (w))
FENCED(Win_test, (MPI_Win w, int *f), (w, f))
FENCED(Rput, (const void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w,
              MPI_Request *r), (ob, oc, ot, tr, td, tc, tt, w, r))
FENCED(Rget, (void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w,
              MPI_Request *r), (ob, oc, ot, tr, td, tc, tt, w, r))
FENCED(Raccumulate, (const void *ob, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Op o,
                     MPI_Win w, MPI_Request *r), (ob, oc, ot, tr, td, tc, tt, o, w, r))
FENCED(Rget_accumulate, (const void *ob, int oc, MPI_Datatype ot, void *rb, int rc, MPI_Datatype rt, int tr,
                         MPI_Aint td, int tc, MPI_Datatype tt, MPI_Op o, MPI_Win w, MPI_Request *r),
       (ob, oc, ot, rb, rc, rt, tr, td, tc, tt, o, w, r))
/* Windows: the memory they expose is recorded, so that guarded transfers on it finish in
 * their call (guard/exposed.h): other processes reach it without this process touching
 * it. libmpix-pmpi.so's storage part defines the calls under the #ifndef, recording too. */
WINDOW_CREATED(Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win),
               (base, size, disp_unit, info, comm, win), EXPOSING(base, size))
#ifndef MPIX_INTERPOSE_WITH_STORAGE
WINDOW_CREATED(Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
               (size, disp_unit, info, comm, baseptr, win), NOTHING_EXPOSED)
WINDOW_CREATED(Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                     MPI_Win *win),
               (size, disp_unit, info, comm, baseptr, win), NOTHING_EXPOSED)
EXPORT int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    int rc = PMPI_Win_attach(win, base, size);
    return guard_on() ? mpix_interpose_window_attached(rc, win, base, size) : rc;
}
EXPORT int MPI_Win_detach(MPI_Win win, const void *base)
{
    return mpix_interpose_window_detached(PMPI_Win_detach(win, base), win, base);
}
#endif

/* Memory that goes, or that other processes and files see: libmpix-pmpi.so's storage
 * part defines these, completing guarded transfers too. */
#ifndef MPIX_INTERPOSE_WITH_STORAGE
FENCED(Win_sync, (MPI_Win w), (w))
FENCED(Win_free, (MPI_Win *w), (w))
FENCED(Free_mem, (void *b), (b))
#endif
FENCED(File_read, (MPI_File f, void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_write, (MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_read_at, (MPI_File f, MPI_Offset o, void *b, int c, MPI_Datatype t, MPI_Status *st), (f, o, b, c, t, st))
FENCED(File_write_at, (MPI_File f, MPI_Offset o, const void *b, int c, MPI_Datatype t, MPI_Status *st),
       (f, o, b, c, t, st))
FENCED(File_read_all, (MPI_File f, void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_write_all, (MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_read_at_all, (MPI_File f, MPI_Offset o, void *b, int c, MPI_Datatype t, MPI_Status *st),
       (f, o, b, c, t, st))
FENCED(File_write_at_all, (MPI_File f, MPI_Offset o, const void *b, int c, MPI_Datatype t, MPI_Status *st),
       (f, o, b, c, t, st))
FENCED(File_iread, (MPI_File f, void *b, int c, MPI_Datatype t, MPI_Request *r), (f, b, c, t, r))
FENCED(File_iwrite, (MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Request *r), (f, b, c, t, r))
FENCED(File_iread_at, (MPI_File f, MPI_Offset o, void *b, int c, MPI_Datatype t, MPI_Request *r), (f, o, b, c, t, r))
FENCED(File_iwrite_at, (MPI_File f, MPI_Offset o, const void *b, int c, MPI_Datatype t, MPI_Request *r),
       (f, o, b, c, t, r))
FENCED(File_read_shared, (MPI_File f, void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_write_shared, (MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_read_ordered, (MPI_File f, void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_write_ordered, (MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Status *st), (f, b, c, t, st))
FENCED(File_iread_all, (MPI_File f, void *b, int c, MPI_Datatype t, MPI_Request *r), (f, b, c, t, r))
FENCED(File_iwrite_all, (MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Request *r), (f, b, c, t, r))
FENCED(File_iread_at_all, (MPI_File f, MPI_Offset o, void *b, int c, MPI_Datatype t, MPI_Request *r),
       (f, o, b, c, t, r))
FENCED(File_iwrite_at_all, (MPI_File f, MPI_Offset o, const void *b, int c, MPI_Datatype t, MPI_Request *r),
       (f, o, b, c, t, r))
FENCED(File_iread_shared, (MPI_File f, void *b, int c, MPI_Datatype t, MPI_Request *r), (f, b, c, t, r))
FENCED(File_iwrite_shared, (MPI_File f, const void *b, int c, MPI_Datatype t, MPI_Request *r), (f, b, c, t, r))
/* Split collectives: MPI may move the data in either half. */
FENCED(File_read_all_begin, (MPI_File f, void *b, int c, MPI_Datatype t), (f, b, c, t))
FENCED(File_read_all_end, (MPI_File f, void *b, MPI_Status *st), (f, b, st))
FENCED(File_write_all_begin, (MPI_File f, const void *b, int c, MPI_Datatype t), (f, b, c, t))
FENCED(File_write_all_end, (MPI_File f, const void *b, MPI_Status *st), (f, b, st))
FENCED(File_read_at_all_begin, (MPI_File f, MPI_Offset o, void *b, int c, MPI_Datatype t), (f, o, b, c, t))
FENCED(File_read_at_all_end, (MPI_File f, void *b, MPI_Status *st), (f, b, st))
FENCED(File_write_at_all_begin, (MPI_File f, MPI_Offset o, const void *b, int c, MPI_Datatype t), (f, o, b, c, t))
FENCED(File_write_at_all_end, (MPI_File f, const void *b, MPI_Status *st), (f, b, st))
FENCED(File_read_ordered_begin, (MPI_File f, void *b, int c, MPI_Datatype t), (f, b, c, t))
FENCED(File_read_ordered_end, (MPI_File f, void *b, MPI_Status *st), (f, b, st))
FENCED(File_write_ordered_begin, (MPI_File f, const void *b, int c, MPI_Datatype t), (f, b, c, t))
FENCED(File_write_ordered_end, (MPI_File f, const void *b, MPI_Status *st), (f, b, st))
FENCED(Comm_free, (MPI_Comm *m), (m))
FENCED(Finalize, (void), ())
