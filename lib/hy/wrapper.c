/* The paper's Wrapper_* functions (seed 003 §4.1-4.4), on the hybrid communicator and
 * the spin synchronization. The paper's struct comm_package is fixed, so what the layer
 * needs besides it (the hybrid communicator, a small shared window to synchronize on)
 * hangs on its shmem_comm as an attribute. The wrappers return void, as the paper's do:
 * errors go to the communicators' error handlers. */
#include "hy.h"
#include "common/api.h"
#include "common/error.h"
#include "common/keyval.h"

#include <mpix/hy_wrapper.h>
#include <stdlib.h>
#include <string.h>

typedef struct wrapper_state {
    MPI_Comm hy_comm;
    MPI_Win sync_win;   /* a zero-size shared window: its spin barrier is the paper's sync() */
} wrapper_state;

static int delete_wrapper_state(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static mpix_keyval wrapper_keyval = MPIX_COMM_KEYVAL_INIT(delete_wrapper_state);

static wrapper_state *state_of(const struct comm_package *handle)
{
    void *state = NULL;
    mpix_comm_attr_get(handle->shmem_comm, &wrapper_keyval, &state);
    if (!state)
        mpix_raise_comm(handle->shmem_comm, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                                       "Wrapper_*: comm_package not made by "
                                                       "Wrapper_MPI_ShmemBridgeComm_create"));
    return state;
}

/* An operation description over the caller's region (the wrappers own no buffer). */
static void describe(mpix_hy_op *op, const wrapper_state *state, int kind, int count, MPI_Datatype datatype)
{
    memset(op, 0, sizeof *op);
    mpix_hy_op_describe(op, mpix_hy_state_of(state->hy_comm), kind, count, datatype);
}

MPIX_API void Wrapper_MPI_ShmemBridgeComm_create(MPI_Comm p_comm, struct comm_package *comm_handle)
{
    wrapper_state *state = calloc(1, sizeof *state);
    int node, nodes;
    void *unused;
    if (!state || MPIX_Hy_comm_create(p_comm, MPI_INFO_NULL, &state->hy_comm) != MPI_SUCCESS) {
        free(state);
        mpix_raise_comm(p_comm, MPI_ERR_NO_MEM);
        return;
    }
    MPIX_Hy_comm_query(state->hy_comm, &comm_handle->shmem_comm, &comm_handle->bridge_comm, &node, &nodes);
    MPI_Comm_size(comm_handle->shmem_comm, &comm_handle->shmemcomm_size);
    comm_handle->bridgecomm_size = nodes;
    MPIX_Win_allocate_shared(0, 1, MPI_INFO_NULL, comm_handle->shmem_comm, &unused, &state->sync_win);
    mpix_comm_attr_set(comm_handle->shmem_comm, &wrapper_keyval, state);
}

MPIX_API void Wrapper_MPI_Sharedmemory_alloc(int msize, int bsize, int flag, struct comm_package *comm_handle,
                                             void **shmem_addr, MPI_Win *winPtr)
{
    int node_rank, unit;
    MPI_Aint size;
    long long elements = flag == 0 ? (long long)(comm_handle->shmemcomm_size + 2) * msize + 1
                                   : (long long)msize * flag;
    MPI_Comm_rank(comm_handle->shmem_comm, &node_rank);
    MPIX_Win_allocate_shared(node_rank == 0 ? (MPI_Aint)(elements * bsize) : 0, bsize, MPI_INFO_NULL,
                             comm_handle->shmem_comm, shmem_addr, winPtr);
    MPIX_Win_shared_query(*winPtr, 0, &size, &unit, shmem_addr);
    wrapper_state *state = state_of(comm_handle);
    if (state)
        mpix_hy_place(mpix_hy_state_of(state->hy_comm), *shmem_addr, node_rank == 0 ? (MPI_Aint)(elements * bsize) : 0);
}

MPIX_API void Wrapper_Get_localpointer(void *start_addr, int rank, int dsize, void **local_addr)
{
    *local_addr = (char *)start_addr + (size_t)rank * dsize;
}

MPIX_API void Wrapper_ShmemcommSizeset_gather(const struct comm_package *comm_handle, int **sharedmem_sizeset)
{
    wrapper_state *state = state_of(comm_handle);
    *sharedmem_sizeset = NULL;
    if (!state)
        return;
    mpix_hy_state *hy = mpix_hy_state_of(state->hy_comm);
    *sharedmem_sizeset = malloc(hy->nodes * sizeof **sharedmem_sizeset);
    memcpy(*sharedmem_sizeset, hy->node_sizes, hy->nodes * sizeof **sharedmem_sizeset);
}

MPIX_API void Wrapper_Create_Allgather_param(int msize, const struct comm_package *comm_handle,
                                             int *sharedmem_sizeset, struct allgather_param *param_handle)
{
    int nodes = comm_handle->bridgecomm_size;
    param_handle->recvcounts = malloc(nodes * sizeof *param_handle->recvcounts);
    param_handle->displs = malloc(nodes * sizeof *param_handle->displs);
    for (int i = 0, displacement = 0; i < nodes; i++) {
        param_handle->recvcounts[i] = msize * sharedmem_sizeset[i];
        param_handle->displs[i] = displacement;
        displacement += param_handle->recvcounts[i];
    }
}

