/* SPDX-License-Identifier: BSD-3-Clause */
/* Every MPI-3 RMA call from remote ranks into storage windows (pure storage, combined
 * memory+storage both orders, shared storage, dynamic storage), then MPIX_Win_sync on
 * each target and a read of its file: what RMA wrote on the storage part is durable. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <stdint.h>

enum { PRIVATE_STORAGE, COMBINED_MEMORY_FIRST, COMBINED_STORAGE_FIRST, SHARED_STORAGE, SHARED_COMBINED,
       DYNAMIC_STORAGE, CASE_COUNT };
static const char *case_names[CASE_COUNT] = { "storage", "combined memory_first", "combined storage_first",
                                              "shared storage", "shared combined", "dynamic storage" };

static int rank, ranks;
static long long page;
static char dir[256];

typedef struct window_case {
    int kind;
    MPI_Win win;
    int *local;             /* this rank's window memory */
    long long count;        /* ints in each rank's window */
    MPI_Aint *displacement; /* byte displacement of each rank's window start (dynamic: its address) */
    char path[512];
} window_case;

/* Pure storage windows of one process go through a redo log unless the run asks for
 * in-place write-back (MPIX_STORAGE_SYNC=in_place); shared and combined windows (a
 * memory budget: out-of-core) always write back in place. */
static int logged(int kind)
{
    const char *mode = getenv("MPIX_STORAGE_SYNC");
    return (kind == PRIVATE_STORAGE || kind == DYNAMIC_STORAGE) && !(mode && strcmp(mode, "in_place") == 0);
}

static MPI_Aint at(window_case *w, int target, long long index)
{
    return w->displacement[target] + (MPI_Aint)(index * (long long)sizeof(int));
}

static void open_case(window_case *w, int kind)
{
    MPI_Info info;
    MPI_Info_create(&info);
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->count = 4 * page / (long long)sizeof(int);
    w->displacement = calloc(ranks, sizeof *w->displacement);
    snprintf(w->path, sizeof w->path, "%s/rma-%d-%d", dir, kind, rank);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", w->path);
    if (kind == COMBINED_MEMORY_FIRST || kind == COMBINED_STORAGE_FIRST || kind == SHARED_COMBINED)
        MPI_Info_set(info, "storage_alloc_factor", "0.5");
    if (kind == COMBINED_STORAGE_FIRST)
        MPI_Info_set(info, "storage_alloc_order", "storage_first");
    long long bytes = w->count * (long long)sizeof(int);
    int rc;
    if (kind == SHARED_STORAGE || kind == SHARED_COMBINED) {
        rc = MPIX_Win_allocate_shared(bytes, 1, info, MPI_COMM_WORLD, &w->local, &w->win);
    } else if (kind == DYNAMIC_STORAGE) {
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        if (rc == MPI_SUCCESS)
            rc = MPIX_Alloc_mem(bytes, info, &w->local);
        if (rc == MPI_SUCCESS)
            rc = MPIX_Win_attach(w->win, w->local, bytes);
        MPI_Aint mine;
        MPI_Get_address(w->local, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w->displacement, 1, MPI_AINT, MPI_COMM_WORLD);
    } else {
        rc = MPIX_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &w->local, &w->win);
    }
    CHECK(rc == MPI_SUCCESS, "%s: %s", case_names[kind], mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long long i = 0; i < w->count; i++)
        w->local[i] = -1;
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void close_case(window_case *w)
{
    if (w->kind == DYNAMIC_STORAGE) {
        MPIX_Win_detach(w->win, w->local);
        MPI_Win_free(&w->win);
        MPIX_Free_mem(w->local);
    } else {
        MPIX_Win_free(&w->win);
    }
    free(w->displacement);
}

/* MPIX_Win_flush_storage: on a shared storage window the origin makes the target's
 * segment durable itself; elsewhere it completes the RMA and says it cannot. */
