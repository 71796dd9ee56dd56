/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/hy_wrapper.h
 * @brief The hybrid collectives behind the `Wrapper_*` interface of the hybrid MPI+MPI
 *        benchmarks, for C and C++.
 *
 * Programs written against that interface build with this header in place of theirs:
 * in C++ the collectives are also templates over the element type
 * (`Wrapper_Hy_Bcast<double>(&r_buf, s_buf, ...)`, with typed pointers), and the
 * spellings `Wrapper_Hy_bcast` and `Wrapper_Param_Free` are accepted beside
 * `Wrapper_Hy_Bcast` and `Wrapper_Param_free`. In C, `void *` stands for the element
 * type. The layer is built on MPIX_Hy_comm_create (so `MPIX_HY_SPLIT` applies, and any
 * rank placement works) and on the spin synchronization of mpix/spin.h.
 *
 * @par Layout of a node's region
 * Wrapper_MPI_Sharedmemory_alloc with `flag == 0` gives every process of a node the same
 * region of `(shmemcomm_size + 2) * msize + 1` elements of `bsize` bytes (n =
 * shmemcomm_size, m = msize; offsets in elements):
 *
 * | offset        | holds |
 * |---------------|-------|
 * | `i * m`       | slot i: input of node rank i (allreduce); the root's data (bcast, on the root's node) |
 * | `n * m`       | the node-reduced vector (allreduce); the data arriving from another node (bcast) |
 * | `(n + 1) * m` | the globally reduced vector when there are several nodes (allreduce) |
 * | `(n + 2) * m` | one spare element, the caller's |
 *
 * With `flag = nprocs` the region holds `msize * nprocs` elements and process r's slot is
 * at `r * msize`, r its rank in the parent communicator (any placement).
 *
 * @par Who writes what, when
 * A process writes its slot (the root: its own slot, `shmem_transtable[root] * msize`)
 * before the collective call and reads the result after it. It may write the next input
 * once every process of its node has read the last result (the benchmarks call a barrier
 * there); the layer itself never overwrites data a process of the node may still read.
 *
 * @par Errors
 * The functions return nothing, as the interface they reproduce: an error (a root out
 * of range, NULL or invalid arguments, a handle not made by
 * Wrapper_MPI_ShmemBridgeComm_create) calls the error handler of the node communicator
 * `shmem_comm`, which it inherits from the parent communicator; with MPI_ERRORS_RETURN
 * the call returns without doing anything. Without a comm_package the handler of
 * MPI_COMM_WORLD is called. Setup calls agree across processes, so one bad argument is
 * an error on every process, never a hang.
 *
 * @par Synchronizations per call
 * A step is one store per process to its own cache line, read by the one process that
 * waits for all; a signal is one store read by the others. Bcast: one signal on the
 * root's node; elsewhere one step, the leaders' MPI_Bcast, one signal. Allgather: one
 * barrier (one step read by every process) on one node; with several, one step, the
 * leaders' exchange, one signal. Allreduce: up to `mpix_hy_small_bytes` (default 2048
 * bytes), on one node no barrier (every process publishes a copy of its slot's input on
 * a cache line of its own and reduces all copies); on up to 3 nodes of equal size, with
 * more processes than hardware threads on every machine, the
 * same publication, then every process trades node sums with its counterpart on each
 * other node (one message step) and folds them, no signal; on more than two nodes
 * otherwise the same publication, then some processes of each node trade node sums with
 * other nodes (one message step, at most 2 nodes each) and the leader folds them, one
 * signal; on two nodes otherwise (or with more than twice as many other nodes as a node has
 * processes, or more processes than hardware threads on a machine) one step, the
 * leader reduces the node alone, one signal; above, one barrier, every process reduces a slice,
 * then one barrier on one node or one step and signal around the leaders' MPI_Allreduce.
 * Every call's inputs may be rewritten as soon as the call returns: no process reads
 * another's slot after any process has returned.
 */
#ifndef MPIX_HY_WRAPPER_H
#define MPIX_HY_WRAPPER_H

#include <mpi.h>
#include <mpix/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The two-level split: node (shared-memory) communicator and bridge of leaders. */
struct comm_package {
    MPI_Comm shmem_comm;  /**< processes of this node */
    MPI_Comm bridge_comm; /**< leaders only; MPI_COMM_NULL elsewhere */
    int shmemcomm_size;   /**< processes on this node */
    int bridgecomm_size;  /**< nodes (known on every process) */
};

/** Receive counts and displacements (elements) of the leaders' irregular allgather. */
struct allgather_param {
    int *recvcounts; /**< per node: msize x node size */
    int *displs;     /**< per node: prefix sums of recvcounts */
};

/**
 * @brief Split @p p_comm into nodes and leaders (collective over @p p_comm).
 * @param p_comm parent communicator (MPI_COMM_WORLD or any other)
 * @param[out] comm_handle the split; free with Wrapper_Comm_free
 * @par Complexity MPIX_Hy_comm_create, and one small shared window per node.
 */
