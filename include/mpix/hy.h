/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/hy.h
 * @brief Hybrid MPI+MPI collectives: one shared copy of the data per node, node leaders
 *        talking across nodes.
 *
 * A hybrid communicator (MPIX_Hy_comm_create) has the group of its parent and carries
 * a two-level split: a node communicator (processes sharing memory) and a bridge
 * communicator of node leaders (rank 0 of each node). Each collective is set up once
 * (its `_create` call allocates the node's shared buffer, with MPIX_Win_allocate_shared,
 * and computes rank tables and counts) and then repeated cheaply; the setup returns a
 * window that identifies the operation and owns its buffer. Free it with MPIX_Hy_free
 * before freeing the hybrid communicator.
 *
 * @par Split unit
 * Info key `mpix_hy_split`, or when the info does not set it the environment variable
 * `MPIX_HY_SPLIT`: `node` (default), `numa` or `socket` (NUMA domain or package of each
 * process, through hwloc), or an integer k: virtual nodes of k consecutive
 * MPI_COMM_WORLD ranks of each node, so that multi-node code paths run on one machine.
 * Any rank placement works: a communicator whose ranks are not in node-contiguous blocks
 * is reordered internally.
 *
 * @par Who may write what, when
 * A call with a `sendbuf` copies it only after every process of the node has entered the
 * call (so nobody still reads the last result); a process that writes its slot of the
 * shared buffer directly (and passes MPI_IN_PLACE) may do so once every process of its
 * node has returned from the previous call on the same window. The result is readable
 * by every process of the node from the return of the call until it enters the next
 * call on that window. Results are identical on all processes. A slot filled by a
 * guarded receive (mpix/guard.h) is fine: each call finishes the caller's guarded
 * transfers before the node may read its slot.
 *
 * @par Fortran
 * The module mpix_hy (`use mpix_hy`, installed beside this header's folder) declares
 * these calls for `use mpi` and `use mpi_f08`; the shared buffers come back as
 * TYPE(C_PTR).
 *
 * @par Errors
 * Errors are raised on the hybrid communicator (setup calls) or on the operation's
 * window (the collectives), as MPI raises them. The setup calls agree across the
 * communicator before allocating anything, so an argument that is wrong on one process
 * (a NULL output, a negative count, MPI_DATATYPE_NULL, MPI_OP_NULL, an invalid datatype)
 * is an error on every process, never a hang.
 */
#ifndef MPIX_HY_H
#define MPIX_HY_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Split @p comm into nodes (per `mpix_hy_split`) and return a hybrid communicator.
 *
 * Collective over @p comm. The new communicator has @p comm's group and rank order;
 * MPI_Comm_free releases it and everything mpix hung on it.
 * @param comm    parent communicator (any, not only MPI_COMM_WORLD)
 * @param info    MPI_INFO_NULL or hints (`mpix_hy_split`)
 * @param[out] hy_comm the hybrid communicator
 * @return MPI_SUCCESS or an error code raised on @p comm (a malformed split value is an
 *         MPIX_ERRKIND_BAD_HINT error naming it).
 * @par Complexity two MPI_Comm_split_type/MPI_Comm_split and one MPI_Allgather; one
 *      MPI_Comm_dup more where nodes trade small allreduce sums (see MPIX_Hy_allreduce).
 */
int MPIX_Hy_comm_create(MPI_Comm comm, MPI_Info info, MPI_Comm *hy_comm);

/**
 * @brief The two levels of a hybrid communicator.
 * @param hy_comm from MPIX_Hy_comm_create
 * @param[out] node_comm   this process's node (do not free)
 * @param[out] bridge_comm the leaders' communicator on a leader, MPI_COMM_NULL elsewhere (do not free)
 * @param[out] node        index of this process's node, 0 .. @p nodes - 1
 * @param[out] nodes       number of nodes
 * @return MPI_SUCCESS; MPIX_ERRKIND_ARGUMENT if @p hy_comm is not hybrid (raised on it).
 */
int MPIX_Hy_comm_query(MPI_Comm hy_comm, MPI_Comm *node_comm, MPI_Comm *bridge_comm, int *node, int *nodes);

/**
 * @brief Set up an allgather of @p count elements of @p datatype per process.
 *
 * Collective over @p hy_comm. The node's shared result holds size(hy_comm) x @p count
 * elements in rank order.
 * @param hy_comm  hybrid communicator
 * @param count    elements contributed by each process (0 allowed)
 * @param datatype any committed datatype whose data lie within [0, extent) of each element
 *                 (a negative displacement or elements that overlap are an argument error)
 * @param[out] result address of a `void *` receiving the node's result buffer
 * @param[out] win    the operation
 * @return MPI_SUCCESS or an error code raised on @p hy_comm.
 */
int MPIX_Hy_allgather_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, void *result, MPI_Win *win);

