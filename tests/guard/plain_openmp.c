/* SPDX-License-Identifier: BSD-3-Clause */
/* A hybrid MPI+OpenMP program as many are written: MPI_Init (so MPI_THREAD_SINGLE),
 * MPI calls outside parallel regions only, and the array just received summed by an
 * OpenMP loop whose threads each read their own part of it. Under libmpix-guard.so or
 * guard_inject.h the output must be the plain run's: guard leaves such a process to the
 * plain calls, as the worker threads would otherwise read a buffer whose message has not
 * arrived (they may not call MPI to finish it). */
#include <mpi.h>

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { ELEMENTS = 1 << 21, ITERATIONS = 8 };

int main(int argc, char **argv)
{
    int rank, ranks, wrong = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    double *array = malloc(ELEMENTS * sizeof(double));
    int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        #pragma omp parallel for schedule(static)
        for (int i = 0; i < ELEMENTS; i++)
            array[i] = rank + iteration;
        if (ranks > 1) {
            /* A ring, blocking: even ranks send first. */
            double *incoming = malloc(ELEMENTS * sizeof(double));
            if (rank % 2 == 0) {
                MPI_Send(array, ELEMENTS, MPI_DOUBLE, right, iteration, MPI_COMM_WORLD);
                MPI_Recv(incoming, ELEMENTS, MPI_DOUBLE, left, iteration, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(incoming, ELEMENTS, MPI_DOUBLE, left, iteration, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(array, ELEMENTS, MPI_DOUBLE, right, iteration, MPI_COMM_WORLD);
            }
            double sum = 0;
            #pragma omp parallel for reduction(+ : sum) schedule(static)
            for (int i = ELEMENTS - 1; i >= 0; i--)
                sum += incoming[i];
            if (sum != (double)ELEMENTS * (left + iteration)) {
                wrong++;
                fprintf(stderr, "rank %d, iteration %d: sum %.0f, want %.0f\n", rank, iteration, sum,
                        (double)ELEMENTS * (left + iteration));
            }
            free(incoming);
        }
    }
    int all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_openmp: %d ranks, %d iterations, %d wrong sums\n", ranks, ITERATIONS, all_wrong);
    free(array);
    MPI_Finalize();
    return all_wrong != 0;
}
