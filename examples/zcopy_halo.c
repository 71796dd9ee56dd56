/* SPDX-License-Identifier: BSD-3-Clause */
/* 3D halo exchange with subarray datatypes through MPIX_Send_zcopy / MPIX_Recv_zcopy.
 *
 * The ranks form a ring along z; each owns an n^3 block of doubles with a one-cell halo
 * ((n+2)^3 in memory). Every step sends its top and bottom interior z-planes to its
 * neighbours' halo planes, then averages each interior cell with its two z-neighbours.
 * A plane's interior is a subarray of n rows of n doubles, n + 2 doubles apart: a
 * non-contiguous layout that moves from the sender's grid into the receiver's halo
 * without a packing buffer. x- and y-faces would use their own subarray types the same
 * way.
 *
 * The same exchange runs with MPI_Sendrecv on a copy of the data, and the program checks
 * that both give identical grids after every step. Run: mpirun -np 2 zcopy_halo [n] */
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct faces {
    MPI_Datatype send_low, send_high, recv_low, recv_high;
} faces;

/* The plane k of the (n+2)^3 array, interior rows and columns only. */
static MPI_Datatype plane(int n, int k)
{
    int sizes[3] = { n + 2, n + 2, n + 2 }, subsizes[3] = { 1, n, n }, starts[3] = { k, 1, 1 };
    MPI_Datatype type;
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    return type;
}

static size_t at(int n, int k, int j, int i) { return ((size_t)k * (n + 2) + j) * (n + 2) + i; }

static void smooth(int n, double *grid, double *scratch)
{
    memcpy(scratch, grid, sizeof(double) * (n + 2) * (n + 2) * (n + 2));
    for (int k = 1; k <= n; k++)
        for (int j = 1; j <= n; j++)
            for (int i = 1; i <= n; i++)
                grid[at(n, k, j, i)] =
                    (scratch[at(n, k - 1, j, i)] + scratch[at(n, k, j, i)] + scratch[at(n, k + 1, j, i)]) / 3.0;
}

int main(int argc, char **argv)
{
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 48, mismatches = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int below = (rank + size - 1) % size, above = (rank + 1) % size;
    size_t cells = (size_t)(n + 2) * (n + 2) * (n + 2);
    double *grid = calloc(cells, sizeof *grid), *reference = calloc(cells, sizeof *reference),
           *scratch = malloc(cells * sizeof *scratch);
    for (int k = 1; k <= n; k++)
        for (int j = 1; j <= n; j++)
            for (int i = 1; i <= n; i++)
                grid[at(n, k, j, i)] = reference[at(n, k, j, i)] = rank * 1000.0 + k * 10.0 + j + i * 0.01;

    faces f = { plane(n, 1), plane(n, n), plane(n, 0), plane(n, n + 1) };
    for (int step = 0; step < 10; step++) {
        if (size > 1) {
            /* Up then down; even ranks send first so that blocking sends pair up. */
            for (int direction = 0; direction < 2; direction++) {
                int to = direction == 0 ? above : below, from = direction == 0 ? below : above;
                MPI_Datatype out = direction == 0 ? f.send_high : f.send_low;
                MPI_Datatype in = direction == 0 ? f.recv_low : f.recv_high;
                if (rank % 2 == 0) {
                    MPIX_Send_zcopy(grid, 1, out, to, direction, MPI_COMM_WORLD);
                    MPIX_Recv_zcopy(grid, 1, in, from, direction, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPIX_Recv_zcopy(grid, 1, in, from, direction, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPIX_Send_zcopy(grid, 1, out, to, direction, MPI_COMM_WORLD);
                }
                MPI_Sendrecv(reference, 1, out, to, 10 + direction, reference, 1, in, from, 10 + direction,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
        smooth(n, grid, scratch);
        smooth(n, reference, scratch);
        mismatches += memcmp(grid, reference, cells * sizeof *grid) != 0;
    }
    int total = 0;
    MPI_Reduce(&mismatches, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("zcopy_halo: %d ranks, %d^3 cells each, 10 steps: %s\n", size, n,
               total == 0 ? "identical to MPI_Sendrecv" : "DIFFERENT from MPI_Sendrecv");
    MPI_Type_free(&f.send_low);
    MPI_Type_free(&f.send_high);
    MPI_Type_free(&f.recv_low);
    MPI_Type_free(&f.recv_high);
    free(grid);
    free(reference);
    free(scratch);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
