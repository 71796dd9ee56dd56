/* SPDX-License-Identifier: BSD-3-Clause */
/* An irregular exchange as applications write it: every rank sends each other rank a
 * message whose length the receiver does not know (none, one double, a few hundred, tens
 * of thousands: inline, packed and zero-copy), some as a strided vector built and freed
 * for the send; the receiver probes (MPIX_Probe_zcopy or a loop of MPIX_Iprobe_zcopy,
 * from any source), sizes its buffer with MPI_Get_count, and receives with the source
 * and tag the status names, blocking or nonblocking. Then: a probe repeated reports the
 * same message, a receive one element short is MPI_ERR_TRUNCATE and consumes the
 * message, a wildcard receive after a probe gets data, a nonblocking receive posted
 * before a probe takes the first message, MPI_PROC_NULL, and the arguments MPI_Probe
 * would reject. MPIX_TEST_THREADS=multiple: also four threads a rank probing and
 * receiving on one communicator at once, then taking whatever comes by the matched probe
 * with MPI_ANY_TAG. The irregular exchange and the truncations run again with the
 * matched probes and receives. MPIX_TEST_ZCOPY_EXPECT=zero_copy: some message went
 * zero-copy. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/zcopy.h>
#include <pthread.h>

enum { ROUNDS = 6, LENGTHS = 7 };
static const int lengths[LENGTHS] = { 0, 1, 100, 300, 3000, 40000, 200000 };

/* The count rank @from sends rank @to in @round, and its values. */
static int count_of(int from, int to, int round)
{
    return lengths[(from * 3 + to * 5 + round) % LENGTHS];
}

static double value_of(int from, int round, int i)
{
    return from * 1e6 + round * 1e4 + i % 9973;
}

/* Strided sends: the data every other double of a buffer twice as long. */
static int strided(int from, int to, int round)
{
    return (from + to + round) % 2 == 1;
}

static void check_received(const double *data, int count, int from, int round, const char *how)
{
    int bad = -1;
    for (int i = 0; i < count && bad < 0; i++)
        if (data[i] != value_of(from, round, i))
            bad = i;
    CHECK(bad < 0, "%s: round %d from %d: element %d of %d is %g", how, round, from, bad, count,
          bad >= 0 ? data[bad] : 0.0);
}

/* @matched: the receiver uses the matched probes and receives (MPIX_Mprobe_zcopy or an
 * MPIX_Improbe_zcopy loop, then MPIX_Mrecv_zcopy or MPIX_Imrecv_zcopy). */
