/* SPDX-License-Identifier: BSD-3-Clause */
/* Randomized stress: one program of a few hundred rounds (ring Sendrecv with random
 * shifts, pairwise Send/Recv, gathers with MPI_ANY_SOURCE, a wildcard receive whose
 * status says where the data goes, zero counts, a strided datatype), with buffers at
 * random offsets of one small arena so that transfers share pages and sometimes bytes,
 * and buffers touched at once (read and written right after the call, send buffers
 * included) or late. It runs once with the blocking MPI calls and once guarded; the
 * arenas and every status must be identical. MPIX_TEST_GUARD_SEED picks the program. */
#include "mpix_test.h"

#include <mpix/guard.h>

enum { ARENA = 40 * 1024, ROUNDS = 300, MAX_BYTES = 12 * 1024 };

typedef struct ops {
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
    int (*sendrecv)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype, int, int, MPI_Comm,
                    MPI_Status *);
} ops;

/* xorshift: the same stream on every rank for the shape of a round, a per-rank one for
 * offsets and touches, and the same streams in both runs. */
static unsigned next(unsigned long long *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (unsigned)(*state >> 11);
}

static void touch(unsigned char *arena, unsigned long long *local, int round)
{
    int touches = (int)(next(local) % 4);
    for (int i = 0; i < touches; i++) {
        size_t at = next(local) % ARENA;
        arena[at] = (unsigned char)(arena[at] * 3u + (unsigned)round);
    }
}

/* Touch the buffer just used (a send buffer written right after the call must not change
 * what the peer gets; a receive buffer read right away must hold the data). */
static void touch_buffer(unsigned char *buffer, size_t bytes, unsigned long long *local, int round)
{
    if (bytes == 0 || next(local) % 2)
        return;
    size_t at = next(local) % bytes;
    buffer[at] = (unsigned char)(buffer[at] + 7u + (unsigned)round);
}

typedef struct record {
    int source, tag, count;
} record;

