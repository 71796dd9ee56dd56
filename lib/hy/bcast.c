/* SPDX-License-Identifier: BSD-3-Clause */
/* Hybrid broadcast. On every node one process writes the node's buffer in a call: the
 * root on its node, the leader (receiving over the bridge) on the others. The writer
 * first collects every arrival (nobody still reads the last data), writes, and signals;
 * the others arrive and wait for the signal: one arrival and one signal per call. */
#include "hy.h"
#include "common/api.h"
#include "common/error.h"
#include "spin/control.h"

#include <stdlib.h>

static int bcast_bytes(mpix_hy_op *op, MPI_Aint *bytes)
{
    *bytes = (MPI_Aint)op->count * op->extent;
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Hy_bcast_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, void *buffer, MPI_Win *win)
{
    mpix_hy_op *op = calloc(1, sizeof *op);
    int rc = mpix_hy_op_open(op, hy_comm, MPIX_HY_BCAST, count, datatype, bcast_bytes,
                             mpix_hy_outputs("MPIX_Hy_bcast_create", buffer, "buffer", win, "win"), win);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm(hy_comm, rc);
    op->result = op->base;
    *(void **)buffer = op->result;
    return MPI_SUCCESS;
}

/* The root's node. A root that brings its data in place wrote it before the call (after
 * its node had read the last data, as the contract asks), so it only signals. The
 * node's leader, once the data is there, forwards it to the other nodes. */
static int bcast_on_root_node(mpix_hy_op *op, const void *sendbuf, int root, int root_node)
{
    mpix_hy_state *hy = op->hy;
    int rc;
    if (hy->rank == root) {
        if (sendbuf == MPI_IN_PLACE) {
            rc = mpix_spin_arrive(op->spin);
        } else {
            rc = mpix_spin_collect(op->spin);
            if (rc == MPI_SUCCESS)
                rc = mpix_hy_copy(op, op->result, sendbuf, op->count);
        }
        int signalled = mpix_spin_signal(op->spin); /* before the bridge: the node reads while it travels */
        rc = rc != MPI_SUCCESS ? rc : signalled;
    } else {
        rc = mpix_spin_arrive_and_wait(op->spin);
    }
    if (hy->node_rank == 0 && hy->nodes > 1 && rc == MPI_SUCCESS)
        rc = PMPI_Bcast(op->result, op->count, op->datatype, root_node, hy->bridge_comm);
    return rc;
}

/* Another node: its leader receives over the bridge once its node has stopped reading. */
static int bcast_on_other_node(mpix_hy_op *op, int root_node)
{
    mpix_hy_state *hy = op->hy;
    int rc;
    if (hy->node_rank == 0) {
        rc = mpix_spin_collect(op->spin);
        int received = PMPI_Bcast(op->result, op->count, op->datatype, root_node, hy->bridge_comm);
        int signalled = mpix_spin_signal(op->spin); /* also after a failure: nobody is left waiting */
        rc = rc != MPI_SUCCESS ? rc : received != MPI_SUCCESS ? received : signalled;
    } else {
        rc = mpix_spin_arrive_and_wait(op->spin);
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
    if (hy->node == root_node)
        rc = bcast_on_root_node(op, sendbuf, root, root_node);
    else
        rc = bcast_on_other_node(op, root_node);
    return mpix_raise_win(win, rc);
}
