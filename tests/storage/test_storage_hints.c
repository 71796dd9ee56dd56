/* SPDX-License-Identifier: BSD-3-Clause */
/* Every storage hint, observed through the file itself: where each byte of the window
 * lands (offset, shared files, factor, order, auto), the file's mode, unlink, discard
 * and plain memory windows staying on MPI_Win_allocate. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <sys/mman.h>

static int rank, ranks;
static long long page;
static char dir[256];

static void fill(unsigned char *base, long long size, int seed)
{
    for (long long i = 0; i < size; i++)
        base[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 12));
}

/* The file holds bytes [from, from + length) of a window filled with @seed, at @offset. */
static int file_holds(const char *path, long long offset, long long from, long long length, int seed)
{
    unsigned char *expected = malloc(from + length + 1), *actual = malloc(length + 1);
    int same;
    fill(expected, from + length, seed);
    same = mpix_test_read_file(path, offset, actual, length) == 0 && memcmp(expected + from, actual, length) == 0;
    free(expected);
    free(actual);
    return same;
}

static long long file_size(const char *path)
{
    struct stat status;
    return stat(path, &status) == 0 ? (long long)status.st_size : -1;
}

static int file_mode(const char *path)
{
    struct stat status;
    return stat(path, &status) == 0 ? (int)(status.st_mode & 0777) : -1;
}

/* Allocate a window of @size with @hints ("key=value;key=value"), fill, sync, return base. */
static MPI_Win allocate(long long size, const char *hints, unsigned char **base, int seed)
{
    MPI_Info info;
    MPI_Win win = MPI_WIN_NULL;
    char copy[1024], *save = NULL;
    MPI_Info_create(&info);
    snprintf(copy, sizeof copy, "%s", hints);
    for (char *pair = strtok_r(copy, ";", &save); pair; pair = strtok_r(NULL, ";", &save)) {
        char *equals = strchr(pair, '=');
        *equals = '\0';
        MPI_Info_set(info, pair, equals + 1);
    }
    int rc = MPIX_Win_allocate(size, 1, info, MPI_COMM_WORLD, base, &win);
    CHECK(rc == MPI_SUCCESS, "allocate %lld with '%s': %s", size, hints, mpix_test_error_string(rc));
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) {
        /* The documented pattern: an exclusive lock on oneself keeps remote writers out
         * while the window is made durable (and MPICH wants MPI_Win_sync in an epoch). */
        fill(*base, size, seed);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "sync");
        MPI_Win_unlock(rank, win);
    } else {
        MPI_Abort(MPI_COMM_WORLD, 1); /* nothing below can run without the window */
    }
    return win;
}

static void test_memory_window_is_mpi(void)
{
    unsigned char *base;
    MPI_Win win = allocate(4096, "alloc_type=memory", &base, 1);
    int *flavor, found;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &found);
    CHECK(found && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "memory window flavor %d, want MPI_Win_allocate's", *flavor);
    MPIX_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "freed handle");
}

