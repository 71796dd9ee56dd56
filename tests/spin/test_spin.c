/* SPDX-License-Identifier: BSD-3-Clause */
/* Spin-synchronized shared windows: 1000 back-to-back post/wait rounds with data checked
 * after each wait (release/acquire, no lost wake-up), posts running ahead of waits,
 * barriers that order everyone's stores, memory and storage shared windows, and the
 * errors. The poll budget comes from MPIX_SPIN_POLLS (the test runs with 0: straight
 * to the futex, and with the default). */
#include <mpix/mpix.h>
#include "mpix_test.h"

static int rank, ranks;

static void run_rounds(MPI_Win win, long long *shared, const char *what)
{
    enum { ROUNDS = 1000 };
    long long *peer;
    MPI_Aint size;
    int unit, wrong = 0;
    MPIX_Win_shared_query(win, 0, &size, &unit, &peer); /* the leader's segment */

    for (int round = 1; round <= ROUNDS; round++) {
        if (rank == 0) {
            peer[0] = round;
            peer[1] = round * 3LL;
            CHECK(MPIX_Win_spin_post(win) == MPI_SUCCESS, "%s: post", what);
        } else {
            CHECK(MPIX_Win_spin_wait(win) == MPI_SUCCESS, "%s: wait", what);
            wrong += peer[0] != round || peer[1] != round * 3LL;
        }
        /* Nobody overwrites before everyone has read this round's value. */
        CHECK(MPIX_Win_spin_barrier(win) == MPI_SUCCESS, "%s: barrier", what);
    }
    CHECK(wrong == 0, "%s: %d rounds saw stale data", what, wrong);

    /* The leader runs ahead: five posts, then five waits return without blocking. */
    if (rank == 0)
        for (int i = 0; i < 5; i++)
            MPIX_Win_spin_post(win);
    else
        for (int i = 0; i < 5; i++)
            CHECK(MPIX_Win_spin_wait(win) == MPI_SUCCESS, "%s: wait after posts ran ahead", what);

    /* Barrier orders every process's stores: each writes its slot, then all read all. */
    for (int round = 0; round < 100; round++) {
        shared[0] = round * 100 + rank;
        MPIX_Win_spin_barrier(win);
        for (int r = 0; r < ranks; r++) {
            long long *theirs;
            MPIX_Win_shared_query(win, r, &size, &unit, &theirs);
            wrong += theirs[0] != round * 100 + r;
        }
        MPIX_Win_spin_barrier(win);
    }
    CHECK(wrong == 0, "%s: %d stores not visible after a barrier", what, wrong);
}

int main(int argc, char **argv)
{
    char dir[256], path[512];
    long long *shared;
    MPI_Win win;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);

    CHECK(MPIX_Win_allocate_shared(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &shared, &win) == MPI_SUCCESS,
          "memory shared window");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    run_rounds(win, shared, "memory window");

    /* Roles are checked, with the rank named. */
    int argument_class, error_class;
    MPIX_Query_error_class(MPIX_ERRKIND_ARGUMENT, &argument_class);
    int rc = rank == 0 ? MPIX_Win_spin_wait(win) : MPIX_Win_spin_post(win);
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == argument_class, "wrong role accepted: %d", rc);
    if (rank != 0) {
        char expected[64];
        snprintf(expected, sizeof expected, "this is rank %d", rank);
        CHECK(strstr(mpix_test_error_string(rc), expected), "'%s'", mpix_test_error_string(rc));
    }
    MPIX_Win_free(&win);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    snprintf(path, sizeof path, "%s/spin-window", dir);
    MPI_Info_set(info, "storage_alloc_filename", path);
    int made = MPIX_Win_allocate_shared(4096, 1, info, MPI_COMM_WORLD, &shared, &win) == MPI_SUCCESS;
    CHECK(made, "storage shared window");
    MPI_Info_free(&info);
    if (made) { /* not one the MPI could make: reported above */
        run_rounds(win, shared, "storage window");
        MPIX_Win_free(&win);
    }

    /* A window that MPIX_Win_allocate_shared did not make has no control block. */
    void *base;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    rc = MPIX_Win_spin_barrier(win);
    CHECK(rc != MPI_SUCCESS && strstr(mpix_test_error_string(rc), "not made by MPIX_Win_allocate_shared"), "'%s'",
          mpix_test_error_string(rc));
    MPI_Win_free(&win);

    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("spin");
}
