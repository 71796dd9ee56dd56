/* Hybrid broadcast: the root's node reads the root's data in place; other nodes get it
 * through their leaders; every node is released by a post. */
#include "hy.h"
#include "common/api.h"
#include "common/error.h"
#include "spin/control.h"

#include <stdlib.h>

MPIX_API int MPIX_Hy_bcast_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, void *buffer, MPI_Win *win)
{
    mpix_hy_op *op = calloc(1, sizeof *op);
    MPI_Aint lower_bound, extent;
    if (!op)
        return mpix_raise_comm(hy_comm, MPI_ERR_NO_MEM);
    MPI_Type_get_extent(datatype, &lower_bound, &extent);
    int rc = mpix_hy_op_open(op, hy_comm, MPIX_HY_BCAST, count, datatype, (MPI_Aint)count * extent, win);
    if (rc != MPI_SUCCESS) {
        free(op);
        return mpix_raise_comm(hy_comm, rc);
    }
    op->result = op->base;
    *(void **)buffer = op->result;
    return MPI_SUCCESS;
}

/* The root leads its node: on every node one process writes the buffer (the root, or
 * the leader receiving over the bridge) and then posts; the others only tell it they are
 * done reading the last data (an arrival, no waiting for one another) and wait for the
 * post. A root that brings its data in place writes nothing here and waits for nobody. */
static int bcast_from_leader(mpix_hy_op *op, const void *sendbuf, int root, int root_node, MPI_Win win)
{
    mpix_hy_state *hy = op->hy;
    int rc = MPI_SUCCESS;
    if (hy->node_rank != 0) {
        if ((rc = mpix_spin_arrive(win)) == MPI_SUCCESS)
            rc = MPIX_Win_spin_wait(win);
        return rc;
    }
    int writes = hy->node != root_node || sendbuf != MPI_IN_PLACE;
    if ((rc = mpix_spin_collect(win, writes)) != MPI_SUCCESS)
        return rc;
    if (hy->rank == root) {
        if (sendbuf != MPI_IN_PLACE)
            rc = mpix_hy_copy(op, op->result, sendbuf, op->count);
        MPIX_Win_spin_post(win); /* before the bridge: the node reads while it travels */
        if (hy->nodes > 1 && rc == MPI_SUCCESS)
            rc = MPI_Bcast(op->result, op->count, op->datatype, root_node, hy->bridge_comm);
    } else {
        rc = MPI_Bcast(op->result, op->count, op->datatype, root_node, hy->bridge_comm);
        MPIX_Win_spin_post(win);
    }
    return rc;
}

/* The root is not its node's leader, which alone posts: node barriers around its copy. */
static int bcast_from_follower(mpix_hy_op *op, const void *sendbuf, int root, int root_node, MPI_Win win)
{
    mpix_hy_state *hy = op->hy;
    int rc = MPI_SUCCESS;
    MPIX_Win_spin_barrier(win); /* everyone on the node is done reading the last data */
    if (hy->rank == root && sendbuf != MPI_IN_PLACE)
        rc = mpix_hy_copy(op, op->result, sendbuf, op->count);
    if (hy->node == root_node) {
        MPIX_Win_spin_barrier(win); /* the root's data is visible on its node */
        if (hy->node_rank == 0 && hy->nodes > 1 && rc == MPI_SUCCESS)
            rc = MPI_Bcast(op->result, op->count, op->datatype, root_node, hy->bridge_comm);
    } else if (hy->node_rank == 0) {
        rc = MPI_Bcast(op->result, op->count, op->datatype, root_node, hy->bridge_comm);
        MPIX_Win_spin_post(win);
    } else {
        MPIX_Win_spin_wait(win);
    }
    return rc;
}

MPIX_API int MPIX_Hy_bcast(const void *sendbuf, int root, MPI_Win win)
{
    mpix_hy_op *op;
    int rc = mpix_hy_op_of(win, MPIX_HY_BCAST, "MPIX_Hy_bcast", &op);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_hy_state *hy = op->hy;
    if (root < 0 || root >= hy->size)
        return mpix_raise_win(win, mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Hy_bcast: root %d is not a rank of 0..%d",
                                              root, hy->size - 1));
    int root_node = hy->node_of[root];
    if (hy->members[hy->member_offset[root_node]] == root)
        rc = bcast_from_leader(op, sendbuf, root, root_node, win);
    else
        rc = bcast_from_follower(op, sendbuf, root, root_node, win);
    return mpix_raise_win(win, rc);
}
