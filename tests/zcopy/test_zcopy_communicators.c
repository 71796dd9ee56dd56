/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy calls on the communicators halo codes make rather than MPI_COMM_WORLD: a
 * non-periodic Cartesian line (MPI_Cart_create with reordering, MPI_Cart_shift), whose
 * end ranks have MPI_PROC_NULL for a neighbour, exchanging a strided face both ways with
 * the nonblocking calls and then with blocking ones ordered by parity; and an
 * intercommunicator between the even and the odd ranks, where ranks are those of the
 * other group and a receive from MPI_ANY_SOURCE reports the remote rank. A large face
 * (256 KiB, zero-copy or MPI's path) and a small one each time; every element, source,
 * tag and count is checked, and MPI_PROC_NULL's status is MPI_Recv's (source
 * MPI_PROC_NULL, tag MPI_ANY_TAG, count 0). Runs on any number of ranks; the
 * intercommunicator part needs two. With MPIX_TEST_ZCOPY_EXPECT=zero_copy (zero-copy
 * forced) every rank with a peer must have sent and read zero-copy on both. */
#include "mpix_test.h"
#include "zcopy_face.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <string.h>

enum { SMALL = 12, ITERATIONS = 4 };
enum { FACE_TAG = 21, SMALL_TAG = 22 };

static int world_rank;

static void fill(double *face, double *small, int me, int iteration)
{
    zcopy_face_fill(face, me, iteration);
    for (int e = 0; e < SMALL; e++)
        small[e] = zcopy_value(me, iteration, e);
}

static void blank(double *face, double *small)
{
    zcopy_blank(face, ZCOPY_FACE_SPAN);
    zcopy_blank(small, SMALL);
}

/* Checks what arrived from @from (MPI_PROC_NULL: nothing may have) with @status. */
static void check_arrival(const char *where, int from, int iteration, const double *face, const double *small,
                          const MPI_Status *face_status, const MPI_Status *small_status)
{
    int face_count = -1, small_count = -1;
    MPI_Get_count(face_status, MPI_DOUBLE, &face_count);
    MPI_Get_count(small_status, MPI_DOUBLE, &small_count);
    if (from == MPI_PROC_NULL) {
        CHECK(face_status->MPI_SOURCE == MPI_PROC_NULL && face_status->MPI_TAG == MPI_ANY_TAG && face_count == 0 &&
                  small_status->MPI_SOURCE == MPI_PROC_NULL && small_count == 0,
              "%s: MPI_PROC_NULL status %d/%d count %d, small %d/%d", where, face_status->MPI_SOURCE,
              face_status->MPI_TAG, face_count, small_status->MPI_SOURCE, small_count);
        CHECK(face[0] == -1 && face[ZCOPY_FACE_SPAN - 1] == -1 && small[0] == -1, "%s: MPI_PROC_NULL wrote the buffer",
              where);
        return;
    }
    CHECK(face_status->MPI_SOURCE == from && face_status->MPI_TAG == FACE_TAG && face_count == ZCOPY_FACE_ELEMENTS,
          "%s: face status %d/%d count %d, want %d/%d/%d", where, face_status->MPI_SOURCE, face_status->MPI_TAG,
          face_count, from, FACE_TAG, ZCOPY_FACE_ELEMENTS);
    CHECK(small_status->MPI_SOURCE == from && small_status->MPI_TAG == SMALL_TAG && small_count == SMALL,
          "%s: small status %d/%d count %d", where, small_status->MPI_SOURCE, small_status->MPI_TAG, small_count);
    int wrong = zcopy_face_wrong(face, from, iteration);
    CHECK(wrong < 0, "%s: iteration %d: face from %d wrong at element %d", where, iteration, from, wrong);
    CHECK(small[0] == zcopy_value(from, iteration, 0) && small[SMALL - 1] == zcopy_value(from, iteration, SMALL - 1),
          "%s: iteration %d: small from %d wrong", where, iteration, from);
}

/* Where zero-copy is forced, a rank that exchanged with a peer on @comm sent and read
 * zero-copy there. */
static void expect_zero_copy(MPI_Comm comm, const char *where, int had_peer)
{
    const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
    if (!had_peer || !expect || strcmp(expect, "zero_copy") != 0)
        return;
    zcopy_counters c = zcopy_stats_of(comm);
    CHECK(c.sent_zero_copy > 0 && c.pulled_direct + c.pulled_staged > 0,
          "%s: rank %d sent %lu zero-copy and read %lu", where, world_rank, c.sent_zero_copy,
          c.pulled_direct + c.pulled_staged);
}

/* A line of ranks, not periodic: each exchanges with both neighbours, MPI_PROC_NULL at
 * the ends; the values name the sender by its rank in the Cartesian communicator. */
static void cartesian_line(void)
{
    int size, dims[1] = { 0 }, periods[1] = { 0 }, me, left, right;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 1, dims);
    MPI_Comm line;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &line);
    MPI_Comm_set_errhandler(line, MPI_ERRORS_RETURN);
    MPI_Comm_rank(line, &me);
    MPI_Cart_shift(line, 0, 1, &left, &right);
    int neighbours[2] = { left, right };
    double *out = malloc(ZCOPY_FACE_SPAN * sizeof *out), *in[2], small_out[SMALL], small_in[2][SMALL];
    in[0] = malloc(ZCOPY_FACE_SPAN * sizeof *in[0]);
    in[1] = malloc(ZCOPY_FACE_SPAN * sizeof *in[1]);
    for (int iteration = 0; iteration < 2 * ITERATIONS; iteration++) {
        MPI_Datatype face = zcopy_face_type();
        fill(out, small_out, me, iteration);
        MPI_Status statuses[8];
        for (int side = 0; side < 2; side++)
            blank(in[side], small_in[side]);
        if (iteration % 2 == 0) { /* nonblocking: post all, wait all */
            MPI_Request requests[8];
            for (int side = 0; side < 2; side++) {
                MPIX_Irecv_zcopy(in[side], 1, face, neighbours[side], FACE_TAG, line, &requests[side]);
                MPIX_Irecv_zcopy(small_in[side], SMALL, MPI_DOUBLE, neighbours[side], SMALL_TAG, line,
                                 &requests[2 + side]);
            }
            for (int side = 0; side < 2; side++) {
                MPIX_Isend_zcopy(out, 1, face, neighbours[side], FACE_TAG, line, &requests[4 + side]);
                MPIX_Isend_zcopy(small_out, SMALL, MPI_DOUBLE, neighbours[side], SMALL_TAG, line, &requests[6 + side]);
            }
            MPI_Type_free(&face);
            int rc = MPI_Waitall(8, requests, statuses);
            CHECK(rc == MPI_SUCCESS, "cartesian waitall: %s", mpix_test_error_string(rc));
        } else { /* blocking, even ranks send first */
            for (int phase = 0; phase < 2; phase++) {
                int sending = (me % 2 == 0) == (phase == 0);
                for (int side = 0; side < 2; side++) {
                    int rc;
                    if (sending) {
                        rc = MPIX_Send_zcopy(out, 1, face, neighbours[side], FACE_TAG, line);
                        if (rc == MPI_SUCCESS)
                            rc = MPIX_Send_zcopy(small_out, SMALL, MPI_DOUBLE, neighbours[side], SMALL_TAG, line);
                    } else {
                        rc = MPIX_Recv_zcopy(in[side], 1, face, neighbours[side], FACE_TAG, line, &statuses[side]);
                        if (rc == MPI_SUCCESS)
                            rc = MPIX_Recv_zcopy(small_in[side], SMALL, MPI_DOUBLE, neighbours[side], SMALL_TAG, line,
                                                 &statuses[2 + side]);
                    }
                    CHECK(rc == MPI_SUCCESS, "cartesian %s: %s", sending ? "send" : "receive",
                          mpix_test_error_string(rc));
                }
            }
            MPI_Type_free(&face);
        }
        for (int side = 0; side < 2; side++)
            check_arrival(iteration % 2 == 0 ? "cartesian, nonblocking" : "cartesian, blocking", neighbours[side],
                          iteration, in[side], small_in[side], &statuses[side], &statuses[2 + side]);
    }
    expect_zero_copy(line, "cartesian", left != MPI_PROC_NULL || right != MPI_PROC_NULL);
    MPI_Comm_free(&line);
    free(out);
    free(in[0]);
    free(in[1]);
}

