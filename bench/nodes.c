/* SPDX-License-Identifier: BSD-3-Clause */
/* The header line that says where a run ran: the nodes as the MPI sees them (one per
 * MPI_COMM_TYPE_SHARED communicator) with their names and ranks, and, under
 * tools/vcluster, the rate its links between nodes were shaped to. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_describe_nodes(const bench_options *options)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int length = 0, node_rank = 0, leaders = 0, leader;
    MPI_Comm node_comm;
    MPI_Get_processor_name(name, &length);
    MPI_Comm_split_type(options->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_rank(node_comm, &node_rank);
    MPI_Comm_free(&node_comm);
    leader = node_rank == 0;
    MPI_Reduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, 0, options->comm);
    char *names = options->rank == 0 ? malloc((size_t)options->size * MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, options->comm);
    if (options->rank != 0 || options->csv) {
        free(names);
        return;
    }
    /* Host names in order of first rank, each with its number of ranks. */
    char line[1024] = "";
    size_t used = 0;
    int hosts = 0;
    for (int r = 0; r < options->size; r++) {
        const char *host = names + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        int seen = 0, count = 0;
        for (int earlier = 0; earlier < r && !seen; earlier++)
            seen = strcmp(names + (size_t)earlier * MPI_MAX_PROCESSOR_NAME, host) == 0;
        if (seen)
            continue;
        for (int other = r; other < options->size; other++)
            count += strcmp(names + (size_t)other * MPI_MAX_PROCESSOR_NAME, host) == 0;
        hosts++;
        if (used < sizeof line - 64)
            used += (size_t)snprintf(line + used, sizeof line - used, "%s%s x%d", hosts > 1 ? ", " : "", host, count);
    }
    printf("# nodes (MPI_COMM_TYPE_SHARED): %d; hosts: %s\n", leaders, line);
    const char *rate = getenv("MPIX_VCLUSTER_RATE_BPS");
    if (rate) {
        double bits = atof(rate);
        if (bits > 0)
            printf("# links between nodes: %.3g Gbit/s each way (tools/vcluster, tbf)\n", bits / 1e9);
        else
            printf("# links between nodes: unshaped (tools/vcluster)\n");
    }
    free(names);
}
