/* SPDX-License-Identifier: BSD-3-Clause */
/* Dirty-tracking granularity of storage windows (docs/storage.md, "Costs"): auto starts
 * with 2 MiB tracking and probes the first interval, moves back to 2 MiB after two dense
 * intervals, probes a sample by page after 4 then 8 syncs, returns to page tracking when
 * changes thin out; access_style=random starts with pages; page and huge pin it; a
 * readahead access_style means page; on tmpfs auto stays with pages. After
 * every switch the window and its file hold exactly what was written. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <linux/magic.h>
#include <sys/vfs.h>

#define WINDOW_BYTES (16LL << 20) /* 8 units of 2 MiB */
#define HUGE_BYTES (2LL << 20)

static int rank, ranks;
static long long page;
static char dir[256];

typedef struct tracked {
    MPI_Win win;
    unsigned char *base;
    unsigned char *expected; /* what the window and, after a sync, its file must hold */
    char path[512];
    int round;
} tracked;

static void open_window(tracked *t, const char *name, const char *policy, const char *access_style)
{
    MPI_Info info;
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s/%s-%d", dir, name, rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", t->path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    MPI_Info_set(info, "mpix_storage_huge_percent", "20");
    if (policy)
        MPI_Info_set(info, "mpix_storage_tracking", policy);
    if (access_style)
        MPI_Info_set(info, "access_style", access_style);
    int rc = MPIX_Win_allocate(WINDOW_BYTES, 1, info, MPI_COMM_WORLD, &t->base, &t->win);
    CHECK(rc == MPI_SUCCESS, "allocate %s: %s", name, mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Info_free(&info);
    t->expected = calloc(WINDOW_BYTES, 1);
}

static void close_window(tracked *t)
{
    MPIX_Win_free(&t->win);
    free(t->expected);
}

static void info_value(tracked *t, const char *key, char *value)
{
    MPI_Info used;
    int found = 0;
    MPIX_Win_get_info(t->win, &used);
    MPI_Info_get(used, key, MPI_MAX_INFO_VAL, value, &found);
    if (!found)
        strcpy(value, "(absent)");
    MPI_Info_free(&used);
}

static long long granularity(tracked *t)
{
    char value[MPI_MAX_INFO_VAL + 1];
    info_value(t, "mpix_storage_tracking_bytes", value);
    return atoll(value);
}

/* Change one byte in every @stride bytes (a fresh value each round), sync under an
 * exclusive self-lock, and check the window and the file. */
static void change_and_sync(tracked *t, long long stride)
{
    t->round++;
    for (long long at = (t->round * 977) % page; at < WINDOW_BYTES; at += stride) {
        t->base[at] = (unsigned char)(t->round * 13 + at / page);
        t->expected[at] = t->base[at];
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, t->win);
    CHECK(MPIX_Win_sync(t->win) == MPI_SUCCESS, "sync round %d", t->round);
    MPI_Win_unlock(rank, t->win);
    CHECK(memcmp(t->base, t->expected, WINDOW_BYTES) == 0, "%s: window lost data at round %d", t->path, t->round);
    unsigned char *file = malloc(WINDOW_BYTES);
    CHECK(mpix_test_read_file(t->path, 0, file, WINDOW_BYTES) == 0 && memcmp(file, t->expected, WINDOW_BYTES) == 0,
          "%s: file differs from the window after sync round %d", t->path, t->round);
    free(file);
}

static void expect_granularity(tracked *t, long long bytes, const char *when)
{
    long long now = granularity(t);
    CHECK(now == bytes, "%s: tracking %lld bytes %s, want %lld", t->path, now, when, bytes);
}

static void expect_probe(tracked *t, int probing, const char *when)
{
    char value[MPI_MAX_INFO_VAL + 1];
    info_value(t, "mpix_storage_tracking_probe", value);
    CHECK(strcmp(value, probing ? "true" : "false") == 0, "%s: mpix_storage_tracking_probe '%s' %s", t->path, value,
          when);
}

static int on_tmpfs(const char *path)
{
    struct statfs status;
    return statfs(path, &status) == 0 && (unsigned long)status.f_type == TMPFS_MAGIC;
}

static void test_auto(int can_measure)
{
    tracked t;
    char value[MPI_MAX_INFO_VAL + 1];
    open_window(&t, "auto", NULL, NULL);
    info_value(&t, "mpix_storage_tracking", value);
    CHECK(strcmp(value, "auto") == 0, "default policy '%s', want auto", value);
    info_value(&t, "mpix_storage_huge_percent", value);
    CHECK(strcmp(value, "20") == 0, "mpix_storage_huge_percent reported '%s'", value);
    if (!can_measure) {
        expect_granularity(&t, page, "at allocation");
        for (int i = 0; i < 3; i++)
            change_and_sync(&t, page);
        expect_granularity(&t, page, "where the kernel cannot count dirty pages");
        close_window(&t);
        return;
    }
    /* 2 MiB from the start; the first sync (everything written) starts a probe... */
    expect_granularity(&t, HUGE_BYTES, "at allocation");
    expect_probe(&t, 0, "at allocation");
    change_and_sync(&t, page);
    expect_granularity(&t, HUGE_BYTES, "after the first sync");
    expect_probe(&t, 1, "after the first sync");
    /* ...whose sample finds 1 page in 64 changed (1.6% < 20%): page tracking. */
    change_and_sync(&t, 64 * page);
    expect_granularity(&t, page, "after a sparse first probe");
    expect_probe(&t, 0, "after a sparse first probe");
    change_and_sync(&t, page); /* every page: one dense interval is not enough */
    expect_granularity(&t, page, "after one dense interval");
    change_and_sync(&t, page);
    expect_granularity(&t, HUGE_BYTES, "after two dense intervals");
    /* Dense under 2 MiB tracking: the fourth sync starts a probe (a sample by page)... */
    for (int i = 1; i <= 4; i++) {
        change_and_sync(&t, page);
        expect_granularity(&t, HUGE_BYTES, "during the first probe period");
        expect_probe(&t, i == 4, "during the first probe period");
    }
    /* ...whose sample, still dense, keeps 2 MiB, the next probe 8 syncs later. */
    change_and_sync(&t, page);
    expect_granularity(&t, HUGE_BYTES, "after a dense probe");
    expect_probe(&t, 0, "after a dense probe");
    for (int i = 1; i <= 8; i++) {
        change_and_sync(&t, 64 * page); /* one page in 64: every 2 MiB unit still dirty */
        expect_granularity(&t, HUGE_BYTES, "during the second probe period");
        expect_probe(&t, i == 8, "during the second probe period");
    }
    /* The sample finds 1 page in 64 changed (1.6% < 20%): page tracking for all. */
    change_and_sync(&t, 64 * page);
    expect_granularity(&t, page, "after a sparse probe");
    expect_probe(&t, 0, "after a sparse probe");
    /* Dense again, then a single changed 2 MiB unit (12.5% < 20% even counted whole):
     * back to page tracking without waiting for a probe. */
    change_and_sync(&t, page);
    change_and_sync(&t, page);
    expect_granularity(&t, HUGE_BYTES, "dense again");
    change_and_sync(&t, WINDOW_BYTES);
    expect_granularity(&t, page, "after one changed 2 MiB unit");
    close_window(&t);
}

/* access_style=random promises small scattered accesses: auto starts with pages there
 * (a 2 MiB folio per touch would read 512 pages for one), then decides as usual. */
static void test_random_start(int can_measure)
{
    tracked t;
    open_window(&t, "auto-random", NULL, "random");
    expect_granularity(&t, page, "at allocation with access_style=random");
    change_and_sync(&t, page);
    expect_granularity(&t, page, "after one dense interval with access_style=random");
    change_and_sync(&t, page);
    expect_granularity(&t, can_measure ? HUGE_BYTES : page, "after two dense intervals with access_style=random");
    close_window(&t);
}

/* tmpfs has no device to write back to and cachestat counts none of its pages dirty:
 * auto never leaves page tracking there. */
static void test_tmpfs(void)
{
    tracked t;
    char saved[256];
    if (!on_tmpfs("/dev/shm")) {
        if (rank == 0)
            printf("storage_tracking: /dev/shm is not a tmpfs here; tmpfs case not run\n");
        return;
    }
    snprintf(saved, sizeof saved, "%s", dir);
    snprintf(dir, sizeof dir, "/dev/shm");
    open_window(&t, "mpix-test-tracking-tmpfs", NULL, NULL);
    snprintf(dir, sizeof dir, "%s", saved);
    for (int i = 0; i < 3; i++)
        change_and_sync(&t, page);
    expect_granularity(&t, page, "after dense syncs on tmpfs");
    close_window(&t);
}

static void test_pinned(void)
{
    const char *policies[][3] = { { "page", "page", NULL }, { "huge", "huge", NULL },
                                  { "auto-sequential", "auto", "sequential" } };
    for (int p = 0; p < 3; p++) {
        tracked t;
        char value[MPI_MAX_INFO_VAL + 1];
        long long want = p == 1 ? HUGE_BYTES : page;
        open_window(&t, policies[p][0], policies[p][1], policies[p][2]);
        info_value(&t, "mpix_storage_tracking", value);
        CHECK(strcmp(value, p == 1 ? "huge" : "page") == 0, "%s: policy reported '%s'", policies[p][0], value);
        for (int i = 0; i < 4; i++) {
            change_and_sync(&t, i % 2 ? page : WINDOW_BYTES);
            expect_granularity(&t, want, policies[p][0]);
        }
        close_window(&t);
    }
}

static void test_bad_values(void)
{
    const char *bad[][2] = { { "mpix_storage_tracking", "folio" }, { "mpix_storage_huge_percent", "150" },
                             { "mpix_storage_huge_percent", "-1" } };
    for (int i = 0; i < 3; i++) {
        MPI_Info info;
        MPI_Win win = MPI_WIN_NULL;
        unsigned char *base;
        char path[512], message[MPI_MAX_ERROR_STRING];
        int length;
        snprintf(path, sizeof path, "%s/bad-%d-%d", dir, i, rank);
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_type", "storage");
        MPI_Info_set(info, "storage_alloc_filename", path);
        MPI_Info_set(info, bad[i][0], bad[i][1]);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPIX_Win_allocate(page, 1, info, MPI_COMM_WORLD, &base, &win);
        CHECK(rc != MPI_SUCCESS, "%s=%s accepted", bad[i][0], bad[i][1]);
        if (rc != MPI_SUCCESS) {
            MPI_Error_string(rc, message, &length);
            CHECK(strstr(message, bad[i][0]) && strstr(message, bad[i][1]), "error '%s' should name %s=%s", message,
                  bad[i][0], bad[i][1]);
        } else {
            MPIX_Win_free(&win);
        }
        CHECK(!mpix_test_file_exists(path), "a refused allocation left %s", path);
        MPI_Info_free(&info);
    }
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &ranks);
    page = sysconf(_SC_PAGESIZE);
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);
    /* auto needs cachestat (Linux 6.5) and a file system that writes back. */
    char probe[512];
    snprintf(probe, sizeof probe, "%s/probe-%d", dir, rank);
    FILE *file = fopen(probe, "w");
    if (file)
        fclose(file);
    int can_measure = mpix_test_dirty_pages(probe) >= 0 && !on_tmpfs(dir);
    remove(probe);
    if (rank == 0 && !can_measure)
        printf("storage_tracking: no cachestat or a tmpfs /tmp: auto must stay with page tracking\n");
    test_auto(can_measure);
    test_random_start(can_measure);
    test_tmpfs();
    test_pinned();
    test_bad_values();
    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("storage_tracking");
}
