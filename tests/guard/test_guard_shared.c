/* SPDX-License-Identifier: BSD-3-Clause */
/* Guarded transfers on memory that other processes, a file or MPI see without a fault in
 * this process: page protection holds back only this process's own touches.
 *  - windows mpix made (a spin window, a hybrid allreduce's slots, a storage window):
 *    guard knows their memory, and transfers on it finish in their call (counted by
 *    guard.exposed); the others read the data after a post, a collective, or through the
 *    file after MPIX_Win_sync;
 *  - a window MPI made (MPI_Win_allocate_shared, unknown to guard without the
 *    interposition libraries): MPIX_Win_sync finishes the receive before the others,
 *    after a barrier, read it;
 *  - a sender that waits in MPIX_Win_spin_wait right after a large guarded send: the
 *    wait finishes the send first (MPICH's rendezvous needs the sender's progress);
 *  - memory given back with a receive into it unread (MPIX_Win_free, MPIX_Free_mem): the
 *    receive must not land there afterwards.
 * Run with MPIX_GUARD_POLL_NS=0 so that every receive would be protected. */
#include "mpix_test.h"

#include <mpix/mpix.h>
#include <string.h>

enum { ELEMENTS = 1 << 16, ROUNDS = 6 };   /* 512 KiB: a guarded receive spans many pages */

static double value(int sender, int round, int i)
{
    return sender * 1e7 + round * 1e5 + (double)i;
}

static void fill(double *data, int sender, int round)
{
    for (int i = 0; i < ELEMENTS; i++)
        data[i] = value(sender, round, i);
}

/* The first element of @data (from @sender in @round) that is wrong, or -1. */
static int first_wrong(const double *data, int sender, int round)
{
    for (int i = 0; i < ELEMENTS; i++)
        if (data[i] != value(sender, round, i))
            return i;
    return -1;
}

/* The leader (rank 0) receives each round's data from the last rank straight into the
 * shared window and posts; the others wait and read it from there. */
static void spin_window(int rank, int ranks, double *outgoing)
{
    double *mine, *shared;
    MPI_Aint bytes;
    int disp_unit;
    MPI_Win win;
    CHECK(MPIX_Win_allocate_shared(rank == 0 ? ELEMENTS * (MPI_Aint)sizeof(double) : 0, sizeof(double),
                                   MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win) == MPI_SUCCESS,
          "MPIX_Win_allocate_shared");
    CHECK(MPIX_Win_shared_query(win, 0, &bytes, &disp_unit, &shared) == MPI_SUCCESS, "shared_query");
    for (int round = 0; round < ROUNDS; round++) {
        if (rank == 0) {
            CHECK(MPIX_Recv_guarded(shared, ELEMENTS, MPI_DOUBLE, ranks - 1, round, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE) == MPI_SUCCESS, "spin: receive");
            CHECK(MPIX_Win_spin_post(win) == MPI_SUCCESS, "spin: post");
        } else {
            if (rank == ranks - 1) {
                fill(outgoing, ranks - 1, round);
                CHECK(MPIX_Send_guarded(outgoing, ELEMENTS, MPI_DOUBLE, 0, round, MPI_COMM_WORLD) == MPI_SUCCESS,
                      "spin: send");
            }
            CHECK(MPIX_Win_spin_wait(win) == MPI_SUCCESS, "spin: wait");
            int wrong = first_wrong(shared, ranks - 1, round);
            CHECK(wrong < 0, "spin round %d: rank %d read element %d of the leader's received data as %g", round,
                  rank, wrong, wrong < 0 ? 0.0 : shared[wrong]);
        }
        CHECK(MPIX_Win_spin_barrier(win) == MPI_SUCCESS, "spin: barrier");   /* the next round overwrites */
    }
    CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "spin: free");
}

/* Every process receives its input from its left neighbour into its own slot and reduces
 * in place: the others reduce slices of that slot. */
