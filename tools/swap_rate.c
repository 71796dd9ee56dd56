/* SPDX-License-Identifier: BSD-3-Clause */
/* swap_rate: does the MPI carry a large two-way exchange between two ranks at the link's
 * rate in each direction, or one direction after the other? Two ranks swap a message
 * (default 2 MiB) 12 times back to back, as MPI_Sendrecv, as MPI_Isend/MPI_Irecv, as 32
 * nonblocking pieces, and send it one way only; rank 1 prints each call's time. Put the
 * two ranks on two nodes (tools/vcluster --nodes 2 --ppn 1); the build makes it as
 * build/<mpi>/swap_rate:
 *
 *   tools/vcluster --nodes 2 --ppn 1 -- build/openmpi/swap_rate [BYTES]
 *
 * A full-duplex transport swaps in about the one-way time. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CALLS = 12, PIECES = 32 };

static void swap_pieces(char *out, char *in, size_t bytes, int peer)
{
    MPI_Request requests[2 * PIECES];
    MPI_Status statuses[2 * PIECES]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's */
    size_t piece = bytes / PIECES;
    for (int i = 0; i < PIECES; i++) {
        MPI_Irecv(in + i * piece, (int)piece, MPI_CHAR, peer, i, MPI_COMM_WORLD, &requests[2 * i]);
        MPI_Isend(out + i * piece, (int)piece, MPI_CHAR, peer, i, MPI_COMM_WORLD, &requests[2 * i + 1]);
    }
    MPI_Waitall(2 * PIECES, requests, statuses);
}

int main(int argc, char **argv)
{
    static const char *const names[] = { "MPI_Sendrecv", "MPI_Isend/MPI_Irecv", "32 nonblocking pieces",
                                         "one way (0 to 1)" };
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)2 << 20;
    bytes -= bytes % PIECES;
    if (size != 2 || bytes == 0 || bytes > (size_t)1 << 30) {
        if (rank == 0)
            fprintf(stderr, "swap_rate: needs 2 ranks and 32 B to 1 GiB (got %d ranks, %zu B)\n", size, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *out = malloc(bytes), *in = malloc(bytes);
    if (!out || !in)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(out, rank + 1, bytes);
    memset(in, 0, bytes);
    int peer = 1 - rank;
    for (int way = 0; way < 4; way++) {
        char line[512] = "";
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime(), last = start;
        for (int call = 0; call < CALLS; call++) {
            if (way == 0) {
                MPI_Sendrecv(out, (int)bytes, MPI_CHAR, peer, 0, in, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            } else if (way == 1) {
                MPI_Request requests[2];
                MPI_Status statuses[2];
                MPI_Irecv(in, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &requests[0]);
                MPI_Isend(out, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &requests[1]);
                MPI_Waitall(2, requests, statuses);
            } else if (way == 2) {
                swap_pieces(out, in, bytes, peer);
            } else if (rank == 0) {
                MPI_Send(out, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
            } else {
                MPI_Recv(in, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            double now = MPI_Wtime();
            size_t used = strlen(line);
            snprintf(line + used, sizeof line - used, " %.1f", (now - last) * 1e3);
            last = now;
        }
        if (rank == 1)
            printf("%-22s %zu B: %.1f ms a call on average; each call (ms):%s\n", names[way], bytes,
                   (last - start) * 1e3 / CALLS, line);
        if (way < 3 && in[bytes - 1] != (char)(peer + 1)) {
            fprintf(stderr, "swap_rate: rank %d received %d, expected %d\n", rank, in[bytes - 1], peer + 1);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
