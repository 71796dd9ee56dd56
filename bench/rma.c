/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench rma: the three experiments of the MPI-3 one-sided paper (Potluri et al., MPI-3 one-sided
 * semantics) on the installed MPI, rank 0 as origin and rank 1 as passive target:
 *  1. put/get latency (8 B..64 KiB, OSU style: op + flush in one epoch) and bandwidth
 *     (to 4 MiB: 16 ops + flush) on six windows: memory and storage, each made by
 *     allocate, create and create_dynamic + attach; ratios to MPI_Win_allocate;
 *  2. completion cost of a put and of a get: MPI_Win_flush_local and MPI_Win_flush
 *     (inside an epoch) against MPI_Win_unlock (lock + op + unlock);
 *  3. Get-Compute-Put over N = 25 blocks: no overlap, overlap with lock/unlock, overlap
 *     with MPI_Rget/MPI_Rput, against the optimal (compute alone), with the overlap
 *     achieved in percent.
 * Storage files go to $MPIX_BENCH_DIR (default /tmp) and are removed. */
#include "bench.h"

#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MEMORY_ALLOCATE, MEMORY_CREATE, MEMORY_DYNAMIC, STORAGE_ALLOCATE, STORAGE_CREATE, STORAGE_DYNAMIC, KINDS };
static const char *kind_names[KINDS] = { "MPI_Win_allocate", "MPI_Win_create", "dynamic",
                                         "storage allocate", "storage create", "storage dynamic" };

typedef struct rma_window {
    int kind;
    MPI_Win win;
    char *base;
    MPI_Aint target_base; /* displacement of the target's memory: its address for dynamic windows */
} rma_window;

