/* SPDX-License-Identifier: BSD-3-Clause */
/* 2D Poisson with Jacobi iterations: the grid is split into row blocks, halos move with
 * MPI_Sendrecv, and the convergence check is an allreduce of the largest update — done
 * with MPIX_Hy_allreduce and, for comparison, with MPI_Allreduce. The max is exact in
 * any order, so both residuals must be identical at every iteration.
 * Run: mpirun -np 4 ./hy_jacobi [N]   (MPIX_HY_SPLIT=2 for virtual nodes of 2 ranks) */
#include <mpix/mpix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = argc > 1 ? atoi(argv[1]) : 128;
    int rows = n / size + (rank < n % size), cols = n;
    /* rows + 2 halo rows; u = 1 on the top boundary of the domain, 0 elsewhere; f = 0. */
    double *u = calloc((size_t)(rows + 2) * (cols + 2), sizeof *u), *next = calloc((size_t)(rows + 2) * (cols + 2), sizeof *next);
#define AT(a, i, j) (a)[(size_t)(i) * (cols + 2) + (j)]
    if (rank == 0)
        for (int j = 0; j < cols + 2; j++)
            AT(u, 0, j) = AT(next, 0, j) = 1.0;

    MPI_Comm hy;
    MPI_Win check;
    double *slot, *largest;
    MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &hy);
    MPIX_Hy_allreduce_create(hy, 1, MPI_DOUBLE, MPI_MAX, &slot, &largest, &check);

    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL, same = 1;
    double residual_mpi = 1, residual_hy = 1;
    int iteration;
    for (iteration = 1; iteration <= 2000 && residual_hy > 1e-4; iteration++) {
        MPI_Sendrecv(&AT(u, 1, 0), cols + 2, MPI_DOUBLE, up, 0, &AT(u, rows + 1, 0), cols + 2, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&AT(u, rows, 0), cols + 2, MPI_DOUBLE, down, 1, &AT(u, 0, 0), cols + 2, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double local = 0;
        for (int i = 1; i <= rows; i++)
            for (int j = 1; j <= cols; j++) {
                AT(next, i, j) = 0.25 * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) + AT(u, i, j + 1));
                local = fmax(local, fabs(AT(next, i, j) - AT(u, i, j)));
            }
        double *swap = u;
        u = next;
        next = swap;
        MPIX_Hy_allreduce(&local, check);
        residual_hy = *largest;
        MPI_Allreduce(&local, &residual_mpi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        same &= residual_hy == residual_mpi;
        if (rank == 0 && (iteration == 1 || iteration % 200 == 0))
            printf("jacobi: iteration %4d residual %.12e (MPIX_Hy_allreduce) %.12e (MPI_Allreduce)\n", iteration,
                   residual_hy, residual_mpi);
    }
    if (rank == 0)
        printf("jacobi: %dx%d grid on %d ranks: stopped after %d iterations at residual %.3e; hybrid and MPI "
               "residuals %s at every iteration\n",
               n, n, size, iteration - 1, residual_hy, same ? "identical" : "DIFFERENT");
    MPIX_Hy_free(&check);
    MPI_Comm_free(&hy);
    free(u);
    free(next);
    MPI_Finalize();
    return same ? 0 : 1;
}
