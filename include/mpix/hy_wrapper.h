/**
 * @file mpix/hy_wrapper.h
 * @brief The paper-compatible layer of the hybrid collectives (seed 003, §4.1-4.4), in C.
 *
 * Code written against the paper's wrappers ports by deleting the `<double>` template
 * arguments: `void *` stands where the paper has `myType *`. The layer is built on
 * MPIX_Hy_comm_create (so `MPIX_HY_SPLIT` applies, and any rank placement works) and on
 * the spin synchronization of mpix/spin.h.
 *
 * @par Layout contract (SPEC.md)
 * Wrapper_MPI_Sharedmemory_alloc with `flag == 0` gives every process of a node the same
 * region of `(shmemcomm_size + 2) * msize + 1` elements of `bsize` bytes: slot i (at
 * `i * msize`) is the input of node-local rank i; `shmemcomm_size * msize` holds the
 * node-reduced vector (and, for bcast, the data); `(shmemcomm_size + 1) * msize` the
 * globally reduced vector on multi-node runs. With `flag = nprocs` the region holds
 * `msize * nprocs` elements and a process's slot is at its rank in the parent
 * communicator.
 *
 * @par Synchronization
 * As in the paper, a process writes its slot before the collective call and reads the
 * result after it; writing the next input must wait until every process of the node
 * has read the last result (the paper's codes call a barrier there).
 */
#ifndef MPIX_HY_WRAPPER_H
#define MPIX_HY_WRAPPER_H

#include <mpi.h>

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
 */
void Wrapper_MPI_ShmemBridgeComm_create(MPI_Comm p_comm, struct comm_package *comm_handle);

/**
 * @brief Allocate the node's shared region (collective over the node).
 * @param msize elements per process
 * @param bsize bytes per element
 * @param flag  0: the allreduce/bcast layout; nprocs: the allgather layout (see the contract)
 * @param comm_handle from Wrapper_MPI_ShmemBridgeComm_create
 * @param[out] shmem_addr the region's start, the same memory on every process of the node
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
 *        Wrapper_ShmemcommSizeset_free).
 * @param comm_handle the split
 * @param[out] sharedmem_sizeset bridgecomm_size node sizes
 */
void Wrapper_ShmemcommSizeset_gather(const struct comm_package *comm_handle, int **sharedmem_sizeset);

/**
 * @brief Counts and displacements for Wrapper_Hy_Allgather (one-off; free with Wrapper_Param_free).
 * @param msize elements per process
 * @param comm_handle the split
 * @param sharedmem_sizeset from Wrapper_ShmemcommSizeset_gather
 * @param[out] param_handle the arrays
 */
void Wrapper_Create_Allgather_param(int msize, const struct comm_package *comm_handle, int *sharedmem_sizeset,
                                    struct allgather_param *param_handle);

/**
 * @brief Allgather in the nprocs layout: each process wrote its slot (local_addr); on
 *        return the node's region holds every process's slot in parent-rank order.
 * @param start_addr region from Wrapper_MPI_Sharedmemory_alloc(flag = nprocs)
 * @param local_addr this process's slot (unused: it is already written in place)
 * @param msize elements per process
 * @param data_type element type
 * @param param_handle from Wrapper_Create_Allgather_param
 * @param comm_handle the split
 */
void Wrapper_Hy_Allgather(void *start_addr, void *local_addr, int msize, MPI_Datatype data_type,
                          struct allgather_param *param_handle, struct comm_package *comm_handle);

/**
 * @brief Rank translation: for each rank r of @p p_comm, its rank in its node
 *        (shmem_transtable) and its node's leader's rank in the bridge (bridge_transtable).
 * @param p_comm the parent communicator given to Wrapper_MPI_ShmemBridgeComm_create
 * @param comm_handle the split
 * @param[in,out] shmem_transtable  `*shmem_transtable`: caller-allocated, size of p_comm
 * @param[in,out] bridge_transtable `*bridge_transtable`: caller-allocated, size of p_comm
 */
void Wrapper_Get_transtable(MPI_Comm p_comm, const struct comm_package *comm_handle, int **shmem_transtable,
                            int **bridge_transtable);

/**
 * @brief Broadcast: the root wrote @p msize elements at @p start_addr (its node's region);
 *        on return `*bcast_addr` points to them on every process.
 * @param[out] bcast_addr where every process reads the data
 * @param start_addr the node's region (flag 0 layout or any region of msize elements)
 * @param msize elements
 * @param shmem_transtable, bridge_transtable from Wrapper_Get_transtable
 * @param data_type element type
 * @param root rank in the parent communicator
 * @param comm_handle the split
 */
void Wrapper_Hy_Bcast(void **bcast_addr, void *start_addr, int msize, int *shmem_transtable,
                      int *bridge_transtable, MPI_Datatype data_type, int root, struct comm_package *comm_handle);

/**
 * @brief Allreduce in the flag 0 layout: each process wrote its slot (node rank x msize);
 *        on return `*result_addr` points to the reduced vector, readable by every process.
 * @param start_addr region from Wrapper_MPI_Sharedmemory_alloc(flag = 0)
 * @param[out] result_addr the node-reduced vector on one node, the globally reduced one otherwise
 * @param sharedmem_rank this process's node rank
 * @param msize elements
 * @param data_type element type
 * @param op reduction (commutative)
 * @param comm_handle the split
 * @param win the region's window
 */
void Wrapper_Hy_Allreduce(void *start_addr, void **result_addr, int sharedmem_rank, int msize,
                          MPI_Datatype data_type, MPI_Op op, struct comm_package *comm_handle, MPI_Win win);

/** @brief Free what Wrapper_ShmemcommSizeset_gather returned. @param comm_handle the split @param sharedmem_sizeset the array */
void Wrapper_ShmemcommSizeset_free(struct comm_package *comm_handle, int *sharedmem_sizeset);

/** @brief Free what Wrapper_Create_Allgather_param made. @param comm_handle the split @param param_handle the arrays */
void Wrapper_Param_free(struct comm_package *comm_handle, struct allgather_param *param_handle);

/** @brief Free the split (collective over the parent). @param comm_handle the split; its communicators become MPI_COMM_NULL */
void Wrapper_Comm_free(struct comm_package *comm_handle);

#ifdef __cplusplus
}
#endif
#endif
