/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI-4 program without mpix whose halo receives use the large-count calls: each step
 * every process sends its right neighbour a column block of its grid (a vector type of
 * 256 rows of 64 doubles, 128 KiB, built and freed every step) with MPI_Isend or
 * MPI_Sendrecv_c, and receives it contiguous with MPI_Irecv_c, MPI_Sendrecv_c or
 * MPI_Recv_c, whose status MPI_Get_count_c reads. It checks every value received and
 * exits non-zero on a wrong one; rank 0 prints one line. Run under MPIX_PMPI=zcopy
 * (preload_zcopy.sh) the sends go zero-copy and the receives must read them as such.
 * Built only with an MPI-4 library. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROWS = 256, COLUMNS = 1024, BLOCK = 64, STEPS = 12 };

static double value(int rank, int step, int i)
{
    return rank * 1e6 + step * 1e3 + i % 977;
}

int main(int argc, char **argv)
{
    int rank, ranks, wrong = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    const MPI_Count received_count = (MPI_Count)ROWS * BLOCK;
    double *grid = malloc(sizeof(double) * ROWS * COLUMNS), *received = malloc(sizeof(double) * ROWS * BLOCK);

    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < ROWS * COLUMNS; i++)
            grid[i] = value(rank, step, i);
        MPI_Datatype block;
        MPI_Type_vector(ROWS, BLOCK, COLUMNS, MPI_DOUBLE, &block);
        MPI_Type_commit(&block);
        MPI_Request requests[2];
        MPI_Status status;
        MPI_Count count = received_count;
        switch (step % 3) {
        case 0:
            MPI_Irecv_c(received, received_count, MPI_DOUBLE, left, step, MPI_COMM_WORLD, &requests[0]);
            MPI_Isend(grid, 1, block, right, step, MPI_COMM_WORLD, &requests[1]);
            MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
            break;
        case 1:
            MPI_Sendrecv_c(grid, 1, block, right, step, received, received_count, MPI_DOUBLE, left, step,
                           MPI_COMM_WORLD, &status);
            MPI_Get_count_c(&status, MPI_DOUBLE, &count);
            break;
        default:
            MPI_Isend(grid, 1, block, right, step, MPI_COMM_WORLD, &requests[1]);
            MPI_Recv_c(received, received_count, MPI_DOUBLE, left, step, MPI_COMM_WORLD, &status);
            MPI_Get_count_c(&status, MPI_DOUBLE, &count);
            MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
        }
        MPI_Type_free(&block);
        if (count != received_count && wrong++ < 5)
            fprintf(stderr, "rank %d: step %d: count %lld\n", rank, step, (long long)count);
        for (int row = 0; row < ROWS; row++)
            for (int column = 0; column < BLOCK; column++)
                if (received[row * BLOCK + column] != value(left, step, row * COLUMNS + column)) {
                    if (wrong++ < 5)
                        fprintf(stderr, "rank %d: step %d: row %d wrong\n", rank, step, row);
                    row = ROWS;
                    break;
                }
    }
    int total;
    MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("large-count halo: %d ranks, %d steps, %d wrong\n", ranks, STEPS, total);
    free(received);
    free(grid);
    MPI_Finalize();
    return total != 0;
}