static MPI_Info storage_info(const bench_options *options, const char *name)
{
    char path[1024];
    MPI_Info info;
    snprintf(path, sizeof path, "%s/mpix-bench-rma-%s-%d-%d", bench_dir(), name, (int)getppid(), options->rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_unlink", "true");
    return info;
}

static rma_window open_window(const bench_options *options, int kind, long long size)
{
    rma_window w = { kind, MPI_WIN_NULL, NULL, 0 };
    int storage = kind >= STORAGE_ALLOCATE;
    MPI_Info info = storage ? storage_info(options, kind_names[kind] + 8) : MPI_INFO_NULL;
    switch (kind) {
    case MEMORY_ALLOCATE:
    case STORAGE_ALLOCATE:
        MPIX_Win_allocate(size, 1, info, options->comm, &w.base, &w.win);
        break;
    case MEMORY_CREATE:
    case STORAGE_CREATE:
        MPIX_Alloc_mem(size, info, &w.base);
        MPI_Win_create(w.base, size, 1, MPI_INFO_NULL, options->comm, &w.win);
        break;
    default:
        MPIX_Alloc_mem(size, info, &w.base);
        MPI_Win_create_dynamic(MPI_INFO_NULL, options->comm, &w.win);
        MPIX_Win_attach(w.win, w.base, size);
        break;
    }
    memset(w.base, 1, size);
    if (kind == MEMORY_DYNAMIC || kind == STORAGE_DYNAMIC) {
        MPI_Aint mine, all[2] = { 0, 0 };
        MPI_Get_address(w.base, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, options->comm);
        w.target_base = all[1];
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return w;
}

static void close_window(rma_window *w)
{
    if (w->kind == MEMORY_ALLOCATE || w->kind == STORAGE_ALLOCATE) {
        MPIX_Win_free(&w->win);
        return;
    }
    if (w->kind == MEMORY_DYNAMIC || w->kind == STORAGE_DYNAMIC)
        MPIX_Win_detach(w->win, w->base);
    MPI_Win_free(&w->win);
    MPIX_Free_mem(w->base);
}

/* ---------------------------------------------------------------- 1. latency, bandwidth */

typedef struct transfer {
    rma_window *w;
    char *buffer;
    int bytes, get, burst, rank;
} transfer;

/* One epoch per sample; each iteration is @burst operations and one flush. */
static void transfer_burst(void *context, int iterations)
{
    transfer *t = context;
    if (t->rank != 0)
        return;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, t->w->win);
    for (int i = 0; i < iterations; i++) {
        for (int b = 0; b < t->burst; b++) {
            if (t->get)
                MPI_Get(t->buffer, t->bytes, MPI_BYTE, 1, t->w->target_base, t->bytes, MPI_BYTE, t->w->win);
            else
                MPI_Put(t->buffer, t->bytes, MPI_BYTE, 1, t->w->target_base, t->bytes, MPI_BYTE, t->w->win);
        }
        MPI_Win_flush(1, t->w->win);
    }
    MPI_Win_unlock(1, t->w->win);
}

/* Every window kind, samples interleaved: @time[kind]. */
static void time_kinds(const bench_options *options, rma_window *windows, char *buffer, int bytes, int get, int burst,
                       int iterations, bench_stats *time)
{
    transfer each[KINDS];
    bench_case cases[KINDS];
    for (int kind = 0; kind < KINDS; kind++) {
        each[kind] = (transfer){ &windows[kind], buffer, bytes, get, burst, options->rank };
        cases[kind] = (bench_case){ transfer_burst, &each[kind] };
    }
    bench_time_together(options, KINDS, cases, iterations, time);
}

static void experiment_windows(const bench_options *options, rma_window *windows, char *buffer)
{
    int latency_iterations = options->quick ? 200 : 1000, bandwidth_iterations = options->quick ? 5 : 20;
    int step = options->quick ? 8 : 2;

    bench_heading(options, "rma", "put/get on each window kind (latency: op + flush; bandwidth: 16 ops + flush)",
                  "the same on MPI_Win_allocate memory");
    for (int get = 0; get < 2; get++) {
        for (int bytes = 8; bytes <= 65536; bytes *= step) {
            bench_stats time[KINDS];
            time_kinds(options, windows, buffer, bytes, get, 1, latency_iterations, time);
            for (int kind = 1; kind < KINDS; kind++) {
                char name[96];
                snprintf(name, sizeof name, "%s latency, %s vs MPI_Win_allocate", get ? "get" : "put", kind_names[kind]);
                bench_row(options, "rma", name, bytes, time[kind], time[MEMORY_ALLOCATE]);
            }
        }
    }
    for (int get = 0; get < 2; get++) {
        for (int bytes = 65536; bytes <= 4 << 20; bytes *= step) {
            bench_stats kind_time[KINDS];
            time_kinds(options, windows, buffer, bytes, get, 16, bandwidth_iterations, kind_time);
            for (int kind = 1; kind < KINDS; kind++) {
                char name[96];
                snprintf(name, sizeof name, "%s bandwidth, %s vs MPI_Win_allocate", get ? "get" : "put",
                         kind_names[kind]);
                bench_row(options, "rma", name, 16 * (size_t)bytes, kind_time[kind], kind_time[MEMORY_ALLOCATE]);
            }
            /* Dynamic storage against dynamic memory: the cost of storage for dynamic windows. */
            char name[96];
            snprintf(name, sizeof name, "%s bandwidth, storage dyn vs dynamic", get ? "get" : "put");
            bench_row(options, "rma", name, 16 * (size_t)bytes, kind_time[STORAGE_DYNAMIC], kind_time[MEMORY_DYNAMIC]);
        }
    }
}

/* ---------------------------------------------------------------- 2. completion cost */

enum { BY_FLUSH_LOCAL, BY_FLUSH, BY_UNLOCK };

typedef struct completion {
    rma_window *w;
    char *buffer;
    int bytes, get, how, rank;
} completion;

static void complete_one(void *context, int iterations)
{
    completion *c = context;
    if (c->rank != 0)
        return;
    if (c->how != BY_UNLOCK)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->w->win);
    for (int i = 0; i < iterations; i++) {
        if (c->how == BY_UNLOCK)
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->w->win);
        if (c->get)
            MPI_Get(c->buffer, c->bytes, MPI_BYTE, 1, c->w->target_base, c->bytes, MPI_BYTE, c->w->win);
        else
            MPI_Put(c->buffer, c->bytes, MPI_BYTE, 1, c->w->target_base, c->bytes, MPI_BYTE, c->w->win);
        if (c->how == BY_FLUSH_LOCAL)
            MPI_Win_flush_local(1, c->w->win);
        else if (c->how == BY_FLUSH)
            MPI_Win_flush(1, c->w->win);
        else
            MPI_Win_unlock(1, c->w->win);
    }
    if (c->how != BY_UNLOCK)
        MPI_Win_unlock(1, c->w->win);
}

static void experiment_completion(const bench_options *options, rma_window *w, char *buffer)
{
    int iterations = options->quick ? 200 : 1000;
    bench_heading(options, "rma", "op completed by MPI_Win_flush_local | MPI_Win_flush (in an epoch)",
                  "op completed by MPI_Win_unlock (lock + op + unlock), MPI_Win_allocate window");
    for (int get = 0; get < 2; get++) {
        for (int bytes = 8; bytes <= 4 << 20; bytes *= options->quick ? 64 : 8) {
            completion by_local = { w, buffer, bytes, get, BY_FLUSH_LOCAL, options->rank };
            completion by_flush = { w, buffer, bytes, get, BY_FLUSH, options->rank };
            completion by_unlock = { w, buffer, bytes, get, BY_UNLOCK, options->rank };
            int scaled = bytes > 65536 ? iterations / 20 + 1 : iterations;
            bench_stats time[3];
            bench_time_together(options, 3,
                                (bench_case[]){ { complete_one, &by_local },
                                                { complete_one, &by_flush },
                                                { complete_one, &by_unlock } },
                                scaled, time);
            char name[96];
            snprintf(name, sizeof name, "%s + flush_local vs unlock", get ? "get" : "put");
            bench_row(options, "rma", name, bytes, time[0], time[2]);
            snprintf(name, sizeof name, "%s + flush vs unlock", get ? "get" : "put");
            bench_row(options, "rma", name, bytes, time[1], time[2]);
        }
    }
}

