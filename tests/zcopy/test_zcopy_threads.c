/* SPDX-License-Identifier: BSD-3-Clause */
/* Zero-copy sends in flight at once from several threads (MPI_THREAD_MULTIPLE), each on
 * its own communicator as mpix/zcopy.h allows. Rank 0's threads send a 1 MiB vector
 * layout each; rank 1 probes every header before it receives any message, so all the
 * sends are in flight together. Each takes a slot of rank 0's mailbox: with the default
 * 64 slots all go zero-copy; with MPIX_ZCOPY_SLOTS=1 (the meson row) one does and the
 * others, finding every slot taken, go through MPI. The bytes are checked either way.
 * Both rows force the zero-copy method (MPIX_ZCOPY_METHOD=direct) so that the sender's
 * path learning cannot pick MPI on its own. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <pthread.h>

enum { THREADS = 4, BLOCKS = 256, BLOCK_DOUBLES = 512, STRIDE_DOUBLES = 1024 };

static MPI_Comm comms[THREADS];
static MPI_Datatype layout;
static pthread_barrier_t all_ready;

typedef struct sender {
    int index, rc;
    double *buffer;
} sender;

static double value_at(int thread, int block, int element) { return thread * 1e7 + block * 1e3 + element; }

static double *filled_buffer(int thread)
{
    double *buffer = calloc((size_t)BLOCKS * STRIDE_DOUBLES, sizeof *buffer);
    for (int b = 0; b < BLOCKS; b++)
        for (int e = 0; e < BLOCK_DOUBLES; e++)
            buffer[(size_t)b * STRIDE_DOUBLES + e] = value_at(thread, b, e);
    return buffer;
}

/* A receive buffer whose every element is -1, so untouched gaps can be checked. */
static double *blank_buffer(void)
{
    double *buffer = malloc((size_t)BLOCKS * STRIDE_DOUBLES * sizeof *buffer);
    for (size_t i = 0; i < (size_t)BLOCKS * STRIDE_DOUBLES; i++)
        buffer[i] = -1.0;
    return buffer;
}

static int received_right(const double *buffer, int thread)
{
    for (int b = 0; b < BLOCKS; b++)
        for (int e = 0; e < STRIDE_DOUBLES; e++) {
            double want = e < BLOCK_DOUBLES ? value_at(thread, b, e) : -1.0; /* gaps untouched */
            if (buffer[(size_t)b * STRIDE_DOUBLES + e] != want)
                return 0;
        }
    return 1;
}

static void *send_one(void *argument)
{
    sender *s = argument;
    pthread_barrier_wait(&all_ready);
    s->rc = MPIX_Send_zcopy(s->buffer, 1, layout, 1, s->index, comms[s->index]);
    return NULL;
}

/* Sends by path, summed over the threads' communicators. */
static void sent_by_path(unsigned long *zero_copy, unsigned long *through_mpi)
{
    *zero_copy = *through_mpi = 0;
    for (int t = 0; t < THREADS; t++) {
        zcopy_counters s = zcopy_stats_of(comms[t]);
        *zero_copy += s.sent_zero_copy;
        *through_mpi += s.sent_mpi;
    }
}

static void run_senders(void)
{
    pthread_t threads[THREADS];
    sender senders[THREADS];
    unsigned long zero_copy_before, mpi_before, zero_copy, through_mpi;
    const char *slots = getenv("MPIX_ZCOPY_SLOTS");
    unsigned long want_zero_copy = slots && atoi(slots) < THREADS ? (unsigned long)atoi(slots) : THREADS;

    sent_by_path(&zero_copy_before, &mpi_before);
    pthread_barrier_init(&all_ready, NULL, THREADS);
    for (int t = 0; t < THREADS; t++) {
        senders[t] = (sender){ t, MPI_ERR_OTHER, filled_buffer(t) };
        pthread_create(&threads[t], NULL, send_one, &senders[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK(senders[t].rc == MPI_SUCCESS, "thread %d: MPIX_Send_zcopy: %s", t, mpix_test_error_string(senders[t].rc));
        free(senders[t].buffer);
    }
    pthread_barrier_destroy(&all_ready);
    sent_by_path(&zero_copy, &through_mpi);
    CHECK(zero_copy - zero_copy_before == want_zero_copy && through_mpi - mpi_before == THREADS - want_zero_copy,
          "%d sends in flight with MPIX_ZCOPY_SLOTS=%s: %lu zero-copy, %lu through MPI; want %lu and %lu", THREADS,
          slots ? slots : "(default 64)", zero_copy - zero_copy_before, through_mpi - mpi_before, want_zero_copy,
          THREADS - want_zero_copy);
}

static void run_receiver(void)
{
    double *buffers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        MPI_Status status;
        /* Every header has arrived, so every send is in flight, before any is received. */
        MPI_Probe(0, t, comms[t], &status);
        buffers[t] = blank_buffer();
    }
    for (int t = THREADS - 1; t >= 0; t--) {
        MPI_Status status;
        int rc = MPIX_Recv_zcopy(buffers[t], 1, layout, 0, t, comms[t], &status);
        CHECK(rc == MPI_SUCCESS, "receive %d: %s", t, mpix_test_error_string(rc));
        CHECK(received_right(buffers[t], t), "message of thread %d arrived wrong", t);
        free(buffers[t]);
    }
}

int main(int argc, char **argv)
{
    int rank;
    if (!mpix_test_start_threads(&argc, &argv, &rank, 2))
        return mpix_test_finish("zcopy_threads");

    MPI_Type_vector(BLOCKS, BLOCK_DOUBLES, STRIDE_DOUBLES, MPI_DOUBLE, &layout);
    MPI_Type_commit(&layout);
    for (int t = 0; t < THREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);

    /* The first large message to a peer goes through MPI and carries the attach probe
     * (docs/zcopy.md, "Who can attach"): send one before the threads start. */
    double *first = rank == 0 ? filled_buffer(0) : blank_buffer();
    if (rank == 0) {
        CHECK(MPIX_Send_zcopy(first, 1, layout, 1, 0, comms[0]) == MPI_SUCCESS, "first send");
    } else {
        CHECK(MPIX_Recv_zcopy(first, 1, layout, 0, 0, comms[0], MPI_STATUS_IGNORE) == MPI_SUCCESS &&
                  received_right(first, 0),
              "first message");
    }
    free(first);

    for (int round = 0; round < 3; round++) {
        if (rank == 0)
            run_senders();
        else
            run_receiver();
        MPI_Barrier(MPI_COMM_WORLD);
    }

    for (int t = 0; t < THREADS; t++)
        MPI_Comm_free(&comms[t]);
    MPI_Type_free(&layout);
    return mpix_test_finish("zcopy_threads");
}
