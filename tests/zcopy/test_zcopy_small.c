/* SPDX-License-Identifier: BSD-3-Clause */
/* Small and medium messages as a program sends them between ranks 0 and 1 (the others
 * idle): every iteration builds a strided vector of doubles, sends it and frees it; the
 * receiver takes it into a contiguous buffer longer than the message, so the status
 * says how much came; one iteration receives with MPIX_Irecv_zcopy, one sends with
 * MPIX_Isend_zcopy. Sizes run across the size up to which header and data travel
 * packed in one buffer (2 KiB of data), the header's own size and zcopy's eager limit
 * (16 KiB, also the longest message MPICH's zcopy sends without header), zero included,
 * and, with Open MPI, the sizes around which a short header's data fills the room of a
 * nonblocking receive's header (21-23 doubles).
 * Then data exactly as long as a lone header (MPICH: 1031 bytes, told from a header by
 * its first bytes) and its neighbours, in chars, into buffers of that size, longer ones
 * (a receive for more than 16 KiB too), pairs of chars (the last element in part),
 * nonblocking, and too short ones. Then the cases the one-buffer
 * receive must leave to the datatype: a message that ends inside a receive element
 * (MPI_Get_elements counts its doubles), data at MPI_BOTTOM on both sides, and a message
 * longer than the receive buffer (MPI_ERR_TRUNCATE). With MPIX_TEST_ZCOPY_EXPECT=small
 * the messages of at most 2 KiB must have gone packed, or, in a build for MPICH, those
 * of at most 16 KiB without a header (sent as the program asked). Last, communicators
 * freed and made again, as their handles are reused: each counts its own sends; and
 * truncations of messages of every path, each raising its error once; and small data
 * that is one run of bytes off its buffer's start, or has holes, both ways.
 * MPIX_TEST_THREADS=multiple runs it under MPI_THREAD_MULTIPLE. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <stdlib.h>
#include <string.h>

enum { ITERATIONS = 3, STRIDE = 3, SLACK = 5 };
/* The iteration whose receives (sends) are nonblocking: blocking sends' packed messages
 * taken by a receive posted before they come, and nonblocking sends' messages. */
enum { NONBLOCKING_RECEIVE = 1, NONBLOCKING_SEND = 2 };
static const int sizes[] = { 0, 1, 2, 21, 22, 23, 25, 255, 256, 257, 300, 1024, 2047, 2048, 2049, 2100 };
enum { SIZES = sizeof sizes / sizeof sizes[0], MAX_DOUBLES = 2100 };
/* Messages of up to RAW_MAX bytes travel without a header; a header alone is LONE bytes
 * long (lib/zcopy/zcopy.h). */
enum { LONE = 1031 };
enum { RAW_MAX = 16384 };

static int raw(int bytes)
{
    return bytes <= RAW_MAX;
}

static double value_of(int n, int i, int iteration)
{
    return n * 1000.0 + i + 0.5 * iteration;
}

/* Every size, every iteration, a strided vector built and freed around its send. */
static void strided_to_contiguous(int rank, MPI_Comm comm, int *plain_sent)
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
                *plain_sent += raw(bytes);
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

static char char_of(int length, int i, int variant)
{
    return (char)((length * 7 + i * 3 + variant) % 127);
}

/* Data of LONE - 1, LONE and LONE + 1 chars, each sent blocking and nonblocking, to
 * receives of exactly that many chars, of more, of more than 16 KiB (a receive that
 * probes first), of pairs of chars (an odd length ends inside a pair), nonblocking, and
 * of fewer (MPI_ERR_TRUNCATE); every byte and status checked, and nothing written past
 * the message. */
