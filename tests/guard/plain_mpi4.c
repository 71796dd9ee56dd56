/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI-4 program without mpix that hands the arrays its blocking calls have just moved
 * to MPI-4's calls at once: each step every process sends 1 MiB to its right neighbour
 * and receives from its left one, then passes the received array on with MPI_Isendrecv,
 * MPI_Isendrecv_replace, a persistent MPI_Allreduce_init, a partitioned send
 * (MPI_Psend_init, MPI_Pready per partition) and the large-count MPI_Sendrecv_c and
 * MPI_Bcast_c, some of them receiving into the array it has just sent. Every value is
 * checked. Run plain, under LD_PRELOAD=libmpix-guard.so and built with -include
 * mpix/guard_inject.h (tests/guard/preload_check.sh), it must print the same: with guard
 * the arrays are still being moved when the blocking calls return, and MPI must not meet
 * their pages protected. Built only with an MPI-4 library. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { COUNT = 1 << 18, PARTITIONS = 4 };

static int rank, ranks, failures;

static int value(int from, int step, int i)
{
    return step * 1000000 + from * 10000 + i % 9973;
}

static void fill(int *array, int step)
{
    for (int i = 0; i < COUNT; i++)
        array[i] = value(rank, step, i);
}

static void expect(const int *array, int from, int step, const char *what)
{
    int wrong = 0;
    for (int i = 0; i < COUNT; i++)
        wrong += array[i] != value(from, step, i);
    if (wrong && failures++ < 10)
        fprintf(stderr, "rank %d: %s: %d values wrong\n", rank, what, wrong);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks, two_left = (rank + 2 * ranks - 2) % ranks;
    int *a = malloc(COUNT * sizeof(int)), *b = malloc(COUNT * sizeof(int)), *c = malloc(COUNT * sizeof(int));
    MPI_Request request, partitioned_send, partitioned_receive;

    /* Each step: a[] goes right, b[] comes from the left. */
#define EXCHANGE(step)                                                                               \
    (fill(a, step), MPI_Sendrecv(a, COUNT, MPI_INT, right, step, b, COUNT, MPI_INT, left, step,     \
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE))

    EXCHANGE(1);   /* b passed on right, a (just sent) receives */
    MPI_Isendrecv(b, COUNT, MPI_INT, right, 2, a, COUNT, MPI_INT, left, 2, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(a, two_left, 1, "MPI_Isendrecv");

    EXCHANGE(3);
    MPI_Isendrecv_replace(b, COUNT, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(b, two_left, 3, "MPI_Isendrecv_replace");

    EXCHANGE(5);   /* the largest of the received arrays, into a third one */
    MPI_Allreduce_init(b, c, COUNT, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Request_free(&request);
    expect(c, ranks - 1, 5, "MPI_Allreduce_init");

    EXCHANGE(6);
    MPI_Psend_init(b, PARTITIONS, COUNT / PARTITIONS, MPI_INT, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                   &partitioned_send);
    MPI_Precv_init(a, PARTITIONS, COUNT / PARTITIONS, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                   &partitioned_receive);
    MPI_Start(&partitioned_receive);
    MPI_Start(&partitioned_send);
    for (int partition = 0; partition < PARTITIONS; partition++)
        MPI_Pready(partition, partitioned_send);
    MPI_Wait(&partitioned_send, MPI_STATUS_IGNORE);
    MPI_Wait(&partitioned_receive, MPI_STATUS_IGNORE);
    MPI_Request_free(&partitioned_send);
    MPI_Request_free(&partitioned_receive);
    expect(a, two_left, 6, "MPI_Psend_init/MPI_Pready");

    EXCHANGE(8);
    MPI_Sendrecv_c(b, COUNT, MPI_INT, right, 9, a, COUNT, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect(a, two_left, 8, "MPI_Sendrecv_c");

    EXCHANGE(10);  /* rank 0's received array to everyone, into the array each has just sent */
    if (rank == 0)
        MPI_Bcast_c(b, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Bcast_c(a, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
    expect(rank == 0 ? b : a, ranks - 1, 10, "MPI_Bcast_c");

    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi4: %d ranks, %d failures\n", ranks, total);
    free(c);
    free(b);
    free(a);
    MPI_Finalize();
    return total != 0;
}
