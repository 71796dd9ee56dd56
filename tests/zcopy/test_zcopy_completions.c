/* SPDX-License-Identifier: BSD-3-Clause */
/* Nonblocking zcopy requests completed the other ways MPI programs complete requests:
 * MPI_Waitsome, MPI_Testany and MPI_Testall loops over arrays that mix them with plain
 * MPI requests and MPI_REQUEST_NULL, MPI_Request_get_status polled before MPI_Wait (which
 * must then give the same status), and sends freed at once with MPI_Request_free (fire
 * and forget) whose buffer is reused only after the receiver's answer. A ring of 2-4
 * ranks; each exchange holds a large strided face (zero-copy or MPI's path), a small one
 * (inline) and a plain MPI message; the face type is built, committed and freed every
 * iteration, freed right after posting. Every element, source, tag and count is checked,
 * and the gaps between a face's blocks stay untouched. The communicator is freed at the
 * end with nothing pending, the freed sends' included. */
#include "mpix_test.h"
#include "zcopy_face.h"

#include <mpix/mpix.h>
#include <string.h>

#ifdef MPIX_TEST_PLAIN_MPI
/* Built as a plain MPI program too, run under libmpix-pmpi.so (tests/pmpi): MPI's calls. */
#define MPIX_Isend_zcopy MPI_Isend
#define MPIX_Irecv_zcopy MPI_Irecv
#define MPIX_Recv_zcopy MPI_Recv
#endif

/* How long MPI_Request_get_status is polled: where it cannot complete a pending zcopy
 * request (MPICH, the zcopy calls themselves) briefly, else long enough for a loaded
 * machine. */
#if defined(MPICH_NUMVERSION) && !defined(MPIX_TEST_PLAIN_MPI)
#define GET_STATUS_LIMITED 1
static const double get_status_seconds = 0.02;
#else
#define GET_STATUS_LIMITED 0
static const double get_status_seconds = 2.0;
#endif

enum { SMALL = 16, ITERATIONS = 5 };
enum { FACE_TAG = 11, SMALL_TAG = 12, PLAIN_TAG = 13, ANSWER_TAG = 14 };
/* The requests of one exchange: 0-1 face receives, 2-3 small receives, 4-5 plain
 * receives, 6-7 face sends, 8-9 small sends, 10-11 plain sends, 12 MPI_REQUEST_NULL. */
enum { REQUESTS = 13, SENDS_FROM = 6, NULL_AT = 12 };

static MPI_Comm comm;
static int rank, size, peers[2];

typedef struct exchange {
    double *face_out, *face_in[2], small_out[SMALL], small_in[2][SMALL];
    int plain_out, plain_in[2];
    MPI_Request requests[REQUESTS];
} exchange;

/* Posts one exchange with both ring neighbours (the same rank twice with 2 ranks: its
 * two messages of a tag arrive in order, so receive 0, posted first, takes the one sent
 * to the left). */
static void post(exchange *x, int iteration)
{
    zcopy_face_fill(x->face_out, rank, iteration);
    for (int e = 0; e < SMALL; e++)
        x->small_out[e] = zcopy_value(rank, iteration, e);
    x->plain_out = (int)zcopy_value(rank, iteration, 0) / 1000;
    MPI_Datatype face = zcopy_face_type();
    for (int side = 0; side < 2; side++) {
        zcopy_blank(x->face_in[side], ZCOPY_FACE_SPAN);
        zcopy_blank(x->small_in[side], SMALL);
        x->plain_in[side] = -1;
        int rc = MPIX_Irecv_zcopy(x->face_in[side], 1, face, peers[side], FACE_TAG, comm, &x->requests[side]);
        CHECK(rc == MPI_SUCCESS, "irecv face: %s", mpix_test_error_string(rc));
        rc = MPIX_Irecv_zcopy(x->small_in[side], SMALL, MPI_DOUBLE, peers[side], SMALL_TAG, comm, &x->requests[2 + side]);
        CHECK(rc == MPI_SUCCESS, "irecv small: %s", mpix_test_error_string(rc));
        MPI_Irecv(&x->plain_in[side], 1, MPI_INT, peers[side], PLAIN_TAG, comm, &x->requests[4 + side]);
    }
    for (int side = 0; side < 2; side++) {
        int rc = MPIX_Isend_zcopy(x->face_out, 1, face, peers[side], FACE_TAG, comm, &x->requests[SENDS_FROM + side]);
        CHECK(rc == MPI_SUCCESS, "isend face: %s", mpix_test_error_string(rc));
        rc = MPIX_Isend_zcopy(x->small_out, SMALL, MPI_DOUBLE, peers[side], SMALL_TAG, comm,
                              &x->requests[SENDS_FROM + 2 + side]);
        CHECK(rc == MPI_SUCCESS, "isend small: %s", mpix_test_error_string(rc));
        MPI_Isend(&x->plain_out, 1, MPI_INT, peers[side], PLAIN_TAG, comm, &x->requests[SENDS_FROM + 4 + side]);
    }
    x->requests[NULL_AT] = MPI_REQUEST_NULL;
    MPI_Type_free(&face);
}

