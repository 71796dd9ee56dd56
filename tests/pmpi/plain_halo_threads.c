/* SPDX-License-Identifier: BSD-3-Clause */
/* A hybrid MPI+threads program without mpix, as such applications exchange halos: at
 * MPI_THREAD_MULTIPLE, three threads per process each own a 2-D block of doubles and
 * exchange its column halos with the same thread of the neighbouring processes in a
 * periodic ring, all on MPI_COMM_WORLD, one tag pair per thread: a vector type built and
 * freed every iteration, MPI_Irecv/MPI_Isend/MPI_Waitall on even iterations and two
 * MPI_Sendrecv on odd ones. Every received value is checked; exit code 0 only if all
 * were right. Run under LD_PRELOAD=libmpix-pmpi.so with MPIX_PMPI=zcopy it must print the
 * same (tests/pmpi/preload_zcopy.sh checks that, and that zero-copy happened). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 3, ROWS = 64, DEPTH = 256, WIDTH = 4 * DEPTH, ITERATIONS = 30 };

static int rank, size, failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

/* What @owner's thread @thread puts at (row, column) of its block in @iteration. */
static double value(int owner, int thread, int iteration, int row, int column)
{
    return owner * 1e8 + thread * 1e6 + iteration * 1e4 + row * 1000 + column;
}

/* Interior columns [DEPTH, 3 DEPTH); ghosts [0, DEPTH) from the left neighbour's
 * columns [2 DEPTH, 3 DEPTH), [3 DEPTH, 4 DEPTH) from the right one's [DEPTH, 2 DEPTH). */
static void *exchange(void *argument)
{
    int thread = (int)(long)argument, left = (rank + size - 1) % size, right = (rank + 1) % size, wrong = 0;
    double *grid = malloc(sizeof(double) * ROWS * WIDTH);
    for (int iteration = 0; iteration < ITERATIONS && !wrong; iteration++) {
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < WIDTH; c++)
                grid[r * WIDTH + c] = c >= DEPTH && c < 3 * DEPTH ? value(rank, thread, iteration, r, c) : -1;
        MPI_Datatype halo;
        MPI_Type_vector(ROWS, DEPTH, WIDTH, MPI_DOUBLE, &halo);
        MPI_Type_commit(&halo);
        int to_right = 2 * thread, to_left = 2 * thread + 1;
        if (iteration % 2 == 0) {
            MPI_Request requests[4];
            MPI_Irecv(&grid[0], 1, halo, left, to_right, MPI_COMM_WORLD, &requests[0]);
            MPI_Irecv(&grid[3 * DEPTH], 1, halo, right, to_left, MPI_COMM_WORLD, &requests[1]);
            MPI_Isend(&grid[2 * DEPTH], 1, halo, right, to_right, MPI_COMM_WORLD, &requests[2]);
            MPI_Isend(&grid[DEPTH], 1, halo, left, to_left, MPI_COMM_WORLD, &requests[3]);
            MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
        } else {
            MPI_Sendrecv(&grid[2 * DEPTH], 1, halo, right, to_right, &grid[0], 1, halo, left, to_right, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(&grid[DEPTH], 1, halo, left, to_left, &grid[3 * DEPTH], 1, halo, right, to_left,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Type_free(&halo);
        for (int r = 0; r < ROWS && !wrong; r++)
            for (int k = 0; k < DEPTH && !wrong; k++) {
                double from_left = grid[r * WIDTH + k], from_right = grid[r * WIDTH + 3 * DEPTH + k];
                if (from_left != value(left, thread, iteration, r, 2 * DEPTH + k) ||
                    from_right != value(right, thread, iteration, r, DEPTH + k)) {
                    wrong = 1;
                    fprintf(stderr, "rank %d thread %d iteration %d row %d column %d: %.0f from the left, %.0f from "
                                    "the right\n", rank, thread, iteration, r, k, from_left, from_right);
                }
            }
    }
    free(grid);
    pthread_mutex_lock(&failures_lock);
    failures += wrong;
    pthread_mutex_unlock(&failures_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("plain_halo_threads: the MPI gives thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Finalize();
        return 1;
    }
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, exchange, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_halo_threads: %d processes x %d threads, %d iterations: %s\n", size, THREADS, ITERATIONS,
               all_failures ? "WRONG DATA" : "all values right");
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
