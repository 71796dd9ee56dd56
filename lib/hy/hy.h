/* SPDX-License-Identifier: BSD-3-Clause */
/* State of a hybrid communicator and of one hybrid collective. */
#ifndef MPIX_HY_STATE_H
#define MPIX_HY_STATE_H

#include "common/relax.h"
#include "spin/control.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Nodes a process trades node sums with at most (node_sums.c). */
enum { MPIX_HY_EXCHANGE_PEERS_MAX = 2 };

/* A publication slot of the small allreduce: its call number, then from this offset on
 * (aligned for any predefined type) the vector. */
enum { MPIX_HY_SLOT_HEADER = 16 };

/* One way of trading node sums between nodes (node_sums.c). */
typedef struct mpix_hy_exchange {
    int open;                        /* this way serves the communicator */
    int every;                       /* every process trades with its counterpart on each other
                                        node (equal nodes, few of them): nothing to publish;
                                        otherwise one pair of processes per pair of nodes */
    int peers;                       /* nodes this process trades node sums with */
    int peer_node[MPIX_HY_EXCHANGE_PEERS_MAX], peer_rank[MPIX_HY_EXCHANGE_PEERS_MAX];
} mpix_hy_exchange;

typedef struct mpix_hy_state {
    MPI_Comm node_comm, bridge_comm; /* bridge: MPI_COMM_NULL on non-leaders */
    int rank, size;                  /* in the hybrid communicator */
    int node, nodes;                 /* this process's node index; node count */
    int node_rank, node_size;
    int machine_size;                /* processes of the hybrid communicator that share this
                                        machine's memory (a virtual node is part of one) */
    int *node_of;                    /* [size]: node of each rank */
    int *node_rank_of;               /* [size]: each rank's rank in its node */
    int *node_sizes;                 /* [nodes] */
    int *member_offset;              /* [nodes + 1]: where each node's ranks start in members */
    int *members;                    /* [size]: ranks grouped by node, in node-rank order */
    int block;                       /* node j holds ranks member_offset[j] .. member_offset[j+1]-1 */
    int numa_os_index;               /* numa split: the domain whose memory holds the node's
                                        buffers (OS index); -1 otherwise */
    /* Small allreduce on several nodes (node_sums.c): */
    MPI_Comm exchange_comm;          /* a private duplicate for trading node sums; MPI_COMM_NULL
                                        where the leaders' allreduce serves both APIs */
    mpix_hy_exchange every, pairs;   /* the ways of trading that serve here (.open) */
    const mpix_hy_exchange *exchange;         /* the way MPIX_Hy_* takes; NULL: the leaders' */
    const mpix_hy_exchange *wrapper_exchange; /* the way Wrapper_* takes; NULL: the leaders' */
} mpix_hy_state;

/* The state hung on @hy_comm, or NULL. */
mpix_hy_state *mpix_hy_state_of(MPI_Comm hy_comm);

/* With the numa split, put the node buffer [base, base + bytes) that this process (the
 * leader) just allocated in its domain's memory, before anything touches it (libnuma);
 * a no-op otherwise. */
void mpix_hy_place(const mpix_hy_state *hy, void *base, MPI_Aint bytes);

/* Collective over the node: a shared window over hy->node_comm (MPIX_Win_allocate_shared,
 * so with its spin block) holding @bytes in the leader's segment; *@base, on every
 * process, the first cache line of it (common/lines.h). */
int mpix_hy_node_buffer(const mpix_hy_state *hy, MPI_Aint bytes, int disp_unit, void *base, MPI_Win *win);

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
    mpix_spin_state *spin;     /* the buffer window's spin block */
    char *result;              /* where the result lives in it */
    char *slots;               /* allreduce: node_size input slots (MPI_IN_PLACE) */
    int inputs_in_slots;       /* allreduce from a send buffer: no input goes into the result */
    /* allreduce below the small-message threshold: no barriers (allreduce.c) */
    int small;
    unsigned calls;            /* this process's completed calls */
    int spin_polls;            /* polls before yielding */
    size_t small_data;         /* vector bytes rounded to cache lines */
    size_t small_slot;         /* call number and vector, rounded to cache lines */
    size_t small_stride;       /* from one process's slots to the next's */
    char *small_input;         /* this process's fixed input area (MPI_IN_PLACE) */
    char *small_result;        /* this process's copy of the result */
    const mpix_hy_exchange *exchange; /* several nodes: the way node sums are traded, or
                                  NULL (the leaders' allreduce) */
    char *sums;                /* exchange by pairs: two parities of one slot per node, for
                                  the node sums received (node_sums.c) */
    char *node_sum;            /* exchange: this process's private copy of its node's sum,
                                  then (exchange->every) the sums its peers sent, in peer order */
    /* allgather, leader, non-block placement: */
    char *pack;
    MPI_Datatype *node_types;
    int *counts, *displs;
    MPI_Datatype *send_types;
} mpix_hy_op;

/* The bytes of the node's shared buffer, from the type facts in @op (may set more of
 * @op's fields). A code, not raised. */
typedef int (*mpix_hy_bytes_fn)(mpix_hy_op *op, MPI_Aint *bytes);

