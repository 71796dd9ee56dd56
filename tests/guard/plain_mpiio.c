/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program without mpix that writes what it receives with MPI-IO right away, as a
 * code writing its output or a checkpoint does, and reads a file straight into an array
 * it has just sent: each step every process sends 1 MiB to its right neighbour and
 * receives from its left one, writes the received array into its place of a shared
 * file with one of MPI-IO's collective forms (blocking, nonblocking, split, shared and
 * ordered file pointers), and reads its place back into the array it sent with another
 * (nonblocking and split collectives). MPI_Pack_external and MPI_Unpack_external take a
 * received array too. Every byte is checked.
 * Run plain, under LD_PRELOAD=libmpix-guard.so and built with -include
 * mpix/guard_inject.h (tests/guard/preload_check.sh), it must print the same: with guard
 * the received array has not landed, nor the sent one left, when the blocking call
 * returns, and MPI must not meet their pages protected.
 * Usage: plain_mpiio [DIRECTORY] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { COUNT = 1 << 18, WRITES = 9, READS = 4 };

static int rank, ranks, failures;

static int value(int from, int step, int i)
{
    return step * 1000000 + from * 10000 + i % 9973;
}

static void fill(int *array, int step)
{
    for (int i = 0; i < COUNT; i++)
        array[i] = value(rank, step, i);
}

static int wrong(const int *array, int from, int step)
{
    int count = 0;
    for (int i = 0; i < COUNT; i++)
        count += array[i] != value(from, step, i);
    return count;
}

static void report(int rc, int bad, const char *what, int step)
{
    if (rc == MPI_SUCCESS && bad == 0)
        return;
    if (failures++ < 10)
        fprintf(stderr, "rank %d: step %d, %s: code %d, %d ints wrong\n", rank, step, what, rc, bad);
}

/* Writes @received at @offset, every rank its own place, the way @form names. */
static int write_form(MPI_File file, int form, MPI_Offset offset, MPI_Offset base, const int *received,
                      const char **name)
{
    MPI_Request request;
    MPI_Status status;
    int rc = MPI_SUCCESS;
    static const char *names[WRITES] = {"MPI_File_write_at_all", "MPI_File_iwrite_at_all", "MPI_File_iwrite_all",
                                        "MPI_File_write_all_begin/end", "MPI_File_write_at_all_begin/end",
                                        "MPI_File_write_ordered_begin/end", "MPI_File_iwrite_shared",
                                        "MPI_File_iwrite_at", "MPI_File_write_ordered"};
    *name = names[form];
    switch (form) {
    case 0:
        return MPI_File_write_at_all(file, offset, received, COUNT, MPI_INT, &status);
    case 1:
        rc = MPI_File_iwrite_at_all(file, offset, received, COUNT, MPI_INT, &request);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, &status);
    case 2:
        MPI_File_seek(file, offset, MPI_SEEK_SET);
        rc = MPI_File_iwrite_all(file, received, COUNT, MPI_INT, &request);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, &status);
    case 3:
        MPI_File_seek(file, offset, MPI_SEEK_SET);
        rc = MPI_File_write_all_begin(file, received, COUNT, MPI_INT);
        return rc != MPI_SUCCESS ? rc : MPI_File_write_all_end(file, received, &status);
    case 4:
        rc = MPI_File_write_at_all_begin(file, offset, received, COUNT, MPI_INT);
        return rc != MPI_SUCCESS ? rc : MPI_File_write_at_all_end(file, received, &status);
    case 5:
        MPI_File_seek_shared(file, base, MPI_SEEK_SET);
        rc = MPI_File_write_ordered_begin(file, received, COUNT, MPI_INT);
        return rc != MPI_SUCCESS ? rc : MPI_File_write_ordered_end(file, received, &status);
    case 6:   /* the shared pointer, one rank after the other so that each lands in its place */
        MPI_File_seek_shared(file, base, MPI_SEEK_SET);
        for (int turn = 0; turn < ranks; turn++) {
            if (turn == rank) {
                rc = MPI_File_iwrite_shared(file, received, COUNT, MPI_INT, &request);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&request, &status);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        return rc;
    case 7:
        rc = MPI_File_iwrite_at(file, offset, received, COUNT, MPI_INT, &request);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, &status);
    default:
        MPI_File_seek_shared(file, base, MPI_SEEK_SET);
        return MPI_File_write_ordered(file, received, COUNT, MPI_INT, &status);
    }
}

