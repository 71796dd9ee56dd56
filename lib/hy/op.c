/* What every hybrid collective shares: its window (the node's shared buffer, with the
 * spin control block of MPIX_Win_allocate_shared), its state, element copies, free. */
#include "hy.h"
#include "common/api.h"
#include "common/error.h"
#include "common/keyval.h"

#include <stdlib.h>
#include <string.h>

void mpix_hy_op_release(mpix_hy_op *op)
{
    if (op->node_types) {
        for (int j = 0; j < op->hy->nodes; j++)
            if (op->node_types[j] != MPI_DATATYPE_NULL)
                MPI_Type_free(&op->node_types[j]);
    }
    if (op->send_types && op->send_types[0] != MPI_DATATYPE_NULL)
        MPI_Type_free(&op->send_types[0]);
    free(op->node_types);
    free(op->send_types);
    free(op->counts);
    free(op->displs);
    free(op->pack);
}

static void free_op(mpix_hy_op *op)
{
    mpix_hy_op_release(op);
    free(op);
}

static int delete_op(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win, (void)keyval, (void)extra;
    free_op(value);
    return MPI_SUCCESS;
}

static mpix_keyval op_keyval = MPIX_WIN_KEYVAL_INIT(delete_op);

void mpix_hy_op_describe(mpix_hy_op *op, mpix_hy_state *hy, int kind, int count, MPI_Datatype datatype)
{
    MPI_Aint lower_bound;
    int integers, addresses, datatypes, combiner;
    op->kind = kind;
    op->hy = hy;
    op->count = count;
    op->datatype = datatype;
    MPI_Type_get_extent(datatype, &lower_bound, &op->extent);
    MPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner);
    op->named = combiner == MPI_COMBINER_NAMED;
}

int mpix_hy_op_open(mpix_hy_op *op, MPI_Comm hy_comm, int kind, int count, MPI_Datatype datatype, MPI_Aint bytes,
                    MPI_Win *win)
{
    MPI_Aint size;
    int unit;
    mpix_hy_state *hy = mpix_hy_state_of(hy_comm);

    if (!hy)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "not a communicator from MPIX_Hy_comm_create");
    if (count < 0)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "count %d is negative", count);
    mpix_hy_op_describe(op, hy, kind, count, datatype);
    op->hy_comm = hy_comm;
    int rc = MPIX_Win_allocate_shared(hy->node_rank == 0 ? bytes : 0, 1, MPI_INFO_NULL, hy->node_comm, &op->base, win);
    if (rc == MPI_SUCCESS)
        rc = MPIX_Win_shared_query(*win, 0, &size, &unit, &op->base);
    if (rc == MPI_SUCCESS)
        mpix_hy_place(hy, op->base, bytes);
    if (rc == MPI_SUCCESS)
        rc = mpix_win_attr_set(*win, &op_keyval, op);
    if (rc != MPI_SUCCESS && *win != MPI_WIN_NULL)
        MPIX_Win_free(win);
    return rc;
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
    return MPI_Sendrecv(from, count, op->datatype, 0, 0, to, count, op->datatype, 0, 0, MPI_COMM_SELF,
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