static void hybrid_allreduce(int rank, int ranks, double *outgoing)
{
    MPI_Comm hy;
    MPI_Win win;
    double *slot, *result;
    int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
    CHECK(MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, &hy) == MPI_SUCCESS, "hy: comm");
    CHECK(MPIX_Hy_allreduce_create(hy, ELEMENTS, MPI_DOUBLE, MPI_SUM, &slot, &result, &win) == MPI_SUCCESS,
          "hy: create");
    for (int round = 0; round < ROUNDS; round++) {
        fill(outgoing, rank, round);
        CHECK(MPIX_Sendrecv_guarded(outgoing, ELEMENTS, MPI_DOUBLE, right, 100 + round, slot, ELEMENTS, MPI_DOUBLE,
                                    left, 100 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "hy: exchange");
        CHECK(MPIX_Hy_allreduce(MPI_IN_PLACE, win) == MPI_SUCCESS, "hy: allreduce");
        int wrong = -1;
        for (int i = 0; i < ELEMENTS && wrong < 0; i++) {
            double sum = 0;
            for (int sender = 0; sender < ranks; sender++)
                sum += value(sender, round, i);
            if (result[i] != sum)
                wrong = i;
        }
        CHECK(wrong < 0, "hy round %d: element %d of the sum is %g", round, wrong, wrong < 0 ? 0.0 : result[wrong]);
    }
    CHECK(MPIX_Hy_free(&win) == MPI_SUCCESS, "hy: free");
    MPI_Comm_free(&hy);
}

/* A storage window received into and synced: the file holds the data. Written back in
 * place, the file has it after each MPIX_Win_sync; through the redo log (the default for
 * a window that fits in memory) the file has the last sync's after MPIX_Win_free. */
static void storage_window(int rank, int ranks, double *outgoing, const char *dir, const char *sync)
{
    char path[300];
    snprintf(path, sizeof path, "%s/received-%s-%d", dir, sync, rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "mpix_storage_sync", sync);
    double *window_memory;
    MPI_Win win;
    int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks, in_place = !strcmp(sync, "in_place");
    CHECK(MPIX_Win_allocate(ELEMENTS * (MPI_Aint)sizeof(double), sizeof(double), info, MPI_COMM_WORLD,
                            &window_memory, &win) == MPI_SUCCESS, "storage %s: allocate", sync);
    MPI_Info_free(&info);
    double *on_file = malloc(ELEMENTS * sizeof(double));
    for (int round = 0; round < ROUNDS; round++) {
        fill(outgoing, rank, round);
        CHECK(MPIX_Sendrecv_guarded(outgoing, ELEMENTS, MPI_DOUBLE, right, 200 + round, window_memory, ELEMENTS,
                                    MPI_DOUBLE, left, 200 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "storage %s: exchange", sync);
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "storage %s: sync", sync);
        if (!in_place)
            continue;
        CHECK(mpix_test_read_file(path, 0, on_file, ELEMENTS * sizeof(double)) == 0, "storage: read %s", path);
        int wrong = first_wrong(on_file, left, round);
        CHECK(wrong < 0, "storage %s round %d: element %d on file is %g", sync, round, wrong,
              wrong < 0 ? 0.0 : on_file[wrong]);
    }
    /* Received after the last sync and given back unsynced: not on the file. */
    CHECK(MPIX_Sendrecv_guarded(outgoing, ELEMENTS, MPI_DOUBLE, right, 299, window_memory, ELEMENTS, MPI_DOUBLE, left,
                                299, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "storage %s: last exchange", sync);
    CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "storage %s: free", sync);
    if (!in_place) {
        CHECK(mpix_test_read_file(path, 0, on_file, ELEMENTS * sizeof(double)) == 0, "storage: read %s", path);
        int wrong = first_wrong(on_file, left, ROUNDS - 1);
        CHECK(wrong < 0, "storage %s: element %d on file after MPIX_Win_free is %g", sync, wrong,
              wrong < 0 ? 0.0 : on_file[wrong]);
    }
    free(on_file);
}