static void exchange(MPI_Comm comm, int round, int matched)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Request *sends = malloc((size_t)size * sizeof *sends + sizeof *sends);
    double **send_buffers = calloc(size, sizeof *send_buffers);
    int nsends = 0;
    for (int to = 0; to < size; to++) {
        if (to == rank)
            continue;
        int count = count_of(rank, to, round), stride = strided(rank, to, round) ? 2 : 1;
        double *buffer = malloc(((size_t)count * stride + 1) * sizeof *buffer);
        for (int i = 0; i < count; i++)
            buffer[(size_t)i * stride] = value_of(rank, round, i);
        MPI_Datatype type = MPI_DOUBLE;
        int send_count = count;
        if (stride == 2 && count > 0) {
            MPI_Type_vector(count, 1, 2, MPI_DOUBLE, &type);
            MPI_Type_commit(&type);
            send_count = 1;
        }
        CHECK(MPIX_Isend_zcopy(buffer, send_count, type, to, 100 + round, comm, &sends[nsends]) == MPI_SUCCESS,
              "isend");
        nsends++;
        if (type != MPI_DOUBLE)
            MPI_Type_free(&type);   /* as applications do: the send holds it */
        send_buffers[to] = buffer;
    }
    for (int received = 0; received < size - 1; received++) {
        MPI_Status status;
        MPI_Message message = MPI_MESSAGE_NULL;
        if (matched && (round + received) % 2 == 0) {
            CHECK(MPIX_Mprobe_zcopy(MPI_ANY_SOURCE, 100 + round, comm, &message, &status) == MPI_SUCCESS, "mprobe");
        } else if (matched) {
            int flag = 0;
            while (!flag)
                CHECK(MPIX_Improbe_zcopy(MPI_ANY_SOURCE, 100 + round, comm, &flag, &message, &status) ==
                          MPI_SUCCESS,
                      "improbe");
        } else if ((round + received) % 2 == 0) {
            CHECK(MPIX_Probe_zcopy(MPI_ANY_SOURCE, 100 + round, comm, &status) == MPI_SUCCESS, "probe");
        } else {
            int flag = 0;
            while (!flag)
                CHECK(MPIX_Iprobe_zcopy(MPI_ANY_SOURCE, 100 + round, comm, &flag, &status) == MPI_SUCCESS, "iprobe");
        }
        int from = status.MPI_SOURCE, count = -1;
        MPI_Get_count(&status, MPI_DOUBLE, &count);
        CHECK(status.MPI_TAG == 100 + round, "round %d: probed tag %d", round, status.MPI_TAG);
        CHECK(from >= 0 && from < size && from != rank, "round %d: probed source %d", round, from);
        if (from < 0 || from >= size || from == rank)
            continue;
        CHECK(count == count_of(from, rank, round), "round %d from %d: probe counts %d doubles, sent %d", round, from,
              count, count_of(from, rank, round));
        if (count < 0)
            count = count_of(from, rank, round);
        /* the same message again, by a probe naming it; a matched one is out of reach */
        MPI_Status again;
        int flag = 0, again_count = -1;
        CHECK(MPIX_Iprobe_zcopy(from, status.MPI_TAG, comm, &flag, &again) == MPI_SUCCESS && flag == !matched,
              "round %d: second probe found %s", round, flag ? "a matched message" : "nothing");
        if (!matched) {
            MPI_Get_count(&again, MPI_DOUBLE, &again_count);
            CHECK(again.MPI_SOURCE == from && again_count == count, "round %d: second probe: source %d, %d doubles",
                  round, again.MPI_SOURCE, again_count);
        }
        double *data = malloc(((size_t)count + 1) * sizeof *data);
        MPI_Status received_status;
        int received_count = -1;
        if (matched && (round + from) % 3 == 0) {
            MPI_Request request;
            CHECK(MPIX_Imrecv_zcopy(data, count, MPI_DOUBLE, &message, &request) == MPI_SUCCESS, "imrecv");
            CHECK(MPI_Wait(&request, &received_status) == MPI_SUCCESS, "wait for imrecv");
            CHECK(message == MPI_MESSAGE_NULL, "imrecv left the message handle");
        } else if (matched) {
            CHECK(MPIX_Mrecv_zcopy(data, count, MPI_DOUBLE, &message, &received_status) == MPI_SUCCESS, "mrecv");
            CHECK(message == MPI_MESSAGE_NULL, "mrecv left the message handle");
        } else if ((round + from) % 3 == 0) {
            MPI_Request request;
            CHECK(MPIX_Irecv_zcopy(data, count, MPI_DOUBLE, from, status.MPI_TAG, comm, &request) == MPI_SUCCESS,
                  "irecv");
            CHECK(MPI_Wait(&request, &received_status) == MPI_SUCCESS, "wait");
        } else {
            CHECK(MPIX_Recv_zcopy(data, count, MPI_DOUBLE, from, status.MPI_TAG, comm, &received_status) ==
                      MPI_SUCCESS,
                  "recv");
        }
        MPI_Get_count(&received_status, MPI_DOUBLE, &received_count);
        CHECK(received_status.MPI_SOURCE == from && received_count == count,
              "round %d: received from %d: %d doubles of %d", round, received_status.MPI_SOURCE, received_count,
              count);
        check_received(data, count, from, round, "exchange");
        free(data);
    }
    MPI_Status *send_statuses = malloc((size_t)size * sizeof *send_statuses);
    CHECK(MPI_Waitall(nsends, sends, send_statuses) == MPI_SUCCESS, "waitall");
    free(send_statuses);
    for (int to = 0; to < size; to++)
        free(send_buffers[to]);
    free(send_buffers);
    free(sends);
}

