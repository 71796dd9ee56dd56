/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench storage: storage windows against memory windows and MPI-IO.
 *  (a) put/get throughput, IMB-RMA style (one operation per passive-target epoch,
 *      rank 0 to rank 1), storage window vs memory windows made by MPI_Win_create (the
 *      same MPI path) and by MPI_Win_allocate (MPI's own allocation path);
 *  (b) mSTREAM kernels SEQ, PAD, RND, MIX over each rank's window, ending with a sync,
 *      storage and combined (factor 0.5) vs a memory window;
 *  (c) checkpoint with 1%, 10%, 100% of the pages changed: MPIX_Win_sync vs rewriting
 *      the window with MPI_File_write_at_all + MPI_File_sync.
 * Files go to $MPIX_BENCH_DIR (default /tmp) and are removed at the end. */
#include "bench.h"

#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct window {
    MPI_Win win;
    char *base;
    long long size;
    int storage; /* made by mpix on storage: free with MPIX_Win_free */
} window;

static window storage_window(const bench_options *options, long long size, const char *name, const char *factor,
                             const char *access_style)
{
    char path[1024];
    MPI_Info info;
    window w = { MPI_WIN_NULL, NULL, size, 1 };
    snprintf(path, sizeof path, "%s/mpix-bench-%s-%d-%d", bench_dir(), name, (int)getppid(), options->rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    if (factor)
        MPI_Info_set(info, "storage_alloc_factor", factor);
    if (access_style)
        MPI_Info_set(info, "access_style", access_style);
    MPIX_Win_allocate(size, 1, info, options->comm, &w.base, &w.win);
    MPI_Info_free(&info);
    memset(w.base, 1, size);
    return w;
}

static window allocated_window(const bench_options *options, long long size)
{
    window w = { MPI_WIN_NULL, NULL, size, 0 };
    MPI_Win_allocate(size, 1, MPI_INFO_NULL, options->comm, &w.base, &w.win);
    memset(w.base, 1, size);
    return w;
}

static window created_window(const bench_options *options, long long size)
{
    window w = { MPI_WIN_NULL, NULL, size, 0 };
    MPI_Alloc_mem(size, MPI_INFO_NULL, &w.base);
    memset(w.base, 1, size);
    MPI_Win_create(w.base, size, 1, MPI_INFO_NULL, options->comm, &w.win);
    return w;
}

static void free_window(window *w, int created)
{
    if (w->storage)
        MPIX_Win_free(&w->win);
    else
        MPI_Win_free(&w->win);
    if (created)
        MPI_Free_mem(w->base);
}

/* ---------------------------------------------------------------- (a) put / get */

typedef struct transfer {
    window *target;
    char *buffer;
    long long bytes;
    int get, rank;
} transfer;

static void one_sided(void *context, int iterations)
{
    transfer *t = context;
    if (t->rank != 0)
        return;
    for (int i = 0; i < iterations; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, t->target->win);
        if (t->get)
            MPI_Get(t->buffer, (int)t->bytes, MPI_BYTE, 1, 0, (int)t->bytes, MPI_BYTE, t->target->win);
        else
            MPI_Put(t->buffer, (int)t->bytes, MPI_BYTE, 1, 0, (int)t->bytes, MPI_BYTE, t->target->win);
        MPI_Win_unlock(1, t->target->win);
    }
}

