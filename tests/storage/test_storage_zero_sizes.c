/* SPDX-License-Identifier: BSD-3-Clause */
/* Zero sizes the way programs use them: rank 0 holds the node's whole array and the
 * others ask for 0 bytes (the usual MPI_Win_allocate_shared idiom, then
 * MPI_Win_shared_query of rank 0); a window that is all on rank 0 and filled by the
 * others' MPI_Put; and windows and MPIX_Alloc_mem of 0 bytes everywhere. Data must reach
 * the file, and syncing and freeing a zero-size part must work. */
#include "mpix_test.h"

enum { ELEMENTS = 1000 };

static MPI_Info storage_info(const char *path)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    return info;
}

/* A storage window on @path of ELEMENTS doubles on rank 0 and none elsewhere; 0 (with a
 * failed check) when it could not be made. */
static int allocate_on_rank_zero(const char *path, int shared, int rank, double **base, MPI_Win *win)
{
    MPI_Info info = storage_info(path);
    MPI_Aint bytes = rank == 0 ? ELEMENTS * (MPI_Aint)sizeof(double) : 0;
    int rc = shared ? MPIX_Win_allocate_shared(bytes, sizeof(double), info, MPI_COMM_WORLD, base, win)
                    : MPIX_Win_allocate(bytes, sizeof(double), info, MPI_COMM_WORLD, base, win);
    MPI_Info_free(&info);
    CHECK(rc == MPI_SUCCESS, "%s with %ld bytes on rank %d: %s",
          shared ? "MPIX_Win_allocate_shared" : "MPIX_Win_allocate", (long)bytes, rank, mpix_test_error_string(rc));
    return rc == MPI_SUCCESS;
}

/* Rank 0's segment holds the array; every rank writes its share through the address
 * MPIX_Win_shared_query gives it, and rank 0 reads the file after the window is freed. */
static void shared_on_rank_zero(const char *directory, int rank, int ranks)
{
    char path[320];
    snprintf(path, sizeof path, "%s/shared.dat", directory);
    double *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    if (!allocate_on_rank_zero(path, 1, rank, &base, &win))
        return;
    MPI_Aint bytes = -1;
    int unit = 0;
    double *array = NULL;
    CHECK(MPIX_Win_shared_query(win, 0, &bytes, &unit, &array) == MPI_SUCCESS, "shared query of rank 0");
    CHECK(bytes == ELEMENTS * (MPI_Aint)sizeof(double) && unit == (int)sizeof(double),
          "rank 0's segment: %ld bytes of unit %d", (long)bytes, unit);
    MPI_Aint own = -1;
    double *own_base = NULL;
    CHECK(MPIX_Win_shared_query(win, rank, &own, &unit, &own_base) == MPI_SUCCESS, "shared query of rank %d", rank);
    CHECK(rank == 0 || own == 0, "rank %d asked for 0 bytes and has %ld", rank, (long)own);
    MPI_Win_lock_all(0, win);
    for (int i = rank; i < ELEMENTS; i += ranks)
        array[i] = i + 0.5;
    CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "MPIX_Win_sync with a zero-size segment");
    MPI_Barrier(MPI_COMM_WORLD);
    MPIX_Win_sync(win);
    int wrong = -1;
    for (int i = 0; i < ELEMENTS && wrong < 0; i++)
        if (array[i] != i + 0.5)
            wrong = i;
    CHECK(wrong < 0, "element %d reads %g", wrong, wrong < 0 ? 0 : array[wrong]);
    MPI_Win_unlock_all(win);
    CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "MPIX_Win_free with a zero-size segment");
    if (rank == 0) {
        double file[ELEMENTS];
        CHECK(mpix_test_read_file(path, 0, file, sizeof file) == 0, "read %s", path);
        wrong = -1;
        for (int i = 0; i < ELEMENTS && wrong < 0; i++)
            if (file[i] != i + 0.5)
                wrong = i;
        CHECK(wrong < 0, "the file's element %d is %g", wrong, wrong < 0 ? 0 : file[wrong]);
    }
}

/* A window whose memory is all on rank 0, filled by the others' MPI_Put in a fence epoch. */
static void put_to_rank_zero(const char *directory, int rank, int ranks)
{
    char path[320];
    snprintf(path, sizeof path, "%s/window-%d.dat", directory, rank);
    double *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    if (!allocate_on_rank_zero(path, 0, rank, &base, &win))
        return;
    static double values[ELEMENTS]; /* origin buffers stay untouched until the fence */
    MPI_Win_fence(0, win);
    for (int i = rank; i < ELEMENTS; i += ranks) {
        values[i] = 2.0 * i;
        MPI_Put(&values[i], 1, MPI_DOUBLE, 0, i, 1, MPI_DOUBLE, win);
    }
    MPI_Win_fence(0, win);
    CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "MPIX_Win_sync");
    if (rank == 0) {
        int wrong = -1;
        for (int i = 0; i < ELEMENTS && wrong < 0; i++)
            if (base[i] != 2.0 * i)
                wrong = i;
        CHECK(wrong < 0, "element %d reads %g", wrong, wrong < 0 ? 0 : base[wrong]);
    }
    CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "MPIX_Win_free");
    if (rank == 0) {
        double file[ELEMENTS];
        CHECK(mpix_test_read_file(path, 0, file, sizeof file) == 0 && file[ELEMENTS - 1] == 2.0 * (ELEMENTS - 1),
              "the file holds the last element put");
    }
}

static void nothing_anywhere(const char *directory, int rank)
{
    char path[320];
    snprintf(path, sizeof path, "%s/empty-%d.dat", directory, rank);
    MPI_Info info = storage_info(path);
    void *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPIX_Win_allocate(0, 1, info, MPI_COMM_WORLD, &base, &win);
    CHECK(rc == MPI_SUCCESS, "MPIX_Win_allocate of 0 bytes everywhere: %s", mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS) {
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "MPIX_Win_sync of an empty window");
        CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "MPIX_Win_free of an empty window");
    }
    rc = MPIX_Win_allocate_shared(0, 1, info, MPI_COMM_WORLD, &base, &win);
    CHECK(rc == MPI_SUCCESS, "MPIX_Win_allocate_shared of 0 bytes everywhere: %s", mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS) {
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "MPIX_Win_sync of an empty shared window");
        CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "MPIX_Win_free of an empty shared window");
    }
    void *memory = NULL;
    rc = MPIX_Alloc_mem(0, info, &memory);
    CHECK(rc == MPI_SUCCESS, "MPIX_Alloc_mem of 0 bytes: %s", mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS)
        CHECK(MPIX_Free_mem(memory) == MPI_SUCCESS, "MPIX_Free_mem of 0 bytes");
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    char directory[256];
    mpix_test_tempdir(MPI_COMM_WORLD, directory, sizeof directory);
    shared_on_rank_zero(directory, rank, ranks);
    put_to_rank_zero(directory, rank, ranks);
    nothing_anywhere(directory, rank);
    mpix_test_remove_tree(MPI_COMM_WORLD, directory);
    return mpix_test_finish("storage zero sizes");
}
