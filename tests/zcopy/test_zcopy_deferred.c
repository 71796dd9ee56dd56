/* SPDX-License-Identifier: BSD-3-Clause */
/* Zero-copy deferred for new layouts that a cheaper layout's duel says it loses. Rank 0
 * sends, rank 1 echoes; every message's bytes are checked on arrival. Three vectors of
 * 128 KiB and more, in order of the kernel copy's price per byte (blocks far apart, so
 * that no span bridges them):
 *  - A: 128 blocks of 1 KiB, sent until its learner has decided;
 *  - B: 256 blocks of 768 B (priced higher than A, not so high that the cost model
 *    sends it through MPI for good);
 *  - C: 2 blocks of 128 KiB (priced lower than both).
 * Whether zero-copy loses A by 1.5x is the machine's business (on the 2-core development
 * VM it took 5 times MPI's time), so the test asserts the rule both ways, on each rank's
 * own sends: B's first sends are either all deferred and all through MPI (A lost) or
 * none deferred; C's are never deferred; with a forced way (MPIX_ZCOPY_METHOD) nothing
 * is deferred. MPIX_TEST_ZCOPY_EXPECT=deferred (for machines known to lose A) requires
 * the first.
 *
 * MPIX_TEST_ZCOPY_AFTER_PIPES=1 (with every zero-copy receive made to wait,
 * MPIX_ZCOPY_PULL_DELAY_US, so that the kernel's copies lose): a win through pipes does
 * not count as the kernel's. P, 128 blocks of 1 KiB, goes through pipes where this
 * machine's rates say they pay, and may win there; A, 2 blocks of 128 KiB (too large
 * for pipes), loses; then C, 8 blocks of 32 KiB, priced between A and P, has its first
 * sends deferred whatever P's duel decided. */
#include "mpix_test.h"
#include "zcopy_blocks.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <stdlib.h>
#include <string.h>

enum { STRIDE = 65536, DECIDE_SENDS = 60, NEW_SENDS = 10 };

static char *send_buffer, *receive_buffer;
static size_t buffer_bytes;

/* @rounds round trips of a vector of @blocks blocks of @block bytes, one every @stride
 * bytes; the counters of this rank's sends over them. */
