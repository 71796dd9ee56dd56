/* SPDX-License-Identifier: BSD-3-Clause */
/* Random traffic, as no halo code is written: every round each rank sends six messages
 * to ranks drawn at random, with MPIX_Isend_zcopy, each of a layout built for it and
 * freed right after posting (contiguous doubles, every other double, an irregular index
 * type, double-int pairs with holes) and of none to 9,999 elements (up to 117 KiB, so
 * MPI's own messages, packed ones and zero-copy ones meet in one round); the receivers post
 * nonblocking receives from the sender or from MPI_ANY_SOURCE first, then blocking ones,
 * and complete the nonblocking requests, their sends' among them, with MPI_Waitall,
 * MPI_Waitany or MPI_Testsome by turns. Every element, status source, tag and byte count
 * is checked. With MPICH and three ranks this plan hung in round 12 while a sender's
 * MPI_Waitall, waiting in zcopy's wait function for its zero-copy send to a rank, made no
 * MPI progress for its other send to that rank, on which the receiver was blocked first.
 * Before the rounds: a large nonblocking receive posted, a small message received
 * blocking, then the wait for the large one, against a sender waiting for both. */
#include "mpix_test.h"

#include <stdint.h>

enum { ROUNDS = 40, SENDS_PER_RANK = 6, LAYOUTS = 4, COMPLETIONS = 3 };
enum { CONTIGUOUS, EVERY_OTHER, IRREGULAR, PAIRS };                              /* layouts */
enum { POSTED_FROM_SENDER, POSTED_FROM_ANY, BLOCKING_FROM_SENDER, BLOCKING_FROM_ANY }; /* receives */

typedef struct planned {
    int from, to, tag, layout, elements, receive_style;
} planned;

typedef struct message {
    planned plan;
    MPI_Datatype type;   /* receives keep theirs until checked */
    double *buffer;
    MPI_Status status;
} message;

static int rank, size;

static uint64_t random_state;
static unsigned draw(unsigned below)
{
    random_state = random_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(random_state >> 33) % below;
}

/* Every rank draws the same plan for a round. Tags are unique in the round per
 * sender and message, so a receive from MPI_ANY_SOURCE can take only its own. Two
 * receives in three are nonblocking (one of them from MPI_ANY_SOURCE), one blocking
 * (half of those from MPI_ANY_SOURCE). */
static void plan_round(int round, planned *plans)
{
    static const int receive_styles[6] = { POSTED_FROM_SENDER, POSTED_FROM_ANY, POSTED_FROM_SENDER,
                                           POSTED_FROM_SENDER, BLOCKING_FROM_SENDER, BLOCKING_FROM_ANY };
    random_state = 12345 + (uint64_t)round;
    for (int from = 0; from < size; from++)
        for (int k = 0; k < SENDS_PER_RANK; k++) {
            planned *p = &plans[from * SENDS_PER_RANK + k];
            p->from = from;
            p->to = (from + 1 + (int)draw((unsigned)size - 1)) % size;
            p->layout = (int)draw(LAYOUTS);
            switch (draw(5)) { /* none, a few, hundreds, thousands, up to 10,000 elements */
            case 0: p->elements = 0; break;
            case 1: p->elements = 1 + (int)draw(8); break;
            case 2: p->elements = 16 + (int)draw(300); break;
            case 3: p->elements = 1000 + (int)draw(3000); break;
            default: p->elements = 5000 + (int)draw(5000);
            }
            p->tag = from * SENDS_PER_RANK + k;
            p->receive_style = receive_styles[draw(6)];
        }
}

