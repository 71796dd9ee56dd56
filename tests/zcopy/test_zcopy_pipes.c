/* SPDX-License-Identifier: BSD-3-Clause */
/* Zero-copy messages through the sender's pipe (MPIX_ZCOPY_METHOD=piped): messages
 * shorter than a pipe, as long as one and several times longer, so that the sender
 * waits for room; blocks that straddle the pipe's chunks and its end; the receiver's
 * layout other than the sender's; a receive too short for a message that fills the
 * pipe several times (MPI_ERR_TRUNCATE, the sender released mid-way, the next message
 * whole); nonblocking and probed receives; and a halo exchange in which every rank posts
 * its receives, then sends to both neighbours with blocking sends, then waits. Every
 * receiver checks that the messages came through pipes (forced); with the ways learnt
 * and pipes on, the same messages arrive whole whichever way each took. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>

static MPI_Comm comm;

/* A vector of @blocks blocks of @length doubles, @stride apart. */
static MPI_Datatype vector(int blocks, int length, int stride)
{
    MPI_Datatype type;
    MPI_Type_vector(blocks, length, stride, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    return type;
}

static double value(int seed, long i) { return seed * 1e7 + (double)i; }

/* Block b element e of a vector at @base, in type-map order @i = b * length + e. */
static void fill_vector(double *base, int blocks, int length, int stride, int seed)
{
    for (long b = 0; b < blocks; b++)
        for (long e = 0; e < length; e++)
            base[b * stride + e] = value(seed, b * length + e);
}

static long check_vector(const double *base, int blocks, int length, int stride, int seed)
{
    for (long b = 0; b < blocks; b++)
        for (long e = 0; e < length; e++)
            if (base[b * stride + e] != value(seed, b * length + e))
                return b * length + e;
    return -1;
}

/* Rank 1 sends vectors of odd block lengths (1000 doubles: 8000 bytes, so blocks
 * straddle 16 KiB chunks and the 1 MiB pipe's end) to rank 0, which receives them
 * contiguous: 0.5, 1, 1.0001 and 3.5 pipes long. */
static void lengths(int rank)
{
    int blocks[4] = { 66, 131, 132, 459 };
    for (int m = 0; m < 4; m++) {
        int length = 1000, stride = 1500, n = blocks[m] * length;
        if (rank == 1) {
            double *data = malloc((size_t)blocks[m] * stride * sizeof *data);
            fill_vector(data, blocks[m], length, stride, m + 1);
            MPI_Datatype type = vector(blocks[m], length, stride);
            int rc = MPIX_Send_zcopy(data, 1, type, 0, 10 + m, comm);
            CHECK(rc == MPI_SUCCESS, "piped send of %d blocks: %s", blocks[m], mpix_test_error_string(rc));
            MPI_Type_free(&type);
            free(data);
        } else if (rank == 0) {
            double *data = calloc(n, sizeof *data);
            MPI_Status status;
            int count = -1, rc = MPIX_Recv_zcopy(data, n, MPI_DOUBLE, 1, 10 + m, comm, &status);
            CHECK(rc == MPI_SUCCESS, "piped receive of %d doubles: %s", n, mpix_test_error_string(rc));
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            CHECK(count == n, "count %d, expected %d", count, n);
            long bad = check_vector(data, 1, n, n, m + 1);
            CHECK(bad < 0, "%d doubles: element %ld is %g", n, bad, bad < 0 ? 0.0 : data[bad]);
            free(data);
        }
    }
}

/* A message of 3 MiB into a receive of 1 MiB: MPI_ERR_TRUNCATE; the sender, which had
 * filled the pipe and waits for room, returns MPI_SUCCESS; the next message arrives
 * whole. */
static void truncation(int rank)
{
    int n = 3 << 17, short_n = 1 << 17;   /* doubles */
    double *data = calloc(n, sizeof *data);
    for (int m = 0; m < 2; m++) {
        int receive = m == 0 ? short_n : n;
        if (rank == 1) {
            fill_vector(data, 1, n, n, 20 + m);
            int rc = MPIX_Send_zcopy(data, n, MPI_DOUBLE, 0, 20 + m, comm);
            CHECK(rc == MPI_SUCCESS, "sender of message %d: %s", m, mpix_test_error_string(rc));
        } else if (rank == 0) {
            memset(data, 0, (size_t)n * sizeof *data);
            MPI_Status status;
            int error_class = -1, rc = MPIX_Recv_zcopy(data, receive, MPI_DOUBLE, 1, 20 + m, comm, &status);
            MPI_Error_class(rc, &error_class);
            if (m == 0)
                CHECK(error_class == MPI_ERR_TRUNCATE, "%d doubles into %d: class %d (%s)", n, receive, error_class,
                      mpix_test_error_string(rc));
            else {
                CHECK(rc == MPI_SUCCESS, "after the truncation: %s", mpix_test_error_string(rc));
                long bad = check_vector(data, 1, n, n, 20 + m);
                CHECK(bad < 0, "after the truncation: element %ld wrong", bad);
            }
        }
    }
    free(data);
}

/* Rank 1 sends a vector 2.3 pipes long twice; rank 0 takes the first with
 * MPIX_Irecv_zcopy and MPI_Wait into a vector of another stride, the second after
 * MPIX_Probe_zcopy. */
static void nonblocking_and_probed(int rank)
{
    int blocks = 300, length = 1000, send_stride = 1200, receive_stride = 1700;
    if (rank == 1) {
        double *data = malloc((size_t)blocks * send_stride * sizeof *data);
        MPI_Datatype type = vector(blocks, length, send_stride);
        for (int m = 0; m < 2; m++) {
            fill_vector(data, blocks, length, send_stride, 30 + m);
            CHECK(MPIX_Send_zcopy(data, 1, type, 0, 30 + m, comm) == MPI_SUCCESS, "send %d", m);
        }
        MPI_Type_free(&type);
        free(data);
    } else if (rank == 0) {
        double *data = calloc((size_t)blocks * receive_stride, sizeof *data);
        MPI_Datatype type = vector(blocks, length, receive_stride);
        MPI_Request request;
        int rc = MPIX_Irecv_zcopy(data, 1, type, 1, 30, comm, &request);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "nonblocking receive: %s", mpix_test_error_string(rc));
        long bad = check_vector(data, blocks, length, receive_stride, 30);
        CHECK(bad < 0, "nonblocking receive: element %ld wrong", bad);
        MPI_Status status;
        int count = -1;
        rc = MPIX_Probe_zcopy(1, 31, comm, &status);
        MPI_Get_count(&status, type, &count);
        CHECK(rc == MPI_SUCCESS && count == 1, "probe: %s, count %d", mpix_test_error_string(rc), count);
        rc = MPIX_Recv_zcopy(data, 1, type, 1, 31, comm, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "probed receive: %s", mpix_test_error_string(rc));
        bad = check_vector(data, blocks, length, receive_stride, 31);
        CHECK(bad < 0, "probed receive: element %ld wrong", bad);
        MPI_Type_free(&type);
        free(data);
    }
}

