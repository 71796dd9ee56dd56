/* SPDX-License-Identifier: BSD-3-Clause */
/* Every error case of a storage allocation: the last rank has the problem, every rank
 * must return an error of the right class, the bad rank's text names the offending
 * value, no file that the call created is left, and no mapping leaks. */
#include <mpix/mpix.h>
#include "mpix_test.h"

static int rank, ranks, last, check_mappings = 1;
static char dir[256];

typedef struct error_case {
    const char *name;
    int kind;             /* MPIX_Error_kind expected on every rank */
    const char *bad_text; /* what the failing rank's message names */
} error_case;

/* Allocate with hints "k=v;k=v" (the last rank's own, others valid); check the outcome. */
static void expect_failure(const error_case *c, const char *good_hints, const char *bad_hints, long long size,
                           int shared, const char *must_not_exist)
{
    MPI_Info info;
    MPI_Win win = MPI_WIN_NULL;
    char copy[1024], *save = NULL;
    void *base = NULL;
    int maps_before = mpix_test_mapping_count(), error_class, expected_class;

    MPI_Info_create(&info);
    snprintf(copy, sizeof copy, "%s", rank == last ? bad_hints : good_hints);
    for (char *pair = strtok_r(copy, ";", &save); pair; pair = strtok_r(NULL, ";", &save)) {
        char *equals = strchr(pair, '=');
        *equals = '\0';
        MPI_Info_set(info, pair, equals + 1);
    }
    int rc = shared ? MPIX_Win_allocate_shared(size, 1, info, MPI_COMM_WORLD, &base, &win)
                    : MPIX_Win_allocate(size, 1, info, MPI_COMM_WORLD, &base, &win);
    MPI_Info_free(&info);
    MPI_Error_class(rc, &error_class);
    MPIX_Query_error_class(c->kind, &expected_class);
    const char *text = mpix_test_error_string(rc);
    CHECK(rc != MPI_SUCCESS && error_class == expected_class, "%s: rc %d class %d want %d: %s", c->name, rc,
          error_class, expected_class, text);
    CHECK(win == MPI_WIN_NULL, "%s: window handle not MPI_WIN_NULL after failure", c->name);
    if (rank == last) {
        CHECK(strstr(text, c->bad_text) != NULL, "%s: '%s' does not name '%s'", c->name, text, c->bad_text);
    } else {
        char expected[64];
        snprintf(expected, sizeof expected, "failed on rank %d", last);
        CHECK(strstr(text, expected) != NULL, "%s: '%s' does not say '%s'", c->name, text, expected);
    }
    CHECK(!check_mappings || mpix_test_mapping_count() == maps_before, "%s: %d mappings before, %d after", c->name,
          maps_before, mpix_test_mapping_count());
    if (must_not_exist) {
        char path[512];
        snprintf(path, sizeof path, must_not_exist, dir, rank);
        CHECK(!mpix_test_file_exists(path), "%s: the failed call left %s", c->name, path);
    }
    if (rc == MPI_SUCCESS && win != MPI_WIN_NULL)
        MPIX_Win_free(&win);
}