/* Rank 0 sends rank 1 a message of each length; rank 1 probes each and receives it one
 * element short (MPI_ERR_TRUNCATE, the message consumed, the sender released), then a
 * last one with wildcards; @matched: with the matched probe and receive. */
static void truncation(MPI_Comm comm, int matched)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* MPICH 4.0 raises MPI_Mrecv's errors on MPI_COMM_WORLD (a message left to MPI). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        for (int l = 1; l < LENGTHS; l++) {
            double *buffer = malloc(lengths[l] * sizeof *buffer);
            for (int i = 0; i < lengths[l]; i++)
                buffer[i] = value_of(0, l, i);
            CHECK(MPIX_Send_zcopy(buffer, lengths[l], MPI_DOUBLE, 1, l, comm) == MPI_SUCCESS, "send %d", l);
            free(buffer);
        }
        double last = value_of(0, 99, 0);
        CHECK(MPIX_Send_zcopy(&last, 1, MPI_DOUBLE, 1, 99, comm) == MPI_SUCCESS, "send last");
    } else if (rank == 1) {
        for (int l = 1; l < LENGTHS; l++) {
            MPI_Status status;
            int count = -1;
            MPI_Message message;
            if (matched)
                CHECK(MPIX_Mprobe_zcopy(0, l, comm, &message, &status) == MPI_SUCCESS, "mprobe %d", l);
            else
                CHECK(MPIX_Probe_zcopy(0, l, comm, &status) == MPI_SUCCESS, "probe %d", l);
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            CHECK(count == lengths[l], "probe %d: %d doubles", l, count);
            double *data = malloc(lengths[l] * sizeof *data);
            int rc = matched ? MPIX_Mrecv_zcopy(data, lengths[l] - 1, MPI_DOUBLE, &message, &status)
                             : MPIX_Recv_zcopy(data, lengths[l] - 1, MPI_DOUBLE, 0, l, comm, &status),
                error_class = -1;
            MPI_Error_class(rc, &error_class);
            CHECK(error_class == MPI_ERR_TRUNCATE, "%d doubles into %d: error class %d", lengths[l], lengths[l] - 1,
                  error_class);
            free(data);
        }
        MPI_Status status;
        double last = 0;
        int flag = 0;
        CHECK(MPIX_Probe_zcopy(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status) == MPI_SUCCESS && status.MPI_TAG == 99,
              "probe last: tag %d", status.MPI_TAG);
        CHECK(MPIX_Recv_zcopy(&last, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status) == MPI_SUCCESS &&
                  last == value_of(0, 99, 0),
              "last: %g", last);
        for (int l = 1; l <= LENGTHS; l++) /* the truncated messages consumed, the last one too */
            CHECK(MPIX_Iprobe_zcopy(MPI_ANY_SOURCE, l < LENGTHS ? l : 99, comm, &flag, &status) == MPI_SUCCESS && !flag,
                  "tag %d: a message left", l < LENGTHS ? l : 99);
    }
    MPI_Barrier(comm);   /* the next run sends on the same tags */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A nonblocking receive posted before a probe takes the first message, as MPI's would:
 * rank 0 sends rank 1 two messages with one tag; rank 1 posts MPIX_Irecv_zcopy, then
 * probes, and must find the second. Inline, packed and zero-copy in turn. */