/* Even against odd world ranks: the k-th of each group exchanges with the k-th of the
 * other (a rank left without one sits out); the first exchange of each pair receives from
 * MPI_ANY_SOURCE, which must report the partner's rank in the remote group. */
static void intercommunicator(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return;
    MPI_Comm half, across;
    int even = world_rank % 2 == 0;
    MPI_Comm_split(MPI_COMM_WORLD, !even, world_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, even ? 1 : 0, 99, &across);
    MPI_Comm_set_errhandler(across, MPI_ERRORS_RETURN);
    int me, remote_size, inter = 0;
    MPI_Comm_rank(across, &me);
    MPI_Comm_remote_size(across, &remote_size);
    MPI_Comm_test_inter(across, &inter);
    CHECK(inter, "not an intercommunicator");
    if (me < remote_size) {
        int partner = me;
        double *out = malloc(ZCOPY_FACE_SPAN * sizeof *out), *in = malloc(ZCOPY_FACE_SPAN * sizeof *in);
        double small_out[SMALL], small_in[SMALL];
        for (int iteration = 0; iteration < ITERATIONS; iteration++) {
            MPI_Datatype face = zcopy_face_type();
            /* values name the sender by its rank in its own group, which the receiver knows
             * as the remote rank */
            fill(out, small_out, me, iteration);
            blank(in, small_in);
            MPI_Status statuses[4];
            int from = iteration == 0 ? MPI_ANY_SOURCE : partner;
            if (iteration % 2 == 0) {
                MPI_Request requests[4];
                MPIX_Irecv_zcopy(in, 1, face, from, FACE_TAG, across, &requests[0]);
                MPIX_Irecv_zcopy(small_in, SMALL, MPI_DOUBLE, from, SMALL_TAG, across, &requests[1]);
                MPIX_Isend_zcopy(out, 1, face, partner, FACE_TAG, across, &requests[2]);
                MPIX_Isend_zcopy(small_out, SMALL, MPI_DOUBLE, partner, SMALL_TAG, across, &requests[3]);
                MPI_Type_free(&face);
                int rc = MPI_Waitall(4, requests, statuses);
                CHECK(rc == MPI_SUCCESS, "intercommunicator waitall: %s", mpix_test_error_string(rc));
            } else {
                for (int phase = 0; phase < 2; phase++) {
                    int rc;
                    if (even == (phase == 0)) {
                        rc = MPIX_Send_zcopy(out, 1, face, partner, FACE_TAG, across);
                        if (rc == MPI_SUCCESS)
                            rc = MPIX_Send_zcopy(small_out, SMALL, MPI_DOUBLE, partner, SMALL_TAG, across);
                    } else {
                        rc = MPIX_Recv_zcopy(in, 1, face, from, FACE_TAG, across, &statuses[0]);
                        if (rc == MPI_SUCCESS)
                            rc = MPIX_Recv_zcopy(small_in, SMALL, MPI_DOUBLE, from, SMALL_TAG, across, &statuses[1]);
                    }
                    CHECK(rc == MPI_SUCCESS, "intercommunicator phase %d: %s", phase, mpix_test_error_string(rc));
                }
                MPI_Type_free(&face);
            }
            check_arrival(iteration % 2 == 0 ? "intercommunicator, nonblocking" : "intercommunicator, blocking",
                          partner, iteration, in, small_in, &statuses[0], &statuses[1]);
        }
        free(out);
        free(in);
    }
    expect_zero_copy(across, "intercommunicator", me < remote_size);
    MPI_Comm_free(&across);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    int size;
    mpix_test_start(&argc, &argv, &world_rank, &size);
    cartesian_line();
    intercommunicator();
    return mpix_test_finish("zcopy_communicators");
}
