/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program that knows nothing of mpix: a periodic 1-D process grid whose blocking
 * MPI_Send/MPI_Recv bring each process its left neighbour's array, which goes at once
 * into the grid's neighbourhood collectives (MPI_Neighbor_allgather,
 * MPI_Ineighbor_alltoall + MPI_Wait, MPI_Neighbor_alltoallw) and an MPI_Igatherv. Under
 * guard the receive may still be arriving, its pages protected, when the collective
 * reads the array: guard must finish it first, since MPI cannot wait inside a fault.
 * Prints what every process gathered (the same plain, preloaded and injected). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1 << 17, EDGE = 64, ITERATIONS = 30 };

static double value(int owner, int step, int i) { return owner * 1e6 + step * 1e3 + i * 1e-3; }

/* Blocking, even ranks sending first: @received gets the left neighbour's @mine. */
static void pass_right(const double *mine, double *received, int tag, int rank, MPI_Comm grid)
{
    int left, right;
    MPI_Cart_shift(grid, 0, 1, &left, &right);
    if (rank % 2 == 0) {
        MPI_Send(mine, N, MPI_DOUBLE, right, tag, grid);
        MPI_Recv(received, N, MPI_DOUBLE, left, tag, grid, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(received, N, MPI_DOUBLE, left, tag, grid, MPI_STATUS_IGNORE);
        MPI_Send(mine, N, MPI_DOUBLE, right, tag, grid);
    }
}

int main(int argc, char **argv)
{
    int ranks, rank, dims[1] = { 0 }, periods[1] = { 1 };
    MPI_Comm grid;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks < 2) {
        fprintf(stderr, "plain_neighbors needs two processes or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Dims_create(ranks, 1, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &grid);
    MPI_Comm_rank(grid, &rank);
    int left, right;
    MPI_Cart_shift(grid, 0, 1, &left, &right);
    double *mine = malloc(N * sizeof(double)), *received = malloc(N * sizeof(double));
    double edges[2 * EDGE], *gathered = malloc((size_t)ranks * EDGE * sizeof(double));
    int wrong = 0;
    for (int step = 0; step < ITERATIONS; step++) {
        for (int i = 0; i < N; i++)
            mine[i] = value(rank, step, i);
        pass_right(mine, received, step, rank, grid);
        /* The first EDGE values received go to both neighbours, three ways in turn; the
         * neighbour on each side then holds what its own left neighbour sent it. */
        int way = step % 3;
        if (way == 0) {
            MPI_Neighbor_allgather(received, EDGE, MPI_DOUBLE, edges, EDGE, MPI_DOUBLE, grid);
        } else if (way == 1) {
            double out[2 * EDGE];
            MPI_Request request;
            for (int i = 0; i < EDGE; i++)   /* reads the received array: guard's own fault */
                out[i] = out[EDGE + i] = received[i];
            MPI_Ineighbor_alltoall(out, EDGE, MPI_DOUBLE, edges, EDGE, MPI_DOUBLE, grid, &request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        } else {
            int counts[2] = { EDGE, EDGE };
            MPI_Aint send_at[2] = { 0, 0 }, receive_at[2] = { 0, EDGE * sizeof(double) };
            MPI_Datatype types[2] = { MPI_DOUBLE, MPI_DOUBLE };
            MPI_Neighbor_alltoallw(received, counts, send_at, types, edges, counts, receive_at, types, grid);
        }
        int left_left = (left - 1 + ranks) % ranks, right_left = rank;   /* who sent what each neighbour holds */
        for (int i = 0; i < EDGE; i++) {
            wrong += edges[i] != value(left_left, step, i);
            wrong += edges[EDGE + i] != value(right_left, step, i);
        }
        /* Another array, whose tail is gathered at rank 0 with a nonblocking call. */
        pass_right(mine, received, ITERATIONS + step, rank, grid);
        int *counts = malloc(ranks * sizeof(int)), *displacements = malloc(ranks * sizeof(int));
        for (int r = 0; r < ranks; r++)
            counts[r] = EDGE, displacements[r] = r * EDGE;
        MPI_Request request;
        MPI_Igatherv(received + N - EDGE, EDGE, MPI_DOUBLE, gathered, counts, displacements, MPI_DOUBLE, 0, grid,
                     &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        for (int r = 0; rank == 0 && r < ranks; r++)
            for (int i = 0; i < EDGE; i++)
                wrong += gathered[r * EDGE + i] != value((r - 1 + ranks) % ranks, step, N - EDGE + i);
        free(counts);
        free(displacements);
    }
    free(gathered);
    int all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, grid);
    if (rank == 0)
        printf("plain_neighbors: %d processes, %d steps: %d values wrong\n", ranks, ITERATIONS, all_wrong);
    free(mine);
    free(received);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return all_wrong != 0;
}