/* Reads @offset into @array, the way @form names. */
static int read_form(MPI_File file, int form, MPI_Offset offset, int *array, const char **name)
{
    MPI_Request request;
    MPI_Status status;
    int rc;
    static const char *names[READS] = {"MPI_File_iread_at_all", "MPI_File_read_all_begin/end",
                                       "MPI_File_read_at_all_begin/end", "MPI_File_iread_all"};
    *name = names[form];
    switch (form) {
    case 0:
        rc = MPI_File_iread_at_all(file, offset, array, COUNT, MPI_INT, &request);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, &status);
    case 1:
        MPI_File_seek(file, offset, MPI_SEEK_SET);
        rc = MPI_File_read_all_begin(file, array, COUNT, MPI_INT);
        return rc != MPI_SUCCESS ? rc : MPI_File_read_all_end(file, array, &status);
    case 2:
        rc = MPI_File_read_at_all_begin(file, offset, array, COUNT, MPI_INT);
        return rc != MPI_SUCCESS ? rc : MPI_File_read_at_all_end(file, array, &status);
    default:
        MPI_File_seek(file, offset, MPI_SEEK_SET);
        rc = MPI_File_iread_all(file, array, COUNT, MPI_INT, &request);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, &status);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    int *sent = malloc(COUNT * sizeof(int)), *received = malloc(COUNT * sizeof(int));
    int *check = malloc(COUNT * sizeof(int));

    char path[4096];
    int job = (int)getpid();
    MPI_Bcast(&job, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/mpix-plain-mpiio-%d", argc > 1 ? argv[1] : "/tmp", job);
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
    MPI_File_set_errhandler(file, MPI_ERRORS_RETURN);
    const MPI_Offset bytes = COUNT * (MPI_Offset)sizeof(int);

    for (int step = 0; step < WRITES; step++) {
        const MPI_Offset base = step * ranks * bytes, offset = base + rank * bytes;
        const char *what;
        fill(sent, step);
        MPI_Sendrecv(sent, COUNT, MPI_INT, right, step, received, COUNT, MPI_INT, left, step, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        int rc = write_form(file, step, offset, base, received, &what);
        MPI_File_sync(file);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_sync(file);
        MPI_Status status;
        int read_rc = MPI_File_read_at(file, offset, check, COUNT, MPI_INT, &status);
        report(rc != MPI_SUCCESS ? rc : read_rc, wrong(check, left, step), what, step);

        /* Read this rank's place back into the array it has just sent. */
        fill(sent, step + 100);
        MPI_Sendrecv(sent, COUNT, MPI_INT, right, 100 + step, received, COUNT, MPI_INT, left, 100 + step,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rc = read_form(file, step % READS, offset, sent, &what);
        report(rc, wrong(sent, left, step), what, step);
        report(MPI_SUCCESS, wrong(received, left, step + 100), "the exchange before it", step);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&file);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);

    /* external32 of what just arrived, and back. */
    fill(sent, 77);
    MPI_Sendrecv(sent, COUNT, MPI_INT, right, 77, received, COUNT, MPI_INT, left, 77, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Aint packed_bytes, position = 0;
    MPI_Pack_external_size("external32", COUNT, MPI_INT, &packed_bytes);
    char *packed = malloc(packed_bytes);
    int rc = MPI_Pack_external("external32", received, COUNT, MPI_INT, packed, packed_bytes, &position);
    position = 0;
    if (rc == MPI_SUCCESS)
        rc = MPI_Unpack_external("external32", packed, packed_bytes, &position, check, COUNT, MPI_INT);
    report(rc, wrong(check, left, 77), "MPI_Pack_external/MPI_Unpack_external", 0);

    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpiio: %d ranks, %d writes and reads, %d failures\n", ranks, WRITES, total);
    free(packed);
    free(check);
    free(received);
    free(sent);
    MPI_Finalize();
    return total != 0;
}
