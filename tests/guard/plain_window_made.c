/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program without mpix that exposes an array for one-sided reads right after
 * receiving into it: each round rank 1 sends rank 0 an array, rank 0 receives it and
 * makes a window over it at once (MPI_Win_create), or attaches it to a dynamic window
 * and broadcasts its address (then, once, with a barrier too); rank 1 reads it back
 * with MPI_Get into the array it sent, which it first overwrites, and checks it. The
 * program prints one line. Run plain, under LD_PRELOAD=libmpix-guard.so and built with
 * -include mpix/guard_inject.h (tests/guard/preload_check.sh), with every receive
 * protected (MPIX_GUARD_POLL_NS=0): with guard the receive may still be in flight when
 * MPI_Recv returns, and rank 1 reads rank 0's memory without rank 0 touching it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ELEMENTS = 1 << 16, ROUNDS = 20, KINDS = 3 };

static double value(int round, int kind, int i)
{
    return round * 1e6 + kind * 1e5 + i;
}

int main(int argc, char **argv)
{
    int rank, ranks, wrong = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    double *array = malloc(ELEMENTS * sizeof(double)), *back = malloc(ELEMENTS * sizeof(double));
    const MPI_Aint bytes = rank == 0 ? ELEMENTS * (MPI_Aint)sizeof(double) : 0;

    for (int round = 0; round < ROUNDS && ranks > 1; round++) {
        for (int kind = 0; kind < KINDS; kind++) {
            if (rank == 1) {
                for (int i = 0; i < ELEMENTS; i++)
                    back[i] = value(round, kind, i);
                MPI_Send(back, ELEMENTS, MPI_DOUBLE, 0, round, MPI_COMM_WORLD);
            } else if (rank == 0) {
                MPI_Recv(array, ELEMENTS, MPI_DOUBLE, 1, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_Win win;
            MPI_Aint displacement = 0;
            if (kind == 0) {
                MPI_Win_create(array, bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            } else {
                MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
                if (rank == 0)
                    MPI_Win_attach(win, array, bytes);
                MPI_Get_address(array, &displacement);
                MPI_Bcast(&displacement, 1, MPI_AINT, 0, MPI_COMM_WORLD);
            }
            if (kind == 2)
                MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) {
                for (int i = 0; i < ELEMENTS; i++)
                    back[i] = -1;
                MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
                MPI_Get(back, ELEMENTS, MPI_DOUBLE, 0, displacement, ELEMENTS, MPI_DOUBLE, win);
                MPI_Win_unlock(0, win);
                for (int i = 0; i < ELEMENTS; i++)
                    if (back[i] != value(round, kind, i)) {
                        if (wrong++ < 5)
                            fprintf(stderr, "round %d, window %d: MPI_Get read %g for %g\n", round, kind, back[i],
                                    value(round, kind, i));
                        break;
                    }
            }
            MPI_Barrier(MPI_COMM_WORLD);   /* read before the window goes */
            if (kind > 0 && rank == 0)
                MPI_Win_detach(win, array);
            MPI_Win_free(&win);
        }
    }

    int total;
    MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("window made: %d ranks, %d rounds, %d wrong\n", ranks, ROUNDS, total);
    free(back);
    free(array);
    MPI_Finalize();
    return total != 0;
}
