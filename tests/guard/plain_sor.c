/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program that knows nothing of mpix: the blocking SOR, then its grid hashed and
 * gathered, and a ring of MPI_Send/MPI_Recv with a status. Built twice (plain, and with
 * `-include mpix/guard_inject.h`) and run plain, injected and under LD_PRELOAD of
 * libmpix-guard.so: preload_check.sh compares the three outputs. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "../../examples/guard_sor.h"

static uint64_t hash_bytes(const void *data, size_t bytes)
{
    const unsigned char *p = data;
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ p[i]) * 1099511628211ULL;
    return hash;
}

int main(int argc, char **argv)
{
    int rank, ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    sor_grid grid;
    if (sor_init(&grid, MPI_COMM_WORLD, 8 * ranks + 3, 700) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    sor_run_exchange(&grid, 40, MPI_Sendrecv);
    uint64_t hash = hash_bytes(grid.cells, sizeof(double) * (size_t)(grid.rows + 2) * (size_t)(grid.cols + 2));

    /* A ring with a status: the count must be the sender's. */
    int message[300], received = -1;
    for (int i = 0; i < 300; i++)
        message[i] = rank * 1000 + i;
    MPI_Status status;
    if (ranks == 1) {
        /* A blocking send to oneself before the receive is posted may deadlock (MPICH). */
        int incoming[300];
        MPI_Sendrecv(message, 100, MPI_INT, 0, 5, incoming, 300, MPI_INT, 0, 5, MPI_COMM_WORLD, &status);
        for (int i = 0; i < 300; i++)
            message[i] = incoming[i];
    } else if (rank % 2 == 0) {
        MPI_Send(message, 100 + rank, MPI_INT, (rank + 1) % ranks, 5, MPI_COMM_WORLD);
        MPI_Recv(message, 300, MPI_INT, (rank - 1 + ranks) % ranks, 5, MPI_COMM_WORLD, &status);
    } else {
        int incoming[300];
        MPI_Recv(incoming, 300, MPI_INT, (rank - 1 + ranks) % ranks, 5, MPI_COMM_WORLD, &status);
        MPI_Send(message, 100 + rank, MPI_INT, (rank + 1) % ranks, 5, MPI_COMM_WORLD);
        for (int i = 0; i < 300; i++)
            message[i] = incoming[i];
    }
    MPI_Get_count(&status, MPI_INT, &received);
    hash ^= hash_bytes(message, sizeof(int) * (size_t)received);

    uint64_t hashes[64] = { 0 };
    int counts[64] = { 0 };
    MPI_Gather(&hash, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Gather(&received, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < ranks && r < 64; r++)
            printf("rank %d grid+ring hash %016llx received %d\n", r, (unsigned long long)hashes[r], counts[r]);
    sor_free(&grid);
    MPI_Finalize();
    return 0;
}
