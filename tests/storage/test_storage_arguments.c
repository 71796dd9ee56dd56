/* SPDX-License-Identifier: BSD-3-Clause */
/* Arguments MPI's window calls would reject are rejected by the storage calls too, for
 * memory and storage windows alike, with an error through the object's handler: no
 * crash, no hang, no file left behind. */
#include "mpix_test.h"

static void bad_allocations(MPI_Info info, const char *kind, int size)
{
    void *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    char what[128];
    snprintf(what, sizeof what, "%s: negative size", kind);
    EXPECT_ERROR(MPIX_Win_allocate(-4096, 1, info, MPI_COMM_WORLD, &base, &win), what);
    snprintf(what, sizeof what, "%s: displacement unit 0", kind);
    EXPECT_ERROR(MPIX_Win_allocate(4096, 0, info, MPI_COMM_WORLD, &base, &win), what);
    snprintf(what, sizeof what, "%s: null communicator", kind);
    EXPECT_ERROR(MPIX_Win_allocate(4096, 1, info, MPI_COMM_NULL, &base, &win), what);
    snprintf(what, sizeof what, "%s: NULL base pointer", kind);
    EXPECT_ERROR(MPIX_Win_allocate(4096, 1, info, MPI_COMM_WORLD, NULL, &win), what);
    snprintf(what, sizeof what, "%s: NULL window", kind);
    EXPECT_ERROR(MPIX_Win_allocate(4096, 1, info, MPI_COMM_WORLD, &base, NULL), what);
    snprintf(what, sizeof what, "%s: shared, negative size", kind);
    EXPECT_ERROR(MPIX_Win_allocate_shared(-1, 1, info, MPI_COMM_WORLD, &base, &win), what);
    snprintf(what, sizeof what, "%s: alloc_mem, negative size", kind);
    EXPECT_ERROR(MPIX_Alloc_mem(-1, info, &base), what);
    snprintf(what, sizeof what, "%s: alloc_mem, NULL base pointer", kind);
    EXPECT_ERROR(MPIX_Alloc_mem(4096, info, NULL), what);

    /* A good window, then calls on it with bad ranks. */
    CHECK(MPIX_Win_allocate_shared(4096, 1, info, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS, "%s: allocate", kind);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Aint segment;
    int unit;
    void *peer;
    snprintf(what, sizeof what, "%s: shared_query, rank out of range", kind);
    EXPECT_ERROR(MPIX_Win_shared_query(win, size, &segment, &unit, &peer), what);
    snprintf(what, sizeof what, "%s: flush_storage, rank out of range", kind);
    MPI_Win_lock_all(0, win);
    EXPECT_ERROR(MPIX_Win_flush_storage(size + 3, win), what);
    /* Inside the epoch: MPICH refuses MPI_Win_sync outside one on a memory window. */
    CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "%s: sync after errors", kind);
    MPI_Win_unlock_all(win);
    CHECK(MPIX_Win_free(&win) == MPI_SUCCESS && win == MPI_WIN_NULL, "%s: free", kind);
}

int main(int argc, char **argv)
{
    int rank, size;
    char dir[256], path[320];
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    EXPECT_ERROR(MPIX_Win_sync(MPI_WIN_NULL), "sync, null window");
    EXPECT_ERROR(MPIX_Win_free(NULL), "free, NULL");
    MPI_Win null_win = MPI_WIN_NULL;
    EXPECT_ERROR(MPIX_Win_free(&null_win), "free, null window");
    MPI_Info used;
    EXPECT_ERROR(MPIX_Win_get_info(MPI_WIN_NULL, &used), "get_info, null window");
    EXPECT_ERROR(MPIX_Win_flush_storage(0, MPI_WIN_NULL), "flush_storage, null window");
    int memory[16];
    EXPECT_ERROR(MPIX_Win_attach(MPI_WIN_NULL, memory, sizeof memory), "attach, null window");
    EXPECT_ERROR(MPIX_Win_detach(MPI_WIN_NULL, memory), "detach, null window");

    bad_allocations(MPI_INFO_NULL, "memory", size);
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/arguments.dat", dir);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    bad_allocations(info, "storage", size);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!mpix_test_file_exists(path), "no file is left behind");
    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("storage arguments");
}
