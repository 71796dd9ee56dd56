/* SPDX-License-Identifier: BSD-3-Clause */
/* A real crash in a guarded program still dies with SIGSEGV: guarded transfers in flight
 * (the fault handler installed, and taken once), then a store through a null pointer,
 * which guard must hand to the handler installed before it (MPI's, or the default). */
#include "mpix_test.h"

#include <mpix/guard.h>
#include <stdint.h>

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    double *row = malloc(8192 * sizeof(double));
    for (int i = 0; i < 8192; i++)
        row[i] = i;
    int peer = rank ^ 1;
    if (peer >= ranks)
        peer = rank;
    MPIX_Sendrecv_guarded(row, 4096, MPI_DOUBLE, peer, 0, row + 4096, 4096, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
    CHECK(row[4096] == 0.0, "guarded receive gave %g", row[4096]);   /* a guarded touch */
    MPIX_Send_guarded(row, 4096, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
    MPIX_Recv_guarded(row + 4096, 4096, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    volatile int *nowhere = getenv("MPIX_TEST_NEVER_SET") ? (volatile int *)row : NULL;
    fprintf(stderr, "[rank %d] storing through a null pointer\n", rank);
    *nowhere = 1;
    fprintf(stderr, "[rank %d] survived a null store\n", rank);
    return mpix_test_finish("guard_segv");
}
