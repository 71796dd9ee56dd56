/* SPDX-License-Identifier: BSD-3-Clause */
/* Red-Black SOR whose halo exchange is four plain MPIX_Sendrecv_guarded calls an
 * iteration, the easiest code to write, with the overlap of hand-written non-blocking
 * code. The calls return at once; the sweep that touches a halo row first
 * waits for it, and once the exchange is seen to repeat, its last call completes it.
 *
 * The program runs the same iterations three ways (MPI_Sendrecv, guarded, and
 * MPI_Isend/MPI_Irecv with overlap), checks that the grids are bit-identical, and prints
 * the time of each. Run:  mpirun -np 2 guard_sor [n] [iterations]
 * An unchanged MPI_Sendrecv program gets the same through LD_PRELOAD=libmpix-guard.so or
 * by compiling with -include mpix/guard_inject.h (docs/guard.md). */
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>

#include "guard_sor.h"

static double run(enum sor_method method, int n, int iterations, sor_grid *grid)
{
    if (sor_init(grid, MPI_COMM_WORLD, n, n) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    sor_run(grid, method, iterations, MPIX_Sendrecv_guarded);
    MPIX_Guard_complete_all();   /* the grid is whole before it is timed as done */
    double elapsed = MPI_Wtime() - start, slowest;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n = argc > 1 ? atoi(argv[1]) : 512, iterations = argc > 2 ? atoi(argv[2]) : 200;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    sor_grid blocking, guarded, overlap;
    double blocking_time = run(SOR_BLOCKING, n, iterations, &blocking);
    double guarded_time = run(SOR_GUARDED, n, iterations, &guarded);
    double overlap_time = run(SOR_OVERLAP, n, iterations, &overlap);

    size_t bytes = sizeof(double) * (size_t)(blocking.rows + 2) * (size_t)(n + 2);
    int same = memcmp(blocking.cells, guarded.cells, bytes) == 0 && memcmp(blocking.cells, overlap.cells, bytes) == 0;
    int all_same;
    MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("SOR %dx%d, %d iterations: blocking %.1f us/iteration, guarded %.1f, hand-written overlap %.1f\n", n,
               n, iterations, 1e6 * blocking_time / iterations, 1e6 * guarded_time / iterations,
               1e6 * overlap_time / iterations);
        printf("grids %s\n", all_same ? "bit-identical" : "DIFFER");
    }
    sor_free(&blocking);
    sor_free(&guarded);
    sor_free(&overlap);
    MPI_Finalize();
    return all_same ? 0 : 1;
}