static void check_flush_storage(window_case *w, int right)
{
    const char *name = case_names[w->kind];
    int value = 12345 + rank, unsupported_class, error_class;
    char right_path[600];
    snprintf(right_path, sizeof right_path, "%s/rma-%d-%d", dir, w->kind, right);
    MPIX_Query_error_class(MPIX_ERRKIND_UNSUPPORTED, &unsupported_class);
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w->win);
    /* The last int lies on storage in every layout tested here. */
    MPI_Put(&value, 1, MPI_INT, right, at(w, right, w->count - 1), 1, MPI_INT, w->win);
    int rc = MPIX_Win_flush_storage(right, w->win);
    if (w->kind == SHARED_STORAGE || w->kind == SHARED_COMBINED) {
        long long dirty = mpix_test_dirty_pages(right_path);
        CHECK(rc == MPI_SUCCESS, "%s: flush_storage: %s", name, mpix_test_error_string(rc));
        CHECK(dirty <= 0, "%s: %lld pages of the target's file still dirty after flush_storage", name, dirty);
    } else if (ranks > 1) {
        MPI_Error_class(rc, &error_class);
        CHECK(error_class == unsupported_class && strstr(mpix_test_error_string(rc), "needs MPIX_Win_sync on rank"),
              "%s: flush_storage of a peer it does not map: '%s'", name, mpix_test_error_string(rc));
    }
    MPI_Win_unlock(right, w->win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win);
    int left = (rank + ranks - 1) % ranks;
    CHECK(w->local[w->count - 1] == 12345 + left, "%s: flush_storage lost the put (%d)", name, w->local[w->count - 1]);
    MPI_Win_unlock(rank, w->win);
}

static int pattern(int origin, long long index) { return origin * 1000003 + (int)index; }

