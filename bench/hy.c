/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench hy: OSU-style latency of the hybrid collectives, 8 B to 1 MiB (per process
 * for allgather, in all for bcast and allreduce), doubles, four ways in one run, samples
 * interleaved:
 *   - MPIX_Hy_*:  allgather and bcast in place (each process's slot, the root's data in
 *                 the node's buffer, written before the call), allreduce from a send buffer;
 *   - Wrapper_*:  the paper-compatible layer, inputs written in place as its programs do;
 *   - naive:      the same design with MPI_Barrier on the node as its synchronization and
 *                 the leader reducing the node alone (the baseline a hybrid design must beat);
 *   - MPI_*:      MPI_Allgather / MPI_Bcast / MPI_Allreduce.
 * An allreduce reads its inputs in the call, and a program's contribution is new at every
 * call: each allreduce iteration of every way first writes it (a copy of count doubles)
 * where that way takes it, the send buffer or the process's slot, so no way reads inputs
 * that stayed in every core's cache since the last call.
 * Each hybrid way gets a row against MPI_*. Under each table a note gives the first call
 * after setup (cold: the call a short program pays), slowest rank, for every way.
 * MPIX_HY_SPLIT=k runs virtual nodes of k ranks (multi-node paths on one machine). */
#include "bench.h"

#include <mpix/mpix.h>
#include <mpix/hy_wrapper.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HY, WRAPPER, NAIVE, MPI, WAYS };
static const char *const way_names[WAYS] = { "MPIX_Hy_*", "Wrapper_*", "naive", "MPI_*" };
enum { ALLGATHER, BCAST, ALLREDUCE, KINDS };
static const char *const kind_names[KINDS] = { "allgather", "bcast", "allreduce" };

typedef struct hy_context {
    int kind;
    MPI_Comm comm;                  /* the benchmark's communicator (MPI_* way) */
    int count, rank, size;
    double *send, *receive;         /* MPI_* and MPIX_Hy_* inputs, MPI_* outputs */
    const double *contribution;     /* what an allreduce iteration writes as its input */
    MPI_Win hy_win;                 /* MPIX_Hy_* operation */
    struct comm_package *handle;    /* Wrapper_* and naive */
    struct allgather_param *param;
    double *region;                 /* the Wrapper_* region (naive uses its own) */
    MPI_Win region_win;
    int *shmem_transtable, *bridge_transtable;
    int node_rank;
} hy_context;

/* This call's input of an allreduce, written where the way takes it. */
static void contribute(const hy_context *c, double *input)
{
    memcpy(input, c->contribution, (size_t)c->count * sizeof(double));
}

static void run_hy(hy_context *c, int iterations)
{
    for (int i = 0; i < iterations; i++)
        if (c->kind == ALLGATHER)
            MPIX_Hy_allgather(MPI_IN_PLACE, c->hy_win);
        else if (c->kind == BCAST)
            MPIX_Hy_bcast(MPI_IN_PLACE, 0, c->hy_win);
        else {
            contribute(c, c->send);
            MPIX_Hy_allreduce(c->send, c->hy_win);
        }
}

static void run_wrapper(hy_context *c, int iterations)
{
    void *out;
    double *mine = c->region + (size_t)(c->kind == ALLGATHER ? c->rank : c->node_rank) * c->count;
    for (int i = 0; i < iterations; i++)
        if (c->kind == ALLGATHER)
            Wrapper_Hy_Allgather(c->region, mine, c->count, MPI_DOUBLE, c->param, c->handle);
        else if (c->kind == BCAST)
            Wrapper_Hy_Bcast(&out, c->region, c->count, c->shmem_transtable, c->bridge_transtable, MPI_DOUBLE, 0,
                             c->handle);
        else {
            contribute(c, mine);
            Wrapper_Hy_Allreduce(c->region, &out, c->node_rank, c->count, MPI_DOUBLE, MPI_SUM, c->handle,
                                 c->region_win);
        }
}

/* The paper's design with MPI_Barrier for every node synchronization. */
static void run_naive(hy_context *c, int iterations)
{
    struct comm_package *h = c->handle;
    int leader = h->bridge_comm != MPI_COMM_NULL, several = h->bridgecomm_size > 1;
    size_t n = (size_t)h->shmemcomm_size, m = (size_t)c->count;
    for (int i = 0; i < iterations; i++) {
        if (c->kind == ALLGATHER) {
            MPI_Barrier(h->shmem_comm); /* every slot is written */
            if (several) {
                if (leader)
                    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, c->region, c->param->recvcounts, c->param->displs,
                                   MPI_DOUBLE, h->bridge_comm);
                MPI_Barrier(h->shmem_comm);
            }
        } else if (c->kind == BCAST) {
            MPI_Barrier(h->shmem_comm); /* the root's data is written; the last is read */
            int root_node = c->shmem_transtable[0] != MPI_UNDEFINED;
            if (several && leader)
                MPI_Bcast(root_node ? c->region : c->region + n * m, c->count, MPI_DOUBLE, 0, h->bridge_comm);
            if (several && !root_node)
                MPI_Barrier(h->shmem_comm);
        } else {
            contribute(c, c->region + (size_t)c->node_rank * m);
            MPI_Barrier(h->shmem_comm); /* every input is written, the last result read */
            double *node_sum = c->region + n * m;
            if (leader) {
                for (size_t j = 0; j < m; j++) {
                    double sum = 0;
                    for (size_t q = 0; q < n; q++)
                        sum += c->region[q * m + j];
                    node_sum[j] = sum;
                }
                if (several)
                    MPI_Allreduce(node_sum, node_sum + m, c->count, MPI_DOUBLE, MPI_SUM, h->bridge_comm);
            }
            MPI_Barrier(h->shmem_comm);
        }
    }
}

