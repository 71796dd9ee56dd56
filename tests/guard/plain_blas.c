/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program with a threaded BLAS, as dense linear algebra codes are written:
 * MPI_Init (so MPI_THREAD_SINGLE), and each matrix just received multiplied by
 * cblas_dgemm, whose pool threads (started when the BLAS is loaded, before main) read it.
 * Under libmpix-guard.so or guard_inject.h the output must be the plain run's: guard
 * makes the plain calls while the pool lives (MPIX_TEST_GUARD=plain). */
#include <mpi.h>

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 384, ITERATIONS = 6 };

int main(int argc, char **argv)
{
    int rank, ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
    double *mine = malloc(sizeof(double) * N * N), *ones = malloc(sizeof(double) * N * N);
    double *product = malloc(sizeof(double) * N * N);
    for (int i = 0; i < N * N; i++)
        ones[i] = 1;
    int wrong = 0;
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        for (int i = 0; i < N * N; i++)
            mine[i] = rank + iteration + i % 7;
        double *theirs = malloc(sizeof(double) * N * N);
        /* A ring, blocking: even ranks send first. */
        if (rank % 2 == 0) {
            MPI_Send(mine, N * N, MPI_DOUBLE, right, iteration, MPI_COMM_WORLD);
            MPI_Recv(theirs, N * N, MPI_DOUBLE, left, iteration, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(theirs, N * N, MPI_DOUBLE, left, iteration, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(mine, N * N, MPI_DOUBLE, right, iteration, MPI_COMM_WORLD);
        }
        /* Row r of the product is N times the sum of row r of theirs. */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, theirs, N, ones, N, 0.0, product, N);
        for (int r = 0; r < N; r++) {
            double row = 0;
            for (int c = 0; c < N; c++)
                row += left + iteration + (r * N + c) % 7;
            if (product[r * N + N - 1] != row) {
                if (wrong++ < 3)
                    fprintf(stderr, "rank %d, iteration %d, row %d: %.0f, want %.0f\n", rank, iteration, r,
                            product[r * N + N - 1], row);
            }
        }
        free(theirs);
    }
    int all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_blas: %d ranks, %d iterations, %d wrong rows\n", ranks, ITERATIONS, all_wrong);
    free(mine);
    free(ones);
    free(product);
    MPI_Finalize();
    return all_wrong != 0;
}
