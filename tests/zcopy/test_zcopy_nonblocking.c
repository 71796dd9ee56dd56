/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Isend_zcopy / MPIX_Irecv_zcopy as halo codes use them: every rank posts its
 * receives from both ring neighbours, then its sends, then waits for all (MPI_Waitall),
 * with a strided face type built, committed and freed every iteration (freed right
 * after posting, as MPI allows) and a small message beside it; statuses and bytes
 * checked, gaps between blocks untouched. Then: nonblocking sends matched by blocking
 * receives and the other way round, posting order of receives with the same envelope
 * (and a wildcard before a specific one; a receive with room for a small message only
 * after one with room for a large one), small sends completed before their receives
 * are posted (their buffers reused), completion by MPI_Test polling, MPI_Cancel of
 * a receive that matched nothing, truncation reported by MPI_Wait, MPI_PROC_NULL, and
 * the arguments MPI would reject. With MPIX_TEST_ZCOPY_EXPECT=zero_copy the large
 * messages must have gone zero-copy; with =mpi through MPI. */
#include "mpix_test.h"
#include "zcopy_face.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <string.h>

enum { SMALL = 16, ITERATIONS = 6 };
enum { FACE_TAG = 7, SMALL_TAG = 8 };

static MPI_Comm comm;
static int rank, size;

static void halo(void)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size, peers[2] = { left, right };
    size_t face_doubles = ZCOPY_FACE_SPAN;
    double *out = malloc(face_doubles * sizeof *out), *in[2], small_in[2][SMALL], small_out[SMALL];
    for (int side = 0; side < 2; side++)
        in[side] = malloc(face_doubles * sizeof *in[side]);
    zcopy_counters first = { 0 };
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        if (iteration == 1) /* past the first contacts, which go through MPI */
            first = zcopy_stats_of(comm);
        MPI_Request requests[8];
        MPI_Status statuses[8];
        zcopy_face_fill(out, rank, iteration);
        for (int e = 0; e < SMALL; e++)
            small_out[e] = zcopy_value(rank, iteration, e);
        MPI_Datatype face = zcopy_face_type();
        for (int side = 0; side < 2; side++) {
            zcopy_blank(in[side], face_doubles);
            zcopy_blank(small_in[side], SMALL);
            CHECK(MPIX_Irecv_zcopy(in[side], 1, face, peers[side], FACE_TAG, comm, &requests[side]) == MPI_SUCCESS,
                  "irecv face");
            CHECK(MPIX_Irecv_zcopy(small_in[side], SMALL, MPI_DOUBLE, peers[side], SMALL_TAG, comm,
                                   &requests[2 + side]) == MPI_SUCCESS,
                  "irecv small");
        }
        for (int side = 0; side < 2; side++) {
            CHECK(MPIX_Isend_zcopy(out, 1, face, peers[side], FACE_TAG, comm, &requests[4 + side]) == MPI_SUCCESS,
                  "isend face");
            CHECK(MPIX_Isend_zcopy(small_out, SMALL, MPI_DOUBLE, peers[side], SMALL_TAG, comm, &requests[6 + side]) ==
                      MPI_SUCCESS,
                  "isend small");
        }
        MPI_Type_free(&face); /* pending operations keep using it */
        int rc = MPI_Waitall(8, requests, statuses);
        CHECK(rc == MPI_SUCCESS, "waitall: %s", mpix_test_error_string(rc));
        for (int side = 0; side < 2; side++) {
            int count;
            /* With 2 ranks both neighbours are one rank: its two messages of a tag arrive
             * in order, and receive 0 (posted first) gets the first, sent to the left. */
            int from = peers[side];
            CHECK(statuses[side].MPI_SOURCE == from && statuses[side].MPI_TAG == FACE_TAG, "face status %d/%d",
                  statuses[side].MPI_SOURCE, statuses[side].MPI_TAG);
            MPI_Get_count(&statuses[side], MPI_DOUBLE, &count);
            CHECK(count == ZCOPY_FACE_ELEMENTS, "face count %d", count);
            int wrong = zcopy_face_wrong(in[side], from, iteration);
            CHECK(wrong < 0, "iteration %d: face from %d wrong at %d (%g)", iteration, from, wrong,
                  wrong < 0 ? 0.0 : in[side][wrong]);
            MPI_Get_count(&statuses[2 + side], MPI_DOUBLE, &count);
            CHECK(count == SMALL && statuses[2 + side].MPI_SOURCE == from, "small count %d source %d", count,
                  statuses[2 + side].MPI_SOURCE);
            CHECK(small_in[side][SMALL - 1] == zcopy_value(from, iteration, SMALL - 1), "small from %d wrong", from);
        }
    }
    /* Nonblocking sends are not timed and do not duel: a shape's face goes one way
     * (zero-copy, or through MPI where that is forced, deferred or the only way), not
     * four one way and four the other (6 and 4 before). A neighbour's answer to the
     * first contact may come after the first iteration (8 ranks on 2 cores: once, one
     * send more through MPI), so at most one such send per neighbour. */
    zcopy_counters last = zcopy_stats_of(comm);
    unsigned long zero_copy = last.sent_zero_copy - first.sent_zero_copy, by_mpi = last.sent_mpi - first.sent_mpi;
    CHECK(zero_copy + by_mpi == 2 * (ITERATIONS - 1) && (zero_copy == 0 || by_mpi <= 2),
          "face sends after the first iteration: %lu zero-copy, %lu through MPI", zero_copy, by_mpi);
    free(out);
    free(in[0]);
    free(in[1]);
}

