/* SPDX-License-Identifier: BSD-3-Clause */
/* Small and medium messages as a program sends them between ranks 0 and 1 (the others
 * idle): every iteration builds a strided vector of doubles, sends it and frees it; the
 * receiver takes it into a contiguous buffer longer than the message, so the status
 * says how much came; one iteration receives with MPIX_Irecv_zcopy, one sends with
 * MPIX_Isend_zcopy. Sizes run across the size up to which header and data travel
 * packed in one buffer (2 KiB of data), the header's own size and zcopy's eager limit
 * (16 KiB), zero included. Then the cases the one-buffer receive must leave to the
 * datatype: a message that ends inside a receive element (MPI_Get_elements counts its
 * doubles), data at MPI_BOTTOM on both sides, and a message longer than the receive
 * buffer (MPI_ERR_TRUNCATE). With MPIX_TEST_ZCOPY_EXPECT=small the messages of at most
 * 2 KiB must have gone packed, or, in a build for MPICH, those under 1 KiB without a
 * header (sent as the program asked) and the others of at most 2 KiB packed. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <stdlib.h>
#include <string.h>

enum { ITERATIONS = 3, STRIDE = 3, SLACK = 5, PACKED_LIMIT = 2048 };
/* The iteration whose receives (sends) are nonblocking: blocking sends' packed messages
 * taken by a receive posted before they come, and nonblocking sends' messages. */
enum { NONBLOCKING_RECEIVE = 1, NONBLOCKING_SEND = 2 };
static const int sizes[] = { 0, 1, 2, 25, 255, 256, 257, 300, 1024, 2047, 2048, 2049, 2100 };
enum { SIZES = sizeof sizes / sizeof sizes[0], MAX_DOUBLES = 2100 };
/* Messages shorter than this travel without a header (lib/zcopy/zcopy.h). */
#if defined(MPICH_NUMVERSION)
enum { RAW_BELOW = 1024 };
#else
enum { RAW_BELOW = 0 };
#endif

static double value_of(int n, int i, int iteration)
{
    return n * 1000.0 + i + 0.5 * iteration;
}

/* Every size, every iteration, a strided vector built and freed around its send. */
static void strided_to_contiguous(int rank, MPI_Comm comm, int *plain_sent, int *small_sent)
{
    static double strided[MAX_DOUBLES * STRIDE], received[MAX_DOUBLES + SLACK];
    for (int iteration = 0; iteration < ITERATIONS; iteration++)
        for (int s = 0; s < SIZES; s++) {
            int n = sizes[s];
            if (rank == 0) {
                MPI_Datatype vector;
                for (int i = 0; i < n; i++)
                    strided[i * STRIDE] = value_of(n, i, iteration);
                MPI_Type_vector(n, 1, STRIDE, MPI_DOUBLE, &vector);
                MPI_Type_commit(&vector);
                MPI_Request request;
                int rc = iteration == NONBLOCKING_SEND ? MPIX_Isend_zcopy(strided, 1, vector, 1, s, comm, &request)
                                                       : MPIX_Send_zcopy(strided, 1, vector, 1, s, comm);
                MPI_Type_free(&vector);   /* before the wait, as MPI allows */
                if (rc == MPI_SUCCESS && iteration == NONBLOCKING_SEND)
                    rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
                CHECK(rc == MPI_SUCCESS, "send of %d doubles: %s", n, mpix_test_error_string(rc));
                int bytes = n * (int)sizeof(double);
                *plain_sent += bytes < RAW_BELOW;
                *small_sent += bytes >= RAW_BELOW && iteration != NONBLOCKING_SEND && bytes <= PACKED_LIMIT;
            } else if (rank == 1) {
                MPI_Status status;
                int count = -1, wrong = 0;
                for (int i = 0; i < n + SLACK; i++)
                    received[i] = -1;
                MPI_Request request;
                int rc = iteration == NONBLOCKING_RECEIVE
                             ? MPIX_Irecv_zcopy(received, n + SLACK, MPI_DOUBLE, 0, s, comm, &request)
                             : MPIX_Recv_zcopy(received, n + SLACK, MPI_DOUBLE, 0, s, comm, &status);
                if (rc == MPI_SUCCESS && iteration == NONBLOCKING_RECEIVE)
                    rc = MPI_Wait(&request, &status);
                CHECK(rc == MPI_SUCCESS, "receive of %d doubles: %s", n, mpix_test_error_string(rc));
                MPI_Get_count(&status, MPI_DOUBLE, &count);
                CHECK(count == n && status.MPI_SOURCE == 0 && status.MPI_TAG == s,
                      "%d doubles: status count %d source %d tag %d", n, count, status.MPI_SOURCE, status.MPI_TAG);
                for (int i = 0; i < n; i++)
                    wrong += received[i] != value_of(n, i, iteration);
                for (int i = n; i < n + SLACK; i++)
                    wrong += received[i] != -1;
                CHECK(wrong == 0, "%d doubles, iteration %d: %d wrong or overwritten", n, iteration, wrong);
            }
        }
}