static void receive_posted_first(MPI_Comm comm)
{
    static const int pairs[][2] = { { 1, 300 }, { 300, 1 }, { 40000, 3 }, { 3, 40000 }, { 200000, 40000 } };
    int rank;
    MPI_Comm_rank(comm, &rank);
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        int first = pairs[p][0], second = pairs[p][1];
        double *data = malloc(((size_t)first + second) * sizeof *data);
        if (rank == 0) {
            for (int i = 0; i < first + second; i++)
                data[i] = value_of(0, (int)p, i);
            CHECK(MPIX_Send_zcopy(data, first, MPI_DOUBLE, 1, 7, comm) == MPI_SUCCESS, "send first");
            CHECK(MPIX_Send_zcopy(data + first, second, MPI_DOUBLE, 1, 7, comm) == MPI_SUCCESS, "send second");
        } else if (rank == 1) {
            MPI_Request request;
            MPI_Status status;
            int count = -1;
            CHECK(MPIX_Irecv_zcopy(data, first, MPI_DOUBLE, 0, 7, comm, &request) == MPI_SUCCESS, "irecv");
            if (p % 2 == 0)
                CHECK(MPIX_Probe_zcopy(0, 7, comm, &status) == MPI_SUCCESS, "probe");
            else /* flag 0 while the receive posted before is not through */
                for (int flag = 0; !flag;)
                    CHECK(MPIX_Iprobe_zcopy(MPI_ANY_SOURCE, 7, comm, &flag, &status) == MPI_SUCCESS, "iprobe");
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            CHECK(count == second, "pair %zu: the probe after an irecv found %d doubles, not the second message's %d",
                  p, count, second);
            CHECK(MPIX_Recv_zcopy(data + first, second, MPI_DOUBLE, 0, 7, comm, &status) == MPI_SUCCESS, "recv");
            CHECK(MPI_Wait(&request, &status) == MPI_SUCCESS, "wait");
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            CHECK(count == first, "pair %zu: the irecv got %d doubles of %d", p, count, first);
            int bad = -1;
            for (int i = 0; i < first + second && bad < 0; i++)
                if (data[i] != value_of(0, (int)p, i))
                    bad = i;
            CHECK(bad < 0, "pair %zu: element %d wrong", p, bad);
        }
        free(data);
        MPI_Barrier(comm);
    }
}

/* Under MPI_THREAD_MULTIPLE: four threads on each of ranks 0 and 1, one tag each, rank 0's
 * sending 300 messages of changing lengths (inline, packed, zero-copy), rank 1's probing
 * and receiving them at once on one communicator. */
enum { THREADS = 4, THREAD_MESSAGES = 300 };
static MPI_Comm thread_comm;
static int thread_rank, thread_failures;

static int thread_count_of(int tag, int m)
{
    return (m * 37 + tag * 11) % 5 == 0 ? 30000 : (m * 13 + tag) % 700;
}

/* Rank 0's message @m of @tag; 1 on failure. */
static int send_thread_message(int tag, int m)
{
    int n = thread_count_of(tag, m);
    double *data = malloc(((size_t)n + 1) * sizeof *data);
    for (int i = 0; i < n; i++)
        data[i] = value_of(tag, m, i);
    int failed = MPIX_Send_zcopy(data, n, MPI_DOUBLE, 1, tag, thread_comm) != MPI_SUCCESS;
    free(data);
    return failed;
}

/* 1 when @data (@n values) is not message @m of @tag. */
static int differs(const double *data, int n, int tag, int m)
{
    for (int i = 0; i < n; i++)
        if (data[i] != value_of(tag, m, i))
            return 1;
    return 0;
}