static void run_mpi(hy_context *c, int iterations)
{
    for (int i = 0; i < iterations; i++)
        if (c->kind == ALLGATHER)
            MPI_Allgather(c->send, c->count, MPI_DOUBLE, c->receive, c->count, MPI_DOUBLE, c->comm);
        else if (c->kind == BCAST)
            MPI_Bcast(c->receive, c->count, MPI_DOUBLE, 0, c->comm);
        else {
            contribute(c, c->send);
            MPI_Allreduce(c->send, c->receive, c->count, MPI_DOUBLE, MPI_SUM, c->comm);
        }
}

typedef struct way_context {
    hy_context *shared;
    int way;
} way_context;

static void run_way(void *context, int iterations)
{
    way_context *w = context;
    static void (*const run[WAYS])(hy_context *, int) = { run_hy, run_wrapper, run_naive, run_mpi };
    run[w->way](w->shared, iterations);
}

/* Set up the four ways for @kind and @count; the naive and wrapper ways share the
 * region layout but not the region. */
static void open_ways(hy_context *c, hy_context *naive, MPI_Comm hy, int kind, int count)
{
    void *result, *slot;
    int flag = kind == ALLGATHER ? c->size : 0;
    c->kind = kind;
    c->count = count;
    if (kind == ALLGATHER)
        MPIX_Hy_allgather_create(hy, count, MPI_DOUBLE, &result, &c->hy_win);
    else if (kind == BCAST)
        MPIX_Hy_bcast_create(hy, count, MPI_DOUBLE, &result, &c->hy_win);
    else
        MPIX_Hy_allreduce_create(hy, count, MPI_DOUBLE, MPI_SUM, &slot, &result, &c->hy_win);
    Wrapper_MPI_Sharedmemory_alloc(count, sizeof(double), flag, c->handle, (void **)&c->region, &c->region_win);
    *naive = *c;
    Wrapper_MPI_Sharedmemory_alloc(count, sizeof(double), flag, c->handle, (void **)&naive->region,
                                   &naive->region_win);
    /* Inputs in place, as the wrapper's programs write them. */
    size_t slot_index = kind == ALLGATHER ? (size_t)c->rank : (size_t)c->node_rank;
    for (int i = 0; i < count; i++)
        c->region[slot_index * count + i] = naive->region[slot_index * count + i] = c->send[i];
    if (kind == ALLGATHER)
        memcpy((double *)result + (size_t)c->rank * count, c->send, (size_t)count * sizeof(double));
    MPI_Barrier(c->comm);
}

static void close_ways(hy_context *c, hy_context *naive)
{
    MPIX_Hy_free(&c->hy_win);
    MPI_Win_free(&c->region_win);
    MPI_Win_free(&naive->region_win);
}

/* The first call of each way after its setup, slowest rank. */
static void time_first_calls(hy_context *c, hy_context *naive, MPI_Comm hy, int kind, int count, double first[WAYS])
{
    for (int way = 0; way < WAYS; way++) {
        hy_context fresh_naive;
        open_ways(c, &fresh_naive, hy, kind, count);
        way_context w = { way == NAIVE ? &fresh_naive : c, way };
        MPI_Barrier(c->comm);
        double start = MPI_Wtime();
        run_way(&w, 1);
        double local = MPI_Wtime() - start;
        MPI_Allreduce(&local, &first[way], 1, MPI_DOUBLE, MPI_MAX, c->comm);
        close_ways(c, &fresh_naive);
    }
    (void)naive;
}

