/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program that knows nothing of mpix and keeps its state in a storage window
 * (MPI_Win_allocate with alloc_type=storage): it receives its neighbour's data straight
 * into the window, contiguous into the first half and every other double of a vector
 * type into the second, reads it, makes it durable with MPI_Win_sync, and is killed.
 * Run again on the same files, the window must hold what was received before the last
 * sync. Under libmpix-pmpi.so with MPIX_PMPI=storage,guard the receives are guarded
 * (pages of the window protected while a message arrives), with storage,zcopy the
 * vector message is copied in by the receiver from the sender's memory: either way the
 * storage window must see those writes as its own.
 *
 * Usage: plain_checkpoint run|check DIR
 *   run:   three rounds of receive, read, sync; then every rank kills itself (SIGKILL)
 *   check: the window holds the last round's data; prints PASS or FAIL */
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HALF = 1 << 19, ROUNDS = 3 };   /* doubles per half: 4 MiB */

static double sent(int rank, int round, long i) { return rank * 1e7 + round * 1e6 + (double)i; }

int main(int argc, char **argv)
{
    int rank, ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc != 3 || ranks % 2 != 0) {
        fprintf(stderr, "usage: %s run|check DIR, on an even number of ranks\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/state-%d", argv[2], rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    double *state;
    MPI_Win win;
    MPI_Win_allocate(2 * HALF * (MPI_Aint)sizeof(double), sizeof(double), info, MPI_COMM_WORLD, &state, &win);
    MPI_Info_free(&info);
    int partner = rank ^ 1, last = ROUNDS - 1;

    if (strcmp(argv[1], "run") == 0) {
        for (long i = 0; i < 2 * HALF; i++)
            state[i] = -1.0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        MPI_Win_sync(win);
        MPI_Win_unlock(rank, win);
        double *out = malloc(2 * HALF * sizeof(double));
        for (int round = 0; round < ROUNDS; round++) {
            for (long i = 0; i < 2 * HALF; i++)
                out[i] = sent(rank, round, i);
            /* Built and freed every round, as applications do. */
            MPI_Datatype every_other;
            MPI_Type_vector(HALF / 2, 1, 2, MPI_DOUBLE, &every_other);
            MPI_Type_commit(&every_other);
            if (rank < partner) {
                MPI_Send(out, HALF, MPI_DOUBLE, partner, round, MPI_COMM_WORLD);
                MPI_Recv(state, HALF, MPI_DOUBLE, partner, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(state, HALF, MPI_DOUBLE, partner, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(out, HALF, MPI_DOUBLE, partner, round, MPI_COMM_WORLD);
            }
            MPI_Sendrecv(out + HALF, 1, every_other, partner, ROUNDS + round, state + HALF, 1, every_other, partner,
                         ROUNDS + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Type_free(&every_other);
            double sum = 0;
            for (long i = 0; i < 2 * HALF; i += 512)
                sum += state[i];
            if (sum == 0.5)   /* the program reads what arrived; never true */
                puts("");
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
            MPI_Win_sync(win);
            MPI_Win_unlock(rank, win);
        }
        /* Stores after the last sync must not survive the crash. */
        for (long i = 0; i < 2 * HALF; i += 4096)
            state[i] = -2.0;
        MPI_Barrier(MPI_COMM_WORLD);
        raise(SIGKILL);
    }

    long wrong = 0;
    for (long i = 0; i < 2 * HALF; i++) {
        double want = i < HALF || (i - HALF) % 2 == 0 ? sent(partner, last, i) : -1.0;
        if (state[i] != want && wrong++ < 3)
            fprintf(stderr, "rank %d: double %ld is %g, want %g\n", rank, i, state[i], want);
    }
    long all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_checkpoint: %s (%ld doubles wrong)\n", all_wrong ? "FAIL" : "PASS", all_wrong);
    MPI_Win_free(&win);
    MPI_Finalize();
    return all_wrong != 0;
}