int main(int argc, char **argv)
{
    char good[600], bad[600], path[512];
    long long page = sysconf(_SC_PAGESIZE);
    mpix_test_start(&argc, &argv, &rank, &ranks);
    last = ranks - 1;
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);

    /* Good ranks create new files, which the failure must remove again. */
    snprintf(good, sizeof good, "alloc_type=storage;storage_alloc_filename=%s/new-%d", dir, rank);

    error_case missing_dir = { "missing directory", MPIX_ERRKIND_STORAGE_IO, "No such file or directory" };
    snprintf(bad, sizeof bad, "alloc_type=storage;storage_alloc_filename=%s/no-such-dir/file", dir);
    /* MPI maps its own buffers on the first collectives of each kind (MPICH does):
     * one uncounted failure first, so the leak checks below see mpix alone. */
    check_mappings = 0;
    expect_failure(&missing_dir, good, bad, 3 * page, 0, "%s/new-%d");
    expect_failure(&missing_dir, good, bad, 3 * page, 1, "%s/new-%d");
    check_mappings = 1;
    expect_failure(&missing_dir, good, bad, 3 * page, 0, "%s/new-%d");
    expect_failure(&missing_dir, good, bad, 3 * page, 1, "%s/new-%d");

    error_case read_only = { "read-only file", MPIX_ERRKIND_STORAGE_IO, "is read-only (mode 0444)" };
    snprintf(path, sizeof path, "%s/read-only", dir);
    if (rank == last) {
        close(open(path, O_CREAT | O_WRONLY, 0444));
        chmod(path, 0444);
    }
    snprintf(bad, sizeof bad, "alloc_type=storage;storage_alloc_filename=%s", path);
    expect_failure(&read_only, good, bad, 3 * page, 0, "%s/new-%d");
    if (rank == last)
        CHECK(mpix_test_file_exists(path), "a file the call did not create must stay");

    error_case directory = { "directory as file", MPIX_ERRKIND_STORAGE_IO, "Is a directory" };
    snprintf(bad, sizeof bad, "alloc_type=storage;storage_alloc_filename=%s", dir);
    expect_failure(&directory, good, bad, 3 * page, 0, "%s/new-%d");

    error_case bad_factor = { "malformed hint", MPIX_ERRKIND_BAD_HINT, "'banana' for hint 'storage_alloc_factor'" };
    snprintf(bad, sizeof bad, "alloc_type=storage;storage_alloc_filename=%s/bad-%d;storage_alloc_factor=banana", dir,
             rank);
    expect_failure(&bad_factor, good, bad, 3 * page, 0, "%s/new-%d");

    error_case no_file = { "storage without a file", MPIX_ERRKIND_BAD_HINT, "needs storage_alloc_filename" };
    expect_failure(&no_file, good, "alloc_type=storage", 3 * page, 0, "%s/new-%d");

    error_case unaligned = { "unaligned offset, combined", MPIX_ERRKIND_ARGUMENT, "storage_alloc_offset 100 is not a multiple" };
    snprintf(bad, sizeof bad,
             "alloc_type=storage;storage_alloc_filename=%s/unaligned-%d;storage_alloc_offset=100;storage_alloc_factor=0.5",
             dir, rank);
    expect_failure(&unaligned, good, bad, 8 * page, 0, "%s/unaligned-%d");
    error_case unaligned_shared = { "unaligned offset, shared", MPIX_ERRKIND_ARGUMENT, "which a shared storage window needs" };
    snprintf(bad, sizeof bad, "alloc_type=storage;storage_alloc_filename=%s/unaligned-%d;storage_alloc_offset=100",
             dir, rank);
    expect_failure(&unaligned_shared, good, bad, 8 * page, 1, "%s/unaligned-%d");

    error_case negative = { "negative size", MPIX_ERRKIND_ARGUMENT, "size -5 is negative" };
    expect_failure(&negative, good, good, rank == last ? -5 : 3 * page, 0, "%s/new-%d");

    /* MPIX_Alloc_mem is local: the error comes back on the caller alone. */
    int maps_before = mpix_test_mapping_count(), error_class, io_class;
    void *memory = NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    snprintf(path, sizeof path, "%s/no-such-dir/alloc-%d", dir, rank);
    MPI_Info_set(info, "storage_alloc_filename", path);
    int rc = MPIX_Alloc_mem(4 * page, info, &memory);
    MPI_Error_class(rc, &error_class);
    MPIX_Query_error_class(MPIX_ERRKIND_STORAGE_IO, &io_class);
    CHECK(error_class == io_class && strstr(mpix_test_error_string(rc), path), "alloc_mem: %s",
          mpix_test_error_string(rc));
    CHECK(mpix_test_mapping_count() == maps_before, "alloc_mem leaked a mapping");
    MPI_Info_free(&info);

    /* The leak check sees what mpix maps: a live window counts, a freed one does not. */
    MPI_Win win;
    void *base;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    snprintf(path, sizeof path, "%s/counted-%d", dir, rank);
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_factor", "0.5");
    maps_before = mpix_test_mapping_count();
    CHECK(MPIX_Win_allocate_shared(8 * page, 1, info, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS, "allocate");
    CHECK(mpix_test_mapping_count() > maps_before, "a live window is not counted (%d)", mpix_test_mapping_count());
    MPIX_Win_free(&win);
    CHECK(mpix_test_mapping_count() == maps_before, "free left %d of mpix's mappings",
          mpix_test_mapping_count() - maps_before);
    MPI_Info_free(&info);

    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("storage_errors");
}