static void test_own_file(void)
{
    char path[512], hints[700];
    unsigned char *base;
    long long size = 5 * page + 123;
    snprintf(path, sizeof path, "%s/own-%d", dir, rank);
    snprintf(hints, sizeof hints, "alloc_type=storage;storage_alloc_filename=%s", path);
    MPI_Win win = allocate(size, hints, &base, 2);
    int *flavor, found;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &found);
    CHECK(*flavor == MPI_WIN_FLAVOR_CREATE, "storage window flavor %d", *flavor);
    CHECK(file_holds(path, 0, 0, size, 2), "window bytes not in %s", path);
    CHECK(file_size(path) == size, "file size %lld, want %lld", file_size(path), size);
    CHECK(file_mode(path) == 0600, "new file mode %o, want 0600", file_mode(path));
    /* A storage window may also be synced outside any epoch (MPICH refuses that for
     * plain MPI_Win_sync). */
    base[0] ^= 0xff;
    CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "sync outside an epoch");
    base[0] ^= 0xff;
    CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "sync outside an epoch");
    MPIX_Win_free(&win);
    CHECK(mpix_test_file_exists(path), "file must stay without storage_alloc_unlink");

    /* Allocating again on the same file and offset gives the data back. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    CHECK(MPIX_Win_allocate(size, 1, info, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS, "reallocate");
    unsigned char *expected = malloc(size);
    fill(expected, size, 2);
    CHECK(memcmp(base, expected, size) == 0, "data did not come back from %s", path);
    free(expected);
    MPIX_Win_free(&win);
    CHECK(!mpix_test_file_exists(path), "storage_alloc_unlink=true left %s", path);
    MPI_Info_free(&info);
}

static void test_offsets_and_shared_file(void)
{
    char path[512], hints[800];
    unsigned char *first, *second;
    long long size = 2 * page + 10;
    /* Every rank names the same file and offset: consecutive page-rounded slots by rank. */
    snprintf(path, sizeof path, "%s/shared-file", dir);
    snprintf(hints, sizeof hints, "alloc_type=storage;storage_alloc_filename=%s;storage_alloc_offset=%lld;file_perm=0640",
             path, 4 * page);
    MPI_Win win1 = allocate(size, hints, &first, 3 + rank);
    long long slot = 3 * page; /* page-rounded size */
    /* A second window on the same file further on: both keep their bytes. A logged window
     * brings its file up to date at free, so the file is read after. */
    /* Inside a page: allowed for a pure storage window (a multiple of 16, which MPICH 4.0
     * over UCX needs of a window's base). */
    long long second_offset = 4 * page + ranks * slot + 112;
    snprintf(hints, sizeof hints, "alloc_type=storage;storage_alloc_filename=%s;storage_alloc_offset=%lld", path,
             second_offset);
    MPI_Win win2 = allocate(size, hints, &second, 50 + rank);
    CHECK(((unsigned long)second % page) == 112, "offset inside a page maps to base %% page = %lu",
          (unsigned long)second % page);
    MPIX_Win_free(&win1);
    MPIX_Win_free(&win2);
    CHECK(file_holds(path, 4 * page + rank * slot, 0, size, 3 + rank), "rank %d's slot in the shared file", rank);
    CHECK(file_holds(path, second_offset + rank * slot, 0, size, 50 + rank), "second window in the shared file");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(file_mode(path) == 0640, "file_perm=0640 gave %o", file_mode(path));
}

/* file_perm as a program prints a mode with %d (0640 is 416), the way programs written
 * for the storage-window PMPI library pass it. */
static void test_decimal_file_perm(void)
{
    char path[512], hints[800];
    unsigned char *base;
    snprintf(path, sizeof path, "%s/decimal-perm-%d", dir, rank);
    snprintf(hints, sizeof hints, "alloc_type=storage;storage_alloc_filename=%s;file_perm=416;storage_alloc_unlink=false",
             path);
    MPI_Win win = allocate(page, hints, &base, 9);
    MPIX_Win_free(&win);
    CHECK(file_mode(path) == 0640, "file_perm=416 gave %o", file_mode(path));
}

static void test_factor_and_order(void)
{
    char path[512], hints[800];
    unsigned char *base;
    long long size = 8 * page + 500;
    for (int storage_first = 0; storage_first < 2; storage_first++) {
        snprintf(path, sizeof path, "%s/combined-%d-%d", dir, storage_first, rank);
        snprintf(hints, sizeof hints,
                 "alloc_type=storage;storage_alloc_filename=%s;storage_alloc_factor=0.5;storage_alloc_order=%s", path,
                 storage_first ? "storage_first" : "memory_first");
        MPI_Win win = allocate(size, hints, &base, 7);
        /* memory_first: memory = 4 pages (half, rounded down to pages), storage the rest.
         * storage_first: storage = whole pages of the other half, memory the rest. */
        long long memory = storage_first ? size - 4 * page : 4 * page, storage = size - memory;
        CHECK(file_size(path) == storage, "%s: file holds %lld bytes, storage part is %lld", hints, file_size(path),
              storage);
        CHECK(file_holds(path, 0, storage_first ? 0 : memory, storage, 7), "%s: storage part not in the file", hints);
        MPIX_Win_free(&win);
    }
}

