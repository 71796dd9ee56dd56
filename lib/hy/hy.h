/* State of a hybrid communicator and of one hybrid collective. */
#ifndef MPIX_HY_STATE_H
#define MPIX_HY_STATE_H

#include <mpi.h>
#include <stddef.h>

typedef struct mpix_hy_state {
    MPI_Comm node_comm, bridge_comm; /* bridge: MPI_COMM_NULL on non-leaders */
    int rank, size;                  /* in the hybrid communicator */
    int node, nodes;                 /* this process's node index; node count */
    int node_rank, node_size;
    int *node_of;                    /* [size]: node of each rank */
    int *node_sizes;                 /* [nodes] */
    int *member_offset;              /* [nodes + 1]: where each node's ranks start in members */
    int *members;                    /* [size]: ranks grouped by node, in node-rank order */
    int block;                       /* node j holds ranks member_offset[j] .. member_offset[j+1]-1 */
    int numa_os_index;               /* numa split: the domain whose memory holds the node's
                                        buffers (OS index); -1 otherwise */
} mpix_hy_state;

/* The state hung on @hy_comm, or NULL. */
mpix_hy_state *mpix_hy_state_of(MPI_Comm hy_comm);

/* With the numa split, put the node buffer [base, base + bytes) that this process (the
 * leader) just allocated in its domain's memory, before anything touches it (libnuma);
 * a no-op otherwise. */
void mpix_hy_place(const mpix_hy_state *hy, void *base, MPI_Aint bytes);

enum { MPIX_HY_ALLGATHER, MPIX_HY_BCAST, MPIX_HY_ALLREDUCE };

typedef struct mpix_hy_op {
    int kind;
    mpix_hy_state *hy;
    int count;
    MPI_Datatype datatype;
    MPI_Aint extent;
    int named;                 /* predefined datatype: copies are memcpy */
    MPI_Op op;
    int commutative;
    MPI_Comm hy_comm;          /* for the non-commutative fallback */
    char *base;                /* the node's shared buffer (leader's segment) */
    char *result;              /* where the result lives in it */
    char *slots;               /* allreduce: node_size input slots */
    /* allreduce below the small-message threshold: no barriers (allreduce.c) */
    int small;
    unsigned calls;            /* this process's completed calls */
    int spin_polls;            /* polls before yielding */
    size_t small_data;         /* vector bytes rounded to cache lines */
    size_t small_slot;         /* call number and vector, rounded to cache lines */
    char *small_input;         /* this process's fixed input area (MPI_IN_PLACE) */
    char *small_result;        /* this process's copy of the result */
    /* allgather, leader, non-block placement: */
    char *pack;
    MPI_Datatype *node_types;
    int *counts, *displs;
    MPI_Datatype *send_types;
} mpix_hy_op;

/* Collective over the node: allocate the shared buffer (@bytes on the leader) and hang
 * @op on the new window. A code, not raised. */
int mpix_hy_op_open(mpix_hy_op *op, MPI_Comm hy_comm, int kind, int count, MPI_Datatype datatype, MPI_Aint bytes,
                    MPI_Win *win);

/* Fill the type facts of @op (no window): for callers that bring their own buffer. */
void mpix_hy_op_describe(mpix_hy_op *op, mpix_hy_state *hy, int kind, int count, MPI_Datatype datatype);

/* Free what @op holds besides itself (prepared datatypes, arrays). */
void mpix_hy_op_release(mpix_hy_op *op);

/* Allgather, leader side: prepare the exchange of node blocks (once), and exchange them
 * in op->result (rank-order slots of op->count elements). */
int mpix_hy_allgather_prepare(mpix_hy_op *op);
int mpix_hy_allgather_exchange(mpix_hy_op *op);

/* Allreduce: this process's slice of the node reduction of @inputs (node_size vectors
 * of op->count elements, @stride bytes apart) into @into. */
int mpix_hy_reduce_slice(const mpix_hy_op *op, const char *inputs, size_t stride, char *into);

/* The operation behind @win, checked to be of @kind; raises on @win otherwise. */
int mpix_hy_op_of(MPI_Win win, int kind, const char *call, mpix_hy_op **op);

/* Copy @count elements of the operation's datatype. */
int mpix_hy_copy(const mpix_hy_op *op, void *to, const void *from, int count);

#endif
