/* SPDX-License-Identifier: BSD-3-Clause */
/* A program of MPI-4 sessions alone: no MPI_Init, so no MPI_COMM_WORLD and no
 * MPI_COMM_SELF; its communicator is made from the session's "mpi://WORLD" process set.
 * Every module must work on it as on MPI_COMM_WORLD: zcopy's blocking and nonblocking
 * calls (data through MPI), the hybrid collectives (a derived datatype too, which the
 * node copies through MPI), a storage window whose data reach its file, spin signalling
 * on a shared window, a guarded exchange, and an argument error returned through the
 * communicator's handler; a child it forks must exit without touching MPI, and the
 * process must then end cleanly. */
#include "mpix_test.h"

#include <sys/wait.h>

enum { ROWS = 64, COLUMNS = 512, ROUNDS = 5 };

static double value_of(int rank, int at, int round) { return rank * 1e6 + at + round * 0.25; }

static void check_zcopy(MPI_Comm comm, int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double *sent = malloc(ROWS * COLUMNS * 2 * sizeof *sent), *got = malloc(ROWS * COLUMNS * 2 * sizeof *got);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Datatype rows;   /* built and freed every round, as applications do */
        MPI_Type_vector(ROWS, COLUMNS, 2 * COLUMNS, MPI_DOUBLE, &rows);
        MPI_Type_commit(&rows);
        for (int at = 0; at < ROWS * COLUMNS * 2; at++)
            sent[at] = value_of(rank, at, round), got[at] = -1;
        int rc;
        if (rank % 2 == 0) {
            rc = MPIX_Send_zcopy(sent, 1, rows, right, round, comm);
            if (rc == MPI_SUCCESS)
                rc = MPIX_Recv_zcopy(got, 1, rows, left, round, comm, MPI_STATUS_IGNORE);
        } else {
            rc = MPIX_Recv_zcopy(got, 1, rows, left, round, comm, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = MPIX_Send_zcopy(sent, 1, rows, right, round, comm);
        }
        CHECK(rc == MPI_SUCCESS, "blocking zcopy round %d: %s", round, mpix_test_error_string(rc));
        int wrong = 0;
        for (int row = 0; row < ROWS; row++)
            for (int column = 0; column < COLUMNS; column++) {
                int at = row * 2 * COLUMNS + column;
                wrong += got[at] != value_of(left, at, round) || got[at + COLUMNS] != -1;
            }
        CHECK(wrong == 0, "blocking zcopy round %d: %d values wrong", round, wrong);

        MPI_Request requests[2];
        MPI_Status statuses[2];
        for (int at = 0; at < ROWS * COLUMNS * 2; at++)
            got[at] = -1;
        rc = MPIX_Irecv_zcopy(got, 1, rows, right, 100 + round, comm, &requests[0]);
        if (rc == MPI_SUCCESS)
            rc = MPIX_Isend_zcopy(sent, 1, rows, left, 100 + round, comm, &requests[1]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Waitall(2, requests, statuses);
        CHECK(rc == MPI_SUCCESS, "nonblocking zcopy round %d: %s", round, mpix_test_error_string(rc));
        wrong = 0;
        for (int row = 0; row < ROWS; row++)
            for (int column = 0; column < COLUMNS; column++)
                wrong += got[row * 2 * COLUMNS + column] != value_of(right, row * 2 * COLUMNS + column, round);
        CHECK(wrong == 0, "nonblocking zcopy round %d: %d values wrong", round, wrong);
        MPI_Type_free(&rows);
    }
    /* Without MPI_COMM_WORLD no peer has an identity the kernel copies can be set up
     * with: every message went through MPI, and says so. */
    MPI_Count zero_copy = -1;
    CHECK(MPIX_Pvar_read("zcopy.sent_zero_copy", comm, &zero_copy) == MPI_SUCCESS && zero_copy == 0,
          "zero-copy sends %lld, expected 0", (long long)zero_copy);
    /* A rank out of range: MPI's own error class, through the communicator's handler
     * (MPI_ERRORS_RETURN here), not a crash for want of MPI_COMM_WORLD. */
    int rc = MPIX_Send_zcopy(sent, 1, MPI_DOUBLE, size, 0, comm), error_class = -1;
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_RANK, "send to rank %d: class %d, expected MPI_ERR_RANK", size, error_class);
    free(sent);
    free(got);
}