static void test_auto(void)
{
    char path[512], hints[800];
    unsigned char *base;
    long long size = 16 * page;
    /* The node offers 8 pages per rank to factor=auto (MPIX_STORAGE_NODE_MEMORY, a
     * documented knob): half of each window stays in memory, the rest goes to the file. */
    char budget[64];
    snprintf(budget, sizeof budget, "%lld", 8 * page * ranks);
    setenv("MPIX_STORAGE_NODE_MEMORY", budget, 1);
    snprintf(path, sizeof path, "%s/auto-%d", dir, rank);
    snprintf(hints, sizeof hints, "alloc_type=storage;storage_alloc_filename=%s;storage_alloc_factor=auto", path);
    MPI_Win win = allocate(size, hints, &base, 9);
    CHECK(file_size(path) == 8 * page, "auto: %lld bytes on storage, want %lld", file_size(path), 8 * page);
    CHECK(file_holds(path, 0, 8 * page, 8 * page, 9), "auto: storage part");
    MPIX_Win_free(&win);
    /* Enough memory: nothing goes to storage, no file is made. */
    snprintf(budget, sizeof budget, "%lld", 64 * page * ranks);
    setenv("MPIX_STORAGE_NODE_MEMORY", budget, 1);
    snprintf(path, sizeof path, "%s/auto-fits-%d", dir, rank);
    snprintf(hints, sizeof hints, "alloc_type=storage;storage_alloc_filename=%s;storage_alloc_factor=auto", path);
    win = allocate(size, hints, &base, 10);
    CHECK(!mpix_test_file_exists(path), "auto with room in memory made %s", path);
    MPIX_Win_free(&win);
    unsetenv("MPIX_STORAGE_NODE_MEMORY");
}

static void test_discard_access_striping(void)
{
    char path[512], hints[800], text[4096] = "", one_free[2048];
    unsigned char *base;
    for (int discard = 0; discard < 2; discard++) {
        snprintf(path, sizeof path, "%s/discard-%d-%d", dir, discard, rank);
        snprintf(hints, sizeof hints,
                 "alloc_type=storage;storage_alloc_filename=%s;storage_alloc_discard=%s;access_style=random,read_mostly;"
                 "striping_factor=4;striping_unit=1048576;mpix_verbose=true",
                 path, discard ? "true" : "false");
        MPI_Win win = allocate(3 * page, hints, &base, 11);
        MPI_Info used;
        char value[MPI_MAX_INFO_VAL + 1];
        int found = 0;
        MPIX_Win_get_info(win, &used);
        const char *expected[][2] = { { "alloc_type", "storage" }, { "storage_alloc_filename", path },
                                      { "storage_alloc_discard", discard ? "true" : "false" },
                                      { "access_style", "read_mostly,random" }, { "striping_factor", "4" },
                                      { "striping_unit", "1048576" }, { "storage_alloc_factor", "0" },
                                      { "file_perm", "0600" }, { "storage_alloc_offset", "0" } };
        for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
            MPI_Info_get(used, expected[i][0], MPI_MAX_INFO_VAL, value, &found);
            CHECK(found && strcmp(value, expected[i][1]) == 0, "MPIX_Win_get_info %s='%s', want '%s'",
                  expected[i][0], found ? value : "(absent)", expected[i][1]);
        }
        MPI_Info_free(&used);
        /* mpix_verbose=true on this window alone: what its free did is reported. */
        mpix_test_capture capture;
        mpix_test_capture_begin(&capture);
        MPIX_Win_free(&win);
        mpix_test_capture_end(&capture, one_free, sizeof one_free);
        strncat(text, one_free, sizeof text - strlen(text) - 1);
    }
    CHECK(strstr(text, "free: flushed") && strstr(text, "free: no final flush (storage_alloc_discard)"),
          "free should flush once and skip once: '%s'", text);
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &ranks);
    page = sysconf(_SC_PAGESIZE);
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);
    test_memory_window_is_mpi();
    test_own_file();
    test_offsets_and_shared_file();
    test_decimal_file_perm();
    test_factor_and_order();
    test_auto();
    test_discard_access_striping();
    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("storage_hints");
}
