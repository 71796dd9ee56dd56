/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program without mpix that moves the face of a 3-D grid whose blocks are single
 * doubles (NAS MG's x-face: one double per row, a vector of 8-byte blocks) between ranks
 * 0 and 1 with blocking MPI_Send/MPI_Recv, as a ping-pong: the type built, used for
 * ROUNDS round trips and freed, again and again; the same at MPI_BOTTOM (a struct of the
 * absolute address); then receives the vector cannot fill (a shorter message, the last
 * element only partly), and one it cannot hold (MPI_ERR_TRUNCATE under
 * MPI_ERRORS_RETURN). Built with PLAIN_EXCHANGE, both ranks send and receive at once, as
 * halo codes do: MPI_Irecv, MPI_Send and MPI_Wait (the type freed before the wait, once
 * a type), MPI_Sendrecv, and MPI_Irecv, MPI_Isend and MPI_Waitall; its shorter and longer
 * messages are received by MPI_Irecv and MPI_Wait. Every received value and every status
 * is checked; exit code 0 only if all were right. Under LD_PRELOAD=libmpix-pmpi.so with
 * MPIX_PMPI=zcopy it must give the same answers (tests/pmpi/preload_zcopy.sh,
 * expectation "unpacked": with MPICH, whose senders pack such layouts, the receivers
 * unpack them). Ranks beyond 1 only take part in MPI_Init and MPI_Finalize.
 * Usage: plain_tiny_blocks (plain_face_exchange, built with PLAIN_EXCHANGE) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/plain_check.h"

#ifdef PLAIN_EXCHANGE
enum { EXCHANGING = 1 };
#define PROGRAM "plain_face_exchange"
#else
enum { EXCHANGING = 0 };
#define PROGRAM "plain_tiny_blocks"
#endif

enum { N = 96, ROUNDS = 60, TYPES = 5 };   /* a face of N*N doubles at stride N: 72 KiB */

static int rank, failures;

/* The value of face element @i that rank @from sends in round @round. */
static double value(int from, int round, int i) { return from * 1e7 + round * 1e4 + i; }

static void fill(double *grid, int round)
{
    for (int i = 0; i < N * N; i++)
        grid[(size_t)i * N] = value(rank, round, i);
}

/* The face's elements received from @peer in @round, and the doubles between them
 * untouched (still @between). */
static void check_face(const double *grid, int peer, int round, double between, const char *what)
{
    for (int i = 0, wrong = 0; i < N * N && !wrong; i++) {
        if (grid[(size_t)i * N] != value(peer, round, i)) {
            CHECK(0, "%s, round %d: element %d is %g", what, round, i, grid[(size_t)i * N]);
            wrong = 1;
        }
        if (i + 1 < N * N && grid[(size_t)i * N + 1] != between) {
            CHECK(0, "%s, round %d: the double after element %d is %g", what, round, i, grid[(size_t)i * N + 1]);
            wrong = 1;
        }
    }
}

/* The count, source and tag of a received face. */
static void check_status(const MPI_Status *status, MPI_Datatype face, int peer, int round)
{
    int count;
    MPI_Get_count(status, face, &count);
    CHECK(count == 1 && status->MPI_SOURCE == peer && status->MPI_TAG == round,
          "round %d: count %d, source %d, tag %d", round, count, status->MPI_SOURCE, status->MPI_TAG);
}

/* ROUNDS round trips per type, TYPES types built and freed in turn; at @bottom, the
 * buffers' absolute addresses in a struct sent at MPI_BOTTOM. */
static void ping_pong(double *out, double *in, int bottom)
{
    int peer = 1 - rank;
    for (int t = 0; t < TYPES; t++) {
        MPI_Datatype face, sent, received;
        MPI_Type_vector(N * N, 1, N, MPI_DOUBLE, &face);
        if (bottom) {
            int one = 1;
            MPI_Aint at;
            MPI_Get_address(out, &at);
            MPI_Type_create_struct(1, &one, &at, &face, &sent);
            MPI_Get_address(in, &at);
            MPI_Type_create_struct(1, &one, &at, &face, &received);
            MPI_Type_commit(&sent);
            MPI_Type_commit(&received);
        } else {
            MPI_Type_commit(&face);
            sent = received = face;
        }
        void *from = bottom ? MPI_BOTTOM : out, *to = bottom ? MPI_BOTTOM : in;
        for (int round = t * ROUNDS; round < (t + 1) * ROUNDS; round++) {
            MPI_Status status;
            fill(out, round);
            if (rank == 0)
                MPI_Send(from, 1, sent, peer, round, MPI_COMM_WORLD);
            MPI_Recv(to, 1, received, peer, round, MPI_COMM_WORLD, &status);
            if (rank == 1)
                MPI_Send(from, 1, sent, peer, round, MPI_COMM_WORLD);
            check_status(&status, received, peer, round);
            check_face(in, peer, round, -1.0, bottom ? "at MPI_BOTTOM" : "vector");
        }
        if (bottom) {
            MPI_Type_free(&sent);
            MPI_Type_free(&received);
        }
        MPI_Type_free(&face);
    }
}

enum exchange_call { IRECV_SEND_WAIT, SENDRECV, IRECV_ISEND_WAITALL };
static const char *const exchange_names[] = { "MPI_Irecv, MPI_Send, MPI_Wait", "MPI_Sendrecv",
                                              "MPI_Irecv, MPI_Isend, MPI_Waitall" };

/* Both ranks send their face and receive the other's at once, ROUNDS times per type,
 * TYPES types built and freed in turn, by the calls @how names. */
static void exchange(double *out, double *in, enum exchange_call how)
{
    int peer = 1 - rank;
    MPI_Datatype counted;   /* a type of the face's signature, for the count: the face may be freed */
    MPI_Type_vector(N * N, 1, N, MPI_DOUBLE, &counted);
    MPI_Type_commit(&counted);
    for (int t = 0; t < TYPES; t++) {
        MPI_Datatype face;
        MPI_Type_vector(N * N, 1, N, MPI_DOUBLE, &face);
        MPI_Type_commit(&face);
        for (int round = t * ROUNDS; round < (t + 1) * ROUNDS; round++) {
            MPI_Request requests[2];
            MPI_Status statuses[2];
            int last = round == (t + 1) * ROUNDS - 1;
            fill(out, round);
            if (how == SENDRECV) {
                MPI_Sendrecv(out, 1, face, peer, round, in, 1, face, peer, round, MPI_COMM_WORLD, &statuses[0]);
            } else {
                MPI_Irecv(in, 1, face, peer, round, MPI_COMM_WORLD, &requests[0]);
                if (how == IRECV_SEND_WAIT) {
                    MPI_Send(out, 1, face, peer, round, MPI_COMM_WORLD);
                    if (last)   /* MPI keeps a type a pending receive uses */
                        MPI_Type_free(&face);
                    MPI_Wait(&requests[0], &statuses[0]);
                } else {
                    MPI_Isend(out, 1, face, peer, round, MPI_COMM_WORLD, &requests[1]);
                    MPI_Waitall(2, requests, statuses);
                }
            }
            check_status(&statuses[0], counted, peer, round);
            check_face(in, peer, round, -1.0, exchange_names[how]);
        }
        if (face != MPI_DATATYPE_NULL)
            MPI_Type_free(&face);
    }
    MPI_Type_free(&counted);
}

/* A receive of the face's shorter and longer messages, as the program's mode makes it. */
static int receive(void *buf, MPI_Datatype face, int source, int tag, MPI_Status *status)
{
    if (!EXCHANGING)
        return MPI_Recv(buf, 1, face, source, tag, MPI_COMM_WORLD, status);
    MPI_Request request;
    int rc = MPI_Irecv(buf, 1, face, source, tag, MPI_COMM_WORLD, &request);
    return rc == MPI_SUCCESS ? MPI_Wait(&request, status) : rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "%s: needs 2 ranks\n", PROGRAM);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t doubles = (size_t)N * N * N;
    double *out = malloc(doubles * sizeof(double)), *in = malloc(doubles * sizeof(double));
    for (size_t i = 0; i < doubles; i++)
        out[i] = in[i] = -1.0;

    if (rank < 2) {
        if (EXCHANGING) {
            exchange(out, in, IRECV_SEND_WAIT);
            exchange(out, in, SENDRECV);
            exchange(out, in, IRECV_ISEND_WAITALL);
        } else {
            ping_pong(out, in, 0);
            ping_pong(out, in, 1);
        }

        /* A shorter message: 1001 doubles, the vector's first 1001 blocks set (a part of
         * its one element), the rest untouched. */
        MPI_Datatype face;
        MPI_Type_vector(N * N, 1, N, MPI_DOUBLE, &face);
        MPI_Type_commit(&face);
        int peer = 1 - rank, count;
        MPI_Status status;
        for (size_t i = 0; i < doubles; i++)
            in[i] = -1.0;
        if (rank == 0) {
            double part[1001];
            for (int i = 0; i < 1001; i++)
                part[i] = value(rank, 9999, i);
            MPI_Send(part, 1001, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
        } else {
            receive(in, face, peer, 1, &status);
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            CHECK(count == 1001, "shorter message: %d doubles", count);
            MPI_Get_count(&status, face, &count);
            CHECK(count == MPI_UNDEFINED, "shorter message: count %d of the vector", count);
            MPI_Get_elements(&status, face, &count);
            CHECK(count == 1001, "shorter message: %d elements", count);
            for (int i = 0; i < 1001; i++)
                CHECK(in[(size_t)i * N] == value(peer, 9999, i), "shorter message: element %d is %g", i,
                      in[(size_t)i * N]);
            for (int i = 1001; i < N * N; i++)
                CHECK(in[(size_t)i * N] == -1.0, "shorter message: element %d is %g", i, in[(size_t)i * N]);
            CHECK(in[1] == -1.0, "shorter message: a double between the elements is %g", in[1]);
        }

        /* A longer message than the receive holds: MPI_ERR_TRUNCATE, through the
         * communicator's handler. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rank == 1) {
            MPI_Send(out, N * N + 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD);
        } else {
            int rc = receive(in, face, peer, 2, &status), error_class = MPI_SUCCESS;
            MPI_Error_class(rc, &error_class);
            CHECK(error_class == MPI_ERR_TRUNCATE, "longer message: error class %d", error_class);
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Type_free(&face);
    }
    free(out);
    free(in);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s\n", PROGRAM, all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
