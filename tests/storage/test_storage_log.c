/* SPDX-License-Identifier: BSD-3-Clause */
/* Windows saved through a redo log: what a restart gets back (a window freed with
 * storage_alloc_discard=true leaves its file and log as a crash would), across sparse
 * records, the area filling up, dense syncs that write a whole image, and RMA stores;
 * then the file safety rules every storage window follows. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#if MPIX_TEST_HAVE_URING
#include <liburing.h>
#endif

static int rank, ranks;
static long long page;
static char dir[256];

enum { PAGES = 64 };

static MPI_Win allocate(const char *path, long long bytes, const char *extra_key, const char *extra_value,
                        unsigned char **base, int *rc_out)
{
    MPI_Info info;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    if (extra_key)
        MPI_Info_set(info, extra_key, extra_value);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    *rc_out = MPIX_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, base, &win);
    MPI_Info_free(&info);
    return win;
}

/* A case's window on its own file, <dir>/<name>-<rank> (into @path), freed later as a
 * crash would leave it (storage_alloc_discard): MPI_WIN_NULL when allocation failed. */
static MPI_Win allocate_case(const char *name, long long bytes, char *path, size_t path_size, unsigned char **base)
{
    int rc;
    snprintf(path, path_size, "%s/%s-%d", dir, name, rank);
    MPI_Win win = allocate(path, bytes, "storage_alloc_discard", "true", base, &rc);
    CHECK(rc == MPI_SUCCESS, "%s: allocate: %s", name, mpix_test_error_string(rc));
    return win;
}

/* How syncs should find changes here: digests where asked for or where this kernel has no
 * asynchronous write-protect (Linux 6.7), else the kernel's written pages. */
static const char *expected_changes(void)
{
    const char *asked = getenv("MPIX_STORAGE_LOG_CHANGES");
    if (asked && strcmp(asked, "digest") == 0)
        return "digest";
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
    struct uffdio_api api = { .api = UFFD_API, .features = 1 << 15 /* UFFD_FEATURE_WP_ASYNC */ };
    int supported = fd >= 0 && ioctl(fd, UFFDIO_API, &api) == 0;
    if (fd >= 0)
        close(fd);
    return supported ? "written" : "digest";
}

static void info_value(MPI_Win win, const char *key, char *value)
{
    MPI_Info used;
    int found = 0;
    MPIX_Win_get_info(win, &used);
    MPI_Info_get(used, key, MPI_MAX_INFO_VAL, value, &found);
    if (!found)
        strcpy(value, "(absent)");
    MPI_Info_free(&used);
}

/* Generation g changes the pages p with (p * 7 + g) % @spread == 0 (all when spread is 1),
 * stamping each byte with g and p: the state after g is a function of g alone. */
static void change(unsigned char *base, long long bytes, int g, int spread)
{
    for (long long p = 0; p < bytes / page; p++)
        if ((p * 7 + g) % spread == 0)
            memset(base + p * page, (int)((g * 31 + p) & 0xff), page);
}

static void sync_window(MPI_Win win)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "sync");
    MPI_Win_unlock(rank, win);
}

/* Sync generations 1..@generations with @spread, then a store that no sync covers; free
 * as a crash would leave it; the next allocation must give back exactly the last sync. */
