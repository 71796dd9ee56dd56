/* SPDX-License-Identifier: BSD-3-Clause */
/* A program with an interval timer firing every 50 us whose handler does not restart
 * system calls (sigaction without SA_RESTART, as profilers and some applications install
 * theirs): every wait and system call mpix makes is interrupted again and again. Each
 * module must still succeed with the right data: storage syncs, spin posts, waits and
 * barriers (futex sleeps with more ranks than cores), hybrid allreduces, zero-copy
 * messages, guarded exchanges. */
#include "mpix_test.h"

#include <signal.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void tick(int signal_number)
{
    (void)signal_number;
    ticks++;
}

static void check_storage(const char *directory, int rank)
{
    char path[256];
    snprintf(path, sizeof path, "%s/interrupted.%d", directory, rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    double *base;
    MPI_Win win;
    int rc = MPIX_Win_allocate(1 << 22, 1, info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    CHECK(rc == MPI_SUCCESS, "storage window: %s", mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        return;
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < (1 << 19); i += 512)
            base[i] = round + i;
        rc = MPIX_Win_sync(win);
        CHECK(rc == MPI_SUCCESS, "sync %d: %s", round, mpix_test_error_string(rc));
    }
    CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "storage window free");
    double on_file = -1;
    CHECK(mpix_test_read_file(path, 512 * sizeof(double), &on_file, sizeof on_file) == 0 && on_file == 49 + 512,
          "file holds %g, expected %d", on_file, 49 + 512);
}

static void check_spin(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank;
    MPI_Comm_rank(node, &node_rank);
    volatile int *shared, *leader;
    MPI_Win win;
    int rc = MPIX_Win_allocate_shared(64, 1, MPI_INFO_NULL, node, &shared, &win);
    CHECK(rc == MPI_SUCCESS, "shared window: %s", mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS) {
        MPI_Aint bytes;
        int unit, wrong = 0;
        MPI_Win_shared_query(win, 0, &bytes, &unit, &leader);
        for (int round = 0; round < 2000; round++) {
            if (node_rank == 0) {
                leader[0] = round;
                rc = MPIX_Win_spin_post(win);
            } else {
                rc = MPIX_Win_spin_wait(win);
                wrong += leader[0] < round;   /* the leader may already have run ahead */
            }
            if (rc == MPI_SUCCESS && round % 100 == 0)
                rc = MPIX_Win_spin_barrier(win);
            if (rc != MPI_SUCCESS)
                break;
        }
        CHECK(rc == MPI_SUCCESS && wrong == 0, "spin: %s, %d stale reads", mpix_test_error_string(rc), wrong);
        CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "shared window free");
    }
    MPI_Comm_free(&node);
}

static void check_hy(int rank, int size)
{
    MPI_Comm hy;
    void *slot, *result;
    MPI_Win win;
    int rc = MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &hy), wrong = 0;
    if (rc == MPI_SUCCESS)
        rc = MPIX_Hy_allreduce_create(hy, 1, MPI_DOUBLE, MPI_SUM, &slot, &result, &win);
    CHECK(rc == MPI_SUCCESS, "hybrid allreduce: %s", mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        return;
    for (int round = 0; round < 2000 && rc == MPI_SUCCESS; round++) {
        double input = rank + round;
        rc = MPIX_Hy_allreduce(&input, win);
        wrong += *(double *)result != size * (size - 1) / 2.0 + (double)size * round;
    }
    CHECK(rc == MPI_SUCCESS && wrong == 0, "allreduce: %s, %d wrong sums", mpix_test_error_string(rc), wrong);
    MPIX_Hy_free(&win);
    MPI_Comm_free(&hy);
}

static void check_pairs(int rank, int size)
{
    int count = 1 << 18, peer = rank ^ 1, wrong = 0, rc = MPI_SUCCESS;
    if (peer >= size)
        return;
    double *sent = calloc(2 * count, sizeof *sent), *got = calloc(2 * count, sizeof *got);
    MPI_Datatype rows;   /* 16 KiB blocks: zero-copy */
    MPI_Type_vector(count / 2048, 2048, 4096, MPI_DOUBLE, &rows);
    MPI_Type_commit(&rows);
    for (int round = 0; round < 200 && rc == MPI_SUCCESS; round++) {
        for (int i = 0; i < 2 * count; i += 4096)
            sent[i] = rank + round;
        if (rank % 2 == 0) {
            rc = MPIX_Send_zcopy(sent, 1, rows, peer, 0, MPI_COMM_WORLD);
            if (rc == MPI_SUCCESS)
                rc = MPIX_Recv_zcopy(got, 1, rows, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            rc = MPIX_Recv_zcopy(got, 1, rows, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = MPIX_Send_zcopy(sent, 1, rows, peer, 0, MPI_COMM_WORLD);
        }
        wrong += got[0] != peer + round;
    }
    CHECK(rc == MPI_SUCCESS && wrong == 0, "zcopy: %s, %d wrong", mpix_test_error_string(rc), wrong);
    for (int round = 0; round < 200 && rc == MPI_SUCCESS; round++) {
        sent[0] = rank * 10 + round;
        rc = MPIX_Sendrecv_guarded(sent, count, MPI_DOUBLE, peer, 1, got, count, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE);
        wrong += got[0] != peer * 10 + round;
    }
    if (rc == MPI_SUCCESS)
        rc = MPIX_Guard_complete_all();
    CHECK(rc == MPI_SUCCESS && wrong == 0, "guard: %s, %d wrong", mpix_test_error_string(rc), wrong);
    MPI_Type_free(&rows);
    free(sent);
    free(got);
}

int main(int argc, char **argv)
{
    int rank, size;
    char directory[64];
    mpix_test_start(&argc, &argv, &rank, &size);
    mpix_test_tempdir(MPI_COMM_WORLD, directory, sizeof directory);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = tick;   /* no SA_RESTART */
    sigaction(SIGALRM, &action, NULL);
    struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &every, NULL);

    check_storage(directory, rank);
    check_spin();
    check_hy(rank, size);
    check_pairs(rank, size);

    setitimer(ITIMER_REAL, &off, NULL);
    CHECK(ticks > 100, "the timer fired %d times", (int)ticks);
    mpix_test_remove_tree(MPI_COMM_WORLD, directory);
    return mpix_test_finish("interrupted");
}