static void bench_put_get(const bench_options *options)
{
    long long largest = 4 << 20;
    window storage = storage_window(options, largest, "rma", NULL, NULL);
    /* Readahead gives large page-cache folios, which the MPI's copies pin faster, at the
     * price of coarser dirty tracking: the default and this hint side by side. */
    window streaming = storage_window(options, largest, "rma-sequential", NULL, "sequential");
    window created = created_window(options, largest);
    window allocated = allocated_window(options, largest);
    char *buffer = malloc(largest);
    int iterations = options->quick ? 10 : 50;
    memset(buffer, 2, largest);

    bench_heading(options, "storage", "storage window (MPIX_Win_allocate, alloc_type=storage)",
                  "memory window (MPI_Win_create | MPI_Win_allocate), rank 0 -> 1, one op per epoch");
    for (long long bytes = 256 << 10; bytes <= largest; bytes *= options->quick ? 4 : 2) {
        for (int get = 0; get < 2; get++) {
            transfer on_storage = { &storage, buffer, bytes, get, options->rank };
            transfer on_streaming = { &streaming, buffer, bytes, get, options->rank };
            transfer on_created = { &created, buffer, bytes, get, options->rank };
            transfer on_allocated = { &allocated, buffer, bytes, get, options->rank };
            bench_stats time[4]; /* storage, sequential storage, created, allocated */
            bench_time_together(options, 4,
                                (bench_case[]){ { one_sided, &on_storage },
                                                { one_sided, &on_streaming },
                                                { one_sided, &on_created },
                                                { one_sided, &on_allocated } },
                                iterations, time);
            char name[64];
            snprintf(name, sizeof name, "%s vs MPI_Win_create", get ? "get" : "put");
            bench_row(options, "storage", name, bytes, time[0], time[2]);
            snprintf(name, sizeof name, "%s vs MPI_Win_allocate", get ? "get" : "put");
            bench_row(options, "storage", name, bytes, time[0], time[3]);
            snprintf(name, sizeof name, "%s, sequential vs MPI_Win_create", get ? "get" : "put");
            bench_row(options, "storage", name, bytes, time[1], time[2]);
        }
    }
    free(buffer);
    free_window(&storage, 0);
    free_window(&streaming, 0);
    free_window(&created, 1);
    free_window(&allocated, 0);
}

/* ---------------------------------------------------------------- (b) mSTREAM */

enum { SEQ, PAD, RND, MIX, KERNEL_COUNT };
static const char *kernel_names[KERNEL_COUNT] = { "SEQ", "PAD", "RND", "MIX" };

typedef struct stream {
    window *w;
    int kernel, rank;
    long long segment;
    char *buffer;
    volatile long long checksum;
} stream;

/* Segment of the i-th operation: SEQ in order; PAD every other segment, then the
 * skipped ones; RND a fixed pseudo-random sequence; MIX alternates SEQ and RND. */
static long long segment_index(int kernel, long long i, long long segments, unsigned long long *random)
{
    *random = *random * 6364136223846793005ULL + 1442695040888963407ULL;
    switch (kernel) {
    case SEQ: return i;
    case PAD: return (2 * i) % segments + (2 * i / segments) % 2;
    case RND: return (long long)((*random >> 33) % (unsigned long long)segments);
    default: return i % 2 ? (long long)((*random >> 33) % (unsigned long long)segments) : i;
    }
}

/* One pass: as many segment operations as the window holds, alternating read and
 * write, then the window synced (to storage for storage windows). */
static void stream_kernel(void *context, int iterations)
{
    stream *s = context;
    long long segments = s->w->size / s->segment;
    for (int pass = 0; pass < iterations; pass++) {
        unsigned long long random = 12345;
        for (long long i = 0; i < segments; i++) {
            char *segment = s->w->base + segment_index(s->kernel, i, segments, &random) * s->segment;
            if (i % 2 == 0) {
                long long sum = 0;
                for (long long b = 0; b < s->segment; b += 64)
                    sum += segment[b];
                s->checksum += sum;
            } else {
                memcpy(segment, s->buffer, s->segment);
            }
        }
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, s->rank, 0, s->w->win);
    MPIX_Win_sync(s->w->win);
    MPI_Win_unlock(s->rank, s->w->win);
}