/* Rank 0 receives into a shared window MPI made, then MPIX_Win_sync and a barrier; the
 * others read it. */
static void mpi_shared_window(int rank, int ranks, double *outgoing)
{
    double *mine, *shared;
    MPI_Aint bytes;
    int disp_unit;
    MPI_Win win;
    MPI_Win_allocate_shared(rank == 0 ? ELEMENTS * (MPI_Aint)sizeof(double) : 0, sizeof(double), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &mine, &win);
    MPI_Win_shared_query(win, 0, &bytes, &disp_unit, &shared);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int round = 0; round < ROUNDS; round++) {
        if (rank == 0) {
            CHECK(MPIX_Recv_guarded(shared, ELEMENTS, MPI_DOUBLE, ranks - 1, 500 + round, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI window: receive");
        } else if (rank == ranks - 1) {
            fill(outgoing, ranks - 1, round);
            CHECK(MPIX_Send_guarded(outgoing, ELEMENTS, MPI_DOUBLE, 0, 500 + round, MPI_COMM_WORLD) == MPI_SUCCESS,
                  "MPI window: send");
        }
        CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "MPI window: sync");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            CHECK(MPIX_Win_sync(win) == MPI_SUCCESS, "MPI window: sync");
            int wrong = first_wrong(shared, ranks - 1, round);
            CHECK(wrong < 0, "MPI window round %d: rank %d read element %d as %g", round, rank, wrong,
                  wrong < 0 ? 0.0 : shared[wrong]);
        }
        MPI_Barrier(MPI_COMM_WORLD);   /* read before the next round overwrites */
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

/* Memory given back with a receive into it still unread. */
static void memory_given_back(int rank, int ranks, double *outgoing)
{
    int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
    for (int round = 0; round < ROUNDS; round++) {
        double *window_memory, *allocated;
        MPI_Win win;
        fill(outgoing, rank, round);
        CHECK(MPIX_Win_allocate(ELEMENTS * (MPI_Aint)sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &window_memory, &win) == MPI_SUCCESS, "given back: window");
        CHECK(MPIX_Sendrecv_guarded(outgoing, ELEMENTS, MPI_DOUBLE, right, 300 + round, window_memory, ELEMENTS,
                                    MPI_DOUBLE, left, 300 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "given back: exchange into the window");
        CHECK(MPIX_Win_free(&win) == MPI_SUCCESS, "given back: MPIX_Win_free");
        CHECK(MPIX_Alloc_mem(ELEMENTS * (MPI_Aint)sizeof(double), MPI_INFO_NULL, &allocated) == MPI_SUCCESS,
              "given back: MPIX_Alloc_mem");
        CHECK(MPIX_Sendrecv_guarded(outgoing, ELEMENTS, MPI_DOUBLE, right, 400 + round, allocated, ELEMENTS,
                                    MPI_DOUBLE, left, 400 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "given back: exchange into MPI memory");
        CHECK(MPIX_Free_mem(allocated) == MPI_SUCCESS, "given back: MPIX_Free_mem");
        /* Whatever guard still held would land in memory that is gone. */
        CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "given back: complete");
    }
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    char dir[64];
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);
    double *outgoing = malloc(ELEMENTS * sizeof(double));
    if (ranks > 1)
        spin_window(rank, ranks, outgoing);
    hybrid_allreduce(rank, ranks, outgoing);
    storage_window(rank, ranks, outgoing, dir, "in_place");
    storage_window(rank, ranks, outgoing, dir, "log");
    CHECK(mpix_test_pvar("guard.exposed", MPI_COMM_NULL) >= 2 * ROUNDS,
          "guard.exposed is %lld: receives into mpix's windows did not finish in their call",
          mpix_test_pvar("guard.exposed", MPI_COMM_NULL));
    if (ranks > 1)
        mpi_shared_window(rank, ranks, outgoing);
    memory_given_back(rank, ranks, outgoing);
    MPIX_Guard_complete_all();
    free(outgoing);
    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("guard_shared");
}