/* Checks receive @index of @x completed with @status. */
static void check_received(const exchange *x, int iteration, int index, const MPI_Status *status, const char *how)
{
    int side = index % 2, from = peers[side], count = -1;
    static const int tags[3] = { FACE_TAG, SMALL_TAG, PLAIN_TAG };
    int tag = tags[index / 2];
    CHECK(status->MPI_SOURCE == from && status->MPI_TAG == tag, "%s: request %d's status says %d/%d, want %d/%d", how,
          index, status->MPI_SOURCE, status->MPI_TAG, from, tag);
    MPI_Get_count(status, index / 2 == 2 ? MPI_INT : MPI_DOUBLE, &count);
    int want = index / 2 == 0 ? ZCOPY_FACE_ELEMENTS : index / 2 == 1 ? SMALL : 1;
    CHECK(count == want, "%s: request %d counted %d, want %d", how, index, count, want);
    if (index / 2 == 0) {
        int wrong = zcopy_face_wrong(x->face_in[side], from, iteration);
        CHECK(wrong < 0, "%s: iteration %d: face from %d wrong at element %d", how, iteration, from, wrong);
    } else if (index / 2 == 1)
        CHECK(x->small_in[side][SMALL - 1] == zcopy_value(from, iteration, SMALL - 1) && x->small_in[side][0] ==
                  zcopy_value(from, iteration, 0), "%s: iteration %d: small from %d wrong", how, iteration, from);
    else
        CHECK(x->plain_in[side] == (int)zcopy_value(from, iteration, 0) / 1000, "%s: plain from %d: %d", how, from,
              x->plain_in[side]);
}

/* MPI_Waitsome until the array is done, the null entry never reported. */
static void complete_by_waitsome(exchange *x, int iteration)
{
    int done = 0, indices[REQUESTS], outcount, calls = 0;
    MPI_Status statuses[REQUESTS];
    while (done < REQUESTS - 1 && calls++ < 1000000) {
        int rc = MPI_Waitsome(REQUESTS, x->requests, &outcount, indices, statuses);
        CHECK(rc == MPI_SUCCESS && outcount != MPI_UNDEFINED && outcount >= 1, "waitsome: %s, outcount %d",
              mpix_test_error_string(rc), outcount);
        if (rc != MPI_SUCCESS || outcount == MPI_UNDEFINED)
            break;
        for (int i = 0; i < outcount; i++) {
            CHECK(indices[i] != NULL_AT && x->requests[indices[i]] == MPI_REQUEST_NULL,
                  "waitsome reported request %d", indices[i]);
            if (indices[i] < SENDS_FROM)
                check_received(x, iteration, indices[i], &statuses[i], "waitsome");
        }
        done += outcount;
    }
    int rc = MPI_Waitsome(REQUESTS, x->requests, &outcount, indices, statuses);
    CHECK(done == REQUESTS - 1 && rc == MPI_SUCCESS && outcount == MPI_UNDEFINED,
          "waitsome: %d requests done, then outcount %d", done, outcount);
}

/* MPI_Testany polled until it says none is left (index MPI_UNDEFINED, flag true). */
static void complete_by_testany(exchange *x, int iteration)
{
    int done = 0, index, flag;
    MPI_Status status;
    for (long polls = 0; polls < 100000000; polls++) {
        int rc = MPI_Testany(REQUESTS, x->requests, &index, &flag, &status);
        CHECK(rc == MPI_SUCCESS, "testany: %s", mpix_test_error_string(rc));
        if (rc != MPI_SUCCESS || (flag && index == MPI_UNDEFINED))
            break;
        if (!flag)
            continue;
        CHECK(index != NULL_AT && x->requests[index] == MPI_REQUEST_NULL, "testany reported request %d", index);
        if (index < SENDS_FROM)
            check_received(x, iteration, index, &status, "testany");
        done++;
    }
    CHECK(done == REQUESTS - 1, "testany: %d requests done, want %d", done, REQUESTS - 1);
}

/* MPI_Request_get_status polled on each request (for at most get_status_seconds) until
 * it says done (the request stays), then MPI_Wait, whose status must be the same; then
 * MPI_Testall on the spent array. With MPICH a pending zcopy request moves only in
 * MPI_Test and MPI_Wait* and in zcopy's calls, not in MPI_Request_get_status
 * (docs/zcopy.md): there the polls may end undone, and MPI_Wait completes the request.
 * *@undone counts those. */