/**
 * @brief Allgather: every process's @p sendbuf lands at its rank's slot of the result.
 * @param sendbuf @p count elements, or MPI_IN_PLACE when the caller already wrote its slot
 *                of the result (after the previous call returned on its whole node)
 * @param win     from MPIX_Hy_allgather_create
 * @return MPI_SUCCESS or an error code raised on @p win.
 * @par Complexity in place: one node barrier on one node; on several, one node step
 *      (each process stores to its own cache line, the leader reads them), one
 *      MPI_Allgatherv (block placement) or MPI_Alltoallw (other placements) among
 *      leaders, one signal. With a `sendbuf`, one node barrier more.
 */
int MPIX_Hy_allgather(const void *sendbuf, MPI_Win win);

/**
 * @brief Set up a broadcast of @p count elements of @p datatype.
 * @param hy_comm hybrid communicator
 * @param count   elements
 * @param datatype any committed datatype whose data lie within [0, extent) of each element
 *                 (a negative displacement or elements that overlap are an argument error)
 * @param[out] buffer address of a `void *` receiving the node's shared buffer
 * @param[out] win    the operation
 * @return MPI_SUCCESS or an error code raised on @p hy_comm.
 */
int MPIX_Hy_bcast_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, void *buffer, MPI_Win *win);

/**
 * @brief Broadcast from @p root: on return every process reads the data in its node's buffer.
 *
 * Processes on the root's node read the root's data in place; other nodes receive it
 * into their buffer through their leaders.
 * @param sendbuf on @p root, the data, or MPI_IN_PLACE if the root already wrote the
 *                node buffer; ignored elsewhere
 * @param root    rank in the hybrid communicator (any rank)
 * @param win     from MPIX_Hy_bcast_create
 * @return MPI_SUCCESS or an error code raised on @p win (a root out of range is named).
 * @par Complexity on each node one process writes (the root, or the leader receiving
 *      over the bridge): the others store one word each, which the writer reads before
 *      writing (a root in place skips that), and then read the writer's one signal;
 *      one MPI_Bcast among leaders.
 */
int MPIX_Hy_bcast(const void *sendbuf, int root, MPI_Win win);

/**
 * @brief Set up an allreduce of @p count elements of @p datatype with @p op.
 *
 * Every predefined operation on the datatypes MPI defines it for, and user-defined
 * commutative operations. A non-commutative user operation is served by MPI_Allreduce
 * (correct, without the shared-memory path).
 * @param hy_comm  hybrid communicator
 * @param count    elements
 * @param datatype a datatype valid with @p op
 * @param op       the reduction
 * @param[out] slot   address of a `void *` receiving this process's input slot (for MPI_IN_PLACE)
 * @param[out] result address of a `void *` receiving where this process reads the result:
 *                    the node's one copy, or, for vectors of at most `mpix_hy_small_bytes`
 *                    (env MPIX_HY_SMALL_BYTES, default 2048), this process's own copy
 * @param[out] win    the operation
 * @return MPI_SUCCESS or an error code raised on @p hy_comm.
 */
int MPIX_Hy_allreduce_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, MPI_Op op, void *slot,
                             void *result, MPI_Win *win);

/**
 * @brief Allreduce: on return the node's result holds the reduction over all processes.
 *
 * The node-level reduction is split among the node's processes, each reducing a slice
 * of the vector over all inputs (MPI_Reduce_local); leaders then combine nodes with
 * MPI_Allreduce over the bridge. Each byte of @p sendbuf is copied into shared memory at
 * most once (one slice of it not at all), so pass the input here rather than copying it
 * into the slot first; MPI_IN_PLACE suits data produced in the slot.
 * @param sendbuf @p count elements, or MPI_IN_PLACE when the caller already wrote its slot
 * @param win     from MPIX_Hy_allreduce_create
 * @return MPI_SUCCESS or an error code raised on @p win.
 * @par Complexity above the small-vector threshold: two node barriers (one in place or for
 *      vectors up to 8 KiB), each process
 *      reduces count/(node size) elements over all node inputs, then a third barrier
 *      (one node) or a node step, one MPI_Allreduce among leaders and one signal; at or
 *      below it no barrier, each process reduces all count elements into its own copy,
 *      and several nodes add one message step: on up to 3 nodes of equal size every
 *      process trades node sums with its counterpart on each other node; otherwise some
 *      processes of each node trade with other nodes (each with at most 2) and publish
 *      what they received; with more than twice as many other nodes as the smallest node
 *      has processes, or more processes than hardware threads on a machine, one
 *      MPI_Allreduce among leaders and one signal instead.
 */
int MPIX_Hy_allreduce(const void *sendbuf, MPI_Win win);

/**
 * @brief Free an operation made by one of the `_create` calls (collective over its node).
 * @param[in,out] win the operation; MPI_WIN_NULL on return
 * @return MPI_SUCCESS or an error code.
 */
int MPIX_Hy_free(MPI_Win *win);

#ifdef __cplusplus
}
#endif
#endif