/* @elements of @layout, committed; *@doubles: the doubles a buffer of it spans. */
static MPI_Datatype build(int layout, int elements, size_t *doubles)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    switch (layout) {
    case CONTIGUOUS:
        MPI_Type_contiguous(elements, MPI_DOUBLE, &type);
        *doubles = (size_t)elements;
        break;
    case EVERY_OTHER:
        MPI_Type_vector(elements, 1, 2, MPI_DOUBLE, &type);
        *doubles = 2 * (size_t)elements;
        break;
    case IRREGULAR: { /* blocks of 1 to 5 doubles, gaps of 0 to 2 */
        int *lengths = malloc(sizeof(int) * (elements + 1)), *displacements = malloc(sizeof(int) * (elements + 1));
        int blocks = 0, at = 0;
        for (int left = elements; left > 0; blocks++) {
            int length = 1 + (blocks * 7) % 5 < left ? 1 + (blocks * 7) % 5 : left;
            lengths[blocks] = length;
            displacements[blocks] = at + blocks % 3;
            at = displacements[blocks] + length;
            left -= length;
        }
        MPI_Type_indexed(blocks, lengths, displacements, MPI_DOUBLE, &type);
        *doubles = (size_t)at;
        free(lengths);
        free(displacements);
        break;
    }
    default: { /* a double and an int, 16 bytes apart */
        int lengths[2] = { 1, 1 };
        MPI_Aint displacements[2] = { 0, sizeof(double) };
        MPI_Datatype types[2] = { MPI_DOUBLE, MPI_INT }, pair, spaced;
        MPI_Type_create_struct(2, lengths, displacements, types, &pair);
        MPI_Type_create_resized(pair, 0, 2 * sizeof(double), &spaced);
        MPI_Type_contiguous(elements, spaced, &type);
        MPI_Type_free(&pair);
        MPI_Type_free(&spaced);
        *doubles = 2 * (size_t)elements;
    }
    }
    MPI_Type_commit(&type);
    return type;
}

static double value_of(const planned *p, int round, int element)
{
    return p->from * 1e7 + p->to * 1e5 + round * 1e3 + p->tag + element * 1e-4;
}

/* The message's values in type-map order: each element's double, then for pairs the
 * element's index. */
static char *packed_values(const planned *p, int round, MPI_Datatype type, int *bytes)
{
    MPI_Pack_size(1, type, MPI_COMM_WORLD, bytes);
    char *packed = malloc((size_t)*bytes + 1);
    int at = 0;
    for (int e = 0; e < p->elements; e++) {
        double value = value_of(p, round, e);
        MPI_Pack(&value, 1, MPI_DOUBLE, packed, *bytes, &at, MPI_COMM_WORLD);
        if (p->layout == PAIRS)
            MPI_Pack(&e, 1, MPI_INT, packed, *bytes, &at, MPI_COMM_WORLD);
    }
    return packed;
}

static void post_send(const planned *p, int round, message *m, MPI_Request *request)
{
    size_t doubles;
    m->plan = *p;
    MPI_Datatype type = build(p->layout, p->elements, &doubles);
    m->buffer = calloc(doubles + 1, sizeof(double));
    int bytes, at = 0;
    char *packed = packed_values(p, round, type, &bytes);
    MPI_Unpack(packed, bytes, &at, m->buffer, 1, type, MPI_COMM_WORLD);
    free(packed);
    int rc = MPIX_Isend_zcopy(m->buffer, 1, type, p->to, p->tag, MPI_COMM_WORLD, request);
    CHECK(rc == MPI_SUCCESS, "round %d: MPIX_Isend_zcopy to %d tag %d: %s", round, p->to, p->tag,
          mpix_test_error_string(rc));
    MPI_Type_free(&type); /* as MPI allows while the send is pending */
    m->type = MPI_DATATYPE_NULL;
}

static void prepare_receive(const planned *p, message *m)
{
    size_t doubles;
    m->plan = *p;
    m->type = build(p->layout, p->elements, &doubles);
    m->buffer = calloc(doubles + 1, sizeof(double));
}

