/* Hybrid allreduce: inputs in node-rank slots, each process of the node reduces a slice
 * of the vector over all slots, leaders combine nodes over the bridge, then release
 * their node. */
#include "hy.h"
#include "common/api.h"
#include "common/error.h"

#include <stdlib.h>

MPIX_API int MPIX_Hy_allreduce_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, MPI_Op reduction,
                                      void *slot, void *result, MPI_Win *win)
{
    mpix_hy_op *op = calloc(1, sizeof *op);
    mpix_hy_state *hy = mpix_hy_state_of(hy_comm);
    MPI_Aint lower_bound, extent;
    if (!op)
        return mpix_raise_comm(hy_comm, MPI_ERR_NO_MEM);
    MPI_Type_get_extent(datatype, &lower_bound, &extent);
    int node_size = hy ? hy->node_size : 1;
    /* The node's buffer: node_size input slots, then the reduced vector. */
    MPI_Aint vector = (MPI_Aint)count * extent;
    int rc = mpix_hy_op_open(op, hy_comm, MPIX_HY_ALLREDUCE, count, datatype, vector * (node_size + 1), win);
    if (rc != MPI_SUCCESS) {
        free(op);
        return mpix_raise_comm(hy_comm, rc);
    }
    op->op = reduction;
    MPI_Op_commutative(reduction, &op->commutative);
    op->slots = op->base;
    op->result = op->base + vector * node_size;
    *(void **)slot = op->slots + vector * op->hy->node_rank;
    *(void **)result = op->result;
    return MPI_SUCCESS;
}

/* Non-commutative operations need MPI's rank order: MPI_Allreduce serves them. */
static int allreduce_by_mpi(mpix_hy_op *op, const void *sendbuf, MPI_Win win)
{
    mpix_hy_state *hy = op->hy;
    char *mine = op->slots + (size_t)hy->node_rank * op->count * op->extent;
    char *scratch = malloc((size_t)op->count * op->extent + 1);
    int rc;
    MPIX_Win_spin_barrier(win);
    rc = MPI_Allreduce(sendbuf == MPI_IN_PLACE ? mine : sendbuf, scratch, op->count, op->datatype, op->op,
                       op->hy_comm);
    MPIX_Win_spin_barrier(win); /* nobody reads the old result any more */
    if (hy->node_rank == 0 && rc == MPI_SUCCESS)
        rc = mpix_hy_copy(op, op->result, scratch, op->count);
    MPIX_Win_spin_barrier(win);
    free(scratch);
    return mpix_raise_win(win, rc);
}

MPIX_API int MPIX_Hy_allreduce(const void *sendbuf, MPI_Win win)
{
    mpix_hy_op *op;
    int rc = mpix_hy_op_of(win, MPIX_HY_ALLREDUCE, "MPIX_Hy_allreduce", &op);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!op->commutative)
        return allreduce_by_mpi(op, sendbuf, win);
    mpix_hy_state *hy = op->hy;
    size_t element = (size_t)op->extent, vector = (size_t)op->count * element;

    MPIX_Win_spin_barrier(win); /* everyone on the node is done reading the last result */
    if (sendbuf != MPI_IN_PLACE)
        rc = mpix_hy_copy(op, op->slots + hy->node_rank * vector, sendbuf, op->count);
    MPIX_Win_spin_barrier(win); /* every input of this node is written */

    /* This process's slice of the vector, reduced over every input slot. */
    int first = (int)((long long)op->count * hy->node_rank / hy->node_size);
    int last = (int)((long long)op->count * (hy->node_rank + 1) / hy->node_size);
    char *slice = op->result + first * element;
    if (last > first && rc == MPI_SUCCESS) {
        rc = mpix_hy_copy(op, slice, op->slots + first * element, last - first);
        for (int q = 1; q < hy->node_size && rc == MPI_SUCCESS; q++)
            rc = MPI_Reduce_local(op->slots + q * vector + first * element, slice, last - first, op->datatype, op->op);
    }
    MPIX_Win_spin_barrier(win); /* the node's vector is complete */
    if (hy->nodes == 1)
        return mpix_raise_win(win, rc);
    if (hy->node_rank == 0) {
        if (rc == MPI_SUCCESS)
            rc = MPI_Allreduce(MPI_IN_PLACE, op->result, op->count, op->datatype, op->op, hy->bridge_comm);
        MPIX_Win_spin_post(win);
    } else {
        MPIX_Win_spin_wait(win);
    }
    return mpix_raise_win(win, rc);
}