/* A fragmented face (single doubles at a stride, as the NAS MG x-face), which goes
 * through MPI, in the halo pattern with its type built and freed every iteration; then a
 * receive too short for it between ranks 0 and 1. Its sends go as the program asked,
 * without header; the first ones to a peer that cannot attach yet send a question
 * before (a header of its own), which the receive answers and then receives on. */
enum { FRAGMENTED_ELEMENTS = 4096, FRAGMENTED_STRIDE = 3 };

static MPI_Datatype fragmented_type(int elements)
{
    MPI_Datatype type;
    MPI_Type_vector(elements, 1, FRAGMENTED_STRIDE, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    return type;
}

static void fragmented_halo(void)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size, peers[2] = { left, right };
    size_t span = (size_t)FRAGMENTED_ELEMENTS * FRAGMENTED_STRIDE;
    double *out = malloc(span * sizeof *out), *in[2] = { malloc(span * sizeof(double)), malloc(span * sizeof(double)) };
    zcopy_counters before = zcopy_stats_of(comm);
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        for (size_t i = 0; i < span; i++)
            out[i] = zcopy_value(rank, iteration, (int)i);
        MPI_Datatype type = fragmented_type(FRAGMENTED_ELEMENTS);
        MPI_Request requests[4];
        MPI_Status statuses[4];
        for (int side = 0; side < 2; side++) {
            zcopy_blank(in[side], span);
            CHECK(MPIX_Irecv_zcopy(in[side], 1, type, peers[side], FACE_TAG, comm, &requests[side]) == MPI_SUCCESS,
                  "irecv fragmented");
        }
        for (int side = 0; side < 2; side++)
            CHECK(MPIX_Isend_zcopy(out, 1, type, peers[side], FACE_TAG, comm, &requests[2 + side]) == MPI_SUCCESS,
                  "isend fragmented");
        MPI_Type_free(&type);
        int rc = MPI_Waitall(4, requests, statuses);
        CHECK(rc == MPI_SUCCESS, "waitall fragmented: %s", mpix_test_error_string(rc));
        for (int side = 0; side < 2; side++) {
            int count;
            MPI_Get_count(&statuses[side], MPI_DOUBLE, &count);
            CHECK(statuses[side].MPI_SOURCE == peers[side] && statuses[side].MPI_TAG == FACE_TAG &&
                      count == FRAGMENTED_ELEMENTS,
                  "fragmented status %d/%d, count %d", statuses[side].MPI_SOURCE, statuses[side].MPI_TAG, count);
            for (size_t i = 0; i < span; i++) {
                double want = i % FRAGMENTED_STRIDE == 0 ? zcopy_value(peers[side], iteration, (int)i)
                                                         : -1;
                if (in[side][i] != want) {
                    CHECK(0, "iteration %d: fragmented face from %d wrong at %zu (%g, want %g)", iteration,
                          peers[side], i, in[side][i], want);
                    break;
                }
            }
        }
    }
    zcopy_counters after = zcopy_stats_of(comm);
    unsigned long apart = after.sent_data_apart - before.sent_data_apart,
                  alone = after.sent_without_header - before.sent_without_header,
                  questions = after.sent_questions - before.sent_questions;
    const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
    /* Each rank's 2 * ITERATIONS sends of the shape go through MPI without header; a
     * question goes before at most 4 to each of its two neighbours
     * (MPIX_ZCOPY_LEARN_ASKS), and only while they cannot attach yet. */
    if (expect && strcmp(expect, "without_header") == 0)
        CHECK(alone == 2 * ITERATIONS && apart == 0 && questions <= 8,
              "sends through MPI: %lu without header, %lu with one, %lu questions, of %d", alone, apart, questions,
              2 * ITERATIONS);
    if (rank <= 1 && size >= 2) {
        /* Too short: MPI reports the truncation of the data's message. */
        MPI_Datatype whole = fragmented_type(FRAGMENTED_ELEMENTS), part = fragmented_type(FRAGMENTED_ELEMENTS / 2);
        MPI_Request request, send;
        MPI_Status status;
        CHECK(MPIX_Irecv_zcopy(in[0], 1, part, 1 - rank, FACE_TAG, comm, &request) == MPI_SUCCESS, "irecv short");
        CHECK(MPIX_Isend_zcopy(out, 1, whole, 1 - rank, FACE_TAG, comm, &send) == MPI_SUCCESS, "isend whole");
        int rc = MPI_Wait(&request, &status), error_class = MPI_SUCCESS;
        MPI_Error_class(rc, &error_class);
        CHECK(error_class == MPI_ERR_TRUNCATE || (rc == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_SUCCESS),
              "truncated fragmented receive: %s", mpix_test_error_string(rc));
        CHECK(MPI_Wait(&send, MPI_STATUS_IGNORE) == MPI_SUCCESS, "the whole send completes");
        MPI_Type_free(&whole);
        MPI_Type_free(&part);
    }
    free(out);
    free(in[0]);
    free(in[1]);
}

