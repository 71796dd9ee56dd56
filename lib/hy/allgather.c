/* Hybrid allgather: processes write their slot of the node's result, leaders exchange
 * node blocks over the bridge, then release their node. */
#include "hy.h"
#include "common/api.h"
#include "common/error.h"

#include <stdlib.h>

/* Non-block placement: node j's ranks are scattered in the result; describe them with
 * one datatype per node, and pack our node's slots to send them contiguously. */
static int prepare_scattered_nodes(mpix_hy_op *op)
{
    mpix_hy_state *hy = op->hy;
    op->node_types = malloc(hy->nodes * sizeof *op->node_types);
    op->send_types = malloc(hy->nodes * sizeof *op->send_types);
    op->counts = malloc(2 * hy->nodes * sizeof *op->counts);
    op->displs = calloc(2 * hy->nodes, sizeof *op->displs);
    op->pack = malloc((size_t)hy->node_size * op->count * op->extent + 1);
    int *displacements = malloc(hy->size * sizeof *displacements);
    if (!op->node_types || !op->send_types || !op->counts || !op->displs || !op->pack || !displacements) {
        free(displacements);
        return MPI_ERR_NO_MEM;
    }
    int rc = MPI_SUCCESS;
    for (int j = 0; j < hy->nodes && rc == MPI_SUCCESS; j++) {
        int first = hy->member_offset[j];
        for (int i = 0; i < hy->node_sizes[j]; i++)
            displacements[i] = hy->members[first + i] * op->count;
        rc = MPI_Type_create_indexed_block(hy->node_sizes[j], op->count, displacements, op->datatype,
                                           &op->node_types[j]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&op->node_types[j]);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_contiguous(hy->node_size * op->count, op->datatype, &op->send_types[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&op->send_types[0]);
    for (int j = 1; j < hy->nodes; j++)
        op->send_types[j] = op->send_types[0];
    /* counts[0..nodes): send counts; counts[nodes..2 nodes): receive counts. */
    for (int j = 0; j < hy->nodes; j++) {
        op->counts[j] = j == hy->node ? 0 : 1;
        op->counts[hy->nodes + j] = j == hy->node ? 0 : 1;
    }
    free(displacements);
    return rc;
}

static int prepare_block_nodes(mpix_hy_op *op)
{
    mpix_hy_state *hy = op->hy;
    op->counts = malloc(hy->nodes * sizeof *op->counts);
    op->displs = malloc(hy->nodes * sizeof *op->displs);
    if (!op->counts || !op->displs)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < hy->nodes; j++) {
        op->counts[j] = hy->node_sizes[j] * op->count;
        op->displs[j] = hy->member_offset[j] * op->count;
    }
    return MPI_SUCCESS;
}

int mpix_hy_allgather_prepare(mpix_hy_op *op)
{
    if (op->hy->node_rank != 0 || op->hy->nodes == 1)
        return MPI_SUCCESS;
    return op->hy->block ? prepare_block_nodes(op) : prepare_scattered_nodes(op);
}

int mpix_hy_allgather_exchange(mpix_hy_op *op)
{
    mpix_hy_state *hy = op->hy;
    int rc = MPI_SUCCESS;
    if (hy->block)
        return MPI_Allgatherv(MPI_IN_PLACE, 0, op->datatype, op->result, op->counts, op->displs, op->datatype,
                              hy->bridge_comm);
    int first = hy->member_offset[hy->node];
    for (int i = 0; i < hy->node_size && rc == MPI_SUCCESS; i++)
        rc = mpix_hy_copy(op, op->pack + (size_t)i * op->count * op->extent,
                          op->result + (size_t)hy->members[first + i] * op->count * op->extent, op->count);
    if (rc == MPI_SUCCESS)
        rc = MPI_Alltoallw(op->pack, op->counts, op->displs, op->send_types, op->result, op->counts + hy->nodes,
                           op->displs + hy->nodes, op->node_types, hy->bridge_comm);
    return rc;
}

MPIX_API int MPIX_Hy_allgather_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, void *result, MPI_Win *win)
{
    mpix_hy_op *op = calloc(1, sizeof *op);
    int size, rc;
    MPI_Comm_size(hy_comm, &size);
    if (!op)
        return mpix_raise_comm(hy_comm, MPI_ERR_NO_MEM);
    MPI_Aint lower_bound, extent;
    MPI_Type_get_extent(datatype, &lower_bound, &extent);
    rc = mpix_hy_op_open(op, hy_comm, MPIX_HY_ALLGATHER, count, datatype, (MPI_Aint)size * count * extent, win);
    if (rc != MPI_SUCCESS) {
        free(op);
        return mpix_raise_comm(hy_comm, rc);
    }
    op->result = op->base;
    rc = mpix_hy_allgather_prepare(op);
    if (rc != MPI_SUCCESS) {
        MPIX_Win_free(win);
        return mpix_raise_comm(hy_comm, rc);
    }
    *(void **)result = op->result;
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Hy_allgather(const void *sendbuf, MPI_Win win)
{
    mpix_hy_op *op;
    int rc = mpix_hy_op_of(win, MPIX_HY_ALLGATHER, "MPIX_Hy_allgather", &op);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_hy_state *hy = op->hy;
    char *mine = op->result + (size_t)hy->rank * op->count * op->extent;

    MPIX_Win_spin_barrier(win); /* everyone on the node is done reading the last result */
    if (sendbuf != MPI_IN_PLACE)
        rc = mpix_hy_copy(op, mine, sendbuf, op->count);
    MPIX_Win_spin_barrier(win); /* every slot of this node is written */
    if (hy->nodes == 1 || rc != MPI_SUCCESS)
        return mpix_raise_win(win, rc);
    if (hy->node_rank == 0) {
        rc = mpix_hy_allgather_exchange(op);
        MPIX_Win_spin_post(win);
    } else {
        MPIX_Win_spin_wait(win);
    }
    return mpix_raise_win(win, rc);
}
