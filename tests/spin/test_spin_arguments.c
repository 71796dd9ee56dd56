/* SPDX-License-Identifier: BSD-3-Clause */
/* Spin calls on windows they cannot serve, and by the wrong process, are errors through
 * the window's handler: no crash, no hang. */
#include "mpix_test.h"

int main(int argc, char **argv)
{
    int rank, size;
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    EXPECT_ERROR(MPIX_Win_spin_post(MPI_WIN_NULL), "post, null window");
    EXPECT_ERROR(MPIX_Win_spin_wait(MPI_WIN_NULL), "wait, null window");
    EXPECT_ERROR(MPIX_Win_spin_barrier(MPI_WIN_NULL), "barrier, null window");

    /* A window MPIX_Win_allocate_shared did not make. */
    int memory[4];
    MPI_Win plain;
    MPI_Win_create(memory, sizeof memory, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &plain);
    MPI_Win_set_errhandler(plain, MPI_ERRORS_RETURN);
    EXPECT_ERROR(MPIX_Win_spin_post(plain), "post, window not from MPIX_Win_allocate_shared");
    EXPECT_ERROR(MPIX_Win_spin_wait(plain), "wait, window not from MPIX_Win_allocate_shared");
    MPI_Win_free(&plain);

    /* The wrong process: a post by a non-leader, a wait by the leader. */
    MPI_Comm node_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    int node_rank, node_size;
    MPI_Comm_rank(node_comm, &node_rank);
    MPI_Comm_size(node_comm, &node_size);
    void *base;
    MPI_Win win;
    CHECK(MPIX_Win_allocate_shared(64, 1, MPI_INFO_NULL, node_comm, &base, &win) == MPI_SUCCESS, "allocate");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (node_rank == 0)
        EXPECT_ERROR(MPIX_Win_spin_wait(win), "wait by the leader");
    else
        EXPECT_ERROR(MPIX_Win_spin_post(win), "post by a non-leader");
    /* Still usable: one post and its wait. */
    if (node_rank == 0) {
        ((int *)base)[0] = 42;
        CHECK(MPIX_Win_spin_post(win) == MPI_SUCCESS, "post");
    } else {
        CHECK(MPIX_Win_spin_wait(win) == MPI_SUCCESS, "wait");
        MPI_Aint segment_size;
        int unit;
        int *leader;
        MPIX_Win_shared_query(win, 0, &segment_size, &unit, &leader);
        CHECK(leader[0] == 42, "the leader's store after the wait: %d", leader[0]);
    }
    CHECK(MPIX_Win_spin_barrier(win) == MPI_SUCCESS, "barrier");
    MPIX_Win_free(&win);
    MPI_Comm_free(&node_comm);
    return mpix_test_finish("spin arguments");
}
