/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program without mpix that hands its message buffers to the kernel the moment
 * the blocking calls return, as programs that write results do: each process sends 1 MiB
 * to its right neighbour and receives from its left one, writes what it received to a
 * file (or a socket) at once, and reads a file (or a socket) into the buffer it has just
 * sent, at once; once with each of write, pwrite, writev, fwrite and send, and read,
 * pread, readv, fread and recv. Every byte written and read is checked.
 * Run plain, under LD_PRELOAD=libmpix-guard.so and built with -include
 * mpix/guard_inject.h (tests/guard/preload_check.sh), it must print the same.
 * Usage: plain_io [DIRECTORY] */
#include <mpi.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../common/plain_check.h"

enum { COUNT = 1 << 18, SOCKET_BYTES = 64 << 10 };   /* 1 MiB of ints; what a socket holds */

static int rank, failures;

static int value(int owner, int way, int i) { return owner * 1000003 + way * 7919 + i; }

static const char *const ways[] = { "write/read", "pwrite/pread", "writev/readv", "fwrite/fread", "send/recv" };
enum { WAYS = sizeof ways / sizeof ways[0], SOCKET_WAY = 4 };

/* Hands @bytes of @buffer to the kernel the @way-th way: to @fd, or a socket. */
static long put(int way, int fd, int socket, const int *buffer, size_t bytes)
{
    switch (way) {
    case 0: return write(fd, buffer, bytes);
    case 1: return pwrite(fd, buffer, bytes, 0);
    case 2: return writev(fd, &(struct iovec){ (void *)buffer, bytes }, 1);
    case 3: {
        FILE *stream = fdopen(dup(fd), "wb");
        size_t items = fwrite(buffer, 1, bytes, stream);
        fclose(stream);
        return (long)items;
    }
    default: return send(socket, buffer, bytes, 0);
    }
}

/* Fills @bytes of @buffer from the kernel the @way-th way. */
static long get(int way, int fd, int socket, int *buffer, size_t bytes)
{
    switch (way) {
    case 0: return read(fd, buffer, bytes);
    case 1: return pread(fd, buffer, bytes, 0);
    case 2: return readv(fd, &(struct iovec){ buffer, bytes }, 1);
    case 3: {
        FILE *stream = fdopen(dup(fd), "rb");
        size_t items = fread(buffer, 1, bytes, stream);
        fclose(stream);
        return (long)items;
    }
    default: return recv(socket, buffer, bytes, MSG_WAITALL);
    }
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *directory = argc > 1 ? argv[1] : "/tmp";
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int *sent = malloc(COUNT * sizeof(int)), *received = malloc(COUNT * sizeof(int));
    int *check = malloc(COUNT * sizeof(int));
    char out_path[512], in_path[512];
    snprintf(out_path, sizeof out_path, "%s/plain_io-out-%d-%d", directory, rank, (int)getpid());
    snprintf(in_path, sizeof in_path, "%s/plain_io-in-%d-%d", directory, rank, (int)getpid());
    int sockets[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) == 0, "socketpair: %s", strerror(errno));

    for (int way = 0; way < WAYS; way++) {
        size_t bytes = way == SOCKET_WAY ? SOCKET_BYTES : COUNT * sizeof(int);
        /* What the read-back gives: a file, or bytes already waiting on the socket. */
        for (int i = 0; i < COUNT; i++)
            check[i] = -value(rank, way, i);
        int in = open(in_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        CHECK(in >= 0 && pwrite(in, check, COUNT * sizeof(int), 0) == (ssize_t)(COUNT * sizeof(int)),
              "preparing %s", in_path);
        lseek(in, 0, SEEK_SET);
        if (way == SOCKET_WAY)
            CHECK(send(sockets[1], check, bytes, 0) == (ssize_t)bytes, "socket: %s", strerror(errno));
        int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0600);

        for (int i = 0; i < COUNT; i++)
            sent[i] = value(rank, way, i);
        memset(received, 0, COUNT * sizeof(int));
        /* Even ranks send first: a ring of any size, the messages too long to be buffered. */
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (rank % 2 == 0)) {
                MPI_Send(sent, COUNT, MPI_INT, right, way, MPI_COMM_WORLD);
                long got = get(way, in, sockets[0], sent, bytes);
                CHECK(got == (long)bytes, "%s: into the sent buffer: %ld of %zu bytes (%s)", ways[way], got, bytes,
                      strerror(errno));
            } else {
                MPI_Recv(received, COUNT, MPI_INT, left, way, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                long put_bytes = put(way, out, sockets[1], received, bytes);
                CHECK(put_bytes == (long)bytes, "%s: from the received buffer: %ld of %zu bytes (%s)", ways[way],
                      put_bytes, bytes, strerror(errno));
            }
        }
        /* What the kernel took from the received buffer, and gave the sent one. */
        memset(check, 0, COUNT * sizeof(int));
        if (way == SOCKET_WAY)
            CHECK(recv(sockets[0], check, bytes, MSG_WAITALL) == (ssize_t)bytes, "socket back");
        else
            CHECK(pread(out, check, bytes, 0) == (ssize_t)bytes, "%s: reading the file back", ways[way]);
        for (size_t i = 0; i < bytes / sizeof(int); i++) {
            CHECK(check[i] == value(left, way, (int)i) && received[i] == value(left, way, (int)i),
                  "%s: received int %zu: %d in memory, %d through the kernel", ways[way], i, received[i], check[i]);
            CHECK(sent[i] == -value(rank, way, (int)i), "%s: sent buffer int %zu: %d after the read", ways[way], i,
                  sent[i]);
            if (failures)
                break;
        }
        close(in);
        close(out);
    }
    unlink(in_path);
    unlink(out_path);
    close(sockets[0]);
    close(sockets[1]);
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_io: %d processes, 1 MiB messages, %d ways to the kernel: %s\n", size, WAYS,
               all_failures ? "WRONG DATA" : "all values right");
    free(sent);
    free(received);
    free(check);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