enum { RECEIVE_EXACT, RECEIVE_LONGER, RECEIVE_LARGE, RECEIVE_PAIRS, RECEIVE_NONBLOCKING, RECEIVE_SHORT, RECEIVES };
static void lone_sized(int rank, MPI_Comm comm, int *plain_sent)
{
    enum { EXTRA = 40, LARGE = 20000 };
    static char buffer[LARGE + EXTRA];
    const int lengths[] = { LONE - 1, LONE, LONE + 1 };
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_CHAR, &pair);
    MPI_Type_commit(&pair);
    for (int l = 0; l < 3; l++)
        for (int variant = 0; variant < 2 * RECEIVES; variant++) {
            int length = lengths[l], receive = variant / 2, nonblocking_send = variant % 2, tag = 200 + variant;
            if (rank == 0) {
                for (int i = 0; i < length; i++)
                    buffer[i] = char_of(length, i, variant);
                MPI_Request request;
                int rc = nonblocking_send ? MPIX_Isend_zcopy(buffer, length, MPI_CHAR, 1, tag, comm, &request)
                                          : MPIX_Send_zcopy(buffer, length, MPI_CHAR, 1, tag, comm);
                if (rc == MPI_SUCCESS && nonblocking_send)
                    rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
                CHECK(rc == MPI_SUCCESS, "send of %d chars: %s", length, mpix_test_error_string(rc));
                *plain_sent += raw(length);
            } else if (rank == 1) {
                memset(buffer, 0x55, sizeof buffer);
                int capacity = receive == RECEIVE_SHORT   ? length - 1
                               : receive == RECEIVE_EXACT ? length
                               : receive == RECEIVE_LARGE ? LARGE
                                                          : length + EXTRA;
                MPI_Status status;
                MPI_Request request;
                int rc;
                if (receive == RECEIVE_PAIRS)
                    rc = MPIX_Recv_zcopy(buffer, capacity / 2, pair, 0, tag, comm, &status);
                else if (receive == RECEIVE_NONBLOCKING) {
                    rc = MPIX_Irecv_zcopy(buffer, capacity, MPI_CHAR, 0, tag, comm, &request);
                    if (rc == MPI_SUCCESS)
                        rc = MPI_Wait(&request, &status);
                } else
                    rc = MPIX_Recv_zcopy(buffer, capacity, MPI_CHAR, 0, tag, comm, &status);
                int error_class = -1, elements = -1, wrong = 0, received = length < capacity ? length : capacity;
                MPI_Error_class(rc, &error_class);
                if (receive == RECEIVE_SHORT) {
                    CHECK(error_class == MPI_ERR_TRUNCATE && status.MPI_SOURCE == 0 && status.MPI_TAG == tag,
                          "%d chars into %d: class %d, source %d, tag %d", length, capacity, error_class,
                          status.MPI_SOURCE, status.MPI_TAG);
                    for (int i = capacity; i < (int)sizeof buffer; i++)
                        wrong += buffer[i] != 0x55;
                    CHECK(wrong == 0, "%d chars into %d: %d bytes past the buffer written", length, capacity, wrong);
                    continue;
                }
                CHECK(rc == MPI_SUCCESS, "receive of %d chars (receive %d, send %d): %s", length, receive,
                      nonblocking_send, mpix_test_error_string(rc));
                MPI_Get_elements(&status, receive == RECEIVE_PAIRS ? pair : MPI_CHAR, &elements);
                CHECK(elements == length && status.MPI_SOURCE == 0 && status.MPI_TAG == tag,
                      "%d chars (receive %d, send %d): %d elements, source %d, tag %d", length, receive,
                      nonblocking_send, elements, status.MPI_SOURCE, status.MPI_TAG);
                for (int i = 0; i < received; i++)
                    wrong += buffer[i] != char_of(length, i, variant);
                for (int i = received; i < (int)sizeof buffer; i++)
                    wrong += buffer[i] != 0x55;
                CHECK(wrong == 0, "%d chars (receive %d, send %d): %d bytes wrong or written past the message",
                      length, receive, nonblocking_send, wrong);
            }
        }
    MPI_Type_free(&pair);
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