static void bench_stream(const bench_options *options)
{
    long long size = options->quick ? 16 << 20 : 128 << 20, segment = 1 << 20;
    window memory = allocated_window(options, size);
    window storage = storage_window(options, size, "stream", NULL, NULL);
    window combined = storage_window(options, size, "stream-combined", "0.5", NULL);
    char *buffer = malloc(segment);
    memset(buffer, 3, segment);

    bench_heading(options, "storage", "mSTREAM over a storage window, sync at the end",
                  "the same kernel over a memory window (MPI_Win_allocate), every rank on its own window");
    for (int kernel = 0; kernel < KERNEL_COUNT; kernel++) {
        stream on_memory = { &memory, kernel, options->rank, segment, buffer, 0 };
        stream on_storage = { &storage, kernel, options->rank, segment, buffer, 0 };
        stream on_combined = { &combined, kernel, options->rank, segment, buffer, 0 };
        bench_stats time[3]; /* memory, storage, combined */
        bench_time_together(options, 3,
                            (bench_case[]){ { stream_kernel, &on_memory },
                                            { stream_kernel, &on_storage },
                                            { stream_kernel, &on_combined } },
                            1, time);
        char name[64];
        snprintf(name, sizeof name, "mSTREAM %s, storage", kernel_names[kernel]);
        bench_row(options, "storage", name, size, time[1], time[0]);
        snprintf(name, sizeof name, "mSTREAM %s, combined 0.5", kernel_names[kernel]);
        bench_row(options, "storage", name, size, time[2], time[0]);
    }
    free(buffer);
    free_window(&memory, 0);
    free_window(&storage, 0);
    free_window(&combined, 0);
}

/* ---------------------------------------------------------------- (c) checkpoint */

typedef struct checkpoint {
    char *data;          /* the window (mpix) or the application's buffer (MPI-IO) */
    long long size, stride, round;
    MPI_Win win;         /* mpix path */
    MPI_File file;       /* MPI-IO path */
    MPI_Offset offset;
} checkpoint;

/* The application changes one byte in every stride-th page: the same work on both paths.
 * The window starts filled with 1s: every round writes a value that differs from the last. */
static void change_pages(checkpoint *c)
{
    c->round++;
    for (long long at = 0; at < c->size; at += c->stride)
        c->data[at] = (char)(1 + c->round % 255);
}

static void checkpoint_by_sync(void *context, int iterations)
{
    checkpoint *c = context;
    for (int i = 0; i < iterations; i++) {
        change_pages(c);
        MPIX_Win_sync(c->win);
    }
}

