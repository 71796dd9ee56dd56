/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Recv semantics of the zcopy calls: wildcards and status, truncation on every path,
 * message order per (source, tag), interleaved tags, MPI_PROC_NULL, errors that name
 * the value, memoization (a repeated send reads no layout), a freed type whose handle is
 * reused, collectively committed types (no layout ever read), the sender learning the
 * faster path, and user traffic on the same communicator. Large messages use zero-copy; small ones the packed path. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>

enum { LARGE = 40000 }; /* doubles: above the default eager threshold */

static MPI_Comm comm;

static void fill(double *values, int n, int seed)
{
    for (int i = 0; i < n; i++)
        values[i] = seed * 1e6 + i;
}

static int check_values(const double *values, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (values[i] != seed * 1e6 + i)
            return i;
    return -1;
}

/* Every rank but 0 sends one small and one large message to rank 0, which takes them
 * with MPI_ANY_SOURCE / MPI_ANY_TAG and checks each status against the data. */
static void any_source_any_tag(int rank, int size)
{
    double *buffer = malloc(LARGE * sizeof *buffer);
    int sizes[2] = { 10, LARGE };
    if (rank != 0) {
        for (int m = 0; m < 2; m++) {
            fill(buffer, sizes[m], rank * 10 + m);
            CHECK(MPIX_Send_zcopy(buffer, sizes[m], MPI_DOUBLE, 0, 100 + rank * 2 + m, comm) == MPI_SUCCESS, "send");
        }
    } else {
        int seen[64] = { 0 };
        for (int received = 0; received < 2 * (size - 1); received++) {
            MPI_Status status;
            int count, rc = MPIX_Recv_zcopy(buffer, LARGE, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status);
            CHECK(rc == MPI_SUCCESS, "any-source receive: %s", mpix_test_error_string(rc));
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            int m = status.MPI_TAG - 100 - status.MPI_SOURCE * 2;
            CHECK(m == 0 || m == 1, "tag %d from source %d", status.MPI_TAG, status.MPI_SOURCE);
            if (m != 0 && m != 1)
                continue;
            CHECK(count == sizes[m], "count %d from %d, expected %d", count, status.MPI_SOURCE, sizes[m]);
            int bad = check_values(buffer, count, status.MPI_SOURCE * 10 + m);
            CHECK(bad < 0, "message %d from %d: element %d wrong", m, status.MPI_SOURCE, bad);
            /* Non-overtaking: a source's small message (sent first) arrives first. */
            CHECK(m == 0 ? !seen[2 * status.MPI_SOURCE] : seen[2 * status.MPI_SOURCE],
                  "message %d from %d overtook", m, status.MPI_SOURCE);
            seen[2 * status.MPI_SOURCE + m] = 1;
        }
    }
    /* The wildcards would take the next phase's messages. */
    MPI_Barrier(comm);
    free(buffer);
}

/* Truncation: packed, zero-copy, and (MPIX_ZCOPY=off) MPI paths all report
 * MPI_ERR_TRUNCATE, and the sender completes; also a large message to a receive for
 * 1000 doubles, which MPICH's zcopy posts at once as MPI's own (a header lands there). */