static void run_case(int kind)
{
    window_case w;
    open_case(&w, kind);
    const char *name = case_names[kind];
    int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    long long n = w.count, mid = n / 2;
    int *buffer = malloc(n * sizeof *buffer);

    /* Put (first half) and request-based Rput (second half) into the right neighbour. */
    for (long long i = 0; i < n; i++)
        buffer[i] = pattern(rank, i);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win);
    MPI_Put(buffer, (int)mid, MPI_INT, right, at(&w, right, 0), (int)mid, MPI_INT, w.win);
    MPI_Request request;
    MPI_Rput(buffer + mid, (int)(n - mid - 8), MPI_INT, right, at(&w, right, mid), (int)(n - mid - 8), MPI_INT, w.win,
             &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Win_flush_local(right, w.win);
    MPI_Win_flush(right, w.win);
    MPI_Win_unlock(right, w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int wrong = 0;
    for (long long i = 0; i < n - 8; i++)
        wrong += w.local[i] != pattern(left, i);
    CHECK(wrong == 0, "%s: %d ints from the left neighbour's put/rput are wrong", name, wrong);

    /* Get and Rget read it back from the right neighbour. */
    memset(buffer, 0, n * sizeof *buffer);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win);
    MPI_Get(buffer, (int)mid, MPI_INT, right, at(&w, right, 0), (int)mid, MPI_INT, w.win);
    MPI_Rget(buffer + mid, (int)(n - mid - 8), MPI_INT, right, at(&w, right, mid), (int)(n - mid - 8), MPI_INT, w.win,
             &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Win_unlock(right, w.win);
    wrong = 0;
    for (long long i = 0; i < n - 8; i++)
        wrong += buffer[i] != pattern(rank, i);
    CHECK(wrong == 0, "%s: %d ints read back by get/rget are wrong", name, wrong);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Atomics on the last 8 ints of rank 0 (the storage part in memory_first order,
     * the memory part in storage_first order): under lock_all, flush_all. */
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
        for (int i = 1; i <= 8; i++)
            w.local[n - i] = 0;
        w.local[n - 3] = -1;
        MPI_Win_unlock(0, w.win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int one = 1, mine = rank + 1, fetched = -7, compare = -1, previous = -7, accumulated = -7;
    MPI_Win_lock_all(0, w.win);
    MPI_Accumulate(&mine, 1, MPI_INT, 0, at(&w, 0, n - 1), 1, MPI_INT, MPI_SUM, w.win);
    MPI_Fetch_and_op(&one, &fetched, MPI_INT, 0, at(&w, 0, n - 2), MPI_SUM, w.win);
    MPI_Compare_and_swap(&rank, &compare, &previous, MPI_INT, 0, at(&w, 0, n - 3), w.win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &accumulated, 1, MPI_INT, 0, at(&w, 0, n - 4), 1, MPI_INT, MPI_SUM, w.win);
    MPI_Raccumulate(&one, 1, MPI_INT, 0, at(&w, 0, n - 5), 1, MPI_INT, MPI_SUM, w.win, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    int before_mine = -7;
    MPI_Rget_accumulate(&one, 1, MPI_INT, &before_mine, 1, MPI_INT, 0, at(&w, 0, n - 6), 1, MPI_INT, MPI_SUM, w.win,
                        &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Win_flush_all(w.win);
    MPI_Win_unlock_all(w.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int winners = previous == -1, total_winners = 0, fetched_sum = 0;
    MPI_Allreduce(&winners, &total_winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&fetched, &fetched_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total_winners == 1, "%s: %d ranks won compare_and_swap", name, total_winners);
    CHECK(fetched_sum == ranks * (ranks - 1) / 2, "%s: fetch_and_op results sum %d", name, fetched_sum);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win);
        CHECK(w.local[n - 1] == ranks * (ranks + 1) / 2, "%s: accumulate gave %d", name, w.local[n - 1]);
        CHECK(w.local[n - 2] == ranks, "%s: fetch_and_op total %d", name, w.local[n - 2]);
        CHECK(w.local[n - 3] >= 0 && w.local[n - 3] < ranks, "%s: swapped value %d", name, w.local[n - 3]);
        CHECK(w.local[n - 4] == ranks && w.local[n - 5] == ranks && w.local[n - 6] == ranks,
              "%s: get_accumulate/raccumulate/rget_accumulate %d %d %d", name, w.local[n - 4], w.local[n - 5],
              w.local[n - 6]);
        MPI_Win_unlock(0, w.win);
    }

    /* Durable: sync on every target, then the file holds the window's storage part. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win);
    long long dirty_before = mpix_test_dirty_pages(w.path);
    CHECK(MPIX_Win_sync(w.win) == MPI_SUCCESS, "%s: sync", name);
    long long dirty_after = mpix_test_dirty_pages(w.path);
    MPI_Win_unlock(rank, w.win);
    /* cachestat sees what is not yet on the device: RMA dirtied the file, sync cleaned it.
     * A logged window keeps its stores out of the file: its log holds the sync, and the
     * file catches up at free (checked after close_case). */
    if (dirty_after >= 0 && !logged(kind))
        CHECK(dirty_before > 0 && dirty_after == 0, "%s: %lld dirty pages before sync, %lld after", name,
              dirty_before, dirty_after);
    long long bytes = n * (long long)sizeof(int), storage_from = 0, storage_bytes = bytes;
    if (kind == COMBINED_MEMORY_FIRST || kind == SHARED_COMBINED) {
        storage_from = bytes / 2 / page * page;
        storage_bytes = bytes - storage_from;
    } else if (kind == COMBINED_STORAGE_FIRST) {
        storage_bytes = (bytes - bytes / 2) / page * page;
    }
    char *on_file = malloc(storage_bytes);
    CHECK(logged(kind) || (mpix_test_read_file(w.path, 0, on_file, storage_bytes) == 0 &&
                           memcmp(on_file, (char *)w.local + storage_from, storage_bytes) == 0),
          "%s: the file does not hold the synced storage part (%lld bytes from %lld)", name, storage_bytes,
          storage_from);

    /* Shared windows: every segment is reachable by load/store, side by side. */
    if (kind == SHARED_STORAGE || kind == SHARED_COMBINED) {
        MPI_Aint size;
        int unit;
        int *peer;
        for (int r = 0; r < ranks; r++) {
            MPIX_Win_shared_query(w.win, r, &size, &unit, &peer);
            CHECK(size == bytes && unit == 1, "%s: query %d size %ld unit %d", name, r, (long)size, unit);
            CHECK(peer == w.local + (long long)(r - rank) * n, "%s: segment %d is not side by side", name, r);
            CHECK(peer[0] == pattern((r + ranks - 1) % ranks, 0), "%s: load from segment %d reads %d", name, r,
                  peer[0]);
        }
        MPIX_Win_shared_query(w.win, MPI_PROC_NULL, &size, &unit, &peer);
        CHECK(peer == w.local - (long long)rank * n, "%s: MPI_PROC_NULL query", name);
    }
    check_flush_storage(&w, right);
    free(buffer);
    MPI_Barrier(MPI_COMM_WORLD);
    char *last_state = malloc(storage_bytes);
    memcpy(last_state, (char *)w.local + storage_from, storage_bytes);
    close_case(&w);
    CHECK(mpix_test_read_file(w.path, 0, on_file, storage_bytes) == 0 &&
              memcmp(on_file, last_state, storage_bytes) == 0,
          "%s: after free the file does not hold the window's storage part (%lld bytes from %lld)", name,
          storage_bytes, storage_from);
    free(last_state);
    free(on_file);
}

/* Small windows at file offsets that are not multiples of 16, as programs that pack many
 * windows into one file place them: a put from the left neighbour lands at the window's
 * first int and reaches the file at the offset, or the allocation is refused on every
 * rank because the MPI moved the window's base; never a put that lands elsewhere. */
static void unaligned_offsets(void)
{
    static const long offsets[] = { 4, 8, 24, 16, 40 };
    int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        char path[512], offset[32];
        snprintf(path, sizeof path, "%s/unaligned-%ld-%d", dir, offsets[o], rank);
        snprintf(offset, sizeof offset, "%ld", offsets[o]);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_type", "storage");
        MPI_Info_set(info, "storage_alloc_filename", path);
        MPI_Info_set(info, "storage_alloc_offset", offset);
        int *base = NULL, value = -left - 1, kept = 0;
        MPI_Win win = MPI_WIN_NULL;
        int rc = MPIX_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win);
        MPI_Info_free(&info);
        int all_rc_zero = 0, mine_zero = rc == MPI_SUCCESS;
        MPI_Allreduce(&mine_zero, &all_rc_zero, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_UNSUPPORTED) && win == MPI_WIN_NULL &&
                      (strstr(mpix_test_error_string(rc), "moved the window base") ||
                       strstr(mpix_test_error_string(rc), "failed on rank")),
                  "offset %ld: '%s'", offsets[o], mpix_test_error_string(rc));
            CHECK(offsets[o] % 16 != 0, "offset %ld, a multiple of 16, refused: %s", offsets[o],
                  mpix_test_error_string(rc));
            if (rank == 0 && offsets[o] == 8)
                printf("storage_rma: offset 8 refused: %s\n", mpix_test_error_string(rc));
            continue;
        }
        CHECK(all_rc_zero, "offset %ld: this rank has a window, another rank was refused", offsets[o]);
        CHECK((long)((uintptr_t)base % (uintptr_t)page) == offsets[o], "offset %ld: base %p", offsets[o],
              (void *)base);
        for (int i = 0; i < 4; i++)
            base[i] = 100 + i;
        MPI_Barrier(MPI_COMM_WORLD);   /* filled before any neighbour puts */
        int mine = -rank - 1;
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
        MPI_Put(&mine, 1, MPI_INT, right, 0, 1, MPI_INT, win);
        MPI_Win_unlock(right, win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        kept = base[0];
        MPI_Win_unlock(rank, win);
        CHECK(kept == value && base[1] == 101, "offset %ld: window holds %d %d, want %d 101 (the put went astray)",
              offsets[o], kept, base[1], value);
        MPIX_Win_free(&win);
        int on_file[2] = { 0, 0 }, fd = open(path, O_RDONLY);
        CHECK(fd >= 0 && pread(fd, on_file, sizeof on_file, offsets[o]) == (ssize_t)sizeof on_file &&
                  on_file[0] == value && on_file[1] == 101,
              "offset %ld: the file holds %d %d there, want %d 101", offsets[o], on_file[0], on_file[1], value);
        if (fd >= 0)
            close(fd);
    }
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &ranks);
    page = sysconf(_SC_PAGESIZE);
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);
    for (int kind = 0; kind < CASE_COUNT; kind++)
        run_case(kind);
    unaligned_offsets();
    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("storage_rma");
}
