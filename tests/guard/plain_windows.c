/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program that knows nothing of mpix and receives into MPI's own memory:
 *  - window memory (MPI_Win_allocate) and MPI_Alloc_mem memory, received into and given
 *    back unread (MPI_Win_free, MPI_Free_mem) as soon as the receive returns;
 *  - a shared window of the node: rank 0 receives each round's data from the last rank
 *    straight into it, then publishes it the MPI way (MPI_Win_sync, then a flag in the
 *    window set with a C11 atomic store, the unified model's idiom); the
 *    other ranks poll the flag with MPI_Win_sync and read the data from rank 0's segment.
 *  - RMA windows (MPI_Win_create over the program's memory, MPI_Win_allocate): rank 0
 *    receives into its window and tells rank 1 with a message; rank 1 reads the data back
 *    with MPI_Get.
 * The program prints one line. Built plain and with `-include mpix/guard_inject.h` and run
 * plain, injected and under LD_PRELOAD of libmpix-guard.so (preload_check.sh): with guard
 * the receive has not landed when MPI_Recv returns, and other processes see the shared
 * memory without faulting in rank 0. */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

enum { ELEMENTS = 1 << 16, ROUNDS = 5 };

static double value(int round, int i)
{
    return round * 1e6 + (double)i;
}

int main(int argc, char **argv)
{
    int rank, ranks, wrong = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    double *outgoing = malloc(ELEMENTS * sizeof(double));

    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < ELEMENTS; i++)
            outgoing[i] = value(round, i);
        double *window_memory, *allocated;
        MPI_Win win;
        MPI_Win_allocate(ELEMENTS * (MPI_Aint)sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                         &window_memory, &win);
        MPI_Sendrecv(outgoing, ELEMENTS, MPI_DOUBLE, right, round, window_memory, ELEMENTS, MPI_DOUBLE, left, round,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_free(&win);
        MPI_Alloc_mem(ELEMENTS * (MPI_Aint)sizeof(double), MPI_INFO_NULL, &allocated);
        MPI_Sendrecv(outgoing, ELEMENTS, MPI_DOUBLE, right, 10 + round, allocated, ELEMENTS, MPI_DOUBLE, left,
                     10 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Free_mem(allocated);
    }

    /* RMA: rank 0 receives into its window and tells rank 1, which reads the data back
     * with MPI_Get; a window over the program's memory and one MPI allocated. */
    for (int kind = 0; kind < 2 && ranks > 1; kind++) {
        double *window_memory = NULL, *back = malloc(ELEMENTS * sizeof(double));
        MPI_Aint bytes = rank == 0 ? ELEMENTS * (MPI_Aint)sizeof(double) : 0;
        MPI_Win win;
        if (kind == 0) {
            window_memory = malloc(ELEMENTS * sizeof(double));
            MPI_Win_create(window_memory, bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &window_memory, &win);
        }
        for (int round = 0; round < ROUNDS; round++) {
            int ready = round;
            if (rank == 0) {
                MPI_Recv(window_memory, ELEMENTS, MPI_DOUBLE, 1, 30 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&ready, 1, MPI_INT, 1, 40 + round, MPI_COMM_WORLD);
            } else if (rank == 1) {
                for (int i = 0; i < ELEMENTS; i++)
                    outgoing[i] = value(round, i) + kind;
                MPI_Send(outgoing, ELEMENTS, MPI_DOUBLE, 0, 30 + round, MPI_COMM_WORLD);
                MPI_Recv(&ready, 1, MPI_INT, 0, 40 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
                MPI_Get(back, ELEMENTS, MPI_DOUBLE, 0, 0, ELEMENTS, MPI_DOUBLE, win);
                MPI_Win_unlock(0, win);
                for (int i = 0; i < ELEMENTS; i++)
                    if (back[i] != value(round, i) + kind) {
                        wrong++;
                        break;
                    }
            }
            MPI_Barrier(MPI_COMM_WORLD);   /* read before the next round overwrites */
        }
        MPI_Win_free(&win);
        if (kind == 0)
            free(window_memory);
        free(back);
    }

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank, node_size;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    /* Rank 0's segment: the round it last published, then the data. */
    MPI_Aint bytes = node_rank == 0 ? (MPI_Aint)sizeof(double) * (ELEMENTS + 1) : 0;
    double *mine, *segment;
    MPI_Win shared;
    int disp_unit;
    MPI_Win_allocate_shared(bytes, sizeof(double), MPI_INFO_NULL, node, &mine, &shared);
    MPI_Win_shared_query(shared, 0, &bytes, &disp_unit, &segment);
    _Atomic int *published = (_Atomic int *)segment;
    double *data = segment + 1;
    if (node_rank == 0)
        atomic_store(published, -1);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, shared);
    MPI_Win_sync(shared);
    MPI_Barrier(node);
    for (int round = 0; round < ROUNDS && node_size > 1; round++) {
        if (node_rank == 0) {
            MPI_Recv(data, ELEMENTS, MPI_DOUBLE, node_size - 1, 20 + round, node, MPI_STATUS_IGNORE);
            MPI_Win_sync(shared);
            atomic_store(published, round);
        } else {
            if (node_rank == node_size - 1) {
                for (int i = 0; i < ELEMENTS; i++)
                    outgoing[i] = value(round, i) + 0.5;
                MPI_Send(outgoing, ELEMENTS, MPI_DOUBLE, 0, 20 + round, node);
            }
            while (atomic_load(published) != round)
                MPI_Win_sync(shared);   /* the separate model's poll, progress for MPI too */
            for (int i = 0; i < ELEMENTS; i++)
                if (data[i] != value(round, i) + 0.5) {
                    wrong++;
                    break;
                }
        }
        MPI_Barrier(node);   /* read before the next round overwrites */
    }
    MPI_Win_unlock_all(shared);
    MPI_Win_free(&shared);
    MPI_Comm_free(&node);
    free(outgoing);

    int total;
    MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("windows: %d ranks, %d rounds, %d wrong\n", ranks, ROUNDS, total);
    MPI_Finalize();
    return total != 0;
}