void Wrapper_MPI_ShmemBridgeComm_create(MPI_Comm p_comm, struct comm_package *comm_handle);

/**
 * @brief Allocate the node's shared region (collective over the node).
 * @param msize elements per process
 * @param bsize bytes per element
 * @param flag  0: the allreduce/bcast layout; nprocs: the allgather layout (see the layout)
 * @param comm_handle from Wrapper_MPI_ShmemBridgeComm_create
 * @param[out] shmem_addr the region's start, the same memory on every process of the node,
 *             on a cache-line boundary (64 bytes; the window's own base may lie before it,
 *             as Open MPI places a shared segment 8 bytes past a line)
 * @param[out] winPtr the region's window; free it with MPI_Win_free or MPIX_Win_free
 */
void Wrapper_MPI_Sharedmemory_alloc(int msize, int bsize, int flag, struct comm_package *comm_handle,
                                    void **shmem_addr, MPI_Win *winPtr);

/**
 * @brief `*local_addr = start_addr + rank * dsize` bytes: a process's slot.
 * @param start_addr region start
 * @param rank       slot index (parent rank for the nprocs layout, node rank otherwise)
 * @param dsize      slot size in bytes
 * @param[out] local_addr the slot
 */
void Wrapper_Get_localpointer(void *start_addr, int rank, int dsize, void **local_addr);

/**
 * @brief The size of every node's communicator, in node order (malloc'd; free with
 *        Wrapper_ShmemcommSizeset_free). Filled on every process, not only on leaders.
 * @param comm_handle the split
 * @param[out] sharedmem_sizeset bridgecomm_size node sizes
 */
void Wrapper_ShmemcommSizeset_gather(const struct comm_package *comm_handle, int **sharedmem_sizeset);

/**
 * @brief Counts and displacements of the leaders' exchange (free with Wrapper_Param_free).
 * @param msize elements per process
 * @param comm_handle the split
 * @param sharedmem_sizeset from Wrapper_ShmemcommSizeset_gather
 * @param[out] param_handle the arrays
 */
void Wrapper_Create_Allgather_param(int msize, const struct comm_package *comm_handle, int *sharedmem_sizeset,
                                    struct allgather_param *param_handle);

/**
 * @brief Allgather in the nprocs layout: each process wrote its slot; on return the
 *        node's region holds every process's slot in parent-rank order.
 * @param start_addr region from Wrapper_MPI_Sharedmemory_alloc(flag = nprocs)
 * @param local_addr this process's slot (already written in place; not read)
 * @param msize elements per process
 * @param data_type element type
 * @param param_handle from Wrapper_Create_Allgather_param (the layer keeps its own plan,
 *        valid for non-block placements too)
 * @param comm_handle the split
 * @par Complexity one node barrier on one node; with several, one step, the leaders'
 *      MPI_Allgatherv (block placement) or MPI_Alltoallw, one signal. The exchange is
 *      planned at the first call and kept while msize and data_type repeat.
 */
void Wrapper_Hy_Allgather(void *start_addr, void *local_addr, int msize, MPI_Datatype data_type,
                          struct allgather_param *param_handle, struct comm_package *comm_handle);

/**
 * @brief Rank translation tables, as MPI_Group_translate_ranks gives them.
 *
 * For each rank r of @p p_comm: `(*shmem_transtable)[r]` is r's rank in this process's
 * node when r shares it, MPI_UNDEFINED otherwise; `(*bridge_transtable)[r]` is the
 * bridge rank of r's node leader (its node index), on every process.
 * @param p_comm the parent communicator given to Wrapper_MPI_ShmemBridgeComm_create
 * @param comm_handle the split
 * @param[in,out] shmem_transtable  `*shmem_transtable`: caller-allocated, size of p_comm
 * @param[in,out] bridge_transtable `*bridge_transtable`: caller-allocated, size of p_comm
 */
void Wrapper_Get_transtable(MPI_Comm p_comm, const struct comm_package *comm_handle, int **shmem_transtable,
                            int **bridge_transtable);

/**
 * @brief Broadcast from @p root, which wrote @p msize elements into its own slot,
 *        `start_addr + shmem_transtable[root] * msize` elements.
 *
 * On return `*bcast_addr` points at the data: at the root's slot on the root's node, at
 * slot `shmemcomm_size` on every other node.
 * @param[out] bcast_addr where this process reads the data
 * @param start_addr the node's region (flag 0 layout)
 * @param msize elements
 * @param shmem_transtable, bridge_transtable from Wrapper_Get_transtable (accepted for
 *        compatibility; the layer reads its own copy of them, so NULL is allowed)
 * @param data_type element type
 * @param root rank in the parent communicator; out of range is an error
 * @param comm_handle the split
 * @par Complexity root's node: one signal; other nodes: one step, the leaders' MPI_Bcast,
 *      one signal.
 */
