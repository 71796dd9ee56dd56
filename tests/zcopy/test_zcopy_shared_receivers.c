/* SPDX-License-Identifier: BSD-3-Clause */
/* Several threads receiving on one communicator with MPI_ANY_SOURCE and MPI_ANY_TAG
 * (MPI_THREAD_MULTIPLE) while rank 0 sends small and large messages on mixed tags: each
 * message must reach exactly one receive whole, with its status, whatever path it takes.
 * Large messages are vectors of 2048 blocks, half of a plainly committed type (whose
 * layout receivers memoize per sender, in the communicator's table) and half of one
 * committed with MPIX_Type_commit_comm (found by its global id), so the threads share
 * those tables and the staging buffer. This holds only because every zcopy message is
 * one MPI message (were the data of an MPI-path message sent after its header, another
 * thread's wildcard receive could take the data as a message of its own) and because
 * the per-communicator state is created once and its tables locked. The meson rows run
 * it with the defaults, with staged spans forced (MPIX_ZCOPY_METHOD=staged: the staging
 * buffer) and with MPIX_ZCOPY=off (every message through MPI). */
#include "mpix_test.h"

#include <mpix/mpix.h>
#include <pthread.h>

enum { THREADS = 4, MESSAGES = 96, SMALL = 128, TAGS = 5 };
enum { BLOCKS = 2048, BLOCK = 8, STRIDE = 16, LARGE = BLOCKS * BLOCK };

static int received[MESSAGES];   /* by message index: receives that got it */
static int bad_messages;
static pthread_mutex_t tally = PTHREAD_MUTEX_INITIALIZER;

static int length_of(int message) { return message % 2 ? LARGE : SMALL; }
static double value_at(int message, int k) { return k == 0 ? message : message * 1e6 + k; }

static void *receive_share(void *argument)
{
    (void)argument;
    double *buffer = malloc(LARGE * sizeof *buffer);
    for (int n = 0; n < MESSAGES / THREADS; n++) {
        MPI_Status status;
        int count = -1, rc = MPIX_Recv_zcopy(buffer, LARGE, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                             &status);
        MPI_Get_count(&status, MPI_DOUBLE, &count);
        int message = (int)buffer[0], intact = rc == MPI_SUCCESS && message >= 0 && message < MESSAGES &&
                                               count == length_of(message) && status.MPI_SOURCE == 0 &&
                                               status.MPI_TAG == message % TAGS;
        for (int k = 1; intact && k < count; k++)
            intact = buffer[k] == value_at(message, k);
        pthread_mutex_lock(&tally);
        if (intact)
            received[message]++;
        else
            bad_messages++;
        pthread_mutex_unlock(&tally);
    }
    free(buffer);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank;
    if (!mpix_test_start_threads(&argc, &argv, &rank, 2))
        return mpix_test_finish("zcopy_shared_receivers");

    MPI_Datatype plain, global;   /* the same vector, committed both ways */
    MPI_Type_vector(BLOCKS, BLOCK, STRIDE, MPI_DOUBLE, &plain);
    MPI_Type_commit(&plain);
    MPI_Type_vector(BLOCKS, BLOCK, STRIDE, MPI_DOUBLE, &global);
    int rc = MPIX_Type_commit_comm(&global, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "MPIX_Type_commit_comm: %s", mpix_test_error_string(rc));
    if (rank == 0) {
        double *buffer = malloc((size_t)BLOCKS * STRIDE * sizeof *buffer);
        for (int message = 0; message < MESSAGES; message++) {
            if (length_of(message) == SMALL) {
                for (int k = 0; k < SMALL; k++)
                    buffer[k] = value_at(message, k);
                rc = MPIX_Send_zcopy(buffer, SMALL, MPI_DOUBLE, 1, message % TAGS, MPI_COMM_WORLD);
            } else {
                for (int k = 0; k < LARGE; k++)
                    buffer[k / BLOCK * STRIDE + k % BLOCK] = value_at(message, k);
                rc = MPIX_Send_zcopy(buffer, 1, message % 4 == 1 ? plain : global, 1, message % TAGS, MPI_COMM_WORLD);
            }
            CHECK(rc == MPI_SUCCESS, "send %d: %s", message, mpix_test_error_string(rc));
        }
        free(buffer);
    } else {
        pthread_t threads[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&threads[t], NULL, receive_share, NULL);
        for (int t = 0; t < THREADS; t++)
            pthread_join(threads[t], NULL);
        CHECK(bad_messages == 0, "%d receives got a wrong message, status or error", bad_messages);
        for (int message = 0; message < MESSAGES; message++)
            CHECK(received[message] == 1, "message %d received %d times", message, received[message]);
    }
    MPI_Type_free(&plain);
    rc = MPIX_Type_free_comm(&global, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "MPIX_Type_free_comm: %s", mpix_test_error_string(rc));
    return mpix_test_finish("zcopy_shared_receivers");
}