static void check_received(const message *m, int round)
{
    const planned *p = &m->plan;
    int expected_bytes, received_bytes = -1, at = 0, wrong = -1;
    char *expected = packed_values(p, round, m->type, &expected_bytes);
    char *received = malloc((size_t)expected_bytes + 1);
    MPI_Pack(m->buffer, 1, m->type, received, expected_bytes, &at, MPI_COMM_WORLD);
    for (int i = 0; i < expected_bytes && wrong < 0; i++)
        if (expected[i] != received[i])
            wrong = i;
    CHECK(wrong < 0, "round %d: message from %d tag %d (layout %d, %d elements): byte %d of %d differs", round,
          p->from, p->tag, p->layout, p->elements, wrong, expected_bytes);
    MPI_Get_count(&m->status, MPI_BYTE, &received_bytes);
    CHECK(m->status.MPI_SOURCE == p->from && m->status.MPI_TAG == p->tag && received_bytes == expected_bytes,
          "round %d: status of the message from %d tag %d says source %d tag %d, %d bytes (sent %d)", round, p->from,
          p->tag, m->status.MPI_SOURCE, m->status.MPI_TAG, received_bytes, expected_bytes);
    free(expected);
    free(received);
}

/* Completes @count requests (@receive_of[i]: the message of request i, or NULL for a
 * send) by @style, filling the receives' statuses. */
static void complete(int style, int count, MPI_Request *requests, message **receive_of, int round)
{
    MPI_Status *statuses = malloc(sizeof(MPI_Status) * (count + 1));
    int *indices = malloc(sizeof(int) * (count + 1)), rc = MPI_SUCCESS;
    switch (style) {
    case 0:
        rc = MPI_Waitall(count, requests, statuses);
        for (int i = 0; i < count; i++)
            if (receive_of[i])
                receive_of[i]->status = statuses[i];
        break;
    case 1:
        for (int left = count; left > 0 && rc == MPI_SUCCESS; left--) {
            int index;
            rc = MPI_Waitany(count, requests, &index, statuses);
            if (rc == MPI_SUCCESS && index != MPI_UNDEFINED && receive_of[index])
                receive_of[index]->status = statuses[0];
        }
        break;
    default:
        for (int done = 0; done < count && rc == MPI_SUCCESS;) {
            int finished;
            rc = MPI_Testsome(count, requests, &finished, indices, statuses);
            if (rc != MPI_SUCCESS || finished == MPI_UNDEFINED)
                break;
            for (int i = 0; i < finished; i++)
                if (receive_of[indices[i]])
                    receive_of[indices[i]]->status = statuses[i];
            done += finished;
        }
        break;
    }
    CHECK(rc == MPI_SUCCESS, "round %d: completion style %d: %s", round, style, mpix_test_error_string(rc));
    for (int i = 0; i < count; i++)
        CHECK(requests[i] == MPI_REQUEST_NULL, "round %d: completion style %d left request %d", round, style, i);
    free(statuses);
    free(indices);
}