static void truncation(int rank)
{
    double *buffer = calloc(LARGE, sizeof *buffer);
    int sizes[3] = { 100, LARGE, LARGE }, receives[3] = { 50, LARGE / 2, 1000 };
    for (int m = 0; m < 3; m++) {
        if (rank == 1) {
            fill(buffer, sizes[m], 7);
            int rc = MPIX_Send_zcopy(buffer, sizes[m], MPI_DOUBLE, 0, 5, comm);
            CHECK(rc == MPI_SUCCESS, "sender of a truncated message: %s", mpix_test_error_string(rc));
        } else if (rank == 0) {
            MPI_Status status;
            int error_class = -1, rc = MPIX_Recv_zcopy(buffer, receives[m], MPI_DOUBLE, 1, 5, comm, &status);
            MPI_Error_class(rc, &error_class);
            CHECK(error_class == MPI_ERR_TRUNCATE, "%d doubles into %d: class %d (%s)", sizes[m], receives[m],
                  error_class, mpix_test_error_string(rc));
            CHECK(status.MPI_SOURCE == 1 && status.MPI_TAG == 5, "truncated status source %d tag %d",
                  status.MPI_SOURCE, status.MPI_TAG);
        }
    }
    /* The communicator still works after a truncation. */
    if (rank == 1)
        MPIX_Send_zcopy(buffer, 3, MPI_DOUBLE, 0, 6, comm);
    else if (rank == 0)
        CHECK(MPIX_Recv_zcopy(buffer, 3, MPI_DOUBLE, 1, 6, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS, "after truncate");
    free(buffer);
}

/* Packed messages with tags 1, 2, 3 received as 3, 1, 2; then four messages with one
 * tag received in order. */
static void interleaved_tags(int rank)
{
    double value[1];
    if (rank == 1) {
        for (int tag = 1; tag <= 3; tag++) {
            value[0] = tag;
            MPIX_Send_zcopy(value, 1, MPI_DOUBLE, 0, tag, comm);
        }
        for (int i = 0; i < 4; i++) {
            value[0] = 10 + i;
            MPIX_Send_zcopy(value, 1, MPI_DOUBLE, 0, 9, comm);
        }
    } else if (rank == 0) {
        int order[3] = { 3, 1, 2 };
        for (int i = 0; i < 3; i++) {
            MPIX_Recv_zcopy(value, 1, MPI_DOUBLE, 1, order[i], comm, MPI_STATUS_IGNORE);
            CHECK(value[0] == order[i], "tag %d carried %g", order[i], value[0]);
        }
        for (int i = 0; i < 4; i++) {
            MPIX_Recv_zcopy(value, 1, MPI_DOUBLE, 1, 9, comm, MPI_STATUS_IGNORE);
            CHECK(value[0] == 10 + i, "message %d of one tag carried %g", i, value[0]);
        }
    }
}

/* A repeated (datatype, count) sends only the layout id after the first time; a freed
 * type whose handle is reused by a different layout is never served the old one. */
static void memoization_and_reuse(int rank, int zero_copy)
{
    double *buffer = malloc(10 * LARGE * sizeof *buffer);
    MPI_Datatype first, second;
    /* Blocks large enough for zero-copy to be chosen (small ones go through MPI). */
    MPI_Type_vector(LARGE / 1000, 1000, 2000, MPI_DOUBLE, &first);
    MPI_Type_commit(&first);
    unsigned long read_before = zcopy_stats_of(comm).layouts_read;
    for (int round = 0; round < 5; round++) {
        if (rank == 1) {
            fill(buffer, 2 * LARGE, round);
            MPIX_Send_zcopy(buffer, 1, first, 0, 20, comm);
        } else if (rank == 0) {
            double *into = calloc(LARGE, sizeof *into);
            MPIX_Recv_zcopy(into, LARGE, MPI_DOUBLE, 1, 20, comm, MPI_STATUS_IGNORE);
            int bad = -1;
            for (int i = 0; i < LARGE && bad < 0; i++)
                if (into[i] != round * 1e6 + (i / 1000) * 2000 + i % 1000)
                    bad = i;
            CHECK(bad < 0, "round %d: element %d wrong", round, bad);
            free(into);
        }
    }
    if (rank == 0 && zero_copy)
        CHECK(zcopy_stats_of(comm).layouts_read - read_before == 1, "5 sends of one layout read it %lu times",
              zcopy_stats_of(comm).layouts_read - read_before);
    MPI_Datatype freed = first;
    MPI_Type_free(&first);
    /* Different blocks: 500 at stride 5000. */
    MPI_Type_vector(LARGE / 500, 500, 5000, MPI_DOUBLE, &second);
    MPI_Type_commit(&second);
    if (rank == 1) {
        if (second == freed)
            printf("zcopy semantics: the freed handle was reused (as this test hopes)\n");
        fill(buffer, 10 * LARGE, 42);
        MPIX_Send_zcopy(buffer, 1, second, 0, 21, comm);
    } else if (rank == 0) {
        double *into = calloc(LARGE, sizeof *into);
        MPIX_Recv_zcopy(into, LARGE, MPI_DOUBLE, 1, 21, comm, MPI_STATUS_IGNORE);
        int bad = -1;
        for (int i = 0; i < LARGE && bad < 0; i++)
            if (into[i] != 42e6 + (i / 500) * 5000 + i % 500)
                bad = i;
        CHECK(bad < 0, "reused handle: element %d wrong (stale layout?)", bad);
        free(into);
    }
    MPI_Type_free(&second);
    free(buffer);
}

/* MPIX_Type_commit_comm: no layout is read, even the first time. */
static void collective_commit(int rank, int zero_copy)
{
    MPI_Datatype type, vector;
    double *buffer = malloc(2 * LARGE * sizeof *buffer);
    /* A dup: a content no other part of this test sends, since a layout is memoized by
     * content with the path figures its sender learnt, and this part needs a fresh one. */
    MPI_Type_vector(LARGE / 1000, 1000, 2000, MPI_DOUBLE, &vector);
    MPI_Type_dup(vector, &type);
    MPI_Type_free(&vector);
    int rc = MPIX_Type_commit_comm(&type, comm);
    CHECK(rc == MPI_SUCCESS, "MPIX_Type_commit_comm: %s", mpix_test_error_string(rc));
    zcopy_counters before = zcopy_stats_of(comm);
    for (int round = 0; round < 3; round++) {
        if (rank == 1) {
            fill(buffer, 2 * LARGE, round + 3);
            MPIX_Send_zcopy(buffer, 1, type, 0, 30, comm);
        } else if (rank == 0) {
            memset(buffer, 0, 2 * LARGE * sizeof *buffer);
            MPIX_Recv_zcopy(buffer, 1, type, 1, 30, comm, MPI_STATUS_IGNORE);
            int bad = -1;
            for (int i = 0; i < 2 * LARGE && bad < 0; i++)
                if (i % 2000 < 1000 && buffer[i] != (round + 3) * 1e6 + i)
                    bad = i;
            CHECK(bad < 0, "committed type, round %d: element %d wrong", round, bad);
        }
    }
    if (rank == 0 && zero_copy) {
        zcopy_counters after = zcopy_stats_of(comm);
        CHECK(after.layouts_read == before.layouts_read, "a committed type's layout was read %lu times",
              after.layouts_read - before.layouts_read);
        /* Every zero-copy receive of it found the layout by the global id (the sender's
         * path choice alternates while it learns, so not every round is zero-copy). */
        unsigned long pulled = after.pulled_direct + after.pulled_staged - before.pulled_direct - before.pulled_staged -
                               (after.helps_taken_back - before.helps_taken_back);   /* the tail read apart */
        CHECK(pulled > 0 && after.layouts_global - before.layouts_global == pulled,
              "global layout used %lu times in %lu zero-copy receives", after.layouts_global - before.layouts_global,
              pulled);
    }
    rc = MPIX_Type_free_comm(&type, comm);
    CHECK(rc == MPI_SUCCESS && type == MPI_DATATYPE_NULL, "MPIX_Type_free_comm: %s", mpix_test_error_string(rc));
    free(buffer);
}

static void edge_cases(int rank, int size)
{
    MPI_Status status;
    double value = 1;
    int count = -1;
    CHECK(MPIX_Send_zcopy(&value, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, comm) == MPI_SUCCESS, "send to MPI_PROC_NULL");
    CHECK(MPIX_Recv_zcopy(&value, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, comm, &status) == MPI_SUCCESS, "recv PROC_NULL");
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    CHECK(status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG && count == 0,
          "MPI_PROC_NULL status: source %d tag %d count %d", status.MPI_SOURCE, status.MPI_TAG, count);

    /* What MPI_Send rejects, MPI rejects, with its classes. */
    EXPECT_CLASS(MPIX_Send_zcopy(&value, -3, MPI_DOUBLE, 0, 0, comm), MPI_ERR_COUNT, "negative count");
    EXPECT_CLASS(MPIX_Send_zcopy(&value, 1, MPI_DOUBLE, size + 4, 0, comm), MPI_ERR_RANK, "bad rank");
    int rc;

    if (size == 1)
        return;
    /* A plain MPI message is received as MPI_Recv receives it, large or small: zcopy
     * sends its own so whenever its header has nothing to tell. */
    static double plain[4096];
    if (rank == 1) {
        for (int i = 0; i < 4096; i++)
            plain[i] = i + 0.25;
        MPI_Send(plain, 4096, MPI_DOUBLE, 0, 40, comm);
        value = 7.5;
        MPI_Send(&value, 1, MPI_DOUBLE, 0, 42, comm);
    } else if (rank == 0) {
        memset(plain, 0, sizeof plain);
        rc = MPIX_Recv_zcopy(plain, 4096, MPI_DOUBLE, 1, 40, comm, &status);
        MPI_Get_count(&status, MPI_DOUBLE, &count);
        CHECK(rc == MPI_SUCCESS && count == 4096 && plain[0] == 0.25 && plain[4095] == 4095.25,
              "plain MPI message: %s, count %d, %g .. %g", mpix_test_error_string(rc), count, plain[0], plain[4095]);
        value = 0;
        rc = MPIX_Recv_zcopy(&value, 1, MPI_DOUBLE, 1, 42, comm, &status);
        MPI_Get_count(&status, MPI_DOUBLE, &count);
        CHECK(rc == MPI_SUCCESS && value == 7.5 && count == 1, "small plain MPI message: rc %d, %g, count %d", rc,
              value, count);
    }
    /* Zero count, zero-size datatype. */
    if (rank == 1)
        MPIX_Send_zcopy(NULL, 0, MPI_DOUBLE, 0, 41, comm);
    else if (rank == 0) {
        rc = MPIX_Recv_zcopy(NULL, 0, MPI_DOUBLE, 1, 41, comm, &status);
        MPI_Get_count(&status, MPI_DOUBLE, &count);
        CHECK(rc == MPI_SUCCESS && count == 0, "zero count: rc %d count %d", rc, count);
    }
    /* User traffic on the same communicator is untouched around zcopy messages. */
    double *large = malloc(LARGE * sizeof *large);
    if (rank == 1) {
        value = 77;
        MPI_Send(&value, 1, MPI_DOUBLE, 0, 50, comm);
        fill(large, LARGE, 9);
        MPIX_Send_zcopy(large, LARGE, MPI_DOUBLE, 0, 50, comm);
        value = 78;
        MPI_Send(&value, 1, MPI_DOUBLE, 0, 50, comm);
    } else if (rank == 0) {
        MPI_Recv(&value, 1, MPI_DOUBLE, 1, 50, comm, MPI_STATUS_IGNORE);
        CHECK(value == 77, "user message before: %g", value);
        MPIX_Recv_zcopy(large, LARGE, MPI_DOUBLE, 1, 50, comm, MPI_STATUS_IGNORE);
        CHECK(check_values(large, LARGE, 9) < 0, "zcopy message between user messages");
        MPI_Recv(&value, 1, MPI_DOUBLE, 1, 50, comm, MPI_STATUS_IGNORE);
        CHECK(value == 78, "user message after: %g", value);
    }
    free(large);
}

/* A memoized layout sent again and again: the sender duels both ways in bursts (MPI
 * sends timed by the receiver's acknowledgment), then keeps the faster, with a duel at
 * the start of every period but the first; every message arrives intact whichever way
 * it took. Which way wins depends on the machine's timing (and may change at a period's
 * duel), so the test checks the first duel's order and how many sends exploring took. */
static void path_learning(int rank, int zero_copy)
{
    enum { SENDS = 88 };
    MPI_Datatype type;
    double *buffer = malloc(2 * LARGE * sizeof *buffer);
    MPI_Type_vector(LARGE / 500, 500, 1000, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    zcopy_counters before = zcopy_stats_of(comm);
    char way[SENDS + 1] = { 0 };   /* z: zero-copy, m: MPI */
    for (int round = 0; round < SENDS; round++) {
        if (rank == 1) {
            fill(buffer, 2 * LARGE, round);
            unsigned long zero_copy_before = zcopy_stats_of(comm).sent_zero_copy;
            CHECK(MPIX_Send_zcopy(buffer, 1, type, 0, 40, comm) == MPI_SUCCESS, "send %d", round);
            way[round] = zcopy_stats_of(comm).sent_zero_copy > zero_copy_before ? 'z' : 'm';
        } else if (rank == 0) {
            memset(buffer, 0, 2 * LARGE * sizeof *buffer);
            int rc = MPIX_Recv_zcopy(buffer, 1, type, 1, 40, comm, MPI_STATUS_IGNORE), bad = -1;
            for (int i = 0; i < 2 * LARGE && bad < 0; i++)
                if (buffer[i] != (i % 1000 < 500 ? round * 1e6 + i : 0))
                    bad = i;
            CHECK(rc == MPI_SUCCESS && bad < 0, "learning, round %d: rc %d, element %d wrong", round, rc, bad);
        }
    }
    const char *method = getenv("MPIX_ZCOPY_METHOD");
    if (rank == 1 && zero_copy && !(method && strcmp(method, "auto"))) {
        zcopy_counters after = zcopy_stats_of(comm);
        unsigned long rts = after.sent_zero_copy - before.sent_zero_copy,
                      mpi = after.sent_mpi - before.sent_mpi;
        /* The first duel: zero-copy first, then MPI (which leaves the duel after its
         * first timed send if that took 1.5 times zero-copy's median). Then learning
         * takes one more duel at most, and periods of at least 64 sends open with a duel
         * of at most 4 sends each way (the first period without), so of 88 sends 2 to 8
         * went the other way while learning and at most 8 more after it. */
        unsigned long slower = rts < mpi ? rts : mpi;
        /* Unless an earlier layout of this process, priced lower, lost zero-copy clearly:
         * then the first 64 sends go through MPI and the duel starts after them. */
        unsigned long deferred = after.sent_deferred - before.sent_deferred;
        /* Or else zero-copy lost the first decision, the packed ways joined its duels
         * and each needs two to be known: learning then took up to three more duels of
         * four ways (24-33 sends through MPI in 3 of 250 runs, where two of zero-copy's
         * three first timed sends were preempted, four ranks busy-polling on two cores:
         * 2.3-3.4 ms against 0.3). The decision that ends it holds for a period of at
         * least 64 sends without a duel, of which 32 at least fall within the 88. */
        unsigned long packed = after.sent_packed + after.sent_unpacked - before.sent_packed - before.sent_unpacked;
        int longest_run = 0;
        for (int at = 0, run = 0; at < SENDS; at++) {
            run = at > 0 && way[at] == way[at - 1] ? run + 1 : 1;
            longest_run = run > longest_run ? run : longest_run;
        }
        if (deferred > 0)
            CHECK(deferred == 64 && rts + mpi == SENDS && strspn(way, "m") >= 64 && !strncmp(way + 64, "zzzzmm", 6),
                  "of %d sends %lu deferred, %lu zero-copy, %lu MPI: %s", SENDS, deferred, rts, mpi, way);
        else
            CHECK(rts + mpi == SENDS && !strncmp(way, "zzzzmm", 6) && slower >= 2 &&
                      (slower <= 16 || (packed > 0 && longest_run >= 32)),
                  "of %d sends %lu zero-copy, %lu MPI (%lu packed), one way at most %d in a row: %s", SENDS, rts,
                  mpi, packed, longest_run, way);
    }
    MPI_Type_free(&type);
    free(buffer);
}

int main(int argc, char **argv)
{
    int rank, size;
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const char *switch_value = getenv("MPIX_ZCOPY");
    int zero_copy = !(switch_value && !strcmp(switch_value, "off"));
    /* Messages through pipes never read the sender's layout: the checks of layouts read
     * and found by global id are the kernel copy's. */
    const char *pipes_value = getenv("MPIX_ZCOPY_PIPES");
    int reads_layouts = zero_copy && !(pipes_value && !strcmp(pipes_value, "on"));

    edge_cases(rank, size);
    if (size > 1) {
        /* Teach every pair that it can attach (the first message of each goes via MPI). */
        double warm[LARGE / 4];
        for (int peer = 0; peer < size; peer++)
            if (peer != rank) {
                int low = rank < peer;
                for (int step = 0; step < 2; step++) {
                    if ((step == 0) == low)
                        MPIX_Send_zcopy(warm, LARGE / 4, MPI_DOUBLE, peer, 99, comm);
                    else
                        MPIX_Recv_zcopy(warm, LARGE / 4, MPI_DOUBLE, peer, 99, comm, MPI_STATUS_IGNORE);
                }
            }
        any_source_any_tag(rank, size);
        truncation(rank);
        interleaved_tags(rank);
        memoization_and_reuse(rank, reads_layouts);
        collective_commit(rank, reads_layouts);
        path_learning(rank, zero_copy);
        zcopy_counters s = zcopy_stats_of(comm);
        if (zero_copy && rank == 0)
            CHECK(s.sent_zero_copy + s.pulled_direct + s.pulled_staged + s.pulled_piped > 0,
                  "no zero-copy transfer happened");
        if (!zero_copy)
            CHECK(s.sent_zero_copy == 0, "MPIX_ZCOPY=off still sent %lu zero-copy", s.sent_zero_copy);
    }
    MPI_Comm_free(&comm);
    return mpix_test_finish("zcopy semantics");
}