static zcopy_counters exchange(int rank, int blocks, int block, int stride, int rounds, const char *what)
{
    MPI_Datatype type;
    MPI_Type_vector(blocks, block, stride, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    zcopy_counters before = zcopy_stats_of(MPI_COMM_WORLD);
    for (int round = 0; round < rounds && rank < 2; round++) {
        int peer = 1 - rank;
        if (rank == 0) {
            zcopy_blocks_fill(send_buffer, blocks, block, stride, round);
            CHECK(MPIX_Send_zcopy(send_buffer, 1, type, peer, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "%s send", what);
        }
        memset(receive_buffer, 0, buffer_bytes);
        CHECK(MPIX_Recv_zcopy(receive_buffer, 1, type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "%s receive", what);
        zcopy_blocks_check(receive_buffer, blocks, block, stride, round, what, round);
        if (rank == 1)
            CHECK(MPIX_Send_zcopy(receive_buffer, 1, type, peer, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "%s echo", what);
    }
    zcopy_counters after = zcopy_stats_of(MPI_COMM_WORLD);
    MPI_Type_free(&type);
    return (zcopy_counters){ .sent_mpi = after.sent_mpi - before.sent_mpi,
                             .sent_zero_copy = after.sent_zero_copy - before.sent_zero_copy,
                             .sent_deferred = after.sent_deferred - before.sent_deferred,
                             .sent_slower = after.sent_slower - before.sent_slower,
                             .pulled_piped = after.pulled_piped - before.pulled_piped };
}

/* MPIX_TEST_ZCOPY_AFTER_PIPES: P, then A, then C (above). */
static void after_pipes(int rank)
{
    zcopy_counters p = exchange(rank, 128, 1024, STRIDE, DECIDE_SENDS, "P: 1 KiB blocks");
    zcopy_counters a = exchange(rank, 2, 131072, 4 * STRIDE, DECIDE_SENDS, "A: 128 KiB blocks");
    zcopy_counters c = exchange(rank, 8, 32768, STRIDE, NEW_SENDS, "C: 32 KiB blocks");
    if (rank == 0)
        printf("P: %lu zero-copy (%lu received piped), %lu MPI (%lu decided slower); A: %lu zero-copy, %lu MPI; "
               "C: %lu zero-copy, %lu MPI, %lu deferred\n",
               p.sent_zero_copy, p.pulled_piped, p.sent_mpi, p.sent_slower, a.sent_zero_copy, a.sent_mpi,
               c.sent_zero_copy, c.sent_mpi, c.sent_deferred);
    if (rank < 2) {
        CHECK(a.sent_zero_copy > 0, "A never went zero-copy (%lu deferred)", a.sent_deferred);
        CHECK(c.sent_deferred == NEW_SENDS && c.sent_zero_copy == 0,
              "C: %lu of %d sends deferred, %lu zero-copy (P: %lu received piped)", c.sent_deferred, NEW_SENDS,
              c.sent_zero_copy, p.pulled_piped);
    }
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    const char *method = getenv("MPIX_ZCOPY_METHOD"), *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
    int forced = method && strcmp(method, "auto") != 0;
    buffer_bytes = (size_t)256 * STRIDE;
    send_buffer = calloc(buffer_bytes, 1);
    receive_buffer = calloc(buffer_bytes, 1);

    if (getenv("MPIX_TEST_ZCOPY_AFTER_PIPES")) {
        after_pipes(rank);
        free(send_buffer);
        free(receive_buffer);
        return mpix_test_finish("zcopy deferred after pipes");
    }
    zcopy_counters a = exchange(rank, 128, 1024, STRIDE, DECIDE_SENDS, "A: 1 KiB blocks");
    zcopy_counters b = exchange(rank, 256, 768, STRIDE, NEW_SENDS, "B: 768 B blocks");
    zcopy_counters c = exchange(rank, 2, 131072, 4 * STRIDE, NEW_SENDS, "C: 128 KiB blocks");
    if (rank < 2) {
        if (rank == 0)
            printf("A: %lu zero-copy, %lu MPI (%lu decided slower); B: %lu zero-copy, %lu MPI, %lu deferred; "
                   "C: %lu zero-copy, %lu MPI, %lu deferred\n",
                   a.sent_zero_copy, a.sent_mpi, a.sent_slower, b.sent_zero_copy, b.sent_mpi, b.sent_deferred,
                   c.sent_zero_copy, c.sent_mpi, c.sent_deferred);
        CHECK(a.sent_deferred == 0, "A, the first layout, had %lu sends deferred", a.sent_deferred);
        CHECK(b.sent_deferred == 0 || (b.sent_deferred == NEW_SENDS && b.sent_zero_copy == 0 &&
                                       b.sent_mpi == NEW_SENDS),
              "B: %lu of %d sends deferred, %lu zero-copy, %lu MPI", b.sent_deferred, NEW_SENDS,
              b.sent_zero_copy, b.sent_mpi);
        CHECK(c.sent_deferred == 0, "C, priced below A and B, had %lu sends deferred", c.sent_deferred);
        if (forced)
            CHECK(b.sent_deferred == 0, "%lu sends deferred with MPIX_ZCOPY_METHOD=%s", b.sent_deferred, method);
        if (expect && strcmp(expect, "deferred") == 0)
            CHECK(b.sent_deferred == NEW_SENDS, "B: %lu of %d sends deferred", b.sent_deferred, NEW_SENDS);
    }
    free(send_buffer);
    free(receive_buffer);
    return mpix_test_finish("zcopy deferred");
}