/* 3 doubles into pairs of doubles: one and a half elements. */
static void partial_element(int rank, MPI_Comm comm)
{
    double values[6] = { 1, 2, 3, -1, -1, -1 };
    if (rank == 0)
        CHECK(MPIX_Send_zcopy(values, 3, MPI_DOUBLE, 1, 100, comm) == MPI_SUCCESS, "send of 3 doubles");
    else if (rank == 1) {
        MPI_Datatype pair;
        MPI_Status status;
        int elements = -1, count = 0;
        memset(values, 0, sizeof values);
        MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
        MPI_Type_commit(&pair);
        int rc = MPIX_Recv_zcopy(values, 3, pair, 0, 100, comm, &status);
        MPI_Get_elements(&status, pair, &elements);
        MPI_Get_count(&status, pair, &count);
        CHECK(rc == MPI_SUCCESS && elements == 3 && count == MPI_UNDEFINED && values[0] == 1 && values[1] == 2 &&
                  values[2] == 3 && values[3] == 0,
              "3 doubles into pairs: rc %d, %d elements, count %d, values %g %g %g %g", rc, elements, count,
              values[0], values[1], values[2], values[3]);
        MPI_Type_free(&pair);
    }
}

/* A small struct at MPI_BOTTOM (an int and a double of different arrays), both sides. */
static void at_bottom(int rank, MPI_Comm comm)
{
    static int number;
    static double real;
    int lengths[2] = { 1, 1 };
    MPI_Aint addresses[2];
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, pair;
    MPI_Get_address(&number, &addresses[0]);
    MPI_Get_address(&real, &addresses[1]);
    MPI_Type_create_struct(2, lengths, addresses, types, &pair);
    MPI_Type_commit(&pair);
    if (rank == 0) {
        number = 42;
        real = 2.5;
        CHECK(MPIX_Send_zcopy(MPI_BOTTOM, 1, pair, 1, 101, comm) == MPI_SUCCESS, "send at MPI_BOTTOM");
    } else if (rank == 1) {
        number = 0;
        real = 0;
        int rc = MPIX_Recv_zcopy(MPI_BOTTOM, 1, pair, 0, 101, comm, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && number == 42 && real == 2.5, "receive at MPI_BOTTOM: rc %d, %d and %g", rc,
              number, real);
    }
    MPI_Type_free(&pair);
}

/* 10 doubles into 4: MPI_ERR_TRUNCATE with the envelope (what lands in the buffer MPI
 * leaves open), and the communicator goes on. */
static void truncated(int rank, MPI_Comm comm)
{
    double values[10];
    for (int i = 0; i < 10; i++)
        values[i] = rank == 0 ? i + 1 : 0;
    if (rank == 0) {
        CHECK(MPIX_Send_zcopy(values, 10, MPI_DOUBLE, 1, 102, comm) == MPI_SUCCESS, "send of 10 doubles");
        CHECK(MPIX_Send_zcopy(values, 2, MPI_DOUBLE, 1, 103, comm) == MPI_SUCCESS, "send after a truncation");
    } else if (rank == 1) {
        MPI_Status status;
        int error_class = -1, rc = MPIX_Recv_zcopy(values, 4, MPI_DOUBLE, 0, 102, comm, &status);
        MPI_Error_class(rc, &error_class);
        CHECK(error_class == MPI_ERR_TRUNCATE && status.MPI_SOURCE == 0 && status.MPI_TAG == 102,
              "10 doubles into 4: class %d, source %d, tag %d", error_class, status.MPI_SOURCE, status.MPI_TAG);
        rc = MPIX_Recv_zcopy(values, 10, MPI_DOUBLE, 0, 103, comm, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && values[1] == 2, "after the truncation: rc %d value %g", rc, values[1]);
    }
}

int main(int argc, char **argv)
{
    int rank, ranks, plain_sent = 0, small_sent = 0;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (ranks >= 2) {
        strided_to_contiguous(rank, comm, &plain_sent, &small_sent);
        partial_element(rank, comm);
        at_bottom(rank, comm);
        truncated(rank, comm);
        const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
        if (rank == 0 && expect && !strcmp(expect, "small")) {
            zcopy_counters c = zcopy_stats_of(comm);
            /* The vectors, then the 3 doubles, the 10 and the 2 (packed, or without header),
             * and the pair at MPI_BOTTOM (never packed). */
            int fixed_small = RAW_BELOW ? 0 : 3, fixed_plain = RAW_BELOW ? 4 : 0;
            CHECK(c.sent_small_packed == (unsigned long)(small_sent + fixed_small),
                  "%lu sends packed in one buffer, want %d", c.sent_small_packed, small_sent + fixed_small);
            CHECK(c.sent_plain == (unsigned long)(plain_sent + fixed_plain), "%lu sends without header, want %d",
                  c.sent_plain, plain_sent + fixed_plain);
        }
    }
    MPI_Comm_free(&comm);
    return mpix_test_finish("zcopy_small");
}