static void complete_by_get_status(exchange *x, int iteration, int *undone)
{
    for (int i = 0; i < REQUESTS; i++) {
        int flag = 0, rc = MPI_SUCCESS;
        MPI_Status peeked, waited;
        for (double start = MPI_Wtime(); !flag && rc == MPI_SUCCESS && MPI_Wtime() - start < get_status_seconds;)
            rc = MPI_Request_get_status(x->requests[i], &flag, &peeked);
        CHECK(rc == MPI_SUCCESS, "get_status %d: %s", i, mpix_test_error_string(rc));
        *undone += !flag;
        CHECK(flag || GET_STATUS_LIMITED, "get_status %d: not done after %g s", i, get_status_seconds);
        CHECK((i == NULL_AT) == (x->requests[i] == MPI_REQUEST_NULL), "request %d null", i);
        rc = MPI_Wait(&x->requests[i], &waited);
        CHECK(rc == MPI_SUCCESS && x->requests[i] == MPI_REQUEST_NULL, "wait %d after get_status: %s", i,
              mpix_test_error_string(rc));
        if (i < SENDS_FROM) {
            if (flag)
                check_received(x, iteration, i, &peeked, "get_status");
            check_received(x, iteration, i, &waited, "wait after get_status");
        }
    }
    int flag = 0;
    MPI_Status spent[REQUESTS];
    int rc = MPI_Testall(REQUESTS, x->requests, &flag, spent);
    CHECK(rc == MPI_SUCCESS && flag && spent[0].MPI_SOURCE == MPI_ANY_SOURCE,
          "testall over spent requests: %s, flag %d, source %d", mpix_test_error_string(rc), flag, spent[0].MPI_SOURCE);
}

/* Sends freed at once: each rank sends its face to the right neighbour with
 * MPIX_Isend_zcopy and frees the request; the neighbour receives it blocking and
 * answers; only then is the buffer written again. */
static void fire_and_forget(double *out, double *in)
{
    int left = peers[0], right = peers[1];
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        MPI_Datatype face = zcopy_face_type();
        zcopy_face_fill(out, rank, 100 + iteration);
        zcopy_blank(in, ZCOPY_FACE_SPAN);
        MPI_Request request;
        int rc = MPIX_Isend_zcopy(out, 1, face, right, FACE_TAG, comm, &request);
        CHECK(rc == MPI_SUCCESS, "isend to free: %s", mpix_test_error_string(rc));
        rc = MPI_Request_free(&request);
        CHECK(rc == MPI_SUCCESS && request == MPI_REQUEST_NULL, "request_free of a send: %s",
              mpix_test_error_string(rc));
        MPI_Status status;
        rc = MPIX_Recv_zcopy(in, 1, face, left, FACE_TAG, comm, &status);
        CHECK(rc == MPI_SUCCESS && status.MPI_SOURCE == left, "receive of a freed send: %s",
              mpix_test_error_string(rc));
        MPI_Type_free(&face);
        int wrong = zcopy_face_wrong(in, left, 100 + iteration);
        CHECK(wrong < 0, "iteration %d: the freed send's face from %d arrived wrong at element %d", iteration, left,
              wrong);
        int answer = iteration, answered = -1;
        MPI_Sendrecv(&answer, 1, MPI_INT, left, ANSWER_TAG, &answered, 1, MPI_INT, right, ANSWER_TAG, comm,
                     MPI_STATUS_IGNORE);
        CHECK(answered == iteration, "answer %d, want %d", answered, iteration);
    }
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    peers[0] = (rank + size - 1) % size;
    peers[1] = (rank + 1) % size;
    exchange x;
    x.face_out = malloc(ZCOPY_FACE_SPAN * sizeof(double));
    x.face_in[0] = malloc(ZCOPY_FACE_SPAN * sizeof(double));
    x.face_in[1] = malloc(ZCOPY_FACE_SPAN * sizeof(double));
    int undone = 0;
    for (int iteration = 0; iteration < 3 * ITERATIONS; iteration++) {
        post(&x, iteration);
        switch (iteration % 3) {
        case 0: complete_by_waitsome(&x, iteration); break;
        case 1: complete_by_testany(&x, iteration); break;
        default: complete_by_get_status(&x, iteration, &undone); break;
        }
    }
    if (undone && GET_STATUS_LIMITED)
        printf("zcopy_completions: rank %d: %d requests not done after %g s of MPI_Request_get_status (MPICH)\n",
               rank, undone, get_status_seconds);
    fire_and_forget(x.face_out, x.face_in[0]);
    MPI_Comm_free(&comm);
    free(x.face_out);
    free(x.face_in[0]);
    free(x.face_in[1]);
    return mpix_test_finish("zcopy_completions");
}
