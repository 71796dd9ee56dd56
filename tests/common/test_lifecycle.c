/* SPDX-License-Identifier: BSD-3-Clause */
/* A long-running program makes and frees mpix's objects again and again: storage
 * windows on a file, hybrid communicators with their three collectives, communicators
 * and datatypes for zcopy's blocking and nonblocking calls, buffers malloc'd for a
 * guarded exchange and freed. After a first round of each (MPI's own caches warm up
 * there), further rounds must leave nothing behind: not a file descriptor, not a
 * mapping, and no memory that grows with the rounds. Each phase's data is checked too. */
#include "mpix_test.h"

#include <dirent.h>

enum { ROUNDS = 100, ROWS = 256, COLUMNS = 512 };

static int open_descriptors(void)
{
    int count = 0;
    DIR *directory = opendir("/proc/self/fd");
    while (directory && readdir(directory))
        count++;
    if (directory)
        closedir(directory);
    return count;
}

/* Every mapping of the process, not only mpix's own (mpix_test_mapping_count): a window
 * mpix forgot to free leaves MPI's mapping behind. */
static int mappings(void)
{
    int count = 0, c;
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && (c = fgetc(maps)) != EOF)
        count += c == '\n';
    if (maps)
        fclose(maps);
    return count;
}

static long resident_kib(void)
{
    long kib = -1;
    char line[256];
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = atol(line + 6);
    if (status)
        fclose(status);
    return kib;
}

typedef struct footprint {
    int descriptors, mappings;
    long resident_kib;
    double started;
} footprint;

static footprint measure(void)
{
    footprint now = { open_descriptors(), mappings(), resident_kib(), MPI_Wtime() };
    return now;
}

/* Rounds after the first must not grow the process: a leak of one object a round shows
 * as ROUNDS descriptors or mappings, or megabytes for windows of 1 MiB. */
static void expect_unchanged(const footprint *before, const char *what)
{
    footprint after = measure();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%s x %d: %+d file descriptors, %+d mappings, %+ld KiB resident, %.2f s\n", what, ROUNDS,
               after.descriptors - before->descriptors, after.mappings - before->mappings,
               after.resident_kib - before->resident_kib, MPI_Wtime() - before->started);
    CHECK(after.descriptors == before->descriptors, "%s x %d: %d file descriptors left open", what, ROUNDS,
          after.descriptors - before->descriptors);
    CHECK(after.mappings == before->mappings, "%s x %d: %d mappings left", what, ROUNDS,
          after.mappings - before->mappings);
    CHECK(after.resident_kib - before->resident_kib < 4096, "%s x %d: resident memory grew by %ld KiB", what,
          ROUNDS, after.resident_kib - before->resident_kib);
}

static void storage_round(const char *path, int round)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    double *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPIX_Win_allocate(1 << 20, sizeof(double), info, MPI_COMM_WORLD, &base, &win);
    CHECK(rc == MPI_SUCCESS, "round %d: MPIX_Win_allocate: %s", round, mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS) {
        base[round] = round;
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "round %d: MPIX_Win_sync", round);
        CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "round %d: MPIX_Win_free", round);
    }
    MPI_Info_free(&info);
}

static void hy_round(int rank, int ranks, int round)
{
    MPI_Comm hy_comm;
    MPI_Win allgather, bcast, allreduce;
    double mine[64], *gathered, *broadcast, *slot, *sum;
    for (int k = 0; k < 64; k++)
        mine[k] = rank * 100 + k + round;
    CHECK(MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &hy_comm) == MPI_SUCCESS, "MPIX_Hy_comm_create");
    MPIX_Hy_allgather_create(hy_comm, 64, MPI_DOUBLE, &gathered, &allgather);
    MPIX_Hy_bcast_create(hy_comm, 64, MPI_DOUBLE, &broadcast, &bcast);
    MPIX_Hy_allreduce_create(hy_comm, 8, MPI_DOUBLE, MPI_SUM, &slot, &sum, &allreduce);
    CHECK(MPIX_Hy_allgather(mine, allgather) == MPI_SUCCESS, "MPIX_Hy_allgather");
    CHECK(MPIX_Hy_bcast(rank == ranks - 1 ? mine : NULL, ranks - 1, bcast) == MPI_SUCCESS, "MPIX_Hy_bcast");
    CHECK(MPIX_Hy_allreduce(mine, allreduce) == MPI_SUCCESS, "MPIX_Hy_allreduce");
    int other = (rank + 1) % ranks;
    CHECK(gathered[other * 64 + 5] == other * 100 + 5 + round, "round %d: allgather slot %d holds %g", round, other,
          gathered[other * 64 + 5]);
    CHECK(broadcast[7] == (ranks - 1) * 100 + 7 + round, "round %d: bcast from %d gave %g", round, ranks - 1,
          broadcast[7]);
    double want = 100.0 * ranks * (ranks - 1) / 2 + ranks * (3.0 + round);
    CHECK(sum[3] == want, "round %d: allreduce gave %g, want %g", round, sum[3], want);
    MPIX_Hy_free(&allgather);
    MPIX_Hy_free(&bcast);
    MPIX_Hy_free(&allreduce);
    MPI_Comm_free(&hy_comm);
}