/* Rank 0 and 1: nonblocking against blocking, both ways, the face type reused. */
static void mixed(void)
{
    if (rank > 1)
        return;
    int peer = 1 - rank;
    size_t face_doubles = ZCOPY_FACE_SPAN;
    double *out = malloc(face_doubles * sizeof *out), *in = malloc(face_doubles * sizeof *in);
    MPI_Datatype face = zcopy_face_type();
    MPI_Request request;
    MPI_Status status;
    for (int round = 0; round < 4; round++) {
        zcopy_face_fill(out, rank, 100 + round);
        zcopy_blank(in, face_doubles);
        int sender = round % 2 == 0 ? 0 : 1;
        if (rank == sender) {
            CHECK(MPIX_Isend_zcopy(out, 1, face, peer, 3, comm, &request) == MPI_SUCCESS, "isend");
            CHECK(MPIX_Recv_zcopy(in, 1, face, peer, 4, comm, &status) == MPI_SUCCESS, "blocking recv");
            CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait isend");
        } else {
            CHECK(MPIX_Irecv_zcopy(in, 1, face, peer, 3, comm, &request) == MPI_SUCCESS, "irecv");
            CHECK(MPIX_Send_zcopy(out, 1, face, peer, 4, comm) == MPI_SUCCESS, "blocking send");
            CHECK(MPI_Wait(&request, &status) == MPI_SUCCESS, "wait irecv");
        }
        int wrong = zcopy_face_wrong(in, peer, 100 + round);
        CHECK(wrong < 0, "round %d: face wrong at %d", round, wrong);
    }
    MPI_Type_free(&face);
    free(out);
    free(in);
}

