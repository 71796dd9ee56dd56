/* SPDX-License-Identifier: BSD-3-Clause */
/* A peer killed (SIGKILL) in the middle of a large zero-copy message: the survivor's
 * call returns with an error that names the rank, instead of waiting for ever on memory
 * the dead process shared (the sender's part of a copy it helped with, the receiver's
 * end of the message). Run by peer_killed.sh under a launcher told to keep the survivor
 * running. Arguments: which dies, "sender" or "receiver" (rank 1 either way: Hydra ends
 * the job when rank 0 is killed, -disable-auto-cleanup or not), a
 * file the survivor writes its verdict to (a launcher may drop what a job prints after a
 * rank's death) before it leaves without MPI_Finalize, its peer being gone, and the calls
 * the message goes by: "blocking" (MPIX_Send_zcopy, MPIX_Recv_zcopy: the default),
 * "nonblocking" (MPIX_Isend_zcopy, MPIX_Irecv_zcopy, then MPI_Wait), "interposed" (a
 * program's own MPI_Send and MPI_Recv as libmpix-pmpi.so runs them with MPIX_PMPI=zcopy,
 * its functions called directly) or "interposed_nonblocking" (its MPI_Isend, MPI_Irecv
 * and MPI_Wait so). */
#include <mpi.h>
#include <mpix/mpix.h>
#include "common/interpose.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BLOCK = 2048, BLOCKS = 16384 };   /* doubles: 16 KiB blocks, 256 MiB in all */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The dying rank's own end: as soon as the message's first bytes are in the receiver's
 * buffer (an MPI shared-memory window both ranks see), so with the transfer under way
 * whatever the scheduler did before; 256 MiB take 30-70 ms here. */
static void *kill_me(void *first_element)
{
    while (*(volatile double *)first_element != 1.0)
        sched_yield();
    kill(getpid(), SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sender_dies = argc > 1 && !strcmp(argv[1], "sender");
    const char *calls = argc > 3 ? argv[3] : "blocking";
    int nonblocking = !strcmp(calls, "nonblocking"), interposed_nonblocking = !strcmp(calls, "interposed_nonblocking");
    int interposed = interposed_nonblocking || !strcmp(calls, "interposed");
    if (size != 2 || argc < 3 || (!sender_dies && strcmp(argv[1], "receiver")) ||
        (!nonblocking && !interposed && strcmp(calls, "blocking"))) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpirun -np 2 %s sender|receiver VERDICT_FILE "
                    "[blocking|nonblocking|interposed|interposed_nonblocking]\n",
                    argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (interposed && mpix_interpose_zcopy_init(0) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* A generalized request's error may be raised where MPI keeps no communicator. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Datatype vector;
    MPI_Type_vector(BLOCKS, BLOCK, 2 * BLOCK, MPI_DOUBLE, &vector);
    MPI_Type_commit(&vector);
    int sender = sender_dies ? 1 : 0, receiver = 1 - sender;
    /* The receiver's buffer in a shared window, where the dying rank watches it fill. */
    MPI_Aint span = (MPI_Aint)BLOCKS * 2 * BLOCK * sizeof(double), segment;
    double *data = malloc(span), *received;
    MPI_Win window;
    int unit;
    if (!data || MPI_Win_allocate_shared(rank == receiver ? span : 0, sizeof(double), MPI_INFO_NULL, comm, &received,
                                         &window) != MPI_SUCCESS ||
        MPI_Win_shared_query(window, receiver, &segment, &unit, &received) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (size_t i = 0; i < (size_t)BLOCKS * 2 * BLOCK; i++)
        data[i] = (double)i + 1;
    if (rank == receiver)
        memset(received, 0, span);
    /* The pair learns that it can attach (the first large message asks, and goes through
     * MPI: were the sender killed in it, MPI's own receive would wait for ever). */
    for (int round = 0; round < 2; round++) {
        int rc = rank == receiver ? MPIX_Recv_zcopy(data, 16 * BLOCK, MPI_DOUBLE, sender, 1, comm, MPI_STATUS_IGNORE)
                                  : MPIX_Send_zcopy(data, 16 * BLOCK, MPI_DOUBLE, receiver, 1, comm);
        if (rc != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(comm);
    int dying = rank == 1;
    pthread_t killer;
    if (dying && pthread_create(&killer, NULL, kill_me, received) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    double start = now();
    int rc;
    if (nonblocking) {
        MPI_Request request;
        rc = rank == receiver ? MPIX_Irecv_zcopy(received, 1, vector, sender, 2, comm, &request)
                              : MPIX_Isend_zcopy(data, 1, vector, receiver, 2, comm, &request);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (interposed_nonblocking) {
        MPI_Request request;
        rc = rank == receiver ? mpix_interpose_zcopy_irecv(received, 1, vector, sender, 2, comm, &request)
                              : mpix_interpose_zcopy_isend(data, 1, vector, receiver, 2, comm, &request);
        if (rc == MPI_SUCCESS)
            rc = mpix_interpose_zcopy_wait(&request, MPI_STATUS_IGNORE);
    } else if (interposed) {
        rc = rank == receiver ? mpix_interpose_zcopy_recv(received, 1, vector, sender, 2, comm, MPI_STATUS_IGNORE)
                              : mpix_interpose_zcopy_send(data, 1, vector, receiver, 2, comm);
    } else {
        rc = rank == receiver ? MPIX_Recv_zcopy(received, 1, vector, sender, 2, comm, MPI_STATUS_IGNORE)
                              : MPIX_Send_zcopy(data, 1, vector, receiver, 2, comm);
    }
    double seconds = now() - start;
    if (dying)
        for (;;)
            pause();   /* whether or not the message was done, the killer ends this rank */
    char text[MPI_MAX_ERROR_STRING] = "MPI_SUCCESS";
    int length, error_class = MPI_SUCCESS, peer_class;
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, text, &length);
        MPI_Error_class(rc, &error_class);
    }
    MPIX_Query_error_class(MPIX_ERRKIND_PEER, &peer_class);
    char named[32];
    snprintf(named, sizeof named, "rank %d", 1 - rank);
    /* The error names the call the program made, whose wait found the peer gone. */
    const char *call = rank == receiver ? (interposed_nonblocking ? "MPI_Irecv: "
                                           : interposed          ? "MPI_Recv: "
                                           : nonblocking         ? "MPIX_Irecv_zcopy: "
                                                                 : "MPIX_Recv_zcopy: ")
                                        : (interposed_nonblocking ? "MPI_Isend: "
                                           : interposed          ? "MPI_Send: "
                                           : nonblocking         ? "MPIX_Isend_zcopy: "
                                                                 : "MPIX_Send_zcopy: ");
    /* Done before the kill landed is no hang either. */
    int pass = rc == MPI_SUCCESS || (error_class == peer_class && strstr(text, named) && strstr(text, call));
    FILE *verdict = fopen(argv[2], "w");
    FILE *outputs[] = { stdout, verdict };
    for (int i = 0; i < 2 && outputs[i]; i++) {
        fprintf(outputs[i], "zcopy peer killed: the %s (rank %d, %s calls) returned after %.0f ms: %s\n",
                rank == receiver ? "receiver" : "sender", rank, calls, seconds * 1e3, text);
        fprintf(outputs[i], "zcopy peer killed: %s\n",
                pass ? "PASS" : "FAIL (want an error of MPIX_ERRKIND_PEER naming the call and the rank)");
        fflush(outputs[i]);
    }
    _exit(verdict && fclose(verdict) == 0 && pass ? 0 : 1);
}
