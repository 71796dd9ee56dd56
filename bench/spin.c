/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench spin: spin-synchronized shared windows against MPI_Barrier, on one node.
 *  - barrier: MPIX_Win_spin_barrier vs MPI_Barrier;
 *  - round: the leader-to-node step of a hybrid collective: the leader stores and posts,
 *    the others wait and load, then a barrier before the leader may store again; the
 *    naive version is two MPI_Barrier calls. */
#include "bench.h"

#include <mpix/mpix.h>

typedef struct spin_context {
    MPI_Win win;
    MPI_Comm comm;
    volatile long long *leader_data;
    int rank;
} spin_context;

static void spin_barriers(void *context, int iterations)
{
    spin_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPIX_Win_spin_barrier(c->win);
}

static void mpi_barriers(void *context, int iterations)
{
    spin_context *c = context;
    for (int i = 0; i < iterations; i++)
        MPI_Barrier(c->comm);
}

static void spin_rounds(void *context, int iterations)
{
    spin_context *c = context;
    long long sum = 0;
    for (int i = 0; i < iterations; i++) {
        if (c->rank == 0) {
            c->leader_data[0] = i;
            MPIX_Win_spin_post(c->win);
        } else {
            MPIX_Win_spin_wait(c->win);
            sum += c->leader_data[0];
        }
        MPIX_Win_spin_barrier(c->win);
    }
    (void)sum;
}

static void mpi_rounds(void *context, int iterations)
{
    spin_context *c = context;
    long long sum = 0;
    for (int i = 0; i < iterations; i++) {
        if (c->rank == 0)
            c->leader_data[0] = i;
        MPI_Barrier(c->comm);
        if (c->rank != 0)
            sum += c->leader_data[0];
        MPI_Barrier(c->comm);
    }
    (void)sum;
}

int bench_spin(const bench_options *options)
{
    spin_context context = { MPI_WIN_NULL, MPI_COMM_NULL, NULL, 0 };
    MPI_Aint size;
    int unit, iterations = options->quick ? 200 : 2000;
    long long *mine, *leader;

    /* One node: the shared window needs it. */
    MPI_Comm_split_type(options->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &context.comm);
    MPI_Comm_rank(context.comm, &context.rank);
    MPIX_Win_allocate_shared(64, 1, MPI_INFO_NULL, context.comm, &mine, &context.win);
    MPIX_Win_shared_query(context.win, 0, &size, &unit, &leader);
    context.leader_data = leader;

    bench_heading(options, "spin", "spin-synchronized shared window (MPIX_Win_spin_*)", "MPI_Barrier on the node");
    bench_stats spin_time, mpi_time;
    bench_time_pair(options, spin_barriers, &context, mpi_barriers, &context, iterations, &spin_time, &mpi_time);
    bench_row(options, "spin", "barrier vs MPI_Barrier", 0, spin_time, mpi_time);
    bench_time_pair(options, spin_rounds, &context, mpi_rounds, &context, iterations, &spin_time, &mpi_time);
    bench_row(options, "spin", "post+wait+barrier vs 2 MPI_Barrier", 0, spin_time, mpi_time);
    MPIX_Win_free(&context.win);
    MPI_Comm_free(&context.comm);
    return 0;
}