/* Rank 1: once rank 0 says its receive is posted (@go on MPI_COMM_WORLD), SMALL doubles
 * of value @tag to it with @tag on @on. */
static void send_when_posted(int go, int tag, MPI_Comm on)
{
    double value[SMALL];
    MPI_Recv(NULL, 0, MPI_BYTE, 0, go, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int e = 0; e < SMALL; e++)
        value[e] = tag;
    CHECK(MPIX_Send_zcopy(value, SMALL, MPI_DOUBLE, 0, tag, on) == MPI_SUCCESS, "send");
}

/* Rank 0 cancels a receive from rank 1 that nothing has matched yet: it ends cancelled
 * and the message rank 1 then sends goes to a blocking receive. */
static void cancel_from_other(void)
{
    if (rank > 1)
        return;
    double value[SMALL] = { 0 };
    if (rank == 0) {
        MPI_Request request;
        MPI_Status status;
        int cancelled = 0;
        CHECK(MPIX_Irecv_zcopy(value, SMALL, MPI_DOUBLE, 1, 95, comm, &request) == MPI_SUCCESS, "irecv from 1");
        int rc = MPI_Cancel(&request);
        CHECK(rc == MPI_SUCCESS, "cancel from rank 1: %s", mpix_test_error_string(rc));
        MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD); /* now rank 1 may send */
        CHECK(MPI_Wait(&request, &status) == MPI_SUCCESS, "wait");
        MPI_Test_cancelled(&status, &cancelled);
        CHECK(cancelled, "not cancelled");
        CHECK(MPIX_Recv_zcopy(value, SMALL, MPI_DOUBLE, 1, 95, comm, &status) == MPI_SUCCESS, "recv");
        CHECK(value[SMALL - 1] == 95, "value %g", value[SMALL - 1]);
    } else
        send_when_posted(1, 95, comm);
}

/* Rank 0 frees the communicator of a pending receive, as MPI allows: the receive still
 * completes once rank 1's message comes. */
static void free_with_pending(void)
{
    MPI_Comm pending_comm;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pending_comm);
    if (rank > 1)
        return;
    double value[SMALL] = { 0 };
    if (rank == 0) {
        MPI_Request request;
        CHECK(MPIX_Irecv_zcopy(value, SMALL, MPI_DOUBLE, 1, 94, pending_comm, &request) == MPI_SUCCESS, "irecv");
        MPI_Send(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD); /* posted: rank 1 may send */
        CHECK(MPI_Comm_free(&pending_comm) == MPI_SUCCESS, "free with a pending receive");
        CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait after the free");
        CHECK(value[SMALL - 1] == 94, "value %g", value[SMALL - 1]);
    } else {
        send_when_posted(2, 94, pending_comm);
        MPI_Comm_free(&pending_comm);
    }
}

/* Rank 1 sends four numbered messages on one tag; rank 0 has posted a wildcard receive
 * and three specific ones: MPI's posting order gives them 0, 1, 2, 3. Then completion by
 * polling MPI_Test. */
static void order_and_test(void)
{
    if (rank > 1)
        return;
    enum { N = 4 };
    double values[N][SMALL];
    MPI_Request requests[N];
    MPI_Status statuses[N];
    if (rank == 0) {
        for (int m = 0; m < N; m++)
            CHECK(MPIX_Irecv_zcopy(values[m], SMALL, MPI_DOUBLE, m == 0 ? MPI_ANY_SOURCE : 1, m == 0 ? MPI_ANY_TAG : 5,
                                   comm, &requests[m]) == MPI_SUCCESS,
                  "irecv %d", m);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD); /* posted; not on comm, where the wildcard waits */
        int all = 0;
        for (long polls = 0; !all; polls++)
            CHECK(MPI_Testall(N, requests, &all, statuses) == MPI_SUCCESS, "testall");
        for (int m = 0; m < N; m++)
            CHECK(values[m][0] == m && statuses[m].MPI_TAG == 5 && statuses[m].MPI_SOURCE == 1,
                  "receive %d got message %g (tag %d)", m, values[m][0], statuses[m].MPI_TAG);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* the receives are posted */
        for (int m = 0; m < N; m++) {
            for (int e = 0; e < SMALL; e++)
                values[m][e] = m;
            CHECK(MPIX_Isend_zcopy(values[m], SMALL, MPI_DOUBLE, 0, 5, comm, &requests[m]) == MPI_SUCCESS, "isend");
        }
        int done = 0;
        while (!done)
            MPI_Testall(N, requests, &done, statuses);
    }
}

