/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program without mpix, written as applications write halo exchanges: a 2-D
 * block of doubles per process in a periodic ring, whose column halos travel as a vector
 * type built and freed every iteration, with MPI_Irecv/MPI_Isend and MPI_Waitall; then
 * the other ways programs move the same columns: blocking MPI_Send/MPI_Recv into a
 * contiguous buffer, MPI_Sendrecv, MPI_Probe + MPI_Get_count sizing the receive,
 * MPI_Mprobe/MPI_Mrecv, MPI_Waitany/MPI_Testsome, a receive posted before a barrier
 * that the sender's blocking send must not wait for, MPI_Sendrecv_replace, persistent
 * receives, a blocking send whose receiver first waits for the sender's large send of
 * fragmented data while a message not yet received waits in the sender's queue, and
 * small plain messages (one exactly as long as a zero-copy header, with bytes that look
 * like one), and the ring cut open (MPI_PROC_NULL at both ends, as a non-periodic grid
 * has), and calls with wrong arguments, which must give MPI's own error classes and move
 * nothing. Every received value is checked; exit code 0 only if all were right. Run
 * under LD_PRELOAD=libmpix-pmpi.so with MPIX_PMPI=zcopy it must give the same answers
 * (tests/pmpi/preload_zcopy.sh checks that, and that zero-copy happened), and under
 * libmpix-guard.so too (tests/guard/preload_check.sh).
 * The halo is DEPTH columns deep: one column is too fragmented for zero-copy (MPI's
 * datatype engine wins), 512 columns are 4 KiB blocks.
 * It is C and C++ alike (plain_halo_cxx.cpp builds it as C++).
 * Usage: plain_halo ROWS ITERATIONS DEPTH */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/plain_check.h"

static int rank, size, failures;

/* The value every process puts at (row, column) of its block in iteration @step. */
static double value(int owner, int step, int row, int column)
{
    return owner * 1e7 + step * 1e5 + row * 2000 + column;
}

static int rows, depth, width, step;

/* Ghost columns [@at, @at + depth) of @grid hold @owner's columns from @first. */
static void check_ghost(const double *grid, int at, int owner, int first, const char *what)
{
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < depth; k++)
            CHECK(grid[r * width + at + k] == value(owner, step, r, first + k), "%s: step %d row %d column %d: %.0f",
                  what, step, r, k, grid[r * width + at + k]);
}

/* A contiguous buffer holds @owner's columns from @first, row by row. */
static void check_packed(const double *buffer, int owner, int first, const char *what)
{
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < depth; k++)
            CHECK(buffer[r * depth + k] == value(owner, step, r, first + k), "%s: row %d column %d: %.0f", what, r, k,
                  buffer[r * depth + k]);
}

