/* SPDX-License-Identifier: BSD-3-Clause */
/* Hybrid allgather: processes write their slot of the node's result, leaders exchange
 * node blocks over the bridge, then release their node. */
#include "hy.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"
#include "spin/control.h"

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
    for (int j = 0; op->node_types && op->send_types && j < hy->nodes; j++)
        op->node_types[j] = op->send_types[j] = MPI_DATATYPE_NULL;
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
        rc = PMPI_Type_create_indexed_block(hy->node_sizes[j], op->count, displacements, op->datatype,
                                           &op->node_types[j]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Type_commit(&op->node_types[j]);
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_contiguous(hy->node_size * op->count, op->datatype, &op->send_types[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&op->send_types[0]);
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
        return PMPI_Allgatherv(MPI_IN_PLACE, 0, op->datatype, op->result, op->counts, op->displs, op->datatype,
                              hy->bridge_comm);
    int first = hy->member_offset[hy->node];
    for (int i = 0; i < hy->node_size && rc == MPI_SUCCESS; i++)
        rc = mpix_hy_copy(op, op->pack + (size_t)i * op->count * op->extent,
                          op->result + (size_t)hy->members[first + i] * op->count * op->extent, op->count);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Alltoallw(op->pack, op->counts, op->displs, op->send_types, op->result, op->counts + hy->nodes,
                           op->displs + hy->nodes, op->node_types, hy->bridge_comm);
    return rc;
}

static int allgather_bytes(mpix_hy_op *op, MPI_Aint *bytes)
{
    *bytes = (MPI_Aint)op->hy->size * op->count * op->extent;
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Hy_allgather_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, void *result, MPI_Win *win)
{
    mpix_hy_op *op = calloc(1, sizeof *op);
    int rc = mpix_hy_op_open(op, hy_comm, MPIX_HY_ALLGATHER, count, datatype, allgather_bytes,
                             mpix_hy_outputs("MPIX_Hy_allgather_create", result, "result", win, "win"), win);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm(hy_comm, rc);
    op->result = op->base;
    rc = mpix_agree(hy_comm, mpix_hy_allgather_prepare(op));
    if (rc != MPI_SUCCESS) {
        MPIX_Win_free(win);
        return mpix_raise_comm(hy_comm, rc);
    }
    *(void **)result = op->result;
    return MPI_SUCCESS;
}

/* With data to copy, a first barrier makes sure nobody still reads the last result; in
 * place, the caller wrote its slot after that already. On one node a barrier then says
 * every slot is written; on several, the leader collects the writes, exchanges node
 * blocks and signals. */
MPIX_API int MPIX_Hy_allgather(const void *sendbuf, MPI_Win win)
{
    mpix_hy_op *op;
    int rc = mpix_hy_op_of(win, MPIX_HY_ALLGATHER, "MPIX_Hy_allgather", &op);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_hy_state *hy = op->hy;
    char *mine = op->result + (size_t)hy->rank * op->count * op->extent;

    if (sendbuf != MPI_IN_PLACE) {
        rc = mpix_spin_barrier(op->spin);
        if (rc == MPI_SUCCESS)
            rc = mpix_hy_copy(op, mine, sendbuf, op->count);
    }
    int synced;
    if (hy->nodes == 1) {
        synced = mpix_spin_barrier(op->spin);
    } else if (hy->node_rank == 0) {
        synced = mpix_spin_collect(op->spin);
        if (synced == MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = mpix_hy_allgather_exchange(op);
        int signalled = mpix_spin_signal(op->spin); /* also after a failure: nobody is left waiting */
        synced = synced != MPI_SUCCESS ? synced : signalled;
    } else {
        synced = mpix_spin_arrive_and_wait(op->spin);
    }
    return mpix_raise_win(win, rc != MPI_SUCCESS ? rc : synced);
}