int bench_hy(const bench_options *options)
{
    MPI_Comm hy, node_comm, bridge;
    int node, nodes;
    MPIX_Hy_comm_create(options->comm, MPI_INFO_NULL, &hy);
    MPIX_Hy_comm_query(hy, &node_comm, &bridge, &node, &nodes);
    struct comm_package handle;
    Wrapper_MPI_ShmemBridgeComm_create(options->comm, &handle);
    int *sizeset;
    struct allgather_param param;
    Wrapper_ShmemcommSizeset_gather(&handle, &sizeset);

    long long largest = 1 << 20;
    hy_context c = { .comm = options->comm, .rank = options->rank, .size = options->size, .handle = &handle,
                     .param = &param };
    c.send = malloc(largest);
    double *contribution = malloc(largest);
    c.contribution = contribution;
    c.receive = malloc(largest * options->size);
    c.shmem_transtable = malloc(options->size * sizeof(int));
    c.bridge_transtable = malloc(options->size * sizeof(int));
    Wrapper_Get_transtable(options->comm, &handle, &c.shmem_transtable, &c.bridge_transtable);
    MPI_Comm_rank(handle.shmem_comm, &c.node_rank);
    for (long long i = 0; i < largest / 8; i++)
        c.send[i] = contribution[i] = i % 7;
    memset(c.receive, 0, largest * options->size);

    char label[160];
    snprintf(label, sizeof label, "MPIX_Hy_*, Wrapper_*, naive (%d node%s, %d ranks on rank 0's)", nodes,
             nodes > 1 ? "s" : "", handle.shmemcomm_size);
    bench_heading(options, "hy", label, "MPI_Allgather / MPI_Bcast / MPI_Allreduce, doubles");
    static const long long sizes[] = { 8, 64, 512, 4096, 32768, 262144, 1 << 20 };
    for (int kind = 0; kind < KINDS; kind++) {
        char cold[512] = "";
        int first_measured = -1;
        for (int s = 0; s < 7; s += options->quick ? 3 : 1) {
            long long bytes = sizes[s];
            if (bytes < options->min_bytes && s < 6)
                continue;
            if (first_measured < 0)
                first_measured = s;
            int count = (int)(bytes / 8);
            hy_context naive;
            Wrapper_Create_Allgather_param(count, &handle, sizeset, &param);
            open_ways(&c, &naive, hy, kind, count);
            way_context ways[WAYS] = { { &c, HY }, { &c, WRAPPER }, { &naive, NAIVE }, { &c, MPI } };
            bench_case cases[WAYS];
            for (int way = 0; way < WAYS; way++)
                cases[way] = (bench_case){ run_way, &ways[way] };
            int iterations = (int)(bytes <= 4096 ? (options->quick ? 200 : 2000) : (options->quick ? 10 : 40));
            bench_stats time[WAYS];
            bench_time_together(options, WAYS, cases, iterations, time);
            close_ways(&c, &naive);
            for (int way = HY; way < MPI; way++) {
                char name[80];
                snprintf(name, sizeof name, "%s %s%s", kind_names[kind], way_names[way],
                         kind == ALLGATHER ? " (per process)" : "");
                bench_row(options, "hy", name, (size_t)bytes, time[way], time[MPI]);
            }
            if (s == first_measured || s == 3 || s == 6) {
                double first[WAYS];
                time_first_calls(&c, &naive, hy, kind, count, first);
                size_t used = strlen(cold);
                snprintf(cold + used, sizeof cold - used, "%s%lld B: %.1f / %.1f / %.1f / %.1f us", used ? "; " : "",
                         bytes, first[HY] * 1e6, first[WRAPPER] * 1e6, first[NAIVE] * 1e6, first[MPI] * 1e6);
            }
            Wrapper_Param_free(&handle, &param);
        }
        char note[640];
        snprintf(note, sizeof note, "%s, first call after setup (MPIX_Hy_* / Wrapper_* / naive / MPI_*): %s",
                 kind_names[kind], cold);
        bench_note(options, note);
    }
    free(c.send);
    free(contribution);
    free(c.receive);
    free(c.shmem_transtable);
    free(c.bridge_transtable);
    Wrapper_ShmemcommSizeset_free(&handle, sizeset);
    Wrapper_Comm_free(&handle);
    MPI_Comm_free(&hy);
    return 0;
}