void Wrapper_Hy_Bcast(void **bcast_addr, void *start_addr, int msize, int *shmem_transtable,
                      int *bridge_transtable, MPI_Datatype data_type, int root, struct comm_package *comm_handle);

/**
 * @brief Allreduce in the flag 0 layout: each process wrote its slot (node rank x msize);
 *        on return `*result_addr` points to the reduced vector, readable by every process.
 * @param start_addr region from Wrapper_MPI_Sharedmemory_alloc(flag = 0)
 * @param[out] result_addr slot `shmemcomm_size` (one node) or `shmemcomm_size + 1` (several)
 * @param sharedmem_rank this process's node rank (the layer knows it; not read)
 * @param msize elements
 * @param data_type element type
 * @param op any reduction valid for @p data_type (non-commutative ones in rank order,
 *        through MPI_Allreduce)
 * @param comm_handle the split
 * @param win the region's window (not used: the layer synchronizes on its own)
 * @par Complexity see "Synchronizations per call" above.
 */
void Wrapper_Hy_Allreduce(void *start_addr, void **result_addr, int sharedmem_rank, int msize,
                          MPI_Datatype data_type, MPI_Op op, struct comm_package *comm_handle, MPI_Win win);

/** @brief Free what Wrapper_ShmemcommSizeset_gather returned. @param comm_handle the split @param sharedmem_sizeset the array */
void Wrapper_ShmemcommSizeset_free(struct comm_package *comm_handle, int *sharedmem_sizeset);

/** @brief Free what Wrapper_Create_Allgather_param made. @param comm_handle the split @param param_handle the arrays */
void Wrapper_Param_free(struct comm_package *comm_handle, struct allgather_param *param_handle);

/** @brief Free the split (collective over the parent). @param comm_handle the split; its communicators become MPI_COMM_NULL */
void Wrapper_Comm_free(struct comm_package *comm_handle);

/** @brief Wrapper_Param_free under its other spelling. @param comm_handle the split @param param_handle the arrays */
static MPIX_INLINE_ void Wrapper_Param_Free(struct comm_package *comm_handle, struct allgather_param *param_handle)
{
    Wrapper_Param_free(comm_handle, param_handle);
}

/** @brief Wrapper_Hy_Bcast under its other spelling (same parameters). */
static MPIX_INLINE_ void Wrapper_Hy_bcast(void **bcast_addr, void *start_addr, int msize, int *shmem_transtable,
                                          int *bridge_transtable, MPI_Datatype data_type, int root,
                                          struct comm_package *comm_handle)
{
    Wrapper_Hy_Bcast(bcast_addr, start_addr, msize, shmem_transtable, bridge_transtable, data_type, root, comm_handle);
}

#ifdef __cplusplus
}

/* The C++ face: typed pointers, the element type as template argument. Each calls the
 * C function above (the non-template overload wins for void pointers). */

/** @brief Wrapper_Hy_Allgather over elements of type T. */
template <class T>
inline void Wrapper_Hy_Allgather(T *start_addr, T *local_addr, int msize, MPI_Datatype data_type,
                                 struct allgather_param *param_handle, struct comm_package *comm_handle)
{
    Wrapper_Hy_Allgather(static_cast<void *>(start_addr), static_cast<void *>(local_addr), msize, data_type,
                         param_handle, comm_handle);
}

/** @brief Wrapper_Hy_Bcast over elements of type T. */
template <class T>
inline void Wrapper_Hy_Bcast(T **bcast_addr, T *start_addr, int msize, int *shmem_transtable, int *bridge_transtable,
                             MPI_Datatype data_type, int root, struct comm_package *comm_handle)
{
    void *data = 0;
    Wrapper_Hy_Bcast(&data, static_cast<void *>(start_addr), msize, shmem_transtable, bridge_transtable, data_type,
                     root, comm_handle);
    *bcast_addr = static_cast<T *>(data);
}

/** @brief Wrapper_Hy_bcast (the other spelling) over elements of type T. */
template <class T>
inline void Wrapper_Hy_bcast(T **bcast_addr, T *start_addr, int msize, int *shmem_transtable, int *bridge_transtable,
                             MPI_Datatype data_type, int root, struct comm_package *comm_handle)
{
    Wrapper_Hy_Bcast<T>(bcast_addr, start_addr, msize, shmem_transtable, bridge_transtable, data_type, root,
                        comm_handle);
}

/** @brief Wrapper_Hy_Allreduce over elements of type T. */
template <class T>
inline void Wrapper_Hy_Allreduce(T *start_addr, T **result_addr, int sharedmem_rank, int msize,
                                 MPI_Datatype data_type, MPI_Op op, struct comm_package *comm_handle, MPI_Win win)
{
    void *result = 0;
    Wrapper_Hy_Allreduce(static_cast<void *>(start_addr), &result, sharedmem_rank, msize, data_type, op,
                         comm_handle, win);
    *result_addr = static_cast<T *>(result);
}
#endif

#endif
