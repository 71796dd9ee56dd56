/* SPDX-License-Identifier: BSD-3-Clause */
/* A full disk is an error at allocation, on every rank, never a SIGBUS later: argv[1]
 * is a 1 MiB tmpfs (with_tmpfs.sh). */
#include <mpix/mpix.h>
#include "mpix_test.h"

static int rank;

static int allocate(const char *dir, const char *name, long long size, const char *factor, void **base, MPI_Win *win)
{
    char path[512];
    MPI_Info info;
    MPI_Info_create(&info);
    snprintf(path, sizeof path, "%s/%s-%d", dir, name, rank);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    if (factor)
        MPI_Info_set(info, "storage_alloc_factor", factor);
    int rc = MPIX_Win_allocate(size, 1, info, MPI_COMM_WORLD, base, win);
    MPI_Info_free(&info);
    return rc;
}

static void expect_no_space(int rc, const char *dir, const char *name, const char *what)
{
    int error_class, io_class;
    char path[512];
    MPI_Error_class(rc, &error_class);
    MPIX_Query_error_class(MPIX_ERRKIND_STORAGE_IO, &io_class);
    CHECK(rc != MPI_SUCCESS && error_class == io_class, "%s: rc %d class %d", what, rc, error_class);
    CHECK(strstr(mpix_test_error_string(rc), "No space left on device"), "%s: '%s'", what,
          mpix_test_error_string(rc));
    snprintf(path, sizeof path, "%s/%s-%d", dir, name, rank);
    CHECK(!mpix_test_file_exists(path), "%s: %s left behind", what, path);
}

int main(int argc, char **argv)
{
    void *base;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc != 2) {
        fprintf(stderr, "usage: %s TMPFS_DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dir = argv[1];
    int maps_before = mpix_test_mapping_count();

    expect_no_space(allocate(dir, "too-big", 2 << 20, NULL, &base, &win), dir, "too-big", "2 MiB window");
    expect_no_space(allocate(dir, "combined", 4 << 20, "0.5", &base, &win), dir, "combined",
                    "4 MiB window, half on storage");
    CHECK(mpix_test_mapping_count() == maps_before, "failed allocations left mappings");

    /* What fits works, and every byte of it can be stored to: 64 KiB per rank, with the
     * redo log beside it (three times the window), fits 1 MiB at 2 ranks. */
    int rc = allocate(dir, "fits", 64 << 10, NULL, &base, &win);
    CHECK(rc == MPI_SUCCESS, "64 KiB window: %s", mpix_test_error_string(rc));
    if (rc == MPI_SUCCESS) {
        memset(base, 0x5a, 64 << 10);
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "sync");
        MPIX_Win_free(&win);
    }
    return mpix_test_finish("storage_diskfull");
}