/* ---------------------------------------------------------------- 3. Get-Compute-Put */

enum { BLOCKS = 25 };
enum { NO_OVERLAP, LOCK_OVERLAP, REQUEST_OVERLAP, COMPUTE_ONLY, REQUEST_STEP, GCP_VARIANTS };

typedef struct get_compute_put {
    rma_window *w;
    char *blocks;        /* BLOCKS local buffers of @bytes */
    int bytes, variant, rank;
    double compute_seconds;
} get_compute_put;

/* The computation: the CPU busy for a fixed time, touching the block as real work would. */
static void compute(const get_compute_put *g, char *block)
{
    double until = MPI_Wtime() + g->compute_seconds;
    while (MPI_Wtime() < until)
        block[0]++;
}

static MPI_Aint block_at(const get_compute_put *g, int i) { return g->w->target_base + (MPI_Aint)i * g->bytes; }

static void gcp_once(get_compute_put *g)
{
    MPI_Win win = g->w->win;
    char *block[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        block[i] = g->blocks + (size_t)i * g->bytes;
    switch (g->variant) {
    case COMPUTE_ONLY:
        for (int i = 0; i < BLOCKS; i++)
            compute(g, block[i]);
        break;
    case NO_OVERLAP:
        for (int i = 0; i < BLOCKS; i++) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            MPI_Get(block[i], g->bytes, MPI_BYTE, 1, block_at(g, i), g->bytes, MPI_BYTE, win);
            MPI_Win_unlock(1, win);
            compute(g, block[i]);
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            MPI_Put(block[i], g->bytes, MPI_BYTE, 1, block_at(g, i), g->bytes, MPI_BYTE, win);
            MPI_Win_unlock(1, win);
        }
        break;
    case LOCK_OVERLAP: /* the MPI-3 one-sided paper Fig. 2(b): next get and previous put in the compute epoch */
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Get(block[0], g->bytes, MPI_BYTE, 1, block_at(g, 0), g->bytes, MPI_BYTE, win);
        MPI_Win_unlock(1, win);
        for (int i = 0; i < BLOCKS; i++) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            if (i + 1 < BLOCKS)
                MPI_Get(block[i + 1], g->bytes, MPI_BYTE, 1, block_at(g, i + 1), g->bytes, MPI_BYTE, win);
            if (i > 0)
                MPI_Put(block[i - 1], g->bytes, MPI_BYTE, 1, block_at(g, i - 1), g->bytes, MPI_BYTE, win);
            compute(g, block[i]);
            MPI_Win_unlock(1, win);
        }
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Put(block[BLOCKS - 1], g->bytes, MPI_BYTE, 1, block_at(g, BLOCKS - 1), g->bytes, MPI_BYTE, win);
        MPI_Win_unlock(1, win);
        break;
    case REQUEST_STEP: { /* request-based, each put completed in the next step, as lock/unlock's */
        MPI_Request get, put = MPI_REQUEST_NULL;
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Rget(block[0], g->bytes, MPI_BYTE, 1, block_at(g, 0), g->bytes, MPI_BYTE, win, &get);
        for (int i = 0; i < BLOCKS; i++) {
            MPI_Wait(&get, MPI_STATUS_IGNORE);
            if (i + 1 < BLOCKS)
                MPI_Rget(block[i + 1], g->bytes, MPI_BYTE, 1, block_at(g, i + 1), g->bytes, MPI_BYTE, win, &get);
            compute(g, block[i]);
            MPI_Wait(&put, MPI_STATUS_IGNORE);
            MPI_Rput(block[i], g->bytes, MPI_BYTE, 1, block_at(g, i), g->bytes, MPI_BYTE, win, &put);
        }
        MPI_Wait(&put, MPI_STATUS_IGNORE);
        MPI_Win_unlock(1, win);
        break;
    }
    default: { /* the MPI-3 one-sided paper Fig. 2(c): request-based, one epoch */
        MPI_Request gets[BLOCKS], puts[BLOCKS];
        MPI_Status statuses[BLOCKS]; /* not MPI_STATUSES_IGNORE: MPICH's annotations warn on it */
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Rget(block[0], g->bytes, MPI_BYTE, 1, block_at(g, 0), g->bytes, MPI_BYTE, win, &gets[0]);
        for (int i = 0; i < BLOCKS; i++) {
            MPI_Wait(&gets[i], MPI_STATUS_IGNORE);
            if (i + 1 < BLOCKS)
                MPI_Rget(block[i + 1], g->bytes, MPI_BYTE, 1, block_at(g, i + 1), g->bytes, MPI_BYTE, win,
                         &gets[i + 1]);
            compute(g, block[i]);
            MPI_Rput(block[i], g->bytes, MPI_BYTE, 1, block_at(g, i), g->bytes, MPI_BYTE, win, &puts[i]);
        }
        MPI_Waitall(BLOCKS, puts, statuses);
        MPI_Win_unlock(1, win);
    }
    }
}

