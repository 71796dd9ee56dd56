/* SPDX-License-Identifier: BSD-3-Clause */
/* Arguments MPI's collectives would reject are rejected by the hybrid calls too, on every
 * rank, with an error through the object's handler: no crash, no hang. */
#include "mpix_test.h"

int main(int argc, char **argv)
{
    int rank, size;
    void *result = NULL;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm hy_comm, node_comm, bridge_comm;
    int node, nodes;
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    EXPECT_ERROR(MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, NULL), "comm create, NULL output");
    EXPECT_ERROR(MPIX_Hy_comm_create(MPI_COMM_NULL, MPI_INFO_NULL, &hy_comm), "comm create, null communicator");
    EXPECT_ERROR(MPIX_Hy_comm_query(MPI_COMM_WORLD, &node_comm, &bridge_comm, &node, &nodes),
                 "query, not a hybrid communicator");
    CHECK(MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &hy_comm) == MPI_SUCCESS, "comm create");
    MPI_Comm_set_errhandler(hy_comm, MPI_ERRORS_RETURN);

    void *slot_for_types = NULL;
    MPI_Datatype uncommitted;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &uncommitted);
    EXPECT_ERROR(MPIX_Hy_allgather_create(hy_comm, 4, MPI_INT, NULL, &win), "allgather, NULL result");
    EXPECT_ERROR(MPIX_Hy_allgather_create(hy_comm, 4, MPI_INT, &result, NULL), "allgather, NULL window");
    EXPECT_ERROR(MPIX_Hy_allgather_create(hy_comm, -1, MPI_INT, &result, &win), "allgather, negative count");
    EXPECT_ERROR(MPIX_Hy_allgather_create(hy_comm, 4, MPI_DATATYPE_NULL, &result, &win), "allgather, null type");
    EXPECT_ERROR(MPIX_Hy_allgather_create(hy_comm, 4, uncommitted, &result, &win), "allgather, uncommitted type");
    EXPECT_ERROR(MPIX_Hy_allgather_create(MPI_COMM_WORLD, 4, MPI_INT, &result, &win),
                 "allgather, not a hybrid communicator");
    /* Derived types whose data lie outside [0, extent) of each element: a double 8 bytes
     * before the element's start, and doubles resized to overlap. Such data would land
     * outside the node buffer of count x extent bytes; a lower bound moved away from
     * data that stay inside is fine. */
    MPI_Datatype before, negative, overlapping, moved_bound;
    int one = 1;
    MPI_Aint minus_eight = -8;
    MPI_Datatype double_type = MPI_DOUBLE;
    MPI_Type_create_struct(1, &one, &minus_eight, &double_type, &before);
    MPI_Type_create_resized(before, -8, 16, &negative);
    MPI_Type_create_resized(MPI_DOUBLE, 0, 4, &overlapping);
    MPI_Type_create_resized(MPI_INT, -4, 8, &moved_bound);
    MPI_Type_commit(&negative);
    MPI_Type_commit(&overlapping);
    MPI_Type_commit(&moved_bound);
    int rc = MPIX_Hy_allgather_create(hy_comm, 1, negative, &result, &win);
    CHECK(rc != MPI_SUCCESS && strstr(mpix_test_error_string(rc), "bytes -8 to 0 of an element whose extent is 16"),
          "allgather, data before the element: '%s'", mpix_test_error_string(rc));
    rc = MPIX_Hy_bcast_create(hy_comm, 3, overlapping, &result, &win);
    CHECK(rc != MPI_SUCCESS && strstr(mpix_test_error_string(rc), "bytes 0 to 8 of an element whose extent is 4"),
          "bcast, overlapping elements: '%s'", mpix_test_error_string(rc));
    EXPECT_ERROR(MPIX_Hy_allreduce_create(hy_comm, 2, negative, MPI_SUM, &slot_for_types, &result, &win),
                 "allreduce, data before the element");
    CHECK(MPIX_Hy_bcast_create(hy_comm, 3, moved_bound, &result, &win) == MPI_SUCCESS, "bcast, lower bound -4");
    MPIX_Hy_free(&win);
    MPI_Type_free(&before);
    MPI_Type_free(&negative);
    MPI_Type_free(&overlapping);
    MPI_Type_free(&moved_bound);
    EXPECT_ERROR(MPIX_Hy_bcast_create(hy_comm, 4, MPI_DATATYPE_NULL, &result, &win), "bcast, null type");
    EXPECT_ERROR(MPIX_Hy_bcast_create(hy_comm, -2, MPI_INT, &result, &win), "bcast, negative count");
    EXPECT_ERROR(MPIX_Hy_bcast_create(hy_comm, 4, MPI_INT, NULL, &win), "bcast, NULL buffer");
    void *slot = NULL;
    EXPECT_ERROR(MPIX_Hy_allreduce_create(hy_comm, 4, MPI_INT, MPI_OP_NULL, &slot, &result, &win),
                 "allreduce, null op");
    EXPECT_ERROR(MPIX_Hy_allreduce_create(hy_comm, 4, MPI_DATATYPE_NULL, MPI_SUM, &slot, &result, &win),
                 "allreduce, null type");
    EXPECT_ERROR(MPIX_Hy_allreduce_create(hy_comm, 4, MPI_INT, MPI_SUM, NULL, &result, &win), "allreduce, NULL slot");
    EXPECT_ERROR(MPIX_Hy_allgather(NULL, MPI_WIN_NULL), "allgather, null window");
    EXPECT_ERROR(MPIX_Hy_bcast(NULL, 0, MPI_WIN_NULL), "bcast, null window");
    EXPECT_ERROR(MPIX_Hy_allreduce(NULL, MPI_WIN_NULL), "allreduce, null window");
    EXPECT_ERROR(MPIX_Hy_free(NULL), "free, NULL");

    /* A root out of range is an error on every rank; the operation stays usable. */
    CHECK(MPIX_Hy_bcast_create(hy_comm, 4, MPI_INT, &result, &win) == MPI_SUCCESS, "bcast create");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int data[4] = { 1, 2, 3, 4 };
    EXPECT_ERROR(MPIX_Hy_bcast(data, size, win), "bcast, root out of range");
    EXPECT_ERROR(MPIX_Hy_bcast(data, -1, win), "bcast, negative root");
    CHECK(MPIX_Hy_bcast(rank == size - 1 ? data : MPI_IN_PLACE, size - 1, win) == MPI_SUCCESS, "bcast after errors");
    CHECK(((int *)result)[3] == 4, "bcast data after errors: %d", ((int *)result)[3]);
    CHECK(MPIX_Hy_free(&win) == MPI_SUCCESS && win == MPI_WIN_NULL, "free");

    MPI_Type_free(&uncommitted);
    MPI_Comm_free(&hy_comm);
    return mpix_test_finish("hy arguments");
}