/* Small data that is one run of bytes away from its buffer's start (4 doubles at an
 * index type's displacement of 3), and data with holes (double-int pairs, 12 bytes in
 * 16), each way: the run is copied where the MPI packs data as it lies in memory (with
 * MPIX_ZCOPY_PACK_BY_COPY=false, MPI packs it), data with holes MPI packs; last, 20 pairs
 * into a nonblocking receive, more than the room a short header leaves in the receive's
 * header (with Open MPI). Every value is checked, and that nothing around or between
 * them was written. */
static void runs_and_holes(int rank)
{
    typedef struct {
        double real;
        int integer;
    } pair;
    enum { CASES = 5, PAIRS = 20, TAG = 104 };
    int block = 4, displacement = 3;
    MPI_Datatype offset_run;
    MPI_Type_indexed(1, &block, &displacement, MPI_DOUBLE, &offset_run);
    MPI_Type_commit(&offset_run);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int c = 0; c < CASES; c++) {
        double values[10];
        pair pairs[PAIRS];
        memset(pairs, 0x55, sizeof pairs);
        for (int i = 0; i < 10; i++)
            values[i] = rank == 0 ? 100 * c + i : -1;
        for (int i = 0; i < PAIRS && rank == 0; i++)
            pairs[i].real = 100 * c + i + 0.5, pairs[i].integer = 100 * c + i;
        int rc = MPI_SUCCESS, pair_count = c == 3 ? 1 : c == 4 ? PAIRS : 3;
        if (rank == 0)
            rc = c == 0   ? MPIX_Send_zcopy(values, 1, offset_run, 1, TAG, comm)
                 : c == 1 ? MPIX_Send_zcopy(values + 3, 4, MPI_DOUBLE, 1, TAG, comm)
                          : MPIX_Send_zcopy(pairs, pair_count, MPI_DOUBLE_INT, 1, TAG, comm);
        else if (rank == 1) {
            MPI_Request request;
            if (c < 2)
                rc = MPIX_Recv_zcopy(values, 1, offset_run, 0, TAG, comm, MPI_STATUS_IGNORE);
            else if (c < 4)
                rc = MPIX_Recv_zcopy(pairs, pair_count, MPI_DOUBLE_INT, 0, TAG, comm, MPI_STATUS_IGNORE);
            else if ((rc = MPIX_Irecv_zcopy(pairs, pair_count, MPI_DOUBLE_INT, 0, TAG, comm, &request)) ==
                     MPI_SUCCESS)
                rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
            int wrong = 0;
            for (int i = 0; i < 10 && c < 2; i++)
                wrong += values[i] != (i >= 3 && i < 7 ? 100 * c + i : -1);
            for (int i = 0; i < PAIRS && c >= 2; i++) {
                const unsigned char *after = (const unsigned char *)&pairs[i].integer + sizeof(int);
                int received = i < pair_count;
                wrong += received ? pairs[i].real != 100 * c + i + 0.5 || pairs[i].integer != 100 * c + i
                                  : pairs[i].integer != 0x55555555;
                for (const unsigned char *b = after; b < (const unsigned char *)(&pairs[i] + 1); b++)
                    wrong += *b != 0x55;   /* the hole after the int */
            }
            CHECK(wrong == 0, "one run or holes, case %d: %d values wrong or written around", c, wrong);
        }
        CHECK(rc == MPI_SUCCESS, "one run or holes, case %d, rank %d: %s", c, rank, mpix_test_error_string(rc));
    }
    MPI_Comm_free(&comm);
    MPI_Type_free(&offset_run);
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

/* A truncation raises its error once, through the communicator's handler, whatever the
 * message's path: without header or packed with it, a header with the data after it,
 * zero-copy. Then the next message arrives whole. */