/* A receive with room for a large message, then one with room for a small one only,
 * same envelope: two small messages go to them in that order (the second receive may
 * not be handed to MPI ahead of the first, which could be waiting to match). */
static void small_after_large(void)
{
    if (rank > 1)
        return;
    enum { ROOM = 4 * ZCOPY_FACE_ROW_DOUBLES, TAG = 11 };
    static double large[ROOM], small[SMALL];
    MPI_Request requests[2];
    MPI_Status statuses[2];
    if (rank == 0) {
        CHECK(MPIX_Irecv_zcopy(large, ROOM, MPI_DOUBLE, 1, TAG, comm, &requests[0]) == MPI_SUCCESS, "large irecv");
        CHECK(MPIX_Irecv_zcopy(small, SMALL, MPI_DOUBLE, 1, TAG, comm, &requests[1]) == MPI_SUCCESS, "small irecv");
        MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD); /* both posted */
        CHECK(MPI_Waitall(2, requests, statuses) == MPI_SUCCESS, "waitall");
        int counts[2];
        MPI_Get_count(&statuses[0], MPI_DOUBLE, &counts[0]);
        MPI_Get_count(&statuses[1], MPI_DOUBLE, &counts[1]);
        CHECK(large[0] == 1 && small[0] == 2 && counts[0] == SMALL && counts[1] == SMALL,
              "first receive got message %g (%d doubles), second %g (%d)", large[0], counts[0], small[0], counts[1]);
    } else {
        double first[SMALL], second[SMALL];
        for (int e = 0; e < SMALL; e++)
            first[e] = 1, second[e] = 2;
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(MPIX_Send_zcopy(first, SMALL, MPI_DOUBLE, 0, TAG, comm) == MPI_SUCCESS, "first send");
        CHECK(MPIX_Send_zcopy(second, SMALL, MPI_DOUBLE, 0, TAG, comm) == MPI_SUCCESS, "second send");
    }
}

/* Small sends whose receives come late, as a program that sends its halo before it
 * posts the receives: more than the library keeps at first (16), each request waited
 * for and its buffer overwritten before the receiver has posted anything; then the
 * messages arrive whole, in order, with their own lengths, interleaved with a large one
 * on the same tag. */
static void small_before_receives(void)
{
    if (rank > 1)
        return;
    enum { N = 40, TAG = 12, LARGE = 4 * ZCOPY_FACE_ROW_DOUBLES };
    static double large[LARGE];
    double values[SMALL];
    if (rank == 1) {
        MPI_Request large_request = MPI_REQUEST_NULL;
        for (int m = 0; m < N; m++) {
            MPI_Request request;
            for (int e = 0; e < SMALL; e++)
                values[e] = m * 100 + e;
            if (m == N / 2) { /* too large for MPI to take before its receive: waited for last */
                for (int e = 0; e < LARGE; e++)
                    large[e] = -e;
                CHECK(MPIX_Isend_zcopy(large, LARGE, MPI_DOUBLE, 0, TAG, comm, &large_request) == MPI_SUCCESS,
                      "large isend");
            }
            CHECK(MPIX_Isend_zcopy(values, 1 + m % SMALL, MPI_DOUBLE, 0, TAG, comm, &request) == MPI_SUCCESS,
                  "isend %d", m);
            CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait %d", m);
            for (int e = 0; e < SMALL; e++)
                values[e] = -1; /* the buffer is the program's again */
        }
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD); /* sent */
        CHECK(MPI_Wait(&large_request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "large send's wait");
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int m = 0; m < N; m++) {
            MPI_Status status;
            int count = -1;
            if (m == N / 2) {
                memset(large, 0, sizeof large);
                CHECK(MPIX_Recv_zcopy(large, LARGE, MPI_DOUBLE, 1, TAG, comm, &status) == MPI_SUCCESS, "large receive");
                MPI_Get_count(&status, MPI_DOUBLE, &count);
                CHECK(count == LARGE && large[1] == -1 && large[LARGE - 1] == -(LARGE - 1), "large message: %d doubles",
                      count);
            }
            MPI_Request request;
            for (int e = 0; e < SMALL; e++)
                values[e] = 0;
            CHECK(MPIX_Irecv_zcopy(values, SMALL, MPI_DOUBLE, 1, TAG, comm, &request) == MPI_SUCCESS, "irecv %d", m);
            CHECK(MPI_Wait(&request, &status) == MPI_SUCCESS, "wait for receive %d", m);
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            int right = count == 1 + m % SMALL;
            for (int e = 0; e < count && right; e++)
                right = values[e] == m * 100 + e;
            CHECK(right, "message %d: %d doubles, first %g", m, count, values[0]);
        }
    }
}