static void restart_case(const char *name, int generations, int (*spread_of)(int g))
{
    char path[512], value[MPI_MAX_INFO_VAL + 1];
    unsigned char *base, *expected = calloc(PAGES, page);
    long long bytes = PAGES * page;
    int rc;
    MPI_Win win = allocate_case(name, bytes, path, sizeof path, &base);
    info_value(win, "mpix_storage_sync", value);
    CHECK(strcmp(value, "log") == 0, "%s: a window that fits in memory syncs by '%s', want log", name, value);
    info_value(win, "mpix_storage_log_changes", value);
    CHECK(strcmp(value, expected_changes()) == 0, "%s: changes found by '%s', want %s", name, value,
          expected_changes());
    for (int g = 1; g <= generations; g++) {
        change(base, bytes, g, spread_of(g));
        change(expected, bytes, g, spread_of(g));
        sync_window(win);
        info_value(win, "mpix_storage_generation", value);
        CHECK(atoi(value) == g, "%s: generation %s after sync %d", name, value, g);
    }
    /* Whether stores are tracked after the last sync follows the cost the environment
     * sets for a tracked store: 1 ns tracks below a quarter of the pages changed, 1 ms
     * (reading a page costs about 0.2 us) only a handful of pages. */
    const char *fault_ns = getenv("MPIX_STORAGE_STORE_FAULT_NS");
    if (fault_ns && strcmp(expected_changes(), "written") == 0 && spread_of(generations) > 4) {
        info_value(win, "mpix_storage_log_tracking", value);
        const char *want = atoll(fault_ns) < 1000 ? "true" : "false";
        CHECK(strcmp(value, want) == 0, "%s: tracking %s after 1 in %d pages changed, want %s at %s ns a store", name,
              value, spread_of(generations), want, fault_ns);
    }
    memset(base, 0xee, bytes / 2); /* after the last sync: must not survive */
    MPIX_Win_free(&win);

    unsigned char *on_file = malloc(bytes);
    win = allocate(path, bytes, NULL, NULL, &base, &rc);
    CHECK(rc == MPI_SUCCESS, "%s: reallocate: %s", name, mpix_test_error_string(rc));
    CHECK(memcmp(base, expected, bytes) == 0, "%s: the restart did not give back generation %d", name, generations);
    info_value(win, "mpix_storage_generation", value);
    CHECK(atoi(value) == generations, "%s: restarted at generation %s, want %d", name, value, generations);
    /* A normal free brings the file itself up to date and removes the log. */
    base[0] ^= 1;
    expected[0] ^= 1;
    MPIX_Win_free(&win);
    char log_path[600];
    snprintf(log_path, sizeof log_path, "%s.mpix-log.0", path);
    CHECK(!mpix_test_file_exists(log_path), "%s: free left the log %s", name, log_path);
    CHECK(mpix_test_read_file(path, 0, on_file, bytes) == 0 && memcmp(on_file, expected, bytes) == 0,
          "%s: after free the file does not hold the window", name);
    free(on_file);
    free(expected);
}

static int sparse(int g) { (void)g; return 13; }                 /* ~8% of the pages */
static int dense(int g) { (void)g; return 1; }                   /* every page: image switches */
static int mixed(int g) { return g % 4 == 0 ? 1 : (g % 3 ? 29 : 5); }