static void truncations_raised_once(int rank)
{
    static const int doubles[] = { 10, 300, 3000, 100000 };
    static double values[100000];
    MPI_Comm counting = mpix_test_counting_comm();
    for (size_t s = 0; s < sizeof doubles / sizeof doubles[0]; s++) {
        int n = doubles[s], tag = 200 + (int)s;
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                values[i] = i + 0.25;
            CHECK(MPIX_Send_zcopy(values, n, MPI_DOUBLE, 1, tag, counting) == MPI_SUCCESS, "send of %d doubles", n);
            CHECK(MPIX_Send_zcopy(values, 2, MPI_DOUBLE, 1, tag, counting) == MPI_SUCCESS, "send after %d", n);
        } else if (rank == 1) {
            int error_class = -1;
            *mpix_test_raised() = 0;
            int rc = MPIX_Recv_zcopy(values, n / 2, MPI_DOUBLE, 0, tag, counting, MPI_STATUS_IGNORE);
            MPI_Error_class(rc, &error_class);
            CHECK(error_class == MPI_ERR_TRUNCATE && *mpix_test_raised() == 1,
                  "%d doubles into %d: class %d, the handler ran %d times", n, n / 2, error_class,
                  *mpix_test_raised());
            values[1] = 0;
            rc = MPIX_Recv_zcopy(values, n / 2, MPI_DOUBLE, 0, tag, counting, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && values[1] == 1.25, "%d doubles into %d, then 2: rc %d, value %g", n, n / 2, rc,
                  values[1]);
        }
    }
    MPI_Comm_free(&counting);
}

/* Communicators freed and made again, which MPI may give the handle of the one before:
 * each has a state of its own (counters from zero), however many calls found the one
 * before through the same handle. */
static void handles_reused(int rank)
{
    MPI_Comm before = MPI_COMM_NULL;
    for (int round = 0; round < 3; round++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        if (round > 0 && rank == 0 && comm == before)
            printf("zcopy small: a freed communicator's handle was reused (as this test hopes)\n");
        before = comm;
        int messages = 2 + round;
        double value = 0;
        for (int m = 0; m < messages; m++) {
            if (rank == 0) {
                value = round * 10 + m;
                CHECK(MPIX_Send_zcopy(&value, 1, MPI_DOUBLE, 1, 7, comm) == MPI_SUCCESS, "round %d send %d", round, m);
            } else if (rank == 1) {
                CHECK(MPIX_Recv_zcopy(&value, 1, MPI_DOUBLE, 0, 7, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
                          value == round * 10 + m,
                      "round %d receive %d: %g", round, m, value);
            }
        }
        if (rank == 0) {
            zcopy_counters c = zcopy_stats_of(comm);
            unsigned long sent = c.sent_plain + c.sent_eager + c.sent_mpi + c.sent_zero_copy;
            CHECK(sent == (unsigned long)messages, "round %d: %lu sends counted on a new communicator, want %d", round,
                  sent, messages);
        }
        MPI_Comm_free(&comm);
    }
}

int main(int argc, char **argv)
{
    int rank, ranks, plain_sent = 0;
    const char *threads = getenv("MPIX_TEST_THREADS");
    if (threads && !strcmp(threads, "multiple")) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread gave thread level %d", provided);
    } else
        mpix_test_start(&argc, &argv, &rank, &ranks);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (ranks >= 2) {
        strided_to_contiguous(rank, comm, &plain_sent);
        lone_sized(rank, comm, &plain_sent);
        partial_element(rank, comm);
        at_bottom(rank, comm);
        truncated(rank, comm);
        handles_reused(rank);
        truncations_raised_once(rank);
        runs_and_holes(rank);
        const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
        if (rank == 0 && expect && !strcmp(expect, "small")) {
            zcopy_counters c = zcopy_stats_of(comm);
            /* The vectors, then the 3 doubles, the 10 and the 2, and the pair at
             * MPI_BOTTOM: all without header. */
            enum { FIXED_PLAIN = 4 };
            CHECK(c.sent_plain == (unsigned long)(plain_sent + FIXED_PLAIN), "%lu sends without header, want %d",
                  c.sent_plain, plain_sent + FIXED_PLAIN);
        }
    }
    MPI_Comm_free(&comm);
    return mpix_test_finish("zcopy_small");
}