static void check_hy(MPI_Comm comm, int rank, int size)
{
    MPI_Comm hy;
    int rc = MPIX_Hy_comm_create(comm, MPI_INFO_NULL, &hy);
    CHECK(rc == MPI_SUCCESS, "hybrid communicator: %s", mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        return;
    void *slot, *result;
    MPI_Win win;
    double input = rank + 1;
    CHECK(MPIX_Hy_allreduce_create(hy, 1, MPI_DOUBLE, MPI_SUM, &slot, &result, &win) == MPI_SUCCESS &&
              MPIX_Hy_allreduce(&input, win) == MPI_SUCCESS,
          "allreduce");
    CHECK(*(double *)result == size * (size + 1) / 2.0, "allreduce: %g, expected %g", *(double *)result,
          size * (size + 1) / 2.0);
    MPIX_Hy_free(&win);

    /* A derived datatype: the node's copies go through MPI on a communicator of this
     * process alone, which must not be MPI_COMM_SELF here. */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int mine[2] = { rank, -rank }, *pairs;
    CHECK(MPIX_Hy_allgather_create(hy, 1, pair, &pairs, &win) == MPI_SUCCESS && MPIX_Hy_allgather(mine, win) == MPI_SUCCESS,
          "derived allgather");
    int wrong = 0;
    for (int r = 0; r < size; r++)
        wrong += pairs[2 * r] != r || pairs[2 * r + 1] != -r;
    CHECK(wrong == 0, "derived allgather: %d pairs wrong", wrong);
    MPIX_Hy_free(&win);

    int *buffer;
    CHECK(MPIX_Hy_bcast_create(hy, 2, pair, &buffer, &win) == MPI_SUCCESS, "bcast_create");
    for (int root = 0; root < size; root++) {
        int data[2] = { 1000 + root, -1000 - root };
        CHECK(MPIX_Hy_bcast(data, root, win) == MPI_SUCCESS, "bcast from %d", root);
        CHECK(buffer[0] == 1000 + root && buffer[1] == -1000 - root, "bcast from %d: %d %d", root, buffer[0], buffer[1]);
        MPI_Barrier(comm);   /* the node buffer is rewritten by the next root */
    }
    MPIX_Hy_free(&win);
    MPI_Type_free(&pair);
    MPI_Comm_free(&hy);
}

static void check_storage(MPI_Comm comm, int rank, int size)
{
    char directory[64], path[128];
    mpix_test_tempdir(comm, directory, sizeof directory);
    snprintf(path, sizeof path, "%s/window.%d", directory, rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    double *base = NULL, put = rank + 0.5;
    MPI_Win win;
    int rc = MPIX_Win_allocate(COLUMNS * sizeof(double), sizeof(double), info, comm, &base, &win);
    CHECK(rc == MPI_SUCCESS, "storage window: %s", mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS) {
        MPI_Win_fence(0, win);
        MPI_Put(&put, 1, MPI_DOUBLE, (rank + 1) % size, 7, 1, MPI_DOUBLE, win);
        MPI_Win_fence(0, win);
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "MPIX_Win_sync");
        CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "storage window free");
        double on_file = -1;   /* a synced window's data are in its file once it is freed */
        CHECK(mpix_test_read_file(path, 7 * sizeof(double), &on_file, sizeof on_file) == 0 &&
                  on_file == (rank + size - 1) % size + 0.5,
              "file holds %g, expected %g", on_file, (rank + size - 1) % size + 0.5);
    }
    MPI_Info_free(&info);
    mpix_test_remove_tree(comm, directory);
}

static void check_spin(MPI_Comm comm, int rank)
{
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank;
    MPI_Comm_rank(node, &node_rank);
    volatile double *mine, *leader;
    MPI_Win win;
    int rc = MPIX_Win_allocate_shared(node_rank == 0 ? 64 : 0, 1, MPI_INFO_NULL, node, &mine, &win);
    CHECK(rc == MPI_SUCCESS, "shared window: %s", mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS) {
        MPI_Aint bytes;
        int unit;
        MPI_Win_shared_query(win, 0, &bytes, &unit, &leader);
        for (int round = 0; round < ROUNDS; round++) {
            if (node_rank == 0) {
                leader[0] = round + 0.5;
                CHECK(MPIX_Win_spin_post(win) == MPI_SUCCESS, "post %d", round);
            } else {
                CHECK(MPIX_Win_spin_wait(win) == MPI_SUCCESS && leader[0] == round + 0.5, "wait %d: read %g", round,
                      leader[0]);
            }
            CHECK(MPIX_Win_spin_barrier(win) == MPI_SUCCESS, "spin barrier %d", round);
        }
        CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "shared window free");
    }
    (void)rank;
    MPI_Comm_free(&node);
}

static void check_guard(MPI_Comm comm, int rank, int size)
{
    int count = 1 << 15, right = (rank + 1) % size, left = (rank + size - 1) % size;
    double *sent = malloc(count * sizeof *sent), *got = malloc(count * sizeof *got);
    for (int i = 0; i < count; i++)
        sent[i] = value_of(rank, i, 0), got[i] = -1;
    int rc = MPIX_Sendrecv_guarded(sent, count, MPI_DOUBLE, right, 9, got, count, MPI_DOUBLE, left, 9, comm,
                                   MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "guarded exchange: %s", mpix_test_error_string(rc));
    int wrong = 0;
    for (int i = 0; i < count; i++)
        wrong += got[i] != value_of(left, i, 0);
    CHECK(wrong == 0, "guarded exchange: %d values wrong", wrong);
    CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "MPIX_Guard_complete_all");
    free(sent);
    free(got);
}

int main(void)
{
    MPI_Session session;
    MPI_Group group;
    MPI_Comm comm;
    int rank, size, initialized = 1;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &session);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
    MPI_Comm_create_from_group(group, "org.mpix.test.sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&group);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Initialized(&initialized);
    CHECK(!initialized, "the world model is not initialized in this program");

    check_zcopy(comm, rank, size);
    check_hy(comm, rank, size);
    check_storage(comm, rank, size);
    check_spin(comm, rank);
    check_guard(comm, rank, size);
    /* An error with no object to raise it on: returned, not raised on MPI_COMM_WORLD. */
    MPI_Count value;
    CHECK(MPIX_Pvar_read("zcopy.no_such_variable", comm, &value) != MPI_SUCCESS, "unknown variable accepted");

    /* A child the program forks and that ends with exit() runs the exit handlers it
     * inherited: mpix's must leave the session it started in the parent alone. */
    pid_t child = fork();
    if (child == 0)
        exit(0);
    int status = -1;
    CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "a forked child's exit: status %#x", status);

    int failures = 0;
    MPI_Allreduce(&mpix_test_failures, &failures, 1, MPI_INT, MPI_SUM, comm);
    if (rank == 0)
        printf("sessions: %s (%d failed checks)\n", failures ? "FAIL" : "PASS", failures);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&session);
    return failures ? 1 : 0;
}
