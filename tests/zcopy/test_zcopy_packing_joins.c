/* SPDX-License-Identifier: BSD-3-Clause */
/* A layout kernel copies may serve, on which zero-copy loses, lets the packed ways into
 * its duels: NAS MG's y-face (130 rows of 1 KiB, 135 KB apart), its type built and
 * freed every round, sent both ways as a ping-pong; every byte checked. The run makes
 * zero-copy lose by far (MPIX_ZCOPY_PULL_DELAY_US: every zero-copy receive waits 3 ms)
 * and prices iovecs low (MPIX_ZCOPY_KERNEL_IOVEC_NS=1) so that the cost model does not
 * take the face for too fragmented, which would send it MPI's ways from the start. Each
 * sender must have tried zero-copy, left it, and tried packing after: before, such a
 * layout learnt between zero-copy and the datatype only.
 * With MPIX_TEST_LARGE_BLOCKS=1 the face is MILC's instead (32 rows of 24 KiB, 768 KiB
 * apart), whose blocks are too large for packing to beat the datatype: zero-copy must
 * still be left, and no send packed. */
#include "mpix_test.h"
#include "zcopy_blocks.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <stdlib.h>

enum { ROUNDS = 160 };

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    const char *large = getenv("MPIX_TEST_LARGE_BLOCKS");
    int large_blocks = large && atoi(large) == 1;
    const int face_blocks = large_blocks ? 32 : 130, face_block = large_blocks ? 24576 : 1040,
              face_stride = large_blocks ? 786432 : 135200;
    size_t bytes = (size_t)face_blocks * face_stride;
    char *send = calloc(bytes, 1), *receive = calloc(bytes, 1);
    CHECK(send && receive, "no memory for %zu bytes", bytes);
    int peer = 1 - rank;
    for (int round = 0; round < ROUNDS && rank < 2; round++) {
        MPI_Datatype face;
        MPI_Type_vector(face_blocks, face_block, face_stride, MPI_BYTE, &face);
        MPI_Type_commit(&face);
        zcopy_blocks_fill(send, face_blocks, face_block, face_stride, round + rank);
        for (int turn = 0; turn < 2; turn++) {
            if (turn == rank)
                CHECK(MPIX_Send_zcopy(send, 1, face, peer, round, MPI_COMM_WORLD) == MPI_SUCCESS, "send %d", round);
            else
                CHECK(MPIX_Recv_zcopy(receive, 1, face, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                          MPI_SUCCESS,
                      "receive %d", round);
        }
        zcopy_blocks_check(receive, face_blocks, face_block, face_stride, round + peer, "face", round);
        MPI_Type_free(&face);
    }
    if (rank < 2) {
        zcopy_counters sent = zcopy_stats_of(MPI_COMM_WORLD);
        unsigned long packing = sent.sent_packed + sent.sent_unpacked;
        printf("rank %d: %lu zero-copy, %lu through MPI (%lu packed, %lu packed and unpacked), %lu fragmented\n", rank,
               sent.sent_zero_copy, sent.sent_mpi, sent.sent_packed, sent.sent_unpacked, sent.sent_fragmented);
        CHECK(sent.sent_fragmented == 0, "%lu sends priced too fragmented for kernel copies", sent.sent_fragmented);
        CHECK(sent.sent_zero_copy >= 1 && sent.sent_zero_copy <= ROUNDS / 4, "%lu of %d sends zero-copy",
              sent.sent_zero_copy, ROUNDS);
        if (large_blocks)
            CHECK(packing == 0, "%lu packed sends of 24 KiB rows (%lu zero-copy, %lu through MPI)", packing,
                  sent.sent_zero_copy, sent.sent_mpi);
        else
            CHECK(packing >= 1, "no packed send after zero-copy lost (%lu zero-copy, %lu through MPI)",
                  sent.sent_zero_copy, sent.sent_mpi);
    }
    free(send);
    free(receive);
    return mpix_test_finish("zcopy packing joins");
}