static void clear_ghosts(double *grid, int columns)
{
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < depth; k++)
            grid[r * width + k] = grid[r * width + depth + columns + k] = -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rows = argc > 1 ? atoi(argv[1]) : 64;
    int iterations = argc > 2 ? atoi(argv[2]) : 20;
    depth = argc > 3 ? atoi(argv[3]) : 512;
    int columns = 2 * depth; /* interior columns [depth, depth + columns) */
    width = columns + 2 * depth;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int to_right = columns, to_left = depth, from_left = 0, from_right = depth + columns; /* first columns */
    double *grid = (double *)malloc(sizeof(double) * rows * width);
    double *packed = (double *)malloc(sizeof(double) * rows * depth);
    MPI_Status status;
    MPI_Request request;
    int count, halo_doubles = rows * depth;

    for (step = 0; step <= iterations; step++) {
        for (int r = 0; r < rows; r++)
            for (int c = depth; c < depth + columns; c++)
                grid[r * width + c] = value(rank, step, r, c);
        clear_ghosts(grid, columns);
        MPI_Datatype halo;
        MPI_Type_vector(rows, depth, width, MPI_DOUBLE, &halo);
        MPI_Type_commit(&halo);
        MPI_Request requests[4];
        MPI_Irecv(&grid[from_left], 1, halo, left, 0, MPI_COMM_WORLD, &requests[0]);
        MPI_Irecv(&grid[from_right], 1, halo, right, 1, MPI_COMM_WORLD, &requests[1]);
        MPI_Isend(&grid[to_right], 1, halo, right, 0, MPI_COMM_WORLD, &requests[2]);
        MPI_Isend(&grid[to_left], 1, halo, left, 1, MPI_COMM_WORLD, &requests[3]);
        MPI_Type_free(&halo); /* freed before the transfers complete, as MPI allows */
        MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
        check_ghost(grid, from_left, left, to_right, "isend/irecv halo from the left");
        check_ghost(grid, from_right, right, to_left, "isend/irecv halo from the right");
    }
    step = iterations;
    MPI_Datatype halo;
    MPI_Type_vector(rows, depth, width, MPI_DOUBLE, &halo);
    MPI_Type_commit(&halo);

    /* Blocking, into a contiguous buffer; even ranks send first. */
    memset(packed, 0, sizeof(double) * halo_doubles);
    if (rank % 2 == 0) {
        MPI_Send(&grid[to_right], 1, halo, right, 2, MPI_COMM_WORLD);
        MPI_Recv(packed, halo_doubles, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &status);
    } else {
        MPI_Recv(packed, halo_doubles, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &status);
        MPI_Send(&grid[to_right], 1, halo, right, 2, MPI_COMM_WORLD);
    }
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(count == halo_doubles && status.MPI_SOURCE == left && status.MPI_TAG == 2,
          "send/recv status: %d from %d tag %d", count, status.MPI_SOURCE, status.MPI_TAG);
    check_packed(packed, left, to_right, "send/recv");

    /* Sendrecv, vector to vector. */
    clear_ghosts(grid, columns);
    MPI_Sendrecv(&grid[to_right], 1, halo, right, 3, &grid[from_left], 1, halo, left, 3, MPI_COMM_WORLD, &status);
    check_ghost(grid, from_left, left, to_right, "sendrecv");

    /* Probe, size the buffer from the status, receive. */
    MPI_Isend(&grid[to_right], 1, halo, right, 4, MPI_COMM_WORLD, &request);
    MPI_Probe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(count == halo_doubles && status.MPI_SOURCE == left, "probe: %d doubles from %d", count, status.MPI_SOURCE);
    double *probed = (double *)calloc(count > halo_doubles ? count : halo_doubles, sizeof(double));
    MPI_Recv(probed, count, MPI_DOUBLE, status.MPI_SOURCE, 4, MPI_COMM_WORLD, &status);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check_packed(probed, left, to_right, "probe");
    free(probed);

    /* Matched probe. */
    MPI_Message message;
    MPI_Isend(&grid[to_left], 1, halo, left, 5, MPI_COMM_WORLD, &request);
    MPI_Mprobe(right, 5, MPI_COMM_WORLD, &message, &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(count == halo_doubles, "mprobe: %d doubles", count);
    memset(packed, 0, sizeof(double) * halo_doubles);
    MPI_Mrecv(packed, halo_doubles, MPI_DOUBLE, &message, &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(count == halo_doubles && status.MPI_SOURCE == right && status.MPI_TAG == 5,
          "mrecv status: %d from %d tag %d", count, status.MPI_SOURCE, status.MPI_TAG);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check_packed(packed, right, to_left, "mrecv");

    /* Waitany and Testsome over a halo exchange. */
    MPI_Request pair[2], sends[2];
    clear_ghosts(grid, columns);
    MPI_Irecv(&grid[from_left], 1, halo, left, 6, MPI_COMM_WORLD, &pair[0]);
    MPI_Irecv(&grid[from_right], 1, halo, right, 7, MPI_COMM_WORLD, &pair[1]);
    MPI_Isend(&grid[to_right], 1, halo, right, 6, MPI_COMM_WORLD, &sends[0]);
    MPI_Isend(&grid[to_left], 1, halo, left, 7, MPI_COMM_WORLD, &sends[1]);
    int index, done = 0, outcount, indices[2];
    MPI_Waitany(2, pair, &index, &status);
    CHECK(index == 0 || index == 1, "waitany index %d", index);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(count == halo_doubles, "waitany count %d", count);
    while (!done) {
        MPI_Testsome(2, pair, &outcount, indices, MPI_STATUSES_IGNORE);
        done = outcount == MPI_UNDEFINED || outcount > 0;
    }
    MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
    check_ghost(grid, from_left, left, to_right, "waitany from the left");
    check_ghost(grid, from_right, right, to_left, "waitany from the right");

    /* A receive posted before a barrier: odd ranks send before it, to a rank that waits
     * in the barrier (MPI completes the send there), even ranks after it. */
    memset(packed, 0, sizeof(double) * halo_doubles);
    MPI_Irecv(packed, halo_doubles, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &request);
    if (rank % 2)
        MPI_Send(&grid[to_right], 1, halo, right, 8, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 0)
        MPI_Send(&grid[to_right], 1, halo, right, 8, MPI_COMM_WORLD);
    MPI_Wait(&request, &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(count == halo_doubles, "barrier receive count %d", count);
    check_packed(packed, left, to_right, "receive across a barrier");

    /* Sendrecv_replace on the interior's first columns. */
    MPI_Sendrecv_replace(&grid[to_left], 1, halo, right, 9, left, 9, MPI_COMM_WORLD, &status);
    check_ghost(grid, to_left, left, to_left, "sendrecv_replace");
    for (int r = 0; r < rows; r++)
        for (int c = depth; c < 2 * depth; c++)
            grid[r * width + c] = value(rank, step, r, c);

    /* Persistent receive, started twice. Before it starts, with a persistent send not
     * started either and a null handle, nothing is active: MPI_Waitany, MPI_Testany and
     * MPI_Waitsome return at once with MPI_UNDEFINED (and an empty status). */
    MPI_Request persistent;
    MPI_Recv_init(packed, halo_doubles, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, &persistent);
    MPI_Request idle[3] = { persistent, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    MPI_Send_init(&grid[to_right], 1, halo, right, 10, MPI_COMM_WORLD, &idle[2]);
    int idle_index = 0, idle_flag = 0, idle_count = 0, idle_indices[3];
    status.MPI_SOURCE = status.MPI_TAG = 12345;
    MPI_Waitany(3, idle, &idle_index, &status);
    CHECK(idle_index == MPI_UNDEFINED && status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG,
          "waitany over inactive requests: index %d, source %d, tag %d", idle_index, status.MPI_SOURCE,
          status.MPI_TAG);
    MPI_Testany(3, idle, &idle_index, &idle_flag, MPI_STATUS_IGNORE);
    CHECK(idle_index == MPI_UNDEFINED && idle_flag, "testany over inactive requests: index %d, flag %d", idle_index,
          idle_flag);
    MPI_Waitsome(3, idle, &idle_count, idle_indices, MPI_STATUSES_IGNORE);
    CHECK(idle_count == MPI_UNDEFINED, "waitsome over inactive requests: %d", idle_count);
    MPI_Request_free(&idle[2]);
    for (int round = 0; round < 2; round++) {
        memset(packed, 0, sizeof(double) * halo_doubles);
        MPI_Start(&persistent);
        MPI_Send(&grid[to_right], 1, halo, right, 10, MPI_COMM_WORLD);
        MPI_Wait(&persistent, &status);
        check_packed(packed, left, to_right, "persistent receive");
    }
    MPI_Request_free(&persistent);

    /* A blocking send of the halo whose receiver first waits for the sender's large
     * send of every other double (MPI's way, moved only while the sender makes MPI
     * progress), while the right neighbour's small message waits in the sender's queue,
     * received last. Even ranks send first, odd ranks receive first. */
    enum { SPREAD_DOUBLES = 1 << 19 };
    double *spread_out = (double *)malloc(sizeof(double) * SPREAD_DOUBLES);
    double *spread_in = (double *)calloc(SPREAD_DOUBLES, sizeof(double));
    for (int i = 0; i < SPREAD_DOUBLES; i++)
        spread_out[i] = rank * 1e7 + i;
    MPI_Datatype every_other;
    MPI_Type_vector(SPREAD_DOUBLES / 2, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    int queued = rank, queued_in = -1;
    MPI_Isend(spread_out, 1, every_other, right, 13, MPI_COMM_WORLD, &request);
    MPI_Send(&queued, 1, MPI_INT, left, 14, MPI_COMM_WORLD);
    MPI_Probe(right, 14, MPI_COMM_WORLD, &status); /* in the queue, not received */
    memset(packed, 0, sizeof(double) * halo_doubles);
    if (rank % 2 == 0)
        MPI_Send(&grid[to_right], 1, halo, right, 15, MPI_COMM_WORLD);
    MPI_Recv(spread_in, 1, every_other, left, 13, MPI_COMM_WORLD, &status);
    MPI_Recv(packed, halo_doubles, MPI_DOUBLE, left, 15, MPI_COMM_WORLD, &status);
    if (rank % 2)
        MPI_Send(&grid[to_right], 1, halo, right, 15, MPI_COMM_WORLD);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Recv(&queued_in, 1, MPI_INT, right, 14, MPI_COMM_WORLD, &status);
    check_packed(packed, left, to_right, "send behind a send that needs the sender's progress");
    for (int i = 0, wrong = 0; i < SPREAD_DOUBLES && !wrong; i++)
        if (spread_in[i] != (i % 2 ? 0 : left * 1e7 + i)) {
            CHECK(0, "every other double: element %d is %g", i, spread_in[i]);
            wrong = 1;
        }
    CHECK(queued_in == right, "queued message %d", queued_in);
    MPI_Type_free(&every_other);
    free(spread_out);
    free(spread_in);

    /* Small plain messages: one as long as a zero-copy header, full of bytes that look
     * like one, and a short one. */
    unsigned char lookalike[176], got[176];
    for (int i = 0; i < 176; i++)
        lookalike[i] = (unsigned char)(i * 7 + rank);
    memcpy(lookalike, "ypcz", 4);
    MPI_Sendrecv(lookalike, 176, MPI_BYTE, right, 11, got, 176, MPI_BYTE, left, 11, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(count == 176, "lookalike count %d", count);
    for (int i = 4; i < 176; i++)
        CHECK(got[i] == (unsigned char)(i * 7 + left), "lookalike byte %d: %d", i, got[i]);
    int small = rank, small_in = -1;
    MPI_Sendrecv(&small, 1, MPI_INT, right, 12, &small_in, 1, MPI_INT, left, 12, MPI_COMM_WORLD, &status);
    CHECK(small_in == left, "small %d", small_in);

    /* The ring cut open, as a non-periodic MPI_Cart_shift gives it: the first process
     * receives from MPI_PROC_NULL (an empty status, the buffer untouched), the last
     * sends to it. */
    int open_left = rank == 0 ? MPI_PROC_NULL : left, open_right = rank == size - 1 ? MPI_PROC_NULL : right;
    clear_ghosts(grid, columns);
    status.MPI_SOURCE = status.MPI_TAG = 12345;
    MPI_Sendrecv(&grid[to_right], 1, halo, open_right, 13, &grid[from_left], 1, halo, open_left, 13, MPI_COMM_WORLD,
                 &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    if (open_left == MPI_PROC_NULL) {
        CHECK(status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG && count == 0,
              "sendrecv from MPI_PROC_NULL: source %d, tag %d, count %d", status.MPI_SOURCE, status.MPI_TAG, count);
        CHECK(grid[from_left] == -1.0, "sendrecv from MPI_PROC_NULL wrote %g", grid[from_left]);
    } else {
        check_ghost(grid, from_left, left, to_right, "open sendrecv");
    }
    status.MPI_SOURCE = status.MPI_TAG = 12345;
    MPI_Sendrecv_replace(&small, 1, MPI_INT, open_right, 14, open_left, 14, MPI_COMM_WORLD, &status);
    CHECK(open_left == MPI_PROC_NULL ? small == rank && status.MPI_SOURCE == MPI_PROC_NULL : small == left,
          "sendrecv_replace on the open ring: %d, source %d", small, status.MPI_SOURCE);

    /* Wrong arguments give MPI's own error classes, and the program goes on: an
     * uncommitted vector, a rank out of range, a negative tag (errors returned). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype uncommitted;
    MPI_Type_vector(rows, depth, width, MPI_DOUBLE, &uncommitted);
    int error_class = MPI_SUCCESS, code;
    MPI_Request unused;
    code = MPI_Send(&grid[to_right], 1, uncommitted, right, 15, MPI_COMM_WORLD);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_TYPE, "send of an uncommitted type: class %d", error_class);
    code = MPI_Isend(&grid[to_right], 1, uncommitted, right, 15, MPI_COMM_WORLD, &unused);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_TYPE, "isend of an uncommitted type: class %d", error_class);
    code = MPI_Send(&grid[to_right], 1, halo, size + 7, 15, MPI_COMM_WORLD);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_RANK, "send to rank %d: class %d", size + 7, error_class);
    code = MPI_Send(&grid[to_right], 1, halo, right, -3, MPI_COMM_WORLD);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_TAG, "send with tag -3: class %d", error_class);
    code = MPI_Send(&grid[to_right], -2, halo, right, 15, MPI_COMM_WORLD);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_COUNT, "send of count -2: class %d", error_class);
    code = MPI_Recv(&grid[from_left], 1, halo, -5, 15, MPI_COMM_WORLD, &status);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_RANK, "receive from rank -5: class %d", error_class);
    code = MPI_Recv(&grid[from_left], -1, halo, left, 15, MPI_COMM_WORLD, &status);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_COUNT, "receive of count -1: class %d", error_class);
    code = MPI_Send(&grid[to_right], 1, halo, right, 15, MPI_COMM_NULL);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_COMM, "send on MPI_COMM_NULL: class %d", error_class);
    /* MPI_Sendrecv with one half wrong does nothing at all: no receive is left posted
     * to wait for a message the other half never sent, none is sent (every rank makes
     * the same mistake, so a message sent would be received by the next exchange). */
    code = MPI_Sendrecv(&grid[to_right], 1, halo, size + 2, 16, &grid[from_left], 1, halo, left, 16,
                        MPI_COMM_WORLD, &status);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_RANK, "sendrecv to rank %d: class %d", size + 2, error_class);
    code = MPI_Sendrecv(&grid[to_right], 1, halo, right, 16, &grid[from_left], 1, halo, size + 2, 16,
                        MPI_COMM_WORLD, &status);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_RANK, "sendrecv from rank %d: class %d", size + 2, error_class);
    code = MPI_Sendrecv(&grid[to_right], 1, halo, right, -4, &grid[from_left], 1, halo, left, 16, MPI_COMM_WORLD,
                        &status);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_TAG, "sendrecv with send tag -4: class %d", error_class);
    code = MPI_Sendrecv_replace(&grid[to_right], 1, halo, right, 16, size + 2, 16, MPI_COMM_WORLD, &status);
    MPI_Error_class(code, &error_class);
    CHECK(error_class == MPI_ERR_RANK, "sendrecv_replace from rank %d: class %d", size + 2, error_class);
    /* Tag 16 then carries new values: had a wrong call above sent anything, this
     * receives its old ones instead. */
    step = iterations + 1;
    for (int r = 0; r < rows; r++)
        for (int c = depth; c < depth + columns; c++)
            grid[r * width + c] = value(rank, step, r, c);
    clear_ghosts(grid, columns);
    MPI_Sendrecv(&grid[to_right], 1, halo, right, 16, &grid[from_left], 1, halo, left, 16, MPI_COMM_WORLD, &status);
    check_ghost(grid, from_left, left, to_right, "sendrecv after the wrong ones");
    MPI_Type_free(&uncommitted);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Type_free(&halo);
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_halo: %d processes, %d rows, halo %d columns deep, %d iterations: %s\n", size, rows, depth,
               iterations, all_failures ? "WRONG DATA" : "all values right");
    free(grid);
    free(packed);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
