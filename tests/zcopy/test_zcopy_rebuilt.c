/* SPDX-License-Identifier: BSD-3-Clause */
/* Datatypes built, committed, used for a few messages and freed every iteration, as
 * applications write halo exchanges: rank 0 sends, rank 1 receives (others idle), each
 * iteration building a nested vector (MILC-like, 32 blocks of 24 KiB), an indexed type
 * of 600 blocks (too many to travel in the header, so the receiver must know the
 * sender's layout) and a resized copy of the vector with another extent, sent with
 * count 2 (same constructors, another type map: it must not be taken for the vector).
 * Every message's bytes are checked. With zero-copy forced (MPIX_ZCOPY_METHOD=direct),
 * the test asserts that layouts are memoized by content, not by handle: each side
 * flattens each of the three contents once, whatever the number of iterations, and the
 * receiver reads each of the sender's three layouts (all too long for the header) from
 * its memory once. A scattered type rebuilt each iteration goes through MPI, known after
 * its first send by its envelope alone. An exchange of particles as LAMMPS writes it (a
 * struct at MPI_BOTTOM of hindexed-block members picking atoms out of per-atom arrays,
 * the receiver appending them) whose atom count changes every iteration goes through
 * MPI without any key built: its first send told by the members' envelopes, the later
 * ones by the shape of the same struct at another size. Then a type freed and a
 * different one built (MPI may give it the same handle) still moves its own bytes. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <stdlib.h>
#include <string.h>

enum { ITERATIONS = 12, MESSAGES = 3, PLANE = 24 * 1024, PLANES = 32, STRIDE = 4 * PLANE };
enum { INDEXED_BLOCKS = 600, SCATTERED_BLOCKS = 4096 };
enum { ATOMS = 16384, FIRST_SENT = 1000, SENT_STEP = 37 };   /* atom 7 * 1406 < ATOMS */

/* Rank 0 sends atoms 0, 7, 14, ... of its coordinates (3 doubles each) and tags; rank 1
 * appends them after its own ATOMS atoms. */
static void particles(int rank, int sent, int salt)
{
    static double coordinates[2 * ATOMS * 3];
    static int tags[2 * ATOMS];
    MPI_Datatype members[2], triple, exchange_type;
    MPI_Aint addresses[2];
    int lengths[2] = { 1, 1 };
    MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
    if (rank == 0) {
        MPI_Aint *at = malloc(sizeof *at * (size_t)sent);
        for (int i = 0; i < ATOMS; i++) {
            for (int d = 0; d < 3; d++)
                coordinates[3 * i + d] = salt * 1e6 + i + 0.25 * d;
            tags[i] = salt * 100000 + i;
        }
        for (int i = 0; i < sent; i++)
            MPI_Get_address(&coordinates[3 * 7 * i], &at[i]);
        MPI_Type_create_hindexed_block(sent, 1, at, triple, &members[0]);
        for (int i = 0; i < sent; i++)
            MPI_Get_address(&tags[7 * i], &at[i]);
        MPI_Type_create_hindexed_block(sent, 1, at, MPI_INT, &members[1]);
        free(at);
    } else {
        memset(coordinates, 0, sizeof coordinates);
        memset(tags, 0, sizeof tags);
        MPI_Type_contiguous(sent, triple, &members[0]);
        MPI_Type_contiguous(sent, MPI_INT, &members[1]);
    }
    MPI_Get_address(&coordinates[rank == 0 ? 0 : 3 * ATOMS], &addresses[0]);
    MPI_Get_address(&tags[rank == 0 ? 0 : ATOMS], &addresses[1]);
    if (rank == 0)
        addresses[0] = addresses[1] = 0;   /* the members hold absolute addresses */
    MPI_Type_create_struct(2, lengths, addresses, members, &exchange_type);
    MPI_Type_commit(&exchange_type);
    if (rank == 0)
        CHECK(MPIX_Send_zcopy(MPI_BOTTOM, 1, exchange_type, 1, salt, MPI_COMM_WORLD) == MPI_SUCCESS,
              "particles %d: send", sent);
    else if (rank == 1) {
        CHECK(MPIX_Recv_zcopy(MPI_BOTTOM, 1, exchange_type, 0, salt, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                  MPI_SUCCESS, "particles %d: receive", sent);
        int wrong = 0;
        for (int i = 0; i < sent; i++) {
            for (int d = 0; d < 3; d++)
                wrong += coordinates[3 * (ATOMS + i) + d] != salt * 1e6 + 7 * i + 0.25 * d;
            wrong += tags[ATOMS + i] != salt * 100000 + 7 * i;
        }
        CHECK(wrong == 0, "particles %d: %d values wrong", sent, wrong);
    }
    MPI_Type_free(&exchange_type);
    MPI_Type_free(&members[0]);
    MPI_Type_free(&members[1]);
    MPI_Type_free(&triple);
}

static void build_vector(MPI_Datatype *type)
{
    MPI_Datatype plane;
    MPI_Type_contiguous(PLANE, MPI_BYTE, &plane);
    MPI_Type_create_hvector(PLANES, 1, STRIDE, plane, type);
    MPI_Type_free(&plane);
    MPI_Type_commit(type);
}

static void build_indexed(MPI_Datatype *type)
{
    int lengths[INDEXED_BLOCKS], displacements[INDEXED_BLOCKS];
    for (int b = 0; b < INDEXED_BLOCKS; b++) {
        lengths[b] = 1 + b % 7;
        displacements[b] = 16 * b + (b % 3);
    }
    MPI_Type_indexed(INDEXED_BLOCKS, lengths, displacements, MPI_DOUBLE, type);
    MPI_Type_commit(type);
}

/* The vector with its extent stretched: count 2 places the second element elsewhere. */
static void build_resized(MPI_Datatype *type)
{
    MPI_Datatype vector;
    build_vector(&vector);
    MPI_Type_create_resized(vector, 0, (MPI_Aint)PLANES * STRIDE + 4096, type);
    MPI_Type_free(&vector);
    MPI_Type_commit(type);
}

static size_t span_of(MPI_Datatype type, int count)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    return (size_t)(true_lb + (count - 1) * extent + true_extent);
}

