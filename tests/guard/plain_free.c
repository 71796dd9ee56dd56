/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program that knows nothing of mpix and gives memory back the moment MPI allows
 * it: a send buffer freed as soon as MPI_Sendrecv or MPI_Send returns (its receiver
 * late), receive buffers grown with realloc and reallocarray, one of them freed unread;
 * buffers of 100 KB (the C library's heap) to 4 MiB (blocks of their own, which free
 * unmaps). Every message is checked where it is read, and the program prints one line. Built plain and with
 * `-include mpix/guard_inject.h` and run plain, injected and under LD_PRELOAD of
 * libmpix-guard.so (preload_check.sh): with guard, MPI is still reading a large send
 * buffer in place, or has yet to copy a receive in, when the call returns. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double value(int owner, int step, size_t i)
{
    return owner * 1e7 + step * 1e6 + (double)i;
}

int main(int argc, char **argv)
{
    int rank, ranks, wrong = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    const size_t sizes[] = { 100000, 200000, 1 << 20, 4 << 20 };

    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s] / sizeof(double);
        for (int step = 0; step < 4; step++) {
            /* Ring: the send buffer freed at once, the receive buffer grown by realloc. */
            double *outgoing = malloc(n * sizeof(double)), *incoming = malloc(8), *unread = malloc(16);
            for (size_t i = 0; i < n; i++)
                outgoing[i] = value(rank, step, i);
            incoming = realloc(incoming, n * sizeof(double));
            unread = reallocarray(unread, n, sizeof(double));
            MPI_Sendrecv(outgoing, (int)n, MPI_DOUBLE, right, step, incoming, (int)n, MPI_DOUBLE, left, step,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            free(outgoing);
            MPI_Sendrecv(incoming, (int)n, MPI_DOUBLE, right, 10 + step, unread, (int)n, MPI_DOUBLE, left, 10 + step,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            free(unread);   /* never read */
            char *reused = malloc(n * sizeof(double));   /* may take the freed memory */
            memset(reused, 0x5a, n * sizeof(double));
            for (size_t i = 0; i < n; i++)
                if (incoming[i] != value(left, step, i)) {
                    wrong++;
                    break;
                }
            free(reused);
            free(incoming);

            /* A send buffer freed as soon as MPI_Send returns; its receiver is late. */
            if (ranks > 1 && rank == 0) {
                double *temporary = malloc(n * sizeof(double));
                for (size_t i = 0; i < n; i++)
                    temporary[i] = value(0, step, i);
                MPI_Send(temporary, (int)n, MPI_DOUBLE, 1, 20 + step, MPI_COMM_WORLD);
                free(temporary);
            } else if (ranks > 1 && rank == 1) {
                usleep(5000);
                double *late = malloc(n * sizeof(double));
                MPI_Recv(late, (int)n, MPI_DOUBLE, 0, 20 + step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (size_t i = 0; i < n; i++)
                    if (late[i] != value(0, step, i)) {
                        wrong++;
                        break;
                    }
                free(late);
            }
        }
    }
    int all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_free: %d ranks, %d wrong messages\n", ranks, all_wrong);
    MPI_Finalize();
    return all_wrong != 0;
}
