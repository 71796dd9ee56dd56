/* SPDX-License-Identifier: BSD-3-Clause */
/* Nonblocking sends whose shape no blocking send decided take the way this machine's
 * measured copy rates price cheaper: a halo exchange (MPIX_Irecv_zcopy, MPIX_Isend_zcopy,
 * MPI_Waitall) of two layouts, the bytes of every message checked:
 *  - FACE: 130 blocks of 1 KiB a page apart (NAS MG's y-face);
 *  - SLABS: 4 blocks of 64 KiB.
 * With MPIX_TEST_ZCOPY_EXPECT=mpi the run sets MPIX_ZCOPY_KERNEL_IOVEC_NS (2 us) so that
 * the face's 130 iovecs lose, and MPIX_ZCOPY_MPI_BYTES_PER_NS (1 byte/ns) so that only
 * they do: its sends go through MPI, counted as priced (but the first ones, sent before
 * the peer told it can attach), and the slabs' 4 iovecs still go zero-copy; with
 * =zero_copy, iovecs so cheap (1 ns) that both go zero-copy. Without it, whatever the
 * measured rates say, one verdict per shape (on a machine whose MPI copies fast and
 * kernel slowly, both through MPI). Blocking round trips of the face first
 * (MPIX_TEST_ZCOPY_BLOCKING_FIRST) decide the shape: its nonblocking sends then follow
 * that learner, never priced; and their first duel, the face priced to lose, opens with
 * MPI's datatype way (four sends through MPI before the first zero-copy one). */
#include "mpix_test.h"
#include "zcopy_blocks.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 20, FACE_BLOCKS = 130, FACE_BLOCK = 1040, FACE_STRIDE = 135200, SLAB_BLOCKS = 4,
       SLAB_BLOCK = 65536, SLAB_STRIDE = 4 * 65536 };

/* @rounds halo exchanges (@blocking: round trips) of a vector between ranks 0 and 1; the
 * counters of this rank's sends over them, and in @ways (unless NULL) each blocking
 * send's way: z zero-copy, m MPI. The type is built and freed every round. */