static void cancel_truncate_proc_null(void)
{
    double buffer[SMALL];
    MPI_Request request;
    MPI_Status status;
    int cancelled = 0, count = -1;
    /* A receive nothing will match, cancelled. */
    CHECK(MPIX_Irecv_zcopy(buffer, SMALL, MPI_DOUBLE, rank, 99, comm, &request) == MPI_SUCCESS, "irecv");
    CHECK(MPI_Cancel(&request) == MPI_SUCCESS, "cancel");
    CHECK(MPI_Wait(&request, &status) == MPI_SUCCESS, "wait cancelled");
    MPI_Test_cancelled(&status, &cancelled);
    CHECK(cancelled, "the unmatched receive was not cancelled");
    /* Two wildcard receives with one envelope, both cancelled: the second may wait
     * unposted behind the first. */
    double second[SMALL];
    MPI_Request two[2];
    MPI_Status statuses[2];
    CHECK(MPIX_Irecv_zcopy(buffer, SMALL, MPI_DOUBLE, MPI_ANY_SOURCE, 97, comm, &two[0]) == MPI_SUCCESS &&
              MPIX_Irecv_zcopy(second, SMALL, MPI_DOUBLE, MPI_ANY_SOURCE, 97, comm, &two[1]) == MPI_SUCCESS,
          "wildcard irecvs");
    CHECK(MPI_Cancel(&two[1]) == MPI_SUCCESS && MPI_Cancel(&two[0]) == MPI_SUCCESS, "cancel wildcards");
    CHECK(MPI_Waitall(2, two, statuses) == MPI_SUCCESS, "wait cancelled wildcards");
    for (int i = 0; i < 2; i++) {
        MPI_Test_cancelled(&statuses[i], &cancelled);
        CHECK(cancelled, "wildcard receive %d was not cancelled", i);
    }
    /* MPI_PROC_NULL: complete at once, MPI's status. */
    CHECK(MPIX_Irecv_zcopy(buffer, SMALL, MPI_DOUBLE, MPI_PROC_NULL, 1, comm, &request) == MPI_SUCCESS, "proc null");
    CHECK(MPI_Wait(&request, &status) == MPI_SUCCESS, "wait proc null");
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(status.MPI_SOURCE == MPI_PROC_NULL && count == 0, "proc null status %d, count %d", status.MPI_SOURCE, count);
    CHECK(MPIX_Isend_zcopy(buffer, SMALL, MPI_DOUBLE, MPI_PROC_NULL, 1, comm, &request) == MPI_SUCCESS &&
              MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "isend to MPI_PROC_NULL");
    /* Truncation: ranks 0 and 1 send each other a message longer than the receive (not
     * to themselves: Open MPI 4.1 reports no truncation of a message to self). Others
     * stay out: rank 0 may still hold a wildcard receive of an earlier step. */
    if (rank > 1)
        return;
    double big[2 * SMALL] = { 0 };
    MPI_Request send;
    CHECK(MPIX_Irecv_zcopy(buffer, SMALL, MPI_DOUBLE, 1 - rank, 98, comm, &request) == MPI_SUCCESS, "irecv short");
    CHECK(MPIX_Isend_zcopy(big, 2 * SMALL, MPI_DOUBLE, 1 - rank, 98, comm, &send) == MPI_SUCCESS, "isend long");
    int rc = MPI_Wait(&request, &status), error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_TRUNCATE || (rc == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_SUCCESS),
          "truncated receive: %s", mpix_test_error_string(rc));
    CHECK(MPI_Wait(&send, MPI_STATUS_IGNORE) == MPI_SUCCESS, "the long send completes");
}