static void *probing_thread(void *argument)
{
    int tag = (int)(long)argument, failures = 0;
    for (int m = 0; m < THREAD_MESSAGES; m++) {
        int n = thread_count_of(tag, m), count = -1;
        double *data = malloc(((size_t)n + 1) * sizeof *data);
        if (thread_rank == 0)
            failures += send_thread_message(tag, m);
        else if (thread_rank == 1) {
            MPI_Status status;
            MPI_Message message;
            if (m % 2)
                failures += MPIX_Mprobe_zcopy(0, tag, thread_comm, &message, &status) != MPI_SUCCESS;
            else
                failures += MPIX_Probe_zcopy(0, tag, thread_comm, &status) != MPI_SUCCESS;
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            failures += count != n;
            if (m % 2)
                failures += MPIX_Mrecv_zcopy(data, n, MPI_DOUBLE, &message, &status) != MPI_SUCCESS;
            else
                failures += MPIX_Recv_zcopy(data, n, MPI_DOUBLE, 0, tag, thread_comm, &status) != MPI_SUCCESS;
            failures += differs(data, n, tag, m);
        }
        free(data);
    }
    __atomic_add_fetch(&thread_failures, failures, __ATOMIC_RELAXED);
    return NULL;
}

/* The same messages, each receiving thread taking whichever comes with MPI_ANY_TAG by
 * the matched probe: every message must reach one thread whole (its first value names
 * its tag's message number), none twice. */
static int seen[THREADS][THREAD_MESSAGES], empty_seen;

static void *any_tag_thread(void *argument)
{
    int tag = (int)(long)argument, failures = 0;
    for (int m = 0; m < THREAD_MESSAGES; m++) {
        if (thread_rank == 0)
            failures += send_thread_message(tag, m);
        else if (thread_rank == 1) {
            MPI_Status status;
            MPI_Message message;
            int count = -1;
            failures += MPIX_Mprobe_zcopy(0, MPI_ANY_TAG, thread_comm, &message, &status) != MPI_SUCCESS;
            MPI_Get_count(&status, MPI_DOUBLE, &count);
            double *data = malloc(((size_t)(count > 0 ? count : 0) + 1) * sizeof *data);
            failures += MPIX_Mrecv_zcopy(data, count, MPI_DOUBLE, &message, &status) != MPI_SUCCESS;
            int from_tag = status.MPI_TAG;
            if (count == 0)
                __atomic_add_fetch(&empty_seen, 1, __ATOMIC_RELAXED);
            else if (count < 0 || from_tag < 0 || from_tag >= THREADS)
                failures++;
            else {
                int number = (int)((data[0] - from_tag * 1e6) / 1e4 + 0.5);
                if (number < 0 || number >= THREAD_MESSAGES || count != thread_count_of(from_tag, number))
                    failures++;
                else {
                    __atomic_add_fetch(&seen[from_tag][number], 1, __ATOMIC_RELAXED);
                    failures += differs(data, count, from_tag, number);
                }
            }
            free(data);
        }
    }
    __atomic_add_fetch(&thread_failures, failures, __ATOMIC_RELAXED);
    return NULL;
}

