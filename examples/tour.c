/* SPDX-License-Identifier: BSD-3-Clause */
/* A tour of mpix: every module that exists shows what it does, on any number of ranks.
 * Run with: sh examples/quickstart.sh   (or mpirun -np 2 ./tour) */
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

#define SAY(...) do { if (rank == 0) { printf(__VA_ARGS__); fflush(stdout); } } while (0)

/* common: version, and hints checked up front with errors that name the bad value. */
static int tour_common(void)
{
    char version[MPIX_MAX_LIBRARY_VERSION_STRING], message[MPI_MAX_ERROR_STRING];
    int length, bad_hint_class, error_class, rc;
    MPI_Info info;

    MPIX_Get_library_version(version, &length);
    SAY("[common] library: %s\n", version);

    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_factor", "0.5");
    rc = MPIX_Info_validate(info);
    SAY("[common] hints alloc_type=storage storage_alloc_factor=0.5: %s\n", rc == MPI_SUCCESS ? "valid" : "rejected");

    MPI_Info_set(info, "storage_alloc_factor", "half");
    rc = MPIX_Info_validate(info); /* MPI_ERRORS_RETURN is set on MPI_COMM_WORLD below */
    MPI_Error_class(rc, &error_class);
    MPIX_Query_error_class(MPIX_ERRKIND_BAD_HINT, &bad_hint_class);
    MPI_Error_string(rc, message, &length);
    SAY("[common] hint storage_alloc_factor=half: rejected, class %s: %s\n",
        error_class == bad_hint_class ? "MPIX_ERRKIND_BAD_HINT" : "unexpected", message);
    MPI_Info_free(&info);
    return rc != MPI_SUCCESS && error_class == bad_hint_class ? 0 : 1;
}

/* storage: a window on a file; a neighbour puts into it, MPIX_Win_sync makes it durable
 * (in the window's redo log: the file itself is brought up to date at free). */