static int run(const ops *op, unsigned char *arena, record *records, unsigned long long seed, int rank, int ranks,
               MPI_Datatype strided, MPI_Comm wildcard_comm)
{
    unsigned long long shared = seed, local = seed * 7919 + (unsigned long long)rank + 1;
    int strided_size, recorded = 0;
    MPI_Aint strided_lb, strided_extent;
    MPI_Type_size(strided, &strided_size);
    MPI_Type_get_true_extent(strided, &strided_lb, &strided_extent);
    for (int i = 0; i < ARENA; i++)
        arena[i] = (unsigned char)(i * 13 + rank);

    for (int round = 0; round < ROUNDS; round++) {
        int kind = (int)(next(&shared) % 6);
        int bytes = (int)(next(&shared) % MAX_BYTES) + 1;
        if (next(&shared) % 10 == 0)
            bytes = 0;
        /* Offsets leave room to move a receive past its own send (below). */
        size_t send_at = next(&local) % (ARENA - 2 * MAX_BYTES - 128);
        size_t recv_at = next(&local) % (ARENA - 2 * MAX_BYTES - 128);
        unsigned char *send_buffer = arena + send_at, *recv_buffer = arena + recv_at;
        MPI_Status status;
        status.MPI_SOURCE = status.MPI_TAG = -1;
        int count = -1;

        if (kind == 0 || kind == 5) {
            /* Ring exchange; kind 5 with the strided datatype (MPI_Sendrecv needs disjoint
             * buffers: a receive that would meet the send moves past it, on the same page
             * or the next). Every rank takes every round: skipping one would deadlock. */
            int shift = 1 + (int)(next(&shared) % (unsigned)ranks);
            MPI_Datatype type = kind == 5 ? strided : MPI_BYTE;
            int elements = kind == 5 ? (bytes > 0) : bytes;
            size_t span = kind == 5 ? (size_t)strided_extent : (size_t)bytes;
            if (send_at < recv_at + span && recv_at < send_at + span)
                recv_buffer = arena + (recv_at = send_at + span + next(&local) % 100);
            op->sendrecv(send_buffer, elements, type, (rank + shift) % ranks, round, recv_buffer, elements, type,
                         (rank - shift % ranks + ranks) % ranks, round, MPI_COMM_WORLD, &status);
            MPI_Get_count(&status, type, &count);
            touch_buffer(send_buffer, span, &local, round);
            touch_buffer(recv_buffer, span, &local, round);
        } else if (kind == 1) {
            /* Pairs: the lower rank sends first. */
            int partner = rank ^ 1;
            if (partner >= ranks)
                continue;
            if (rank < partner) {
                op->send(send_buffer, bytes, MPI_BYTE, partner, round, MPI_COMM_WORLD);
                touch_buffer(send_buffer, (size_t)bytes, &local, round);
                op->recv(recv_buffer, bytes, MPI_BYTE, partner, round, MPI_COMM_WORLD, &status);
            } else {
                op->recv(recv_buffer, bytes, MPI_BYTE, partner, round, MPI_COMM_WORLD, &status);
                op->send(send_buffer, bytes, MPI_BYTE, partner, round, MPI_COMM_WORLD);
                touch_buffer(send_buffer, (size_t)bytes, &local, round);
            }
            MPI_Get_count(&status, MPI_BYTE, &count);
        } else if (kind == 2 || kind == 3) {
            /* Gather to a root with MPI_ANY_SOURCE; tags say who, so placement is fixed.
             * Kind 3 asks for no status (the receive returns before the envelope). */
            int root = round % ranks;
            int piece = bytes / (ranks > 1 ? ranks : 1);
            if (rank != root) {
                op->send(send_buffer, piece, MPI_BYTE, root, 1000 + rank, MPI_COMM_WORLD);
                touch_buffer(send_buffer, (size_t)piece, &local, round);
                continue;
            }
            for (int from = 0; from < ranks; from++) {
                if (from == root)
                    continue;
                op->recv(recv_buffer + (size_t)from * (size_t)piece, piece, MPI_BYTE, MPI_ANY_SOURCE, 1000 + from,
                         MPI_COMM_WORLD, kind == 2 ? &status : MPI_STATUS_IGNORE);
                if (kind == 2) {
                    MPI_Get_count(&status, MPI_BYTE, &count);
                    records[recorded++] = (record){ status.MPI_SOURCE, status.MPI_TAG, count };
                }
            }
            touch(arena, &local, round);
            continue;
        } else {
            /* One message each way round the ring, received with both wildcards; the status
             * says where it goes, which the program does at once. */
            int to = (rank + 1) % ranks, from_expected = (rank - 1 + ranks) % ranks;
            int length = bytes < 512 ? bytes : 512;
            if (ranks == 1)
                continue;
            if (send_at < recv_at + 512 && recv_at < send_at + 512)
                recv_buffer = arena + (recv_at = send_at + 512 + next(&local) % 100);
            /* Only this kind of round sends on wildcard_comm, one sender per receiver, so
             * what the wildcards match is fixed by MPI's non-overtaking order. */
            op->sendrecv(send_buffer, length, MPI_BYTE, to, 7, recv_buffer, 512, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                         wildcard_comm, &status);
            MPI_Get_count(&status, MPI_BYTE, &count);
            if (status.MPI_SOURCE == from_expected && count >= 0)
                memmove(arena + (size_t)(status.MPI_SOURCE * 600 % (ARENA - 600)), recv_buffer, (size_t)count);
        }
        records[recorded++] = (record){ status.MPI_SOURCE, status.MPI_TAG, count };
        touch(arena, &local, round);
    }
    return recorded;
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    const char *seed_text = getenv("MPIX_TEST_GUARD_SEED");
    unsigned long long seed = seed_text ? strtoull(seed_text, NULL, 10) : 20261122ULL;

    MPI_Datatype strided;
    MPI_Type_vector(100, 3, 7, MPI_BYTE, &strided);
    MPI_Type_commit(&strided);
    MPI_Comm wildcard_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &wildcard_comm);

    static const ops blocking = { MPI_Send, MPI_Recv, MPI_Sendrecv };
    static const ops guarded = { MPIX_Send_guarded, MPIX_Recv_guarded, MPIX_Sendrecv_guarded };
    /* Page-aligned plus a little, so that buffer edges fall anywhere within pages. */
    unsigned char *expected = malloc(ARENA + 64), *got = malloc(ARENA + 64);
    record *expected_records = calloc(ROUNDS * 8, sizeof(record)), *got_records = calloc(ROUNDS * 8, sizeof(record));

    for (int pass = 0; pass < 3; pass++) {
        unsigned long long program = seed + (unsigned long long)pass;
        int n_expected = run(&blocking, expected + 3, expected_records, program, rank, ranks, strided, wildcard_comm);
        int n_got = run(&guarded, got + 3, got_records, program, rank, ranks, strided, wildcard_comm);
        CHECK(MPIX_Guard_complete_all() == MPI_SUCCESS, "complete_all");
        CHECK(n_expected == n_got, "program %llu: %d statuses blocking, %d guarded", program, n_expected, n_got);
        for (int i = 0; i < n_expected && i < n_got; i++)
            CHECK(memcmp(&expected_records[i], &got_records[i], sizeof(record)) == 0,
                  "program %llu status %d: source %d tag %d count %d, blocking %d %d %d", program, i,
                  got_records[i].source, got_records[i].tag, got_records[i].count, expected_records[i].source,
                  expected_records[i].tag, expected_records[i].count);
        size_t first = 0;
        while (first < ARENA && expected[3 + first] == got[3 + first])
            first++;
        CHECK(first == ARENA, "program %llu: arenas differ first at byte %zu", program, first);
    }

#define PVAR(name) mpix_test_pvar("guard." name, MPI_COMM_NULL)
    if (ranks > 1 && PVAR("active") && PVAR("poll_ns") == 0)
        CHECK(PVAR("conflict_waits") > 0 && PVAR("faults") > 0 &&
                  (PVAR("copy_bytes") >= MAX_BYTES || PVAR("sends_in_place") > 0),
              "the program should exercise shared pages (conflict waits %lld), faults (%lld), in-place sends (%lld)",
              PVAR("conflict_waits"), PVAR("faults"), PVAR("sends_in_place"));
#undef PVAR
    MPI_Type_free(&strided);
    MPI_Comm_free(&wildcard_comm);
    free(expected);
    free(got);
    free(expected_records);
    free(got_records);
    return mpix_test_finish("guard_stress");
}