static zcopy_counters exchange(int rank, char *send, char *receive, size_t bytes, int blocks, int block, int stride,
                               int rounds, int blocking, const char *what, char *ways)
{
    zcopy_counters before = zcopy_stats_of(MPI_COMM_WORLD);
    for (int round = 0; round < rounds && rank < 2; round++) {
        unsigned long zero_copy_before = zcopy_stats_of(MPI_COMM_WORLD).sent_zero_copy;
        MPI_Datatype type;
        MPI_Type_vector(blocks, block, stride, MPI_BYTE, &type);
        MPI_Type_commit(&type);
        int peer = 1 - rank;
        zcopy_blocks_fill(send, blocks, block, stride, round + rank);
        memset(receive, 0, bytes);
        if (blocking && rank == 0) {
            CHECK(MPIX_Send_zcopy(send, 1, type, peer, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "%s send", what);
            CHECK(MPIX_Recv_zcopy(receive, 1, type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "%s receive", what);
        } else if (blocking) {
            CHECK(MPIX_Recv_zcopy(receive, 1, type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "%s receive", what);
            CHECK(MPIX_Send_zcopy(send, 1, type, peer, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "%s send", what);
        } else {
            MPI_Request requests[2];
            CHECK(MPIX_Irecv_zcopy(receive, 1, type, peer, 0, MPI_COMM_WORLD, &requests[0]) == MPI_SUCCESS,
                  "%s irecv", what);
            CHECK(MPIX_Isend_zcopy(send, 1, type, peer, 0, MPI_COMM_WORLD, &requests[1]) == MPI_SUCCESS,
                  "%s isend", what);
            MPI_Status statuses[2];
            CHECK(MPI_Waitall(2, requests, statuses) == MPI_SUCCESS, "%s waitall", what);
        }
        if (ways)
            ways[round] = zcopy_stats_of(MPI_COMM_WORLD).sent_zero_copy > zero_copy_before ? 'z' : 'm';
        zcopy_blocks_check(receive, blocks, block, stride, round + peer, what, round);
        MPI_Type_free(&type);
    }
    zcopy_counters after = zcopy_stats_of(MPI_COMM_WORLD);
    return (zcopy_counters){ .sent_mpi = after.sent_mpi - before.sent_mpi,
                             .sent_zero_copy = after.sent_zero_copy - before.sent_zero_copy,
                             .sent_priced = after.sent_priced - before.sent_priced };
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
    int blocking_first = getenv("MPIX_TEST_ZCOPY_BLOCKING_FIRST") != NULL;
    size_t bytes = (size_t)FACE_BLOCKS * FACE_STRIDE;
    char *send = calloc(bytes, 1), *receive = calloc(bytes, 1);
    CHECK(send && receive, "no memory for %zu bytes", bytes);

    enum { BLOCKING_ROUNDS = 64 };
    char blocking_ways[BLOCKING_ROUNDS + 1] = { 0 };
    if (blocking_first)
        (void)exchange(rank, send, receive, bytes, FACE_BLOCKS, FACE_BLOCK, FACE_STRIDE, BLOCKING_ROUNDS, 1,
                       "face, blocking", blocking_ways);
    zcopy_counters face =
        exchange(rank, send, receive, bytes, FACE_BLOCKS, FACE_BLOCK, FACE_STRIDE, ROUNDS, 0, "face", NULL);
    zcopy_counters slabs =
        exchange(rank, send, receive, bytes, SLAB_BLOCKS, SLAB_BLOCK, SLAB_STRIDE, ROUNDS, 0, "slabs", NULL);
    if (rank < 2) {
        if (rank == 0)
            printf("face: %lu zero-copy, %lu MPI (%lu priced); slabs: %lu zero-copy, %lu MPI (%lu priced)\n",
                   face.sent_zero_copy, face.sent_mpi, face.sent_priced, slabs.sent_zero_copy, slabs.sent_mpi,
                   slabs.sent_priced);
        /* A rank's first messages to its peer go through MPI until the peer has told it
         * can attach (asked with them). */
        CHECK(face.sent_zero_copy + face.sent_mpi == ROUNDS, "face: %lu + %lu sends of %d", face.sent_zero_copy,
              face.sent_mpi, ROUNDS);
        CHECK(face.sent_priced == 0 || face.sent_zero_copy == 0 || face.sent_zero_copy + face.sent_priced == ROUNDS,
              "face: %lu priced, %lu zero-copy: one verdict per shape", face.sent_priced, face.sent_zero_copy);
        CHECK(slabs.sent_priced == 0 || slabs.sent_zero_copy == 0 || slabs.sent_zero_copy + slabs.sent_priced == ROUNDS,
              "slabs: %lu priced, %lu zero-copy: one verdict per shape", slabs.sent_priced, slabs.sent_zero_copy);
        if (getenv("MPIX_ZCOPY_MPI_BYTES_PER_NS"))   /* MPI's copies priced slow */
            CHECK(slabs.sent_priced == 0, "slabs: %lu sends priced through MPI", slabs.sent_priced);
        if (blocking_first) {
            CHECK(face.sent_priced == 0, "face after blocking sends decided it: %lu priced", face.sent_priced);
            /* A rank's first send goes through MPI before the peer told it can attach;
             * then the duel's first burst, four sends, MPI's, and zero-copy's after. */
            CHECK(strspn(blocking_ways, "m") >= 4 && strchr(blocking_ways, 'z'),
                  "blocking sends of a face priced to lose: %s (4 MPI first, then zero-copy)", blocking_ways);
        }
        else if (expect && strcmp(expect, "mpi") == 0)
            CHECK(face.sent_priced >= ROUNDS / 2 && face.sent_zero_copy == 0, "face: %lu of %d priced, %lu zero-copy",
                  face.sent_priced, ROUNDS, face.sent_zero_copy);
        else if (expect && strcmp(expect, "zero_copy") == 0)
            CHECK(face.sent_priced == 0 && face.sent_zero_copy >= ROUNDS / 2, "face: %lu priced, %lu of %d zero-copy",
                  face.sent_priced, face.sent_zero_copy, ROUNDS);
        if (expect)
            CHECK(slabs.sent_zero_copy == ROUNDS, "slabs: %lu of %d zero-copy", slabs.sent_zero_copy, ROUNDS);
    }
    free(send);
    free(receive);
    return mpix_test_finish("zcopy priced");
}
