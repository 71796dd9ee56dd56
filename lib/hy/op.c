/* SPDX-License-Identifier: BSD-3-Clause */
/* What every hybrid collective shares: its window (the node's shared buffer, with the
 * spin control block of MPIX_Win_allocate_shared), its state, element copies, free. */
#include "hy.h"
#include "common/arguments.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"
#include "common/keyval.h"
#include "common/self_state.h"

#include <stdlib.h>
#include <string.h>

int mpix_hy_op_release(mpix_hy_op *op)
{
    int rc = MPI_SUCCESS, freed;
    if (op->node_types) {
        for (int j = 0; j < op->hy->nodes; j++)
            if (op->node_types[j] != MPI_DATATYPE_NULL && (freed = PMPI_Type_free(&op->node_types[j])) != MPI_SUCCESS)
                rc = freed;
    }
    if (op->send_types && op->send_types[0] != MPI_DATATYPE_NULL &&
        (freed = PMPI_Type_free(&op->send_types[0])) != MPI_SUCCESS)
        rc = freed;
    free(op->node_types);
    free(op->send_types);
    free(op->counts);
    free(op->displs);
    free(op->pack);
    free(op->node_sum);
    op->node_sum = NULL;
    op->node_types = op->send_types = NULL;
    op->counts = op->displs = NULL;
    op->pack = NULL;
    return rc;
}

static int free_op(mpix_hy_op *op)
{
    int rc = mpix_hy_op_release(op);
    free(op);
    return rc;
}

static int delete_op(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    return free_op(value);
}

static mpix_keyval op_keyval = MPIX_WIN_KEYVAL_INIT(delete_op);

int mpix_hy_op_describe(mpix_hy_op *op, mpix_hy_state *hy, int kind, int count, MPI_Datatype datatype)
{
    MPI_Aint lower_bound;
    int integers, addresses, datatypes, combiner, rc;
    op->kind = kind;
    op->hy = hy;
    op->exchange = hy->exchange;
    op->count = count;
    op->datatype = datatype;
    if (count < 0)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "count %d is negative", count);
    if (datatype == MPI_DATATYPE_NULL)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "the datatype is MPI_DATATYPE_NULL");
    if ((rc = mpix_check_datatype(datatype, hy->node_comm)) != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Type_get_extent(datatype, &lower_bound, &op->extent)) != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner)) != MPI_SUCCESS)
        return rc;
    op->named = combiner == MPI_COMBINER_NAMED;
    /* Node buffers hold count x extent bytes a process: a derived datatype whose data
     * reach outside [0, extent) (a negative displacement, elements that overlap) would
     * be written outside them. */
    MPI_Aint true_lower_bound, true_extent;
    if (op->named || count == 0)
        return MPI_SUCCESS;
    if ((rc = PMPI_Type_get_true_extent(datatype, &true_lower_bound, &true_extent)) != MPI_SUCCESS)
        return rc;
    if (op->extent <= 0 || true_lower_bound < 0 || true_lower_bound + true_extent > op->extent)
        return mpix_error(MPIX_ERRKIND_ARGUMENT,
                          "the datatype's data lie at bytes %td to %td of an element whose extent is %td: hybrid "
                          "collectives need them within [0, extent)",
                          true_lower_bound, true_lower_bound + true_extent, op->extent);
    return MPI_SUCCESS;
}

int mpix_hy_op_open(mpix_hy_op *op, MPI_Comm hy_comm, int kind, int count, MPI_Datatype datatype,
                    mpix_hy_bytes_fn bytes_of, int argument_code, MPI_Win *win_out)
{
    MPI_Aint bytes = 0;
    int rc = argument_code, attached = 0;
    mpix_hy_state *hy = mpix_hy_state_of(hy_comm);
    MPI_Win window = MPI_WIN_NULL, *win = &window;

    if (!hy) { /* no hybrid communicator on any process: nothing to agree with */
        free(op);
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "not a communicator from MPIX_Hy_comm_create");
    }
    if (rc == MPI_SUCCESS && !op)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = mpix_hy_op_describe(op, hy, kind, count, datatype);
    if (rc == MPI_SUCCESS)
        rc = bytes_of(op, &bytes);
    /* One bad argument on one process is an error on all, never a hang in the allocation. */
    if ((rc = mpix_agree(hy_comm, rc)) != MPI_SUCCESS) {
        if (op)
            free_op(op);
        return rc;
    }
    op->hy_comm = hy_comm; /* op is not NULL on any process here: it would have failed the agreement */
    rc = mpix_hy_node_buffer(hy, bytes, 1, &op->base, win);
    if (rc == MPI_SUCCESS && !(op->spin = mpix_spin_state_of(*win)))
        rc = MPI_ERR_INTERN;
    if (rc == MPI_SUCCESS)
        mpix_hy_place(hy, op->base, bytes);
    if (rc == MPI_SUCCESS)
        attached = (rc = mpix_win_attr_set(*win, &op_keyval, op)) == MPI_SUCCESS;
    if ((rc = mpix_agree(hy_comm, rc)) != MPI_SUCCESS) {
        if (*win != MPI_WIN_NULL)
            MPIX_Win_free(win); /* frees @op where it hangs on the window */
        if (!attached)
            free_op(op);
        return rc;
    }
    *win_out = window;
    return MPI_SUCCESS;
}

int mpix_hy_outputs(const char *call, const void *first, const char *first_name, const void *second,
                    const char *second_name)
{
    if (!first || !second)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: %s is NULL", call, !first ? first_name : second_name);
    return MPI_SUCCESS;
}

int mpix_hy_op_of(MPI_Win win, int kind, const char *call, mpix_hy_op **op)
{
    void *state = NULL;
    static const char *const names[] = { "MPIX_Hy_allgather_create", "MPIX_Hy_bcast_create",
                                         "MPIX_Hy_allreduce_create" };
    if (win != MPI_WIN_NULL)
        mpix_win_attr_get(win, &op_keyval, &state);
    *op = state;
    if (!state || (*op)->kind != kind)
        return mpix_raise_win(win, mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: the window was not made by %s", call,
                                              names[kind]));
    return MPI_SUCCESS;
}

int mpix_hy_copy(const mpix_hy_op *op, void *to, const void *from, int count)
{
    if (count == 0 || to == from)
        return MPI_SUCCESS;
    if (op->named) {
        memcpy(to, from, (size_t)count * op->extent);
        return MPI_SUCCESS;
    }
    MPI_Comm self;
    int rc = mpix_self_comm(&self);
    return rc != MPI_SUCCESS ? rc
                             : PMPI_Sendrecv(from, count, op->datatype, 0, 0, to, count, op->datatype, 0, 0, self,
                                             MPI_STATUS_IGNORE);
}

MPIX_API int MPIX_Hy_free(MPI_Win *win)
{
    void *state = NULL;
    if (win && *win != MPI_WIN_NULL)
        mpix_win_attr_get(*win, &op_keyval, &state);
    if (!state)
        return mpix_raise_win(win ? *win : MPI_WIN_NULL,
                              mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Hy_free: not a hybrid collective's window"));
    return MPIX_Win_free(win);
}