/* Each rank posts receives from both ring neighbours, then sends to both with blocking
 * sends (two pipes' worth each), then waits: a sender's blocking send finishes only as
 * its neighbour's receive takes the data out, which that neighbour does while it sends
 * too. */
static void halo(int rank, int size)
{
    int n = 2 << 17, left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int step = 0; step < 3; step++) {
        double *out = malloc(2 * (size_t)n * sizeof *out), *in = calloc(2 * (size_t)n, sizeof *in);
        fill_vector(out, 1, n, n, 100 * rank + 2 * step);
        fill_vector(out + n, 1, n, n, 100 * rank + 2 * step + 1);
        MPI_Request requests[2];
        CHECK(MPIX_Irecv_zcopy(in, n, MPI_DOUBLE, left, 40, comm, &requests[0]) == MPI_SUCCESS, "irecv left");
        CHECK(MPIX_Irecv_zcopy(in + n, n, MPI_DOUBLE, right, 41, comm, &requests[1]) == MPI_SUCCESS, "irecv right");
        CHECK(MPIX_Send_zcopy(out + n, n, MPI_DOUBLE, right, 40, comm) == MPI_SUCCESS, "send right");
        CHECK(MPIX_Send_zcopy(out, n, MPI_DOUBLE, left, 41, comm) == MPI_SUCCESS, "send left");
        MPI_Status statuses[2];
        CHECK(MPI_Waitall(2, requests, statuses) == MPI_SUCCESS, "waitall");
        long bad = check_vector(in, 1, n, n, 100 * left + 2 * step + 1);
        CHECK(bad < 0, "halo step %d from the left (%d): element %ld wrong", step, left, bad);
        bad = check_vector(in + n, 1, n, n, 100 * right + 2 * step);
        CHECK(bad < 0, "halo step %d from the right (%d): element %ld wrong", step, right, bad);
        free(out);
        free(in);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (size > 1) {
        /* The first messages to a peer go through MPI while it learns it can attach. */
        double warm[4096];
        for (int i = 0; i < 4; i++) {
            if (rank == 0)
                MPIX_Recv_zcopy(warm, 4096, MPI_DOUBLE, 1, 1, comm, MPI_STATUS_IGNORE);
            else if (rank == 1)
                MPIX_Send_zcopy(warm, 4096, MPI_DOUBLE, 0, 1, comm);
        }
        lengths(rank);
        truncation(rank);
        nonblocking_and_probed(rank);
        MPI_Barrier(comm);
        /* The ring's pairs learn they can attach, then exchange. */
        for (int i = 0; i < 4; i++)
            halo(rank, size);
        zcopy_counters counters = zcopy_stats_of(comm);
        const char *method = getenv("MPIX_ZCOPY_METHOD");
        if (!method || strcmp(method, "piped"))
            ;   /* learnt ways (MPIX_ZCOPY_PIPES=on): the data checked above is what counts */
        else if (rank == 0)
            CHECK(counters.pulled_piped >= 6 &&
                      counters.pulled_direct + counters.pulled_staged == counters.pipes_taken_over,
                  "piped %lu, direct %lu, staged %lu, taken over %lu", counters.pulled_piped, counters.pulled_direct,
                  counters.pulled_staged, counters.pipes_taken_over);
        else
            CHECK(counters.pulled_piped > 0, "rank %d: no receive came through a pipe", rank);
    }
    MPI_Comm_free(&comm);
    return mpix_test_finish("zcopy pipes");
}
