/* SPDX-License-Identifier: BSD-3-Clause */
/* Arguments MPI_Send, MPI_Recv and MPI_Probe would reject are rejected by the zcopy
 * calls too, with an error through the communicator's handler, raised once: no crash,
 * no hang. */
#include "mpix_test.h"

#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, data[64] = { 0 };
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype uncommitted, freed;
    MPI_Type_vector(4, 2, 4, MPI_INT, &uncommitted);
    MPI_Type_contiguous(2, MPI_INT, &freed);
    MPI_Type_commit(&freed);
    MPI_Type_free(&freed);

    EXPECT_CLASS(MPIX_Send_zcopy(data, 1, uncommitted, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "send, uncommitted type");
    EXPECT_CLASS(MPIX_Send_zcopy(data, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "send, null type");
    EXPECT_CLASS(MPIX_Send_zcopy(data, 1, freed, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "send, freed type");
    EXPECT_CLASS(MPIX_Send_zcopy(data, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "send, negative count");
    EXPECT_CLASS(MPIX_Send_zcopy(data, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "send, rank out of range");
    EXPECT_CLASS(MPIX_Send_zcopy(data, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "send, negative rank");
    EXPECT_CLASS(MPIX_Send_zcopy(data, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG, "send, negative tag");
    EXPECT_CLASS(MPIX_Send_zcopy(data, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, "send, null communicator");
    EXPECT_CLASS(MPIX_Recv_zcopy(data, 1, uncommitted, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE,
                 "recv, uncommitted type");
    EXPECT_CLASS(MPIX_Recv_zcopy(data, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT,
                 "recv, negative count");
    EXPECT_CLASS(MPIX_Recv_zcopy(data, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK,
                 "recv, rank out of range");
    EXPECT_CLASS(MPIX_Recv_zcopy(data, 1, MPI_INT, 0, -3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TAG,
                 "recv, negative tag");
    EXPECT_CLASS(MPIX_Recv_zcopy(data, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE), MPI_ERR_COMM,
                 "recv, null communicator");
    EXPECT_ERROR(MPIX_Type_free_comm(NULL, MPI_COMM_WORLD), "type free, NULL");
    EXPECT_ERROR(MPIX_Type_commit_comm(NULL, MPI_COMM_WORLD), "type commit, NULL");
    MPI_Datatype null_type = MPI_DATATYPE_NULL;
    EXPECT_ERROR(MPIX_Type_free_comm(&null_type, MPI_COMM_WORLD), "type free, null type");
    EXPECT_ERROR(MPIX_Type_commit_comm(&null_type, MPI_COMM_WORLD), "type commit, null type");
    MPI_Datatype vector;
    MPI_Type_vector(4, 2, 4, MPI_INT, &vector);
    EXPECT_ERROR(MPIX_Type_commit_comm(&vector, MPI_COMM_NULL), "type commit, null communicator");

    /* Each error raised once, on every path: messages MPI takes at once (with MPICH, up to
     * 16 KiB) and longer ones, blocking and not. */
    MPI_Comm counting = mpix_test_counting_comm();
    static char large[32768];
    MPI_Request request;
    EXPECT_RAISED_ONCE(MPIX_Send_zcopy(data, 1, uncommitted, 0, 0, counting), "once: send, uncommitted type");
    EXPECT_RAISED_ONCE(MPIX_Send_zcopy(data, 1, MPI_DATATYPE_NULL, 0, 0, counting), "once: send, null type");
    EXPECT_RAISED_ONCE(MPIX_Send_zcopy(data, -1, MPI_INT, 0, 0, counting), "once: send, negative count");
    EXPECT_RAISED_ONCE(MPIX_Send_zcopy(data, 1, MPI_INT, size, 0, counting), "once: send, rank out of range");
    EXPECT_RAISED_ONCE(MPIX_Send_zcopy(data, 1, MPI_INT, 0, -3, counting), "once: send, negative tag");
    EXPECT_RAISED_ONCE(MPIX_Send_zcopy(large, sizeof large, MPI_CHAR, 0, -3, counting),
                       "once: send of 32 KiB, negative tag");
    EXPECT_RAISED_ONCE(MPIX_Recv_zcopy(data, 1, uncommitted, 0, 0, counting, MPI_STATUS_IGNORE),
                       "once: recv, uncommitted type");
    EXPECT_RAISED_ONCE(MPIX_Recv_zcopy(data, -1, MPI_INT, 0, 0, counting, MPI_STATUS_IGNORE),
                       "once: recv, negative count");
    EXPECT_RAISED_ONCE(MPIX_Recv_zcopy(data, 1, MPI_INT, size, 0, counting, MPI_STATUS_IGNORE),
                       "once: recv, rank out of range");
    EXPECT_RAISED_ONCE(MPIX_Recv_zcopy(data, 1, MPI_INT, 0, -3, counting, MPI_STATUS_IGNORE),
                       "once: recv, negative tag");
    EXPECT_RAISED_ONCE(MPIX_Recv_zcopy(large, sizeof large, MPI_CHAR, 0, -3, counting, MPI_STATUS_IGNORE),
                       "once: recv of 32 KiB, negative tag");
    /* twice each: the first nonblocking call of a process sets up their progress */
    for (int i = 0; i < 2; i++) {
        EXPECT_RAISED_ONCE(MPIX_Isend_zcopy(data, 1, MPI_INT, 0, -3, counting, &request), "once: isend, negative tag");
        EXPECT_RAISED_ONCE(MPIX_Isend_zcopy(data, 1, MPI_INT, 0, 0, counting, NULL), "once: isend, NULL request");
        EXPECT_RAISED_ONCE(MPIX_Irecv_zcopy(data, 1, uncommitted, 0, 0, counting, &request),
                           "once: irecv, uncommitted type");
        EXPECT_RAISED_ONCE(MPIX_Irecv_zcopy(data, 1, MPI_INT, size, 0, counting, &request),
                           "once: irecv, rank out of range");
    }
    int flag;
    MPI_Status status;
    EXPECT_RAISED_ONCE(MPIX_Probe_zcopy(size, 0, counting, &status), "once: probe, rank out of range");
    EXPECT_RAISED_ONCE(MPIX_Probe_zcopy(0, -3, counting, &status), "once: probe, negative tag");
    EXPECT_RAISED_ONCE(MPIX_Iprobe_zcopy(-5, 0, counting, &flag, &status), "once: iprobe, negative rank");
    EXPECT_RAISED_ONCE(MPIX_Iprobe_zcopy(0, 0, counting, NULL, &status), "once: iprobe, NULL flag");
    EXPECT_ERROR(MPIX_Probe_zcopy(0, 0, MPI_COMM_NULL, &status), "probe, null communicator");
    MPI_Message message;
    EXPECT_RAISED_ONCE(MPIX_Mprobe_zcopy(size, 0, counting, &message, &status), "once: mprobe, rank out of range");
    EXPECT_RAISED_ONCE(MPIX_Mprobe_zcopy(0, -3, counting, &message, &status), "once: mprobe, negative tag");
    EXPECT_RAISED_ONCE(MPIX_Mprobe_zcopy(0, 0, counting, NULL, &status), "once: mprobe, NULL message");
    EXPECT_RAISED_ONCE(MPIX_Improbe_zcopy(0, 0, counting, NULL, &message, &status), "once: improbe, NULL flag");

    /* A message a probe kept (32 KiB: kept on both MPIs), received with a datatype MPI
     * would reject and with a bad tag: each raised once, and the message stays for the
     * correct receive that follows. */
    static char kept[32768], back[32768];
    for (size_t i = 0; i < sizeof kept; i++)
        kept[i] = (char)(i * 7 + 1);
    MPI_Datatype uncommitted_char;
    MPI_Type_contiguous(1, MPI_CHAR, &uncommitted_char);
    MPI_Request kept_sent;
    CHECK(MPIX_Isend_zcopy(kept, sizeof kept, MPI_CHAR, rank, 9, counting, &kept_sent) == MPI_SUCCESS,
          "send of the message to keep");
    CHECK(MPIX_Probe_zcopy(rank, 9, counting, &status) == MPI_SUCCESS, "probe of the message to keep");
    EXPECT_RAISED_ONCE(MPIX_Recv_zcopy(back, sizeof back, uncommitted_char, rank, 9, counting, MPI_STATUS_IGNORE),
                       "once: receive of a probed message, uncommitted type");
    EXPECT_RAISED_ONCE(MPIX_Recv_zcopy(back, sizeof back, MPI_CHAR, rank, -4, counting, MPI_STATUS_IGNORE),
                       "once: receive of a probed message, negative tag");
    CHECK(MPIX_Recv_zcopy(back, sizeof back, MPI_CHAR, rank, 9, counting, &status) == MPI_SUCCESS,
          "receive of the probed message after the errors");
    CHECK(MPI_Wait(&kept_sent, MPI_STATUS_IGNORE) == MPI_SUCCESS, "send of the kept message completes");
    CHECK(memcmp(kept, back, sizeof kept) == 0, "the probed message arrived whole after the errors");
    MPI_Type_free(&uncommitted_char);
    MPI_Comm_free(&counting);

    /* The library still works afterwards. */
    MPI_Type_commit(&uncommitted);
    if (size > 1 && rank < 2) {
        int peer = 1 - rank;
        for (int i = 0; i < 16; i++)
            data[i] = rank == 0 ? i : -1;
        if (rank == 0)
            CHECK(MPIX_Send_zcopy(data, 1, uncommitted, peer, 5, MPI_COMM_WORLD) == MPI_SUCCESS, "send after errors");
        else {
            CHECK(MPIX_Recv_zcopy(data, 1, uncommitted, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "receive after errors");
            CHECK(data[0] == 0 && data[1] == 1 && data[4] == 4 && data[2] == -1, "data after errors");
        }
    }
    MPI_Type_free(&uncommitted);
    MPI_Type_free(&vector);
    return mpix_test_finish("zcopy arguments");
}