/* Collective over @hy_comm: check the arguments, allocate the node's shared buffer
 * (@bytes_of bytes on the leader) and hang @op (calloc'd; NULL is out of memory) on the
 * new window, stored in *@win on success. @argument_code is the caller's own check of its
 * other arguments (NULL outputs): an error on any process is an error on all, never a
 * hang. A code, not raised; on error @op is freed. */
int mpix_hy_op_open(mpix_hy_op *op, MPI_Comm hy_comm, int kind, int count, MPI_Datatype datatype,
                    mpix_hy_bytes_fn bytes_of, int argument_code, MPI_Win *win);

/* MPI_SUCCESS, or an argument error naming @call's NULL output (@what). */
int mpix_hy_outputs(const char *call, const void *first, const char *first_name, const void *second,
                    const char *second_name);

/* Fill and check the type facts of @op (no window): for callers that bring their own
 * buffer. A code, not raised: a negative count, MPI_DATATYPE_NULL or MPI's own error
 * for an invalid datatype. */
int mpix_hy_op_describe(mpix_hy_op *op, mpix_hy_state *hy, int kind, int count, MPI_Datatype datatype);

/* Free what @op holds besides itself (prepared datatypes, arrays); the first failure's
 * code. */
int mpix_hy_op_release(mpix_hy_op *op);

/* Allgather, leader side: prepare the exchange of node blocks (once), and exchange them
 * in op->result (rank-order slots of op->count elements). */
int mpix_hy_allgather_prepare(mpix_hy_op *op);
int mpix_hy_allgather_exchange(mpix_hy_op *op);

/* Allreduce: this process's slice of the node reduction of @inputs (node_size vectors
 * of op->count elements, @stride bytes apart) into @into. */
int mpix_hy_reduce_slice(const mpix_hy_op *op, const char *inputs, size_t stride, char *into);

/* Allreduce: the whole node reduction of @inputs (as above) into @into. */
int mpix_hy_reduce_all(const mpix_hy_op *op, const char *inputs, size_t stride, char *into);

/* Allreduce of small vectors without barriers (allreduce.c): the bytes of one process's
 * publication slot (call number and @vector bytes, whole cache lines); polls before a
 * waiting process yields; and the node reduction of every process's @input into @into,
 * through slots op->small_slot bytes each, two per process, op->small_stride bytes
 * apart from op->base, counted by op->calls. */
size_t mpix_hy_small_slot_bytes(size_t vector);
int mpix_hy_spin_polls(const mpix_hy_state *hy);
int mpix_hy_small_reduce(mpix_hy_op *op, const void *input, void *into);

/* A publication slot's call number: stored with release once the slot's vector is
 * written; awaited with acquire, polling op->spin_polls times before yielding (the
 * writers are the node's other processes, each a call away from publishing). */
static inline void mpix_hy_publish(char *slot, unsigned call)
{
    atomic_store_explicit((_Atomic uint32_t *)slot, call, memory_order_release);
}

static inline void mpix_hy_await(const mpix_hy_op *op, char *slot, unsigned call)
{
    for (unsigned long poll = 0; atomic_load_explicit((_Atomic uint32_t *)slot, memory_order_acquire) != call; poll++)
        mpix_backoff(poll, (unsigned long)op->spin_polls);
}

/* Small allreduce on several nodes by trading node sums (node_sums.c).
 * mpix_hy_exchange_open: at hybrid communicator creation, after the rank tables, decide
 * which ways of trading serve (hy->every, hy->pairs; hy->exchange_comm, a duplicate of
 * @comm, or MPI_COMM_NULL), with whom this process trades in each, and the way each API
 * takes (hy->exchange, hy->wrapper_exchange); @way is mpix_hy_small_nodes' keyword index
 * (auto, trade, leaders, every). Collective over @comm.
 * mpix_hy_node_sums_bytes: the bytes of the node's received-sums area for slots of
 * @slot bytes when trading by @exchange (0 for NULL or where every process trades).
 * mpix_hy_node_sum_bytes: the bytes of op->node_sum for vectors of @vector bytes.
 * mpix_hy_node_sums_reset: zero the call numbers of the slots this process writes,
 * before the node's first call (behind a barrier).
 * mpix_hy_small_reduce_nodes: mpix_hy_small_reduce into op->node_sum, the trade with
 * this process's peers, their sums published to the node in op->sums (unless every
 * process trades), and every node's sum folded in node order into @into: the same bits
 * on every process. With @into NULL the process only trades (a caller whose node's
 * leader alone folds, then signals; not where every process trades). */
int mpix_hy_exchange_open(MPI_Comm comm, mpix_hy_state *hy, int way);
size_t mpix_hy_node_sums_bytes(const mpix_hy_state *hy, const mpix_hy_exchange *exchange, size_t slot);
size_t mpix_hy_node_sum_bytes(const mpix_hy_exchange *exchange, size_t vector);
void mpix_hy_node_sums_reset(const mpix_hy_op *op);
int mpix_hy_small_reduce_nodes(mpix_hy_op *op, const void *input, void *into);

/* The operation behind @win, checked to be of @kind; raises on @win otherwise. */
int mpix_hy_op_of(MPI_Win win, int kind, const char *call, mpix_hy_op **op);

/* Copy @count elements of the operation's datatype. */
int mpix_hy_copy(const mpix_hy_op *op, void *to, const void *from, int count);

#endif