static void gcp(void *context, int iterations)
{
    get_compute_put *g = context;
    if (g->rank != 0)
        return;
    for (int i = 0; i < iterations; i++)
        gcp_once(g);
}

static void experiment_get_compute_put(const bench_options *options, rma_window *w)
{
    char *blocks = malloc((size_t)BLOCKS * (4 << 20));
    memset(blocks, 0, (size_t)BLOCKS * (4 << 20));
    bench_heading(options, "rma", "Get-Compute-Put, 25 blocks, overlapped (lock/unlock | request-based)",
                  "no overlap; 'optimal' = compute alone; MPI_Win_allocate window");
    for (int bytes = 64 << 10; bytes <= 4 << 20; bytes *= options->quick ? 16 : 4) {
        get_compute_put variant[GCP_VARIANTS];
        bench_stats time[GCP_VARIANTS];
        for (int v = 0; v < GCP_VARIANTS; v++)
            variant[v] = (get_compute_put){ w, blocks, bytes, v, options->rank, 0 };
        /* Compute longer than communicating a block (the MPI-3 one-sided paper): measure one get + put. */
        variant[NO_OVERLAP].compute_seconds = 0;
        double communication = bench_time(options, gcp, &variant[NO_OVERLAP], 1).median / BLOCKS;
        for (int v = 0; v < GCP_VARIANTS; v++)
            variant[v].compute_seconds = 1.5 * communication;
        bench_time_together(options, GCP_VARIANTS,
                            (bench_case[]){ { gcp, &variant[0] }, { gcp, &variant[1] }, { gcp, &variant[2] },
                                            { gcp, &variant[3] }, { gcp, &variant[4] } },
                            1, time);
        bench_row(options, "rma", "gcp request-based vs lock/unlock", bytes, time[REQUEST_OVERLAP], time[LOCK_OVERLAP]);
        bench_row(options, "rma", "gcp request-based, puts done a step later vs lock/unlock", bytes, time[REQUEST_STEP],
                  time[LOCK_OVERLAP]);
        bench_row(options, "rma", "gcp request-based vs no overlap", bytes, time[REQUEST_OVERLAP], time[NO_OVERLAP]);
        bench_row(options, "rma", "gcp lock/unlock vs no overlap", bytes, time[LOCK_OVERLAP], time[NO_OVERLAP]);
        bench_row(options, "rma", "gcp optimal (compute) vs no overlap", bytes, time[COMPUTE_ONLY], time[NO_OVERLAP]);
        /* Overlap achieved: the share of the communication time that was hidden. */
        double hidden_total = time[NO_OVERLAP].median - time[COMPUTE_ONLY].median;
        if (options->rank == 0 && hidden_total > 0) {
            double hidden[GCP_VARIANTS];
            for (int v = 0; v < GCP_VARIANTS; v++)
                hidden[v] = 100 * (time[NO_OVERLAP].median - time[v].median) / hidden_total;
            char line[200];
            snprintf(line, sizeof line,
                     "gcp %d bytes: overlap achieved: lock/unlock %.0f%%, request-based %.0f%%, "
                     "puts done a step later %.0f%%",
                     bytes, hidden[LOCK_OVERLAP], hidden[REQUEST_OVERLAP], hidden[REQUEST_STEP]);
            bench_note(options, line);
        }
    }
    free(blocks);
}

int bench_rma(const bench_options *options)
{
    if (options->size < 2) {
        if (options->rank == 0)
            printf("\n## mpix-bench rma needs 2 ranks; skipped at 1\n");
        return 0;
    }
    long long size = (long long)BLOCKS * (4 << 20);
    rma_window windows[KINDS];
    char *buffer = malloc(4 << 20);
    memset(buffer, 2, 4 << 20);
    for (int kind = 0; kind < KINDS; kind++)
        windows[kind] = open_window(options, kind, kind == MEMORY_ALLOCATE ? size : 4 << 20);
    experiment_windows(options, windows, buffer);
    experiment_completion(options, &windows[MEMORY_ALLOCATE], buffer);
    experiment_get_compute_put(options, &windows[MEMORY_ALLOCATE]);
    for (int kind = 0; kind < KINDS; kind++)
        close_window(&windows[kind]);
    free(buffer);
    return 0;
}