static int tour_storage(int size)
{
    char path[256], on_file[64] = "";
    int failures = 0, right = (rank + 1) % size;
    snprintf(path, sizeof path, "/tmp/mpix-tour-%d-%d.dat", (int)getpid(), rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    char *base;
    MPI_Win win;
    int rc = MPIX_Win_allocate(4096, 1, info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        return 1;
    char message[64];
    snprintf(message, sizeof message, "hello from rank %d", rank);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(message, sizeof message, MPI_CHAR, right, 0, sizeof message, MPI_CHAR, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    failures += MPIX_Win_sync(win) != MPI_SUCCESS;
    MPI_Win_unlock(rank, win);
    MPIX_Win_free(&win);
    FILE *file = fopen(path, "r");
    if (!file || !fgets(on_file, sizeof on_file, file))
        failures++;
    if (file)
        fclose(file);
    unlink(path);
    failures += strncmp(on_file, "hello from rank ", 16) != 0;
    SAY("[storage] rank 0's window lived in %s; after a put from its neighbour, MPIX_Win_sync and MPIX_Win_free the "
        "file says: \"%s\"\n",
        path, on_file);
    return failures;
}

/* rma: on a shared storage window an origin makes a peer's data durable itself. */
static int tour_rma(int size)
{
    char path[256];
    int failures = 0;
    snprintf(path, sizeof path, "/tmp/mpix-tour-shared-%d.dat", (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD); /* rank 0 names the one file */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path); /* one file: a slot per rank */
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    int *mine;
    MPI_Win win;
    if (MPIX_Win_allocate_shared(4096, sizeof(int), info, MPI_COMM_WORLD, &mine, &win) != MPI_SUCCESS) {
        MPI_Info_free(&info);
        return 1;
    }
    MPI_Info_free(&info);
    int target = size - 1, value = 42;
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
        MPI_Put(&value, 1, MPI_INT, target, 0, 1, MPI_INT, win);
        failures += MPIX_Win_flush_storage(target, win) != MPI_SUCCESS;
        MPI_Win_unlock(target, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Aint bytes;
    int unit, *theirs;
    MPIX_Win_shared_query(win, target, &bytes, &unit, &theirs);
    failures += theirs[0] != 42;
    /* spin: the leader (rank 0) signals the node through the same window. */
    if (rank == 0) {
        int *leader_segment;
        MPIX_Win_shared_query(win, 0, &bytes, &unit, &leader_segment);
        leader_segment[0] = 7;
        MPIX_Win_spin_post(win);
    } else {
        MPIX_Win_spin_wait(win);
    }
    int *leader_segment;
    MPIX_Win_shared_query(win, 0, &bytes, &unit, &leader_segment);
    failures += leader_segment[0] != 7;
    MPIX_Win_spin_barrier(win);
    SAY("[spin] rank 0 stored 7 and posted; after MPIX_Win_spin_wait every rank reads %d\n", leader_segment[0]);
    SAY("[rma] rank 0 put 42 into rank %d's segment of a shared storage window and made it durable with "
        "MPIX_Win_flush_storage; a load through the shared mapping reads %d\n", target, theirs[0]);
    MPIX_Win_free(&win);
    return failures;
}

/* hy: one copy per node; a broadcast from the last rank, then a sum over everyone. */
static int tour_hy(int size)
{
    MPI_Comm hy, node_comm, bridge_comm;
    MPI_Win bcast_op, sum_op;
    double *shared, *slot, *sum;
    int failures = 0, node, nodes, root = size - 1;
    if (MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &hy) != MPI_SUCCESS)
        return 1;
    if (MPIX_Hy_comm_query(hy, &node_comm, &bridge_comm, &node, &nodes) != MPI_SUCCESS ||
        MPIX_Hy_bcast_create(hy, 4, MPI_DOUBLE, &shared, &bcast_op) != MPI_SUCCESS ||
        MPIX_Hy_allreduce_create(hy, 1, MPI_DOUBLE, MPI_SUM, &slot, &sum, &sum_op) != MPI_SUCCESS) {
        MPI_Comm_free(&hy);
        return 1;
    }
    double data[4] = { 1, 2, 3, 4 }, mine = rank + 1;
    failures += MPIX_Hy_bcast(rank == root ? data : NULL, root, bcast_op) != MPI_SUCCESS;
    failures += shared[3] != 4;
    failures += MPIX_Hy_allreduce(&mine, sum_op) != MPI_SUCCESS;
    failures += *sum != size * (size + 1) / 2.0;
    SAY("[hy] %d node(s), one buffer each: rank %d's broadcast reads %g in place; the sum of 1..%d is %g\n", nodes,
        root, shared[3], size, *sum);
    MPIX_Hy_free(&bcast_op);
    MPIX_Hy_free(&sum_op);
    MPI_Comm_free(&hy);
    return failures;
}

/* zcopy: a column of a matrix (a strided vector) sent around a ring without packing. */
static int tour_zcopy(int size)
{
    enum { N = 64 };
    static double matrix[N][N], column[N];
    int failures = 0, right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++)
        matrix[i][0] = rank * 1000 + i;
    MPI_Datatype column_type;
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &column_type);
    MPI_Type_commit(&column_type);
    MPI_Request request;
    failures += MPIX_Irecv_zcopy(column, N, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &request) != MPI_SUCCESS;
    failures += MPIX_Send_zcopy(&matrix[0][0], 1, column_type, right, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
    failures += MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS;
    MPI_Type_free(&column_type);
    failures += column[N - 1] != left * 1000 + N - 1;
    SAY("[zcopy] a %d-element matrix column went round the ring as a vector datatype; rank 0 got %g..%g from rank "
        "%d\n", N, column[0], column[N - 1], left);
    return failures;
}

/* guard: a blocking exchange that may return before its data; the first touch waits for it. */
static int tour_guard(int size)
{
    enum { N = 1 << 14 };
    double *out = malloc(N * sizeof *out), *in = malloc(N * sizeof *in);
    int failures = !out || !in, right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (!failures) {
        for (int i = 0; i < N; i++)
            out[i] = rank + i;
        failures += MPIX_Sendrecv_guarded(out, N, MPI_DOUBLE, right, 0, in, N, MPI_DOUBLE, left, 0, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE) != MPI_SUCCESS;
        double last = in[N - 1]; /* waits here, if the data is still on its way */
        failures += last != left + N - 1;
        SAY("[guard] MPIX_Sendrecv_guarded may return while its data travels (the first read waits); the last value "
            "read is %g, rank %d's\n", last, left);
        failures += MPIX_Guard_complete_all() != MPI_SUCCESS;
    }
    free(out);
    free(in);
    return failures;
}

int main(int argc, char **argv)
{
    int size, failures = 0, total;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    SAY("mpix tour on %d ranks\n", size);

    failures += tour_common();
    failures += tour_storage(size);
    failures += tour_rma(size);
    failures += tour_hy(size);
    failures += tour_zcopy(size);
    failures += tour_guard(size);

    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    SAY("tour %s\n", total ? "FAILED" : "done: every module did what it says");
    MPI_Finalize();
    return total != 0;
}