static void run_round(int round)
{
    int planned_count = size * SENDS_PER_RANK, posted = 0, received_count = 0, sent_count = 0;
    planned *plans = malloc(sizeof(planned) * planned_count);
    message *receives = calloc(planned_count, sizeof(message)), *sends = calloc(planned_count, sizeof(message));
    MPI_Request *requests = malloc(sizeof(MPI_Request) * 2 * planned_count);
    message **receive_of = malloc(sizeof(message *) * 2 * planned_count);
    plan_round(round, plans);

    for (int i = 0; i < planned_count; i++) /* nonblocking receives, in plan order */
        if (plans[i].to == rank) {
            message *m = &receives[received_count++];
            prepare_receive(&plans[i], m);
            if (plans[i].receive_style > POSTED_FROM_ANY)
                continue;
            int source = plans[i].receive_style == POSTED_FROM_ANY ? MPI_ANY_SOURCE : plans[i].from;
            int rc = MPIX_Irecv_zcopy(m->buffer, 1, m->type, source, plans[i].tag, MPI_COMM_WORLD, &requests[posted]);
            CHECK(rc == MPI_SUCCESS, "round %d: MPIX_Irecv_zcopy tag %d: %s", round, plans[i].tag,
                  mpix_test_error_string(rc));
            receive_of[posted++] = m;
        }
    for (int i = 0; i < planned_count; i++)
        if (plans[i].from == rank) {
            post_send(&plans[i], round, &sends[sent_count++], &requests[posted]);
            receive_of[posted++] = NULL;
        }
    for (int i = 0; i < received_count; i++) { /* blocking receives, in plan order */
        message *m = &receives[i];
        if (m->plan.receive_style < BLOCKING_FROM_SENDER)
            continue;
        int source = m->plan.receive_style == BLOCKING_FROM_ANY ? MPI_ANY_SOURCE : m->plan.from;
        int rc = MPIX_Recv_zcopy(m->buffer, 1, m->type, source, m->plan.tag, MPI_COMM_WORLD, &m->status);
        CHECK(rc == MPI_SUCCESS, "round %d: MPIX_Recv_zcopy tag %d: %s", round, m->plan.tag,
              mpix_test_error_string(rc));
    }
    complete(round % COMPLETIONS, posted, requests, receive_of, round);

    for (int i = 0; i < received_count; i++) {
        check_received(&receives[i], round);
        MPI_Type_free(&receives[i].type);
        free(receives[i].buffer);
    }
    for (int i = 0; i < sent_count; i++)
        free(sends[i].buffer);
    free(plans);
    free(receives);
    free(sends);
    free(requests);
    free(receive_of);
}

/* Rank 0 sends rank 1 12 KiB, every other double, then 256 KiB, both nonblocking, and
 * waits for both; rank 1 posts the large one's receive first, receives the small one
 * blocking, then waits for the large one. */
static void blocked_behind_zero_copy(void)
{
    enum { SMALL = 1536, LARGE = 32768, SMALL_TAG = 1, LARGE_TAG = 2 };
    double *small = calloc(2 * SMALL, sizeof(double)), *large = calloc(LARGE, sizeof(double));
    MPI_Datatype every_other;
    MPI_Type_vector(SMALL, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    int rc = MPI_SUCCESS;
    if (rank == 0) {
        for (int i = 0; i < 2 * SMALL; i++)
            small[i] = i;
        for (int i = 0; i < LARGE; i++)
            large[i] = -i;
        MPI_Request requests[2];
        MPI_Status statuses[2];
        MPIX_Isend_zcopy(small, 1, every_other, 1, SMALL_TAG, MPI_COMM_WORLD, &requests[0]);
        MPIX_Isend_zcopy(large, LARGE, MPI_DOUBLE, 1, LARGE_TAG, MPI_COMM_WORLD, &requests[1]);
        rc = MPI_Waitall(2, requests, statuses);
    } else if (rank == 1) {
        MPI_Request request;
        MPIX_Irecv_zcopy(large, LARGE, MPI_DOUBLE, 0, LARGE_TAG, MPI_COMM_WORLD, &request);
        rc = MPIX_Recv_zcopy(small, 1, every_other, 0, SMALL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int wait_rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
        rc = rc != MPI_SUCCESS ? rc : wait_rc;
        int wrong = -1;
        for (int i = 0; i < 2 * SMALL && wrong < 0; i++)
            if (small[i] != (i % 2 ? 0 : i))
                wrong = i;
        for (int i = 0; i < LARGE && wrong < 0; i++)
            if (large[i] != -i)
                wrong = 2 * SMALL + i;
        CHECK(wrong < 0, "blocked behind zero-copy: element %d differs", wrong);
    }
    CHECK(rc == MPI_SUCCESS, "blocked behind zero-copy: %s", mpix_test_error_string(rc));
    MPI_Type_free(&every_other);
    free(small);
    free(large);
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &size);
    if (size < 2) {
        CHECK(size >= 2, "needs 2 ranks or more, has %d", size);
        return mpix_test_finish("zcopy_random_traffic");
    }
    blocked_behind_zero_copy();
    for (int round = 0; round < ROUNDS; round++)
        run_round(round);
    return mpix_test_finish("zcopy_random_traffic");
}