static void checkpoint_by_mpi_io(void *context, int iterations)
{
    checkpoint *c = context;
    for (int i = 0; i < iterations; i++) {
        change_pages(c);
        MPI_File_write_at_all(c->file, c->offset, c->data, (int)c->size, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_sync(c->file);
    }
}

/* A program's first checkpoint, into a new file: the window allocated, 1% of its pages
 * stored, synced and freed (the file brought up to date), against MPI-IO creating the
 * file, writing the application's buffer once, syncing and closing it. */
typedef struct first_checkpoint {
    const bench_options *options;
    long long size;
    char *buffer; /* the MPI-IO path's application memory */
} first_checkpoint;

static void first_checkpoint_by_sync(void *context, int iterations)
{
    first_checkpoint *f = context;
    for (int i = 0; i < iterations; i++) {
        char path[1024];
        MPI_Info info;
        MPI_Win win;
        char *base;
        snprintf(path, sizeof path, "%s/mpix-bench-first-%d-%d", bench_dir(), (int)getppid(), f->options->rank);
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_type", "storage");
        MPI_Info_set(info, "storage_alloc_filename", path);
        MPIX_Win_allocate(f->size, 1, info, f->options->comm, &base, &win);
        MPI_Info_free(&info);
        for (long long at = 0; at < f->size; at += 100 * sysconf(_SC_PAGESIZE))
            base[at] = 1;
        MPIX_Win_sync(win);
        MPIX_Win_free(&win);
        unlink(path);
    }
}

static void first_checkpoint_by_mpi_io(void *context, int iterations)
{
    first_checkpoint *f = context;
    for (int i = 0; i < iterations; i++) {
        char path[1024];
        MPI_File file;
        snprintf(path, sizeof path, "%s/mpix-bench-first-mpiio-%d", bench_dir(), (int)getppid());
        MPI_Bcast(path, sizeof path, MPI_CHAR, 0, f->options->comm);
        MPI_File_open(f->options->comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
        MPI_File_write_at_all(file, (MPI_Offset)f->options->rank * f->size, f->buffer, (int)f->size, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        MPI_File_sync(file);
        MPI_File_close(&file);
        if (f->options->rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL);
    }
}

static void bench_checkpoint(const bench_options *options)
{
    long long size = options->quick ? 16 << 20 : 64 << 20, page = sysconf(_SC_PAGESIZE);
    window storage = storage_window(options, size, "checkpoint", NULL, NULL);
    char path[1024];
    checkpoint by_sync = { storage.base, size, 0, 0, storage.win, MPI_FILE_NULL, 0 };
    checkpoint by_io = { malloc(size), size, 0, 0, MPI_WIN_NULL, MPI_FILE_NULL, (MPI_Offset)options->rank * size };
    const int percents[] = { 1, 10, 100 };

    memset(by_io.data, 1, size);
    snprintf(path, sizeof path, "%s/mpix-bench-mpiio-%d", bench_dir(), (int)getppid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, options->comm);
    MPI_File_open(options->comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &by_io.file);
    MPIX_Win_sync(storage.win); /* start from a clean window */

    bench_options once = *options;
    once.warmup = 0;
    once.repetitions = 1;
    bench_heading(options, "storage", "checkpoint by MPIX_Win_sync (changed pages only)",
                  "MPI_File_write_at_all of the window + MPI_File_sync (same bytes durable)");
    /* Timed once each, each on a new file of its own. */
    first_checkpoint first = { options, size, by_io.data };
    bench_stats first_sync = bench_time(&once, first_checkpoint_by_sync, &first, 1);
    bench_stats first_io = bench_time(&once, first_checkpoint_by_mpi_io, &first, 1);
    bench_row(options, "storage", "first checkpoint, new file: allocate, 1%, sync, free", size, first_sync, first_io);
    /* The first syncs after a denser one, each timed alone: what a program pays when its
     * pattern changes (the log reads every page until the kernel lists written pages). */
    enum { COLD_SYNCS = 3 };
    for (int p = 0; p < 3; p++) {
        by_sync.stride = by_io.stride = page * 100 / percents[p];
        char name[96];
        bench_stats cold[COLD_SYNCS], sync_time, io_time;
        for (int c = 0; c < COLD_SYNCS; c++)
            cold[c] = bench_time(&once, checkpoint_by_sync, &by_sync, 1);
        bench_time_pair(options, checkpoint_by_sync, &by_sync, checkpoint_by_mpi_io, &by_io, 1, &sync_time, &io_time);
        snprintf(name, sizeof name, "checkpoint, %d%% of pages changed", percents[p]);
        bench_row(options, "storage", name, size, sync_time, io_time);
        for (int c = 0; c < COLD_SYNCS && p < 2; c++) {
            snprintf(name, sizeof name, "checkpoint cold, %d%%, sync %d after a denser one", percents[p], c + 1);
            bench_row(options, "storage", name, size, cold[c], io_time);
        }
    }
    bench_note(options, "first checkpoint: once each, MPI-IO creating the file, writing the window, syncing, closing; "
                        "sync k after a denser one: one sync timed alone, against the MPI-IO median above");
    MPI_File_close(&by_io.file);
    if (options->rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    free(by_io.data);
    free_window(&storage, 0);
}

int bench_storage(const bench_options *options)
{
    if (options->size >= 2)
        bench_put_get(options);
    else if (options->rank == 0)
        printf("\n## mpix-bench storage: put/get needs 2 ranks; skipped at 1\n");
    bench_stream(options);
    bench_checkpoint(options);
    return 0;
}