static void threads(MPI_Comm comm)
{
    pthread_t workers[THREADS];
    thread_comm = comm;
    MPI_Comm_rank(comm, &thread_rank);
    for (long t = 0; t < THREADS; t++)
        pthread_create(&workers[t], NULL, probing_thread, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(workers[t], NULL);
    CHECK(thread_failures == 0, "threads: %d failed probes, counts, receives or values", thread_failures);
    for (long t = 0; t < THREADS; t++)
        pthread_create(&workers[t], NULL, any_tag_thread, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(workers[t], NULL);
    CHECK(thread_failures == 0, "threads, any tag: %d failed probes, counts, receives or values", thread_failures);
    if (thread_rank == 1) {
        int wrong = 0, empty = 0;
        for (int t = 0; t < THREADS; t++)
            for (int m = 0; m < THREAD_MESSAGES; m++) {
                if (thread_count_of(t, m) == 0)
                    empty++;
                else
                    wrong += seen[t][m] != 1;
            }
        CHECK(wrong == 0 && empty == empty_seen, "threads, any tag: %d messages not received once, %d of %d empty",
              wrong, empty_seen, empty);
    }
}

static void arguments(MPI_Comm comm)
{
    int size, flag = 0, count = -1;
    MPI_Comm_size(comm, &size);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Status status;
    CHECK(MPIX_Probe_zcopy(MPI_PROC_NULL, 0, comm, &status) == MPI_SUCCESS && status.MPI_SOURCE == MPI_PROC_NULL &&
              status.MPI_TAG == MPI_ANY_TAG,
          "probe MPI_PROC_NULL: source %d tag %d", status.MPI_SOURCE, status.MPI_TAG);
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK(count == 0, "probe MPI_PROC_NULL: count %d", count);
    CHECK(MPIX_Iprobe_zcopy(MPI_PROC_NULL, 0, comm, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag,
          "iprobe MPI_PROC_NULL: flag %d", flag);
    EXPECT_CLASS(MPIX_Probe_zcopy(size, 0, comm, &status), MPI_ERR_RANK, "probe of a source out of range");
    int rc = MPIX_Iprobe_zcopy(0, 0, comm, NULL, &status);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT), "NULL flag: %s", mpix_test_error_string(rc));
    EXPECT_CLASS(MPIX_Iprobe_zcopy(0, -5, comm, &flag, &status), MPI_ERR_TAG, "iprobe with tag -5");
    EXPECT_CLASS(MPIX_Probe_zcopy(0, 0, MPI_COMM_NULL, &status), MPI_ERR_COMM, "probe on MPI_COMM_NULL");
    MPI_Message message = MPI_MESSAGE_NULL;
    double nothing = 7;
    CHECK(MPIX_Mprobe_zcopy(MPI_PROC_NULL, 0, comm, &message, &status) == MPI_SUCCESS &&
              message == MPI_MESSAGE_NO_PROC && status.MPI_SOURCE == MPI_PROC_NULL,
          "mprobe MPI_PROC_NULL: source %d", status.MPI_SOURCE);
    CHECK(MPIX_Mrecv_zcopy(&nothing, 1, MPI_DOUBLE, &message, &status) == MPI_SUCCESS &&
              status.MPI_SOURCE == MPI_PROC_NULL && nothing == 7 && message == MPI_MESSAGE_NULL,
          "mrecv MPI_MESSAGE_NO_PROC: source %d", status.MPI_SOURCE);
    rc = MPIX_Mprobe_zcopy(0, 0, comm, NULL, &status);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT) && strstr(mpix_test_error_string(rc), "MPIX_Mprobe_zcopy"),
          "NULL message: %s", mpix_test_error_string(rc));
    EXPECT_CLASS(MPIX_Improbe_zcopy(size, 0, comm, &flag, &message, &status), MPI_ERR_RANK,
                 "improbe of a source out of range");
    rc = MPIX_Improbe_zcopy(0, 0, comm, NULL, &message, &status);
    CHECK(mpix_test_is_kind(rc, MPIX_ERRKIND_ARGUMENT), "improbe, NULL flag: %s", mpix_test_error_string(rc));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    const char *thread_level = getenv("MPIX_TEST_THREADS");
    int multiple = thread_level && !strcmp(thread_level, "multiple"), provided = MPI_THREAD_SINGLE;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    arguments(comm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    for (int round = 0; round < ROUNDS; round++)
        exchange(comm, round, 0);
    for (int round = 0; round < ROUNDS; round++)
        exchange(comm, ROUNDS + round, 1);
    if (size >= 2) {
        truncation(comm, 0);
        truncation(comm, 1);
        receive_posted_first(comm);
        if (multiple && provided == MPI_THREAD_MULTIPLE)
            threads(comm);
        CHECK(!multiple || provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    }
    const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
    if (expect && !strcmp(expect, "zero_copy") && size >= 2) {
        unsigned long sent = zcopy_stats_of(comm).sent_zero_copy, total = 0;
        MPI_Allreduce(&sent, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, comm);
        CHECK(total > 0, "no message went zero-copy");
    }
    MPI_Barrier(comm);
    MPI_Comm_free(&comm);
    return mpix_test_finish("zcopy_probe");
}
