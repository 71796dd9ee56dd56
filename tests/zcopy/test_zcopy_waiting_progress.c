/* SPDX-License-Identifier: BSD-3-Clause */
/* A zero-copy send waits for its receiver, and the receiver waits first for another
 * message of the sender's: a large non-contiguous MPI_Isend, which MPI moves only while
 * the sender's process makes MPI progress. Meanwhile a message nobody has received yet
 * sits in the sender's queue (an MPI_Iprobe on the communicator would find it, and MPI
 * makes no progress in an MPI_Iprobe that finds a message). The zero-copy wait must make
 * progress all the same, or both ranks wait for ever:
 *   - blocking: MPIX_Send_zcopy;
 *   - nonblocking: MPIX_Isend_zcopy completed with MPI_Waitall together with the
 *     MPI_Isend, the zero-copy request first (MPICH runs its wait function before it
 *     drives the other request).
 * Ranks above 1 each send rank 0 one more message nobody has received yet, too. */
#include "mpix_test.h"

enum { LARGE_DOUBLES = 1 << 19, ZERO_COPY_DOUBLES = 1 << 16, BLOCK = 512, TAG_QUEUED = 1, TAG_LARGE = 2,
       TAG_ZERO_COPY = 3 };

static int rank, size;

/* Every other double of @doubles: non-contiguous, so MPI packs it as it goes. */
static MPI_Datatype every_other(int doubles)
{
    MPI_Datatype type;
    MPI_Type_vector(doubles / 2, 1, 2, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    return type;
}

/* Blocks of BLOCK doubles with gaps as long: a layout zero-copy takes. */
static MPI_Datatype blocks(int doubles)
{
    MPI_Datatype type;
    MPI_Type_vector(doubles / (2 * BLOCK), BLOCK, 2 * BLOCK, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    return type;
}

static void run(int nonblocking, int iteration)
{
    const char *way = nonblocking ? "MPIX_Isend_zcopy" : "MPIX_Send_zcopy";
    double *large = calloc(LARGE_DOUBLES, sizeof(double)), *zero_copy = calloc(ZERO_COPY_DOUBLES, sizeof(double));
    MPI_Datatype large_type = every_other(LARGE_DOUBLES), zero_copy_type = blocks(ZERO_COPY_DOUBLES);
    int queued = rank, rc = MPI_SUCCESS;
    if (rank == 0) {
        for (int i = 0; i < LARGE_DOUBLES; i++)
            large[i] = i + iteration;
        for (int i = 0; i < ZERO_COPY_DOUBLES; i++)
            zero_copy[i] = -i - iteration;
        MPI_Request requests[2];
        MPI_Status statuses[2]; /* not MPI_STATUSES_IGNORE: GCC warns on MPICH's definition */
        MPI_Isend(large, 1, large_type, 1, TAG_LARGE, MPI_COMM_WORLD, &requests[1]);
        MPI_Probe(1, TAG_QUEUED, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* in the queue, not received */
        if (nonblocking) {
            rc = MPIX_Isend_zcopy(zero_copy, 1, zero_copy_type, 1, TAG_ZERO_COPY, MPI_COMM_WORLD, &requests[0]);
            CHECK(rc == MPI_SUCCESS, "%s: %s", way, mpix_test_error_string(rc));
            rc = MPI_Waitall(2, requests, statuses);
            CHECK(rc == MPI_SUCCESS, "MPI_Waitall after %s: %s", way, mpix_test_error_string(rc));
        } else {
            rc = MPIX_Send_zcopy(zero_copy, 1, zero_copy_type, 1, TAG_ZERO_COPY, MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS, "%s: %s", way, mpix_test_error_string(rc));
            rc = MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS, "MPI_Wait after %s: %s", way, mpix_test_error_string(rc));
        }
        for (int from = 1; from < size; from++) {
            MPI_Recv(&queued, 1, MPI_INT, from, TAG_QUEUED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(queued == from, "%s: the queued message from rank %d says %d", way, from, queued);
        }
    } else if (rank == 1) {
        MPI_Send(&queued, 1, MPI_INT, 0, TAG_QUEUED, MPI_COMM_WORLD);
        rc = MPI_Recv(large, 1, large_type, 0, TAG_LARGE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Recv of the large message: %s", way, mpix_test_error_string(rc));
        rc = MPIX_Recv_zcopy(zero_copy, 1, zero_copy_type, 0, TAG_ZERO_COPY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "%s: MPIX_Recv_zcopy: %s", way, mpix_test_error_string(rc));
        int wrong = -1;
        for (int i = 0; i < LARGE_DOUBLES && wrong < 0; i++)
            if (large[i] != (i % 2 ? 0 : i + iteration))
                wrong = i;
        CHECK(wrong < 0, "%s: large message: double %d is %g", way, wrong, wrong < 0 ? 0 : large[wrong]);
        for (int i = 0; i < ZERO_COPY_DOUBLES && wrong < 0; i++)
            if (zero_copy[i] != (i / BLOCK % 2 ? 0 : -i - iteration))
                wrong = i;
        CHECK(wrong < 0, "%s: zero-copy message: double %d is %g", way, wrong, wrong < 0 ? 0 : zero_copy[wrong]);
    } else
        MPI_Send(&queued, 1, MPI_INT, 0, TAG_QUEUED, MPI_COMM_WORLD);
    MPI_Type_free(&large_type);
    MPI_Type_free(&zero_copy_type);
    free(large);
    free(zero_copy);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &size);
    if (size < 2) {
        CHECK(size >= 2, "needs 2 ranks or more, has %d", size);
        return mpix_test_finish("zcopy_waiting_progress");
    }
    for (int iteration = 0; iteration < 3; iteration++) {
        run(0, iteration);
        run(1, iteration);
    }
    return mpix_test_finish("zcopy_waiting_progress");
}
