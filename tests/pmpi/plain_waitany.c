/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program without mpix that waits for small messages with MPI_Waitany, MPI_Testany
 * and MPI_Waitsome while a large halo receive (a vector type of 256 rows of 64 doubles)
 * is posted for later: each round every process posts the halo receive from its left
 * neighbour and three one-int receives, its left neighbour sends the small messages a
 * little later, one by one, and only then are the halos exchanged (nonblocking send,
 * MPI_Wait). MPI_Waitany and its kin must wait for the small receives that are still
 * running and never say that no request is active, and MPI_Waitall gives null handles
 * empty statuses beside the halos'. It checks every value and exits
 * non-zero on a wrong one or a premature MPI_UNDEFINED; rank 0 prints one line. Run
 * under MPIX_PMPI=zcopy (preload_zcopy.sh) the halos go zero-copy and the posted halo
 * receive is one zcopy tracks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { ROWS = 256, COLUMNS = 1024, BLOCK = 64, ROUNDS = 6, SMALL = 3 };

static int rank, wrong;

static void expect(int condition, const char *what, int round)
{
    if (!condition && wrong++ < 5)
        fprintf(stderr, "rank %d: round %d: %s\n", rank, round, what);
}

int main(int argc, char **argv)
{
    int ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    double *grid = malloc(sizeof(double) * ROWS * COLUMNS), *halo = malloc(sizeof(double) * ROWS * COLUMNS);

    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < ROWS * COLUMNS; i++)
            grid[i] = rank * 1e6 + round * 1e3 + i % 997;
        MPI_Datatype block;
        MPI_Type_vector(ROWS, BLOCK, COLUMNS, MPI_DOUBLE, &block);
        MPI_Type_commit(&block);
        MPI_Request halo_receive, halo_send, small[SMALL];
        int values[SMALL], index, flag, count, indices[SMALL];
        MPI_Irecv(halo, 1, block, left, 0, MPI_COMM_WORLD, &halo_receive);
        for (int k = 0; k < SMALL; k++) {
            values[k] = -1;
            MPI_Irecv(&values[k], 1, MPI_INT, left, 1 + k, MPI_COMM_WORLD, &small[k]);
        }
        for (int k = 0; k < SMALL; k++) {   /* a little later, one by one */
            usleep(5000);
            int value = round * 10 + k;
            MPI_Send(&value, 1, MPI_INT, right, 1 + k, MPI_COMM_WORLD);
        }
        switch (round % 3) {
        case 0:
            for (int done = 0; done < SMALL; done++) {
                MPI_Waitany(SMALL, small, &index, MPI_STATUS_IGNORE);
                expect(index != MPI_UNDEFINED, "MPI_Waitany: no active request while some run", round);
                if (index == MPI_UNDEFINED)
                    break;
            }
            break;
        case 1:
            for (int done = 0; done < SMALL;) {
                MPI_Testany(SMALL, small, &index, &flag, MPI_STATUS_IGNORE);
                expect(!flag || index != MPI_UNDEFINED, "MPI_Testany: no active request while some run", round);
                if (flag && index == MPI_UNDEFINED)
                    break;
                done += flag;
            }
            break;
        default:
            for (int done = 0; done < SMALL; done += count) {
                MPI_Waitsome(SMALL, small, &count, indices, MPI_STATUSES_IGNORE);
                expect(count != MPI_UNDEFINED, "MPI_Waitsome: no active request while some run", round);
                if (count == MPI_UNDEFINED)
                    break;
            }
        }
        MPI_Waitall(SMALL, small, MPI_STATUSES_IGNORE);   /* what a premature answer left running */
        for (int k = 0; k < SMALL; k++)
            expect(values[k] == round * 10 + k, "a small message wrong", round);
        MPI_Isend(grid, 1, block, right, 0, MPI_COMM_WORLD, &halo_send);
        /* The halos and two null handles: those get empty statuses. */
        MPI_Request last[4] = { halo_receive, halo_send, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
        MPI_Status statuses[4];
        for (int k = 0; k < 4; k++)
            statuses[k].MPI_SOURCE = statuses[k].MPI_TAG = 12345;
        MPI_Waitall(4, last, statuses);
        expect(statuses[0].MPI_SOURCE == left && statuses[0].MPI_TAG == 0, "the halo's status wrong", round);
        for (int k = 2; k < 4; k++) {
            int elements = -1;
            MPI_Get_count(&statuses[k], MPI_INT, &elements);
            expect(statuses[k].MPI_SOURCE == MPI_ANY_SOURCE && statuses[k].MPI_TAG == MPI_ANY_TAG && elements == 0,
                   "a null request's status is not empty", round);
        }
        MPI_Type_free(&block);
        for (int row = 0; row < ROWS; row++)
            for (int column = 0; column < BLOCK; column++) {
                int i = row * COLUMNS + column;
                if (halo[i] != left * 1e6 + round * 1e3 + i % 997) {
                    expect(0, "the halo wrong", round);
                    row = ROWS;
                    break;
                }
            }
    }
    int total;
    MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("waitany: %d ranks, %d rounds, %d wrong\n", ranks, ROUNDS, total);
    free(halo);
    free(grid);
    MPI_Finalize();
    return total != 0;
}
