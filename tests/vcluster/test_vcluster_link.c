/* SPDX-License-Identifier: BSD-3-Clause */
/* The job tools/vcluster starts really is N hosts: the processor names are the virtual
 * nodes', MPI_COMM_TYPE_SHARED groups exactly the ranks of one name, as many ranks per
 * node as asked; and the link between nodes is the shaped one: rank 0 streams to the
 * first rank of node 1 at the rate vcluster set (+-25%), while a transfer inside node 0
 * (through shared memory) is faster. The expected shape comes from the variables vcluster
 * gives the job (MPIX_VCLUSTER_NODES, _PPN, _RATE_BPS). */
#include "mpix_test.h"

#include <time.h>

enum { stream_bytes = 8 << 20, stream_messages = 8 };

/* Idle ranks wait without spinning so that the two measuring ranks have the cores. */
static void quiet_barrier(MPI_Comm comm)
{
    MPI_Request request;
    int done = 0;
    MPI_Ibarrier(comm, &request);
    while (!done) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (!done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

/* Bits per second from @sender to @receiver: stream_messages messages, then a one-byte
 * acknowledgement so that the time covers their arrival. A warm-up message first: the
 * TCP connection is made at the first send. */
static double stream_rate(int rank, int sender, int receiver, char *buffer)
{
    double seconds = 0.0;
    char ack = 0;
    if (rank == sender) {
        MPI_Send(buffer, 1 << 16, MPI_BYTE, receiver, 0, MPI_COMM_WORLD);
        MPI_Recv(&ack, 1, MPI_BYTE, receiver, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double start = MPI_Wtime();
        for (int message = 0; message < stream_messages; message++)
            MPI_Send(buffer, stream_bytes, MPI_BYTE, receiver, 0, MPI_COMM_WORLD);
        MPI_Recv(&ack, 1, MPI_BYTE, receiver, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        seconds = MPI_Wtime() - start;
    } else if (rank == receiver) {
        MPI_Recv(buffer, 1 << 16, MPI_BYTE, sender, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, sender, 1, MPI_COMM_WORLD);
        for (int message = 0; message < stream_messages; message++)
            MPI_Recv(buffer, stream_bytes, MPI_BYTE, sender, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, sender, 1, MPI_COMM_WORLD);
    } else {
        quiet_barrier(MPI_COMM_WORLD);
        return 0.0;
    }
    quiet_barrier(MPI_COMM_WORLD);
    return seconds > 0.0 ? 8.0 * stream_bytes * stream_messages / seconds : 0.0;
}

int main(int argc, char **argv)
{
    int rank, size, name_length, node_rank, node_size;
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *nodes_text = getenv("MPIX_VCLUSTER_NODES");
    const char *ppn_text = getenv("MPIX_VCLUSTER_PPN");
    const char *rate_text = getenv("MPIX_VCLUSTER_RATE_BPS");
    CHECK(nodes_text && ppn_text && rate_text, "not started by tools/vcluster");
    int nodes = nodes_text ? atoi(nodes_text) : 0, ppn = ppn_text ? atoi(ppn_text) : 0;
    double shaped = rate_text ? atof(rate_text) : 0.0;
    CHECK(size == nodes * ppn, "%d ranks, vcluster started %d x %d", size, nodes, ppn);

    /* Names: vnode<rank / ppn> with the launchers' default block placement. */
    MPI_Get_processor_name(name, &name_length);
    char expected[32];
    snprintf(expected, sizeof expected, "vnode%d", ppn > 0 ? rank / ppn : -1);
    CHECK(strcmp(name, expected) == 0, "rank %d runs on '%s', expected %s", rank, name, expected);

    /* The MPI's idea of a node is the virtual node. */
    MPI_Comm node_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_rank(node_comm, &node_rank);
    MPI_Comm_size(node_comm, &node_size);
    CHECK(node_size == ppn, "rank %d shares memory with %d ranks, expected %d", rank, node_size, ppn);
    char node_names[64][MPI_MAX_PROCESSOR_NAME];
    if (node_size <= 64) {
        MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, node_names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                      node_comm);
        for (int peer = 0; peer < node_size; peer++)
            CHECK(strcmp(node_names[peer], name) == 0, "rank %d on %s shares memory with a rank on %s", rank,
                  name, node_names[peer]);
    }
    MPI_Comm_free(&node_comm);

    char *buffer = calloc(stream_bytes, 1);
    CHECK(buffer != NULL, "out of memory");
    if (nodes >= 2 && buffer) {
        double between = stream_rate(rank, 0, ppn, buffer);
        double inside = ppn >= 2 ? stream_rate(rank, 0, 1, buffer) : 0.0;
        if (rank == 0) {
            printf("between nodes %.3f Gbit/s (shaped %.3f), inside node 0 %.3f Gbit/s\n", between / 1e9,
                   shaped / 1e9, inside / 1e9);
            if (shaped > 0.0)
                CHECK(between > 0.75 * shaped && between < 1.25 * shaped,
                      "between nodes %.3f Gbit/s, shaped to %.3f Gbit/s", between / 1e9, shaped / 1e9);
            if (ppn >= 2)
                CHECK(inside > 1.5 * between, "inside a node %.3f Gbit/s, not faster than between nodes %.3f",
                      inside / 1e9, between / 1e9);
        }
    }
    free(buffer);
    return mpix_test_finish("vcluster_link");
}