/* Remote ranks' puts are changes like any other. */
static void rma_case(void)
{
    char path[512];
    unsigned char *base;
    long long bytes = PAGES * page;
    int rc, right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    MPI_Win win = allocate_case("rma", bytes, path, sizeof path, &base);
    memset(base, 0, bytes);
    sync_window(win);
    MPI_Barrier(MPI_COMM_WORLD); /* no put may land before its target has cleared its window */
    unsigned char value[64];
    memset(value, 40 + rank, sizeof value);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(value, sizeof value, MPI_BYTE, right, 5 * page + 100, sizeof value, MPI_BYTE, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    sync_window(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPIX_Win_free(&win);
    win = allocate(path, bytes, NULL, NULL, &base, &rc);
    CHECK(rc == MPI_SUCCESS && base[5 * page + 100] == 40 + left && base[5 * page + 163] == 40 + left &&
              base[5 * page + 99] == 0,
          "rma: the put from rank %d did not come back after restart", left);
    MPIX_Win_free(&win);
}

/* Pages of [base, base + bytes) that hold memory. */
static long long resident_pages(unsigned char *base, long long bytes)
{
    long long pages = bytes / page, count = 0;
    unsigned char *vector = malloc(pages);
    CHECK(mincore(base, bytes, vector) == 0, "mincore: %s", strerror(errno));
    for (long long p = 0; p < pages; p++)
        count += vector[p] & 1;
    free(vector);
    return count;
}

/* A large window a program touches in a few places (a new checkpoint file, most of it
 * never written): allocating it, and syncing it where the kernel lists written pages,
 * neither reads nor populates the rest, and
 * every kind of change still comes back after a restart: stores and remote puts into pages
 * never touched before, before and after the first sync, into a page read but never
 * written, and a page whose memory the program gave back (it holds zeros then). */
static void untouched_case(void)
{
    enum { WIDE = 65536 }; /* 256 MiB of 4 KiB pages */
    char path[512];
    unsigned char *base;
    long long bytes = WIDE * page;
    int rc, right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    MPI_Win win = allocate_case("untouched", bytes, path, sizeof path, &base);
    if (win == MPI_WIN_NULL)
        return;
    CHECK(resident_pages(base, bytes) < 8192, "untouched: allocation populated %lld of %d pages",
          resident_pages(base, bytes), WIDE);
    unsigned char theirs[64];
    memset(theirs, 90 + rank, sizeof theirs);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(theirs, sizeof theirs, MPI_BYTE, right, 1000 * page + 8, sizeof theirs, MPI_BYTE, win);
    MPI_Win_unlock(right, win);
    memset(base + 5 * page, 5, page);
    memset(base + 60000 * page, 6, 16);
    volatile unsigned char read_only = base[7 * page];
    (void)read_only;
    MPI_Barrier(MPI_COMM_WORLD);
    sync_window(win);
    /* Reading every page (digests) maps the zero page into the untouched ones. */
    int listed = strcmp(expected_changes(), "written") == 0;
    CHECK(!listed || resident_pages(base, bytes) < 8192, "untouched: the first sync populated %lld of %d pages",
          resident_pages(base, bytes), WIDE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(theirs, sizeof theirs, MPI_BYTE, right, 2000 * page, sizeof theirs, MPI_BYTE, win);
    MPI_Put(theirs, 8, MPI_BYTE, right, 1000 * page, 8, MPI_BYTE, win);
    MPI_Win_unlock(right, win);
    memset(base + 3000 * page + page - 4, 3, 4);
    base[7 * page + 1] = 7;
    CHECK(madvise(base + 5 * page, page, MADV_DONTNEED) == 0, "madvise: %s", strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    sync_window(win);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(base + 4000 * page, 4, 8); /* after the last sync: must not survive */
    MPIX_Win_free(&win);

    win = allocate(path, bytes, NULL, NULL, &base, &rc);
    CHECK(rc == MPI_SUCCESS, "untouched: reallocate: %s", mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        return;
    unsigned char *expected = calloc(WIDE, page);
    memset(expected + 1000 * page, 90 + left, 8 + sizeof theirs);
    memset(expected + 2000 * page, 90 + left, sizeof theirs);
    memset(expected + 3000 * page + page - 4, 3, 4);
    expected[7 * page + 1] = 7;
    memset(expected + 60000 * page, 6, 16);
    long long wrong = -1;
    for (long long at = 0; at < bytes && wrong < 0; at++)
        if (base[at] != expected[at])
            wrong = at;
    CHECK(wrong < 0, "untouched: after restart byte %lld (page %lld) is %d, want %d", wrong, wrong / page,
          wrong < 0 ? 0 : base[wrong], wrong < 0 ? 0 : expected[wrong]);
    MPIX_Win_free(&win);
    free(expected);
}

#if MPIX_TEST_HAVE_URING
/* Memory pinned for a device is written without the process's page tables: an io_uring
 * read into a registered buffer stands in for an RDMA put into a registered window. With
 * @changes=auto the syncs read every page while the process holds pinned memory, so the
 * read comes back after a restart; with `written` the kernel's list misses it, which the
 * test prints (the reason the check exists) without asserting. */
static void pinned_case(const char *changes)
{
    char path[512], source_path[512];
    unsigned char *base;
    long long bytes = PAGES * page;
    int rc, must_see = strcmp(changes, "written") != 0;
    snprintf(path, sizeof path, "%s/pinned-%s-%d", dir, changes, rank);
    snprintf(source_path, sizeof source_path, "%s/pinned-source-%d", dir, rank);
    MPI_Win win = allocate(path, bytes, "mpix_storage_log_changes", changes, &base, &rc);
    CHECK(rc == MPI_SUCCESS, "pinned %s: allocate: %s", changes, mpix_test_error_string(rc));
    memset(base, 0, bytes);
    sync_window(win);

    struct io_uring ring;
    CHECK(io_uring_queue_init(4, &ring, 0) == 0, "io_uring_queue_init");
    struct iovec registered = { base, (size_t)bytes };
    rc = io_uring_register_buffers(&ring, &registered, 1);
    CHECK(rc == 0, "io_uring_register_buffers of the window: %s (needs RLIMIT_MEMLOCK >= %lld)", strerror(-rc),
          bytes);
    sync_window(win); /* pinning wrote the pages once: from here on they are protected again */

    unsigned char *pattern = malloc(page);
    memset(pattern, 0x50 + rank, page);
    int source = open(source_path, O_CREAT | O_RDWR | O_TRUNC, 0600);
    CHECK(source >= 0 && write(source, pattern, page) == page, "write %s", source_path);
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_read_fixed(sqe, source, base + 3 * page, (unsigned)page, 0, 0);
    struct io_uring_cqe *cqe = NULL;
    CHECK(io_uring_submit(&ring) == 1 && io_uring_wait_cqe(&ring, &cqe) == 0 && cqe->res == page,
          "io_uring read into the registered window");
    if (cqe)
        io_uring_cqe_seen(&ring, cqe);
    CHECK(memcmp(base + 3 * page, pattern, page) == 0, "the io_uring read did not land in the window");
    sync_window(win);
    io_uring_unregister_buffers(&ring);
    io_uring_queue_exit(&ring);
    close(source);
    MPIX_Win_free(&win);

    win = allocate(path, bytes, NULL, NULL, &base, &rc);
    CHECK(rc == MPI_SUCCESS, "pinned %s: reallocate: %s", changes, mpix_test_error_string(rc));
    int came_back = memcmp(base + 3 * page, pattern, page) == 0;
    if (must_see)
        CHECK(came_back, "pinned %s: a write into pinned memory did not come back after restart", changes);
    else if (rank == 0)
        printf("storage_log: with mpix_storage_log_changes=written a write into pinned memory %s\n",
               came_back ? "came back" : "was missed, as documented");
    MPIX_Win_free(&win);
    free(pattern);
}
#endif

static long long size_of(const char *path)
{
    struct stat status;
    return lstat(path, &status) == 0 ? (long long)status.st_size : -1;
}

static void file_safety(void)
{
    char path[512], target[512];
    unsigned char *base;
    int rc;

    /* A symbolic link is refused; its target is left as it was. */
    snprintf(target, sizeof target, "%s/target-%d", dir, rank);
    snprintf(path, sizeof path, "%s/link-%d", dir, rank);
    close(open(target, O_CREAT | O_WRONLY, 0600));
    CHECK(symlink(target, path) == 0, "symlink");
    MPI_Win win = allocate(path, 1 << 20, NULL, NULL, &base, &rc);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_STORAGE_IO) && strstr(mpix_test_error_string(rc), "symbolic link") &&
              win == MPI_WIN_NULL,
          "a symbolic link: '%s'", mpix_test_error_string(rc));
    CHECK(size_of(target) == 0, "the link's target grew to %lld bytes", size_of(target));

    /* Another user's file in a directory anyone may write to (root can plant one). */
    if (geteuid() == 0) {
        char open_dir[300];
        snprintf(open_dir, sizeof open_dir, "%s/sticky", dir);
        if (rank == 0) {
            mkdir(open_dir, 01777);
            chmod(open_dir, 01777);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        snprintf(path, sizeof path, "%s/planted-%d", open_dir, rank);
        close(open(path, O_CREAT | O_WRONLY, 0666));
        CHECK(chown(path, 65534, 65534) == 0, "chown");
        win = allocate(path, 1 << 20, NULL, NULL, &base, &rc);
        CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_STORAGE_IO) && strstr(mpix_test_error_string(rc), "belongs to user"),
              "another user's file in a world-writable directory: '%s'", mpix_test_error_string(rc));
        CHECK(size_of(path) == 0, "the planted file grew to %lld bytes", size_of(path));
    }

    /* A failed allocation gives an existing file back its size: rank 0 fails here. */
    snprintf(path, sizeof path, "%s/existing-%d", dir, rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    CHECK(write(fd, "0123456789", 10) == 10, "write");
    close(fd);
    if (rank == 0 && ranks > 1)
        snprintf(path, sizeof path, "%s/no-such-dir/x", dir);
    win = allocate(path, 4 << 20, ranks > 1 ? NULL : "storage_alloc_offset", "-1", &base, &rc);
    CHECK(rc != MPI_SUCCESS && win == MPI_WIN_NULL, "allocation that fails on rank 0 succeeded");
    snprintf(path, sizeof path, "%s/existing-%d", dir, rank);
    CHECK(size_of(path) == 10, "a failed allocation left the existing file at %lld bytes, want 10", size_of(path));

    /* A mode without the owner's write bit can never work: a bad hint at once. */
    snprintf(path, sizeof path, "%s/readonly-%d", dir, rank);
    win = allocate(path, 1 << 20, "file_perm", "0444", &base, &rc);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_BAD_HINT) && strstr(mpix_test_error_string(rc), "0444"),
          "file_perm=0444: '%s'", mpix_test_error_string(rc));
    CHECK(!mpix_test_file_exists(path), "file_perm=0444 left %s", path);

    /* Two windows on the same bytes: the second is an error naming the file. */
    snprintf(path, sizeof path, "%s/twice-%d", dir, rank);
    MPI_Win first = allocate(path, 1 << 20, "storage_alloc_unlink", "true", &base, &rc);
    CHECK(rc == MPI_SUCCESS, "first window: %s", mpix_test_error_string(rc));
    unsigned char *second_base;
    MPI_Win second = allocate(path, 1 << 20, "storage_alloc_unlink", "true", &second_base, &rc);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_STORAGE_IO) && strstr(mpix_test_error_string(rc), "in use by another") &&
              strstr(mpix_test_error_string(rc), path) && second == MPI_WIN_NULL,
          "second window on %s: '%s'", path, mpix_test_error_string(rc));
    CHECK(mpix_test_file_exists(path), "the refused second window removed the file of the first");
    MPIX_Win_free(&first);
    CHECK(!mpix_test_file_exists(path), "storage_alloc_unlink left %s", path);

    /* Inside one page the claim is byte for byte: 16 bytes at offset 8 overlap 16 at 0,
     * 16 at offset 16 do not. */
    snprintf(path, sizeof path, "%s/page-sharers-%d", dir, rank);
    first = allocate(path, 16, "storage_alloc_offset", "0", &base, &rc);
    CHECK(rc == MPI_SUCCESS, "16 bytes at offset 0: %s", mpix_test_error_string(rc));
    second = allocate(path, 16, "storage_alloc_offset", "8", &second_base, &rc);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_STORAGE_IO) && strstr(mpix_test_error_string(rc), "bytes 8 to 24") &&
              second == MPI_WIN_NULL,
          "16 bytes at offset 8 beside 16 at 0: '%s'", mpix_test_error_string(rc));
    second = allocate(path, 16, "storage_alloc_offset", "16", &second_base, &rc);
    CHECK(rc == MPI_SUCCESS, "16 bytes at offset 16 beside 16 at 0: %s", mpix_test_error_string(rc));
    if (first != MPI_WIN_NULL && second != MPI_WIN_NULL) {
        memset(base, 'a', 16);
        memset(second_base, 'b', 16);
        MPIX_Win_sync(first);
        MPIX_Win_sync(second);
        memset(second_base, 'c', 16);   /* written back at free */
    }
    if (first != MPI_WIN_NULL)
        MPIX_Win_free(&first);
    if (second != MPI_WIN_NULL)
        MPIX_Win_free(&second);
    char sharers[33] = "";
    int sharers_fd = open(path, O_RDONLY);
    CHECK(sharers_fd >= 0 && pread(sharers_fd, sharers, 32, 0) == 32 &&
              strcmp(sharers, "aaaaaaaaaaaaaaaacccccccccccccccc") == 0,
          "two windows in one page left '%.32s' in %s", sharers, path);
    if (sharers_fd >= 0)
        close(sharers_fd);
    unlink(path);

    /* NULL outputs: an argument error on every rank, nothing left behind. */
    snprintf(path, sizeof path, "%s/null-%d", dir, rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    rc = MPIX_Win_allocate(1 << 20, 1, info, MPI_COMM_WORLD, NULL, &win);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT) && strstr(mpix_test_error_string(rc), "baseptr"),
          "NULL baseptr: '%s'", mpix_test_error_string(rc));
    rc = MPIX_Win_allocate(1 << 20, 1, info, MPI_COMM_WORLD, &base, NULL);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT), "NULL win: '%s'", mpix_test_error_string(rc));
    rc = MPIX_Win_allocate_shared(1 << 20, 1, info, MPI_COMM_WORLD, NULL, &win);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT), "shared, NULL baseptr: '%s'", mpix_test_error_string(rc));
    MPI_Info_free(&info);
    CHECK(!mpix_test_file_exists(path), "a NULL output left %s", path);
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &ranks);
    page = sysconf(_SC_PAGESIZE);
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);
    restart_case("sparse", 30, sparse); /* the area fills about every 12 syncs */
    restart_case("dense", 5, dense);
    restart_case("mixed", 23, mixed);
    restart_case("one", 1, sparse);
    rma_case();
    untouched_case();
#if MPIX_TEST_HAVE_URING
    pinned_case("auto");
    pinned_case("written");
#else
    CHECK(0, "built without liburing: the pinned-memory case cannot run");
#endif
    file_safety();
    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("storage_log");
}