MPIX_API void Wrapper_Hy_Allgather(void *start_addr, void *local_addr, int msize, MPI_Datatype data_type,
                                   struct allgather_param *param_handle, struct comm_package *comm_handle)
{
    wrapper_state *state = state_of(comm_handle);
    (void)local_addr, (void)param_handle; /* the slot is written in place; counts come from the tables */
    if (!state)
        return;
    mpix_hy_op op;
    describe(&op, state, MPIX_HY_ALLGATHER, msize, data_type);
    op.result = start_addr;
    MPIX_Win_spin_barrier(state->sync_win); /* every slot of the node is written */
    int rc = MPI_SUCCESS;
    if (op.hy->node_rank == 0 && op.hy->nodes > 1) {
        rc = mpix_hy_allgather_prepare(&op);
        if (rc == MPI_SUCCESS)
            rc = mpix_hy_allgather_exchange(&op);
        mpix_hy_op_release(&op);
    }
    MPIX_Win_spin_barrier(state->sync_win); /* the leaders' exchange is done */
    mpix_raise_comm(comm_handle->shmem_comm, rc);
}

MPIX_API void Wrapper_Get_transtable(MPI_Comm p_comm, const struct comm_package *comm_handle, int **shmem_transtable,
                                     int **bridge_transtable)
{
    wrapper_state *state = state_of(comm_handle);
    (void)p_comm;
    if (!state)
        return;
    mpix_hy_state *hy = mpix_hy_state_of(state->hy_comm);
    for (int node = 0; node < hy->nodes; node++)
        for (int i = 0; i < hy->node_sizes[node]; i++) {
            int rank = hy->members[hy->member_offset[node] + i];
            (*shmem_transtable)[rank] = i;
            (*bridge_transtable)[rank] = node;
        }
}

MPIX_API void Wrapper_Hy_Bcast(void **bcast_addr, void *start_addr, int msize, int *shmem_transtable,
                               int *bridge_transtable, MPI_Datatype data_type, int root,
                               struct comm_package *comm_handle)
{
    wrapper_state *state = state_of(comm_handle);
    (void)shmem_transtable;
    if (!state)
        return;
    int rc = MPI_SUCCESS;
    MPIX_Win_spin_barrier(state->sync_win); /* the root's data is written */
    if (comm_handle->bridge_comm != MPI_COMM_NULL && comm_handle->bridgecomm_size > 1)
        rc = MPI_Bcast(start_addr, msize, data_type, bridge_transtable[root], comm_handle->bridge_comm);
    MPIX_Win_spin_barrier(state->sync_win); /* it arrived on every node */
    *bcast_addr = start_addr;
    mpix_raise_comm(comm_handle->shmem_comm, rc);
}

MPIX_API void Wrapper_Hy_Allreduce(void *start_addr, void **result_addr, int sharedmem_rank, int msize,
                                   MPI_Datatype data_type, MPI_Op op, struct comm_package *comm_handle, MPI_Win win)
{
    wrapper_state *state = state_of(comm_handle);
    (void)sharedmem_rank, (void)win;
    if (!state)
        return;
    mpix_hy_op reduction;
    describe(&reduction, state, MPIX_HY_ALLREDUCE, msize, data_type);
    reduction.op = op;
    size_t vector = (size_t)msize * reduction.extent;
    char *node_reduced = (char *)start_addr + comm_handle->shmemcomm_size * vector, *global = node_reduced + vector;

    MPIX_Win_spin_barrier(state->sync_win); /* every input slot is written */
    int rc = mpix_hy_reduce_slice(&reduction, start_addr, vector, node_reduced);
    MPIX_Win_spin_barrier(state->sync_win); /* the node's vector is complete */
    if (comm_handle->bridgecomm_size > 1) {
        if (comm_handle->bridge_comm != MPI_COMM_NULL && rc == MPI_SUCCESS)
            rc = MPI_Allreduce(node_reduced, global, msize, data_type, op, comm_handle->bridge_comm);
        MPIX_Win_spin_barrier(state->sync_win); /* the global vector is there */
    }
    *result_addr = comm_handle->bridgecomm_size > 1 ? global : node_reduced;
    mpix_raise_comm(comm_handle->shmem_comm, rc);
}

MPIX_API void Wrapper_ShmemcommSizeset_free(struct comm_package *comm_handle, int *sharedmem_sizeset)
{
    (void)comm_handle;
    free(sharedmem_sizeset);
}

MPIX_API void Wrapper_Param_free(struct comm_package *comm_handle, struct allgather_param *param_handle)
{
    (void)comm_handle;
    free(param_handle->recvcounts);
    free(param_handle->displs);
    param_handle->recvcounts = param_handle->displs = NULL;
}

MPIX_API void Wrapper_Comm_free(struct comm_package *comm_handle)
{
    wrapper_state *state = state_of(comm_handle);
    if (!state)
        return;
    MPI_Comm hy_comm = state->hy_comm;
    MPIX_Win_free(&state->sync_win);
    MPI_Comm_free(&hy_comm); /* frees shmem_comm and bridge_comm, and with them this state */
    comm_handle->shmem_comm = comm_handle->bridge_comm = MPI_COMM_NULL;
}
