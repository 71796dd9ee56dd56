/* SPDX-License-Identifier: BSD-3-Clause */
/* Crash consistency of logged storage windows, driven by crash.sh.
 *   loop DIR:  resume from what the window recovers, then rewrite and sync generation
 *              after generation (sparse, dense and mixed changes) until killed; after each
 *              sync, record its number durably in DIR/progress-RANK.
 *   check DIR: allocate the window again and check that it holds exactly one completed
 *              generation, the last recorded one or the one after it (killed between its
 *              sync and the record), never a mix and never stores made after it. */
#include <mpix/mpix.h>
#include "mpix_test.h"

enum { PAGES = 192 };

static int rank, ranks;
static long long page;

/* Generation g's changes: a function of g alone, so the state after g is too. */
static void change(unsigned char *base, long long g)
{
    int spread = g % 7 == 0 ? 1 : (g % 3 == 0 ? 5 : 37);
    for (long long p = 0; p < PAGES; p++)
        if ((p * 11 + g) % spread == 0) {
            memset(base + p * page, (int)((g * 131 + p) & 0xff), page);
            memcpy(base + p * page, &g, sizeof g);
        }
}

static MPI_Win allocate(const char *dir, unsigned char **base, long long *generation)
{
    char path[512], value[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    MPI_Win win;
    int found = 0;
    snprintf(path, sizeof path, "%s/window-%d", dir, rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_discard", "true"); /* the next run recovers from the log */
    int rc = MPIX_Win_allocate(PAGES * page, 1, info, MPI_COMM_WORLD, base, &win);
    MPI_Info_free(&info);
    CHECK(rc == MPI_SUCCESS, "allocate: %s", mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Info used;
    MPIX_Win_get_info(win, &used);
    MPI_Info_get(used, "mpix_storage_generation", MPI_MAX_INFO_VAL, value, &found);
    MPI_Info_free(&used);
    CHECK(found, "mpix_storage_generation missing: the window is not logged");
    *generation = found ? atoll(value) : 0;
    return win;
}

static long long read_progress(const char *dir)
{
    char path[512];
    long long done = 0;
    snprintf(path, sizeof path, "%s/progress-%d", dir, rank);
    if (mpix_test_read_file(path, 0, &done, sizeof done) != 0)
        done = 0;
    return done;
}

static void loop(const char *dir)
{
    unsigned char *base;
    long long generation, progress;
    char path[512];
    MPI_Win win = allocate(dir, &base, &generation);
    snprintf(path, sizeof path, "%s/progress-%d", dir, rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    for (;;) {
        change(base, ++generation);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "sync %lld", generation);
        MPI_Win_unlock(rank, win);
        progress = generation;
        if (pwrite(fd, &progress, sizeof progress, 0) != sizeof progress || fdatasync(fd) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        change(base, generation + 1); /* stores no sync will cover before the kill */
        generation = progress;
    }
}

static int check(const char *dir)
{
    unsigned char *base, *expected = calloc(PAGES, page);
    long long generation, done = read_progress(dir);
    MPI_Win win = allocate(dir, &base, &generation);
    for (long long g = 1; g <= generation; g++)
        change(expected, g);
    CHECK(generation == done || generation == done + 1,
          "recovered generation %lld; the last sync recorded as complete was %lld", generation, done);
    long long first_bad = -1;
    for (long long p = 0; p < PAGES && first_bad < 0; p++)
        if (memcmp(base + p * page, expected + p * page, page) != 0)
            first_bad = p;
    long long stamp = 0;
    if (first_bad >= 0)
        memcpy(&stamp, base + first_bad * page, sizeof stamp);
    CHECK(first_bad < 0, "not generation %lld: page %lld differs (it carries generation %lld)", generation,
          first_bad, stamp);
    if (rank == 0)
        printf("check: generation %lld recovered (last recorded %lld)\n", generation, done);
    MPIX_Win_free(&win);
    free(expected);
    return 0;
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &ranks);
    page = sysconf(_SC_PAGESIZE);
    if (argc == 3 && strcmp(argv[1], "loop") == 0)
        loop(argv[2]);
    else if (argc == 3 && strcmp(argv[1], "check") == 0)
        check(argv[2]);
    else
        CHECK(0, "usage: test_storage_crash loop|check DIR");
    return mpix_test_finish("storage_crash");
}