static void arguments(void)
{
    double buffer[SMALL];
    MPI_Request request;
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_DOUBLE, &uncommitted);
    EXPECT_CLASS(MPIX_Isend_zcopy(buffer, 1, MPI_DOUBLE, size, 1, comm, &request), MPI_ERR_RANK, "bad rank");
    EXPECT_CLASS(MPIX_Irecv_zcopy(buffer, -1, MPI_DOUBLE, 0, 1, comm, &request), MPI_ERR_COUNT, "negative count");
    EXPECT_CLASS(MPIX_Isend_zcopy(buffer, 1, uncommitted, 0, 1, comm, &request), MPI_ERR_TYPE, "uncommitted type");
    int rc = MPIX_Irecv_zcopy(buffer, 1, MPI_DOUBLE, 0, 1, comm, NULL);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT), "NULL request: %s", mpix_test_error_string(rc));
    MPI_Type_free(&uncommitted);
}

int main(int argc, char **argv)
{
    int provided;
    const char *level = getenv("MPIX_TEST_THREAD_LEVEL"), *progress = getenv("MPIX_ZCOPY_PROGRESS");
    MPI_Init_thread(&argc, &argv, level && strcmp(level, "single") == 0 ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE,
                    &provided);
    /* The progress thread, needing MPI_THREAD_MULTIPLE; else MPI's waits and tests run
     * the thread's pass in the caller's thread. */
    int thread = progress && strcmp(progress, "thread") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    int refused = thread; /* its progress is not safe from two threads (lib/zcopy/request.c) */
#else
    int refused = thread && provided != MPI_THREAD_MULTIPLE;
#endif
    if (refused) {
        /* Where the calls cannot work they say so, and nothing is left pending. */
        double buffer[1];
        MPI_Request request = MPI_REQUEST_NULL;
        int rc = MPIX_Irecv_zcopy(buffer, 1, MPI_DOUBLE, 0, 1, comm, &request);
        CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_UNSUPPORTED), "thread level %d: %s", provided,
              mpix_test_error_string(rc));
        CHECK(request == MPI_REQUEST_NULL, "a refused call gave a request");
        rc = MPIX_Isend_zcopy(buffer, 1, MPI_DOUBLE, 0, 1, comm, &request);
        CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_UNSUPPORTED), "isend: %s", mpix_test_error_string(rc));
        arguments();
    } else {
        halo();
        fragmented_halo();
        mixed();
        order_and_test();
        small_after_large();
        small_before_receives();
        cancel_truncate_proc_null();
        cancel_from_other();
        free_with_pending();
        arguments();
        const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
        zcopy_counters counters = zcopy_stats_of(comm);
        /* Nonblocking sends go zero-copy with the thread, and inside MPI's progress below
         * MPI_THREAD_MULTIPLE (the sender's end is a second message on the tag, which no
         * other thread's receive may take): every face of halo() but the first contact's.
         * Otherwise only blocking sends: the two of mixed() but the first, which asks
         * whether the peer can read this process. */
        if (expect && strcmp(expect, "zero_copy") == 0 && rank < 2)
            CHECK(counters.sent_zero_copy >= 2 * (ITERATIONS - 1), "zero-copy sends: %lu",
                  counters.sent_zero_copy);
        if (expect && strcmp(expect, "mpi") == 0)
            CHECK(counters.sent_zero_copy == 0, "zero-copy sends: %lu", counters.sent_zero_copy);
    }
    MPI_Comm_free(&comm);
    return mpix_test_finish("zcopy_nonblocking");
}