/* Rank 0 sends @count of @type from a buffer of known bytes; rank 1 receives into a
 * zeroed buffer and compares with MPI_Pack of both sides, which reads the same type map. */
static void exchange(int rank, MPI_Datatype type, int count, int salt, const char *what)
{
    size_t span = span_of(type, count);
    unsigned char *buffer = calloc(span, 1);
    int packed_size;
    MPI_Pack_size(count, type, MPI_COMM_WORLD, &packed_size);
    if (rank == 0) {
        for (size_t i = 0; i < span; i++)
            buffer[i] = (unsigned char)(i * 7 + salt);
        CHECK(MPIX_Send_zcopy(buffer, count, type, 1, salt, MPI_COMM_WORLD) == MPI_SUCCESS, "%s: send", what);
    } else if (rank == 1) {
        MPI_Status status;
        CHECK(MPIX_Recv_zcopy(buffer, count, type, 0, salt, MPI_COMM_WORLD, &status) == MPI_SUCCESS, "%s: receive",
              what);
        unsigned char *expected = malloc(span), *got = malloc(packed_size), *want = malloc(packed_size);
        for (size_t i = 0; i < span; i++)
            expected[i] = (unsigned char)(i * 7 + salt);
        int got_at = 0, want_at = 0;
        MPI_Pack(buffer, count, type, got, packed_size, &got_at, MPI_COMM_SELF);
        MPI_Pack(expected, count, type, want, packed_size, &want_at, MPI_COMM_SELF);
        CHECK(got_at == want_at && memcmp(got, want, got_at) == 0, "%s: the received bytes differ", what);
        /* Bytes outside the type map stay as they were. */
        size_t touched = 0;
        for (size_t i = 0; i < span; i++)
            touched += buffer[i] != 0;
        CHECK(touched <= (size_t)packed_size, "%s: %zu bytes written for a message of %d", what, touched, packed_size);
        free(expected);
        free(got);
        free(want);
    }
    free(buffer);
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    const char *method = getenv("MPIX_ZCOPY_METHOD");
    int forced = method && strcmp(method, "direct") == 0;
    zcopy_counters before = zcopy_stats_of(MPI_COMM_WORLD);

    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        MPI_Datatype vector, indexed, resized;
        build_vector(&vector);
        build_indexed(&indexed);
        build_resized(&resized);
        for (int m = 0; m < MESSAGES; m++) {
            exchange(rank, vector, 1, 3 * m + 1, "vector");
            exchange(rank, indexed, 1, 3 * m + 2, "indexed");
            exchange(rank, resized, 2, 3 * m + 3, "resized, count 2");
        }
        MPI_Type_free(&vector);
        MPI_Type_free(&indexed);
        MPI_Type_free(&resized);
    }

    zcopy_counters after = zcopy_stats_of(MPI_COMM_WORLD);
    unsigned long flattened = after.layouts_flattened - before.layouts_flattened;
    unsigned long read = after.layouts_read - before.layouts_read;
    unsigned long zero_copy = after.sent_zero_copy - before.sent_zero_copy;
    if (forced && rank == 0) {
        /* The first message to a peer goes through MPI: it asks whether the peer can attach. */
        CHECK(zero_copy == 3 * ITERATIONS * MESSAGES - 1, "%lu of %d messages zero-copy", zero_copy,
              3 * ITERATIONS * MESSAGES);
        CHECK(flattened == 3, "the sender flattened %lu layouts for 3 contents", flattened);
    }
    if (forced && rank == 1) {
        CHECK(flattened == 3, "the receiver flattened %lu layouts for 3 contents", flattened);
        CHECK(read == 3, "the sender's 3 layouts were read %lu times", read);
    }
    /* Whatever the path: each side flattened a content at most once. */
    CHECK(flattened <= 3, "%lu layouts flattened for 3 contents", flattened);

    /* A scattered gather of single doubles, rebuilt every iteration as LAMMPS rebuilds its
     * exchange types: too fragmented for a kernel copy, so it goes through MPI; after the
     * first, each new handle is known by its shape alone (zcopy.sent_by_shape), without
     * reading its constructors, and its bytes still arrive. */
    zcopy_counters scattered_before = zcopy_stats_of(MPI_COMM_WORLD);
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        MPI_Datatype scattered;
        MPI_Aint displacements[SCATTERED_BLOCKS];
        for (int b = 0; b < SCATTERED_BLOCKS; b++)
            displacements[b] = (MPI_Aint)b * 520;
        MPI_Type_create_hindexed_block(SCATTERED_BLOCKS, 1, displacements, MPI_DOUBLE, &scattered);
        MPI_Type_commit(&scattered);
        for (int m = 0; m < MESSAGES; m++)
            exchange(rank, scattered, 1, 50 + m, "scattered doubles");
        MPI_Type_free(&scattered);
    }
    zcopy_counters scattered_after = zcopy_stats_of(MPI_COMM_WORLD);
    if (!method && rank == 0) {
        unsigned long fragmented = scattered_after.sent_fragmented - scattered_before.sent_fragmented;
        unsigned long by_shape = scattered_after.sent_by_shape - scattered_before.sent_by_shape;
        unsigned long keyed = scattered_after.layouts_flattened - scattered_before.layouts_flattened;
        CHECK(fragmented == ITERATIONS * MESSAGES, "%lu of %d scattered sends found too fragmented", fragmented,
              ITERATIONS * MESSAGES);
        CHECK(by_shape == ITERATIONS * MESSAGES, "%lu of %d scattered sends decided by envelope or shape", by_shape,
              ITERATIONS * MESSAGES);
        CHECK(keyed == 0, "the scattered content was flattened %lu times", keyed);
    }

    /* Particles: another atom count every iteration, as every exchange has. */
    zcopy_counters particles_before = zcopy_stats_of(MPI_COMM_WORLD);
    for (int iteration = 0; iteration < ITERATIONS; iteration++)
        particles(rank, FIRST_SENT + SENT_STEP * iteration, 60 + iteration);
    zcopy_counters particles_after = zcopy_stats_of(MPI_COMM_WORLD);
    if (!method && rank == 0) {
        unsigned long by_shape = particles_after.sent_by_shape - particles_before.sent_by_shape;
        unsigned long keyed = particles_after.layouts_flattened - particles_before.layouts_flattened;
        CHECK(by_shape == ITERATIONS, "%lu of %d particle exchanges decided by envelope or shape", by_shape,
              ITERATIONS);
        CHECK(keyed == 0, "particle exchanges flattened %lu layouts", keyed);
    }

    /* A type freed, then another built: if MPI hands out the same handle, its memoized
     * layout must not be the old one's. */
    for (int round = 0; round < 2; round++) {
        MPI_Datatype type;
        if (round == 0)
            build_indexed(&type);
        else {
            MPI_Type_vector(300, 3, 5, MPI_DOUBLE, &type);
            MPI_Type_commit(&type);
        }
        exchange(rank, type, 1, 40 + round, round == 0 ? "first type" : "a new type after a free");
        MPI_Type_free(&type);
    }
    return mpix_test_finish("zcopy_rebuilt");
}
