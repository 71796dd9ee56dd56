/* SPDX-License-Identifier: BSD-3-Clause */
/* A plain MPI-4 program of sessions alone (no MPI_Init, no MPI_COMM_WORLD), run as it is
 * and under the interposition libraries: halos of a vector type by MPI_Irecv/MPI_Isend
 * and MPI_Sendrecv, a blocking ring, and a window allocated with storage hints that every
 * rank puts into. It checks its own data and prints one line that does not depend on the
 * library. With "file" as its argument it also checks that its window's data
 * reached the file the hints name (the window was a storage window). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ROWS = 64, COLUMNS = 512, ROUNDS = 10 };

static double value_of(int rank, int at, int round) { return rank * 1e6 + at + round * 0.25; }

int main(int argc, char **argv)
{
    MPI_Session session;
    MPI_Group group;
    MPI_Comm comm;
    int rank, size, wrong = 0, expect_file = argc > 1 && strcmp(argv[1], "file") == 0;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &session);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
    MPI_Comm_create_from_group(group, "org.mpix.test.plain_sessions", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
    MPI_Group_free(&group);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    size_t elements = (size_t)ROWS * COLUMNS * 2;
    double *sent = malloc(elements * sizeof *sent), *from_left = malloc(elements * sizeof *from_left),
           *from_right = malloc(elements * sizeof *from_right);
    MPI_Datatype rows;
    MPI_Type_vector(ROWS, COLUMNS, 2 * COLUMNS, MPI_DOUBLE, &rows);
    MPI_Type_commit(&rows);
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t at = 0; at < elements; at++)
            sent[at] = value_of(rank, (int)at, round), from_left[at] = from_right[at] = -1;
        MPI_Request requests[2];
        MPI_Status statuses[2];
        MPI_Irecv(from_left, 1, rows, left, 1, comm, &requests[0]);
        MPI_Isend(sent, 1, rows, right, 1, comm, &requests[1]);
        MPI_Waitall(2, requests, statuses);
        MPI_Sendrecv(sent, 1, rows, left, 2, from_right, 1, rows, right, 2, comm, MPI_STATUS_IGNORE);
        for (int row = 0; row < ROWS; row++)
            for (int column = 0; column < COLUMNS; column++) {
                int at = row * 2 * COLUMNS + column;
                wrong += from_left[at] != value_of(left, at, round) || from_right[at] != value_of(right, at, round);
                wrong += from_left[at + COLUMNS] != -1;
            }
        /* A blocking ring: even ranks send first. */
        double token = rank + round, got = -1;
        if (rank % 2 == 0) {
            MPI_Send(&token, 1, MPI_DOUBLE, right, 3, comm);
            MPI_Recv(&got, 1, MPI_DOUBLE, left, 3, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&got, 1, MPI_DOUBLE, left, 3, comm, MPI_STATUS_IGNORE);
            MPI_Send(&token, 1, MPI_DOUBLE, right, 3, comm);
        }
        wrong += got != left + round;
    }
    MPI_Type_free(&rows);

    char directory[64] = "/tmp/mpix-sessions-XXXXXX", path[128];
    if (rank == 0 && !mkdtemp(directory))
        directory[0] = '\0';
    MPI_Bcast(directory, (int)sizeof directory, MPI_CHAR, 0, comm);
    snprintf(path, sizeof path, "%s/window.%d", directory, rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    double *base, put = rank + 0.5;
    MPI_Win win;
    MPI_Win_allocate(COLUMNS * sizeof(double), sizeof(double), info, comm, &base, &win);
    MPI_Info_free(&info);
    MPI_Win_fence(0, win);
    MPI_Put(&put, 1, MPI_DOUBLE, right, 7, 1, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    wrong += base[7] != left + 0.5;
    MPI_Win_free(&win);
    if (expect_file) {
        double on_file = -1;
        FILE *file = fopen(path, "rb");
        if (!file || fseek(file, 7 * sizeof(double), SEEK_SET) != 0 || fread(&on_file, sizeof on_file, 1, file) != 1)
            on_file = -1;
        if (file)
            fclose(file);
        if (on_file != left + 0.5) {
            fprintf(stderr, "rank %d: the window's file holds %g, expected %g\n", rank, on_file, left + 0.5);
            wrong++;
        }
    }
    MPI_Barrier(comm);
    unlink(path);
    MPI_Barrier(comm);
    if (rank == 0)
        rmdir(directory);

    int all_wrong = 0;   /* one line, by rank 0: the same whatever order ranks print in */
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, comm);
    if (rank == 0)
        printf("%d ranks: %s\n", size, all_wrong ? "WRONG DATA" : "data right");
    free(sent);
    free(from_left);
    free(from_right);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&session);
    return all_wrong ? 1 : 0;
}
