/* SPDX-License-Identifier: BSD-3-Clause */
/* Arguments MPI would reject are rejected by the guarded calls too, with an error through
 * the communicator's handler, raised once: no crash, no hang. */
#include "mpix_test.h"

#include <mpix/guard.h>

int main(int argc, char **argv)
{
    int rank, size, data[64] = { 0 }, back[64];
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype uncommitted;
    MPI_Type_vector(4, 2, 4, MPI_INT, &uncommitted);

    EXPECT_CLASS(MPIX_Send_guarded(data, 1, uncommitted, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "send, uncommitted type");
    EXPECT_CLASS(MPIX_Send_guarded(data, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "send, null type");
    EXPECT_CLASS(MPIX_Send_guarded(data, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "send, negative count");
    EXPECT_CLASS(MPIX_Send_guarded(data, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "send, rank out of range");
    EXPECT_CLASS(MPIX_Send_guarded(data, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG, "send, negative tag");
    EXPECT_CLASS(MPIX_Send_guarded(data, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, "send, null communicator");
    EXPECT_CLASS(MPIX_Recv_guarded(data, 1, uncommitted, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE,
                 "recv, uncommitted type");
    EXPECT_CLASS(MPIX_Recv_guarded(data, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE,
                 "recv, null type");
    EXPECT_CLASS(MPIX_Recv_guarded(data, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT,
                 "recv, negative count");
    EXPECT_CLASS(MPIX_Recv_guarded(data, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK,
                 "recv, rank out of range");
    EXPECT_CLASS(MPIX_Recv_guarded(data, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE), MPI_ERR_COMM,
                 "recv, null communicator");
    EXPECT_CLASS(MPIX_Sendrecv_guarded(data, 1, uncommitted, 0, 0, back, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE), MPI_ERR_TYPE, "sendrecv, uncommitted send type");
    EXPECT_CLASS(MPIX_Sendrecv_guarded(data, 1, MPI_INT, 0, 0, back, 1, MPI_INT, size, 0, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE), MPI_ERR_RANK, "sendrecv, source out of range");
    MPI_Comm counting = mpix_test_counting_comm();
    EXPECT_RAISED_ONCE(MPIX_Send_guarded(data, 1, uncommitted, 0, 0, counting), "once: send, uncommitted type");
    EXPECT_RAISED_ONCE(MPIX_Send_guarded(data, 1, MPI_INT, size, 0, counting), "once: send, rank out of range");
    EXPECT_RAISED_ONCE(MPIX_Recv_guarded(data, -1, MPI_INT, 0, 0, counting, MPI_STATUS_IGNORE),
                       "once: recv, negative count");
    EXPECT_RAISED_ONCE(MPIX_Sendrecv_guarded(data, 1, MPI_INT, 0, -3, back, 1, MPI_INT, 0, 0, counting,
                                             MPI_STATUS_IGNORE),
                       "once: sendrecv, negative send tag");
    EXPECT_RAISED_ONCE(MPIX_Sendrecv_guarded(data, 1, MPI_INT, 0, 0, back, 1, MPI_INT, size, 0, counting,
                                             MPI_STATUS_IGNORE),
                       "once: sendrecv, source out of range");
    MPI_Comm_free(&counting);
    EXPECT_ERROR(MPIX_Guard_complete(data, -1), "complete, negative length");
    CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "nothing pending after rejected calls");

    /* Guarded calls still work afterwards: a ring. */
    MPI_Type_commit(&uncommitted);
    if (size > 1) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        for (int i = 0; i < 64; i++)
            data[i] = rank * 100 + i, back[i] = -1;
        CHECK(MPIX_Sendrecv_guarded(data, 1, uncommitted, right, 9, back, 1, uncommitted, left, 9, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "ring after errors");
        CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete");
        CHECK(back[0] == left * 100 && back[5] == left * 100 + 5 && back[2] == -1, "ring data %d %d %d", back[0],
              back[5], back[2]);
    }
    MPI_Type_free(&uncommitted);
    return mpix_test_finish("guard arguments");
}