/* Ranks in pairs (0,1), (2,3), ...; an odd last rank sits out. */
static void zcopy_round(double *grid, int rank, int ranks, int round)
{
    int peer = rank ^ 1;
    MPI_Comm comm;
    MPI_Datatype half;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Type_vector(ROWS, COLUMNS / 2, COLUMNS, MPI_DOUBLE, &half);
    MPI_Type_commit(&half);
    if (peer < ranks) {
        for (int row = 0; row < ROWS; row++)
            grid[row * COLUMNS] = rank + round + row;
        MPI_Request requests[2];
        MPIX_Irecv_zcopy(grid + COLUMNS / 2, 1, half, peer, 0, comm, &requests[0]);
        MPIX_Isend_zcopy(grid, 1, half, peer, 0, comm, &requests[1]);
        CHECK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "round %d: MPI_Waitall", round);
        CHECK(grid[9 * COLUMNS + COLUMNS / 2] == peer + round + 9, "round %d: nonblocking halo gave %g", round,
              grid[9 * COLUMNS + COLUMNS / 2]);
        if (rank & 1) {
            MPIX_Recv_zcopy(grid + COLUMNS / 2, 1, half, peer, 1, comm, MPI_STATUS_IGNORE);
            MPIX_Send_zcopy(grid, 1, half, peer, 1, comm);
        } else {
            MPIX_Send_zcopy(grid, 1, half, peer, 1, comm);
            MPIX_Recv_zcopy(grid + COLUMNS / 2, 1, half, peer, 1, comm, MPI_STATUS_IGNORE);
        }
        CHECK(grid[ROWS / 2 * COLUMNS + COLUMNS / 2] == peer + round + ROWS / 2, "round %d: blocking halo gave %g",
              round, grid[ROWS / 2 * COLUMNS + COLUMNS / 2]);
    }
    MPI_Type_free(&half);
    MPI_Comm_free(&comm);
}

static void guard_round(int rank, int ranks, int round)
{
    int peer = rank ^ 1, count = 1 << 17;
    double *buffer = malloc(count * sizeof(double));
    buffer[count - 1] = rank + round;
    if (peer < ranks) {
        if (rank & 1) {
            MPIX_Recv_guarded(buffer, count, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(buffer[count - 1] == peer + round, "round %d: guarded receive gave %g", round, buffer[count - 1]);
            MPIX_Send_guarded(buffer, count, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
        } else {
            MPIX_Send_guarded(buffer, count, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
            MPIX_Recv_guarded(buffer, count, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(buffer[count - 1] == rank + round, "round %d: guarded echo gave %g", round, buffer[count - 1]);
        }
    }
    free(buffer); /* with the transfers possibly still in flight: guard finishes them */
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    char directory[256], path[320];
    mpix_test_tempdir(MPI_COMM_WORLD, directory, sizeof directory);
    snprintf(path, sizeof path, "%s/window-%d.dat", directory, rank);
    double *grid = calloc(ROWS * COLUMNS, sizeof(double));

    storage_round(path, 0);
    footprint before = measure();
    for (int round = 1; round <= ROUNDS; round++)
        storage_round(path, round);
    expect_unchanged(&before, "storage window allocated, synced, freed");

    hy_round(rank, ranks, 0);
    before = measure();
    for (int round = 1; round <= ROUNDS; round++)
        hy_round(rank, ranks, round);
    expect_unchanged(&before, "hybrid communicator with allgather, bcast, allreduce");

    zcopy_round(grid, rank, ranks, 0);
    before = measure();
    for (int round = 1; round <= ROUNDS; round++)
        zcopy_round(grid, rank, ranks, round);
    expect_unchanged(&before, "communicator and datatype for a zcopy halo");

    guard_round(rank, ranks, 0);
    MPIX_Guard_complete_all();
    before = measure();
    for (int round = 1; round <= ROUNDS; round++)
        guard_round(rank, ranks, round);
    MPIX_Guard_complete_all();
    expect_unchanged(&before, "buffer malloc'd, guarded exchange, freed");

    free(grid);
    mpix_test_remove_tree(MPI_COMM_WORLD, directory);
    return mpix_test_finish("lifecycle");
}
