/* mpix-bench hy: OSU-style latency of the hybrid collectives against MPI's, 8 B to 1 MiB
 * (per process for allgather, in all for bcast and allreduce), doubles, in one run;
 * the hybrid bcast's root has its data in the node's buffer already (MPI_IN_PLACE). Run
 * it with MPIX_HY_SPLIT=2 for virtual nodes of 2 ranks (multi-node path on one machine). */
#include "bench.h"

#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hy_context {
    MPI_Comm comm;
    MPI_Win win;
    int count;
    double *send, *receive;
} hy_context;

static void hy_allgather(void *context, int iterations)
{
    hy_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPIX_Hy_allgather(c->send, c->win);
}

static void mpi_allgather(void *context, int iterations)
{
    hy_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPI_Allgather(c->send, c->count, MPI_DOUBLE, c->receive, c->count, MPI_DOUBLE, c->comm);
}

/* The root produces its data in the node's buffer (the paper's use), so the call moves
 * it to the other processes and nodes only; MPI_Bcast's root has it in place too. */
static void hy_bcast(void *context, int iterations)
{
    hy_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPIX_Hy_bcast(MPI_IN_PLACE, 0, c->win);
}

static void mpi_bcast(void *context, int iterations)
{
    hy_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPI_Bcast(c->receive, c->count, MPI_DOUBLE, 0, c->comm);
}

static void hy_allreduce(void *context, int iterations)
{
    hy_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPIX_Hy_allreduce(c->send, c->win);
}

static void mpi_allreduce(void *context, int iterations)
{
    hy_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPI_Allreduce(c->send, c->receive, c->count, MPI_DOUBLE, MPI_SUM, c->comm);
}

int bench_hy(const bench_options *options)
{
    MPI_Comm hy;
    MPIX_Hy_comm_create(options->comm, MPI_INFO_NULL, &hy);
    MPI_Comm node_comm, bridge;
    int node, nodes;
    MPIX_Hy_comm_query(hy, &node_comm, &bridge, &node, &nodes);
    char label[160];
    snprintf(label, sizeof label, "MPIX_Hy_* (%d node%s)", nodes, nodes > 1 ? "s" : "");
    bench_heading(options, "hy", label, "MPI_Allgather / MPI_Bcast / MPI_Allreduce, doubles");

    long long largest = 1 << 20;
    double *send = malloc(largest), *receive = malloc(largest * options->size);
    for (long long i = 0; i < largest / 8; i++)
        send[i] = i % 7;
    memset(receive, 0, largest * options->size);
    static const long long sizes[] = { 8, 64, 512, 4096, 32768, 262144, 1 << 20 };
    for (int kind = 0; kind < 3; kind++) {
        for (int s = 0; s < 7; s += options->quick ? 3 : 1) {
            long long bytes = sizes[s];
            hy_context c = { options->comm, MPI_WIN_NULL, (int)(bytes / 8), send, receive };
            void *result, *slot;
            int iterations = (int)(bytes <= 4096 ? (options->quick ? 200 : 2000) : (options->quick ? 10 : 40));
            char name[64];
            bench_stats hy_time, mpi_time;
            if (kind == 0) {
                MPIX_Hy_allgather_create(hy, c.count, MPI_DOUBLE, &result, &c.win);
                bench_time_pair(options, hy_allgather, &c, mpi_allgather, &c, iterations, &hy_time, &mpi_time);
                snprintf(name, sizeof name, "allgather (bytes per process)");
            } else if (kind == 1) {
                MPIX_Hy_bcast_create(hy, c.count, MPI_DOUBLE, &result, &c.win);
                bench_time_pair(options, hy_bcast, &c, mpi_bcast, &c, iterations, &hy_time, &mpi_time);
                snprintf(name, sizeof name, "bcast (root 0, data in place)");
            } else {
                MPIX_Hy_allreduce_create(hy, c.count, MPI_DOUBLE, MPI_SUM, &slot, &result, &c.win);
                bench_time_pair(options, hy_allreduce, &c, mpi_allreduce, &c, iterations, &hy_time, &mpi_time);
                snprintf(name, sizeof name, "allreduce (MPI_SUM)");
            }
            bench_row(options, "hy", name, (size_t)bytes, hy_time, mpi_time);
            MPIX_Hy_free(&c.win);
        }
    }
    free(send);
    free(receive);
    MPI_Comm_free(&hy);
    return 0;
}
