/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench zcopy: ping-pong of non-contiguous layouts between ranks 0 and 1 (others
 * wait), both sides with the same datatype, comparing in one run
 *  - MPIX_Send_zcopy/MPIX_Recv_zcopy,
 *  - MPI_Send/MPI_Recv with the datatype,
 *  - MPI_Pack + MPI_Send of the bytes + MPI_Unpack, written by hand,
 *  - the single-copy limit: one memcpy per block from the sender's layout into the
 *    receiver's, inside one process (what a perfect zero-copy send costs).
 * Layouts follow DDTBench kernels (sizes in the table's case names): MILC su3 z-down
 * (nested vector), WRF y-vector (struct of vectors of several fields), NAS MG z-face
 * (vector of single doubles) and y-face, a 3D-stencil face as a subarray, a plain
 * vector of 16 B..256 KiB blocks at stride 2x, 4 MiB (1 MiB with --quick) in all, and
 * small messages (one double to 16 KiB, under zcopy's eager limit). Each
 * iteration is a round trip, so the bandwidth column counts both messages. Nothing is
 * warmed up for zcopy alone: each layout's first COLD_ROUND_TRIPS round trips are timed
 * per way, each on a communicator it has not used and on buffers of its own, as a
 * program's first messages of a layout are (the "first 20 round trips" row); then the
 * ways' samples are interleaved, after the bench's usual warm-up samples, which all ways
 * get alike. */
#include "bench.h"

#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COLD_ROUND_TRIPS = 20 };

typedef struct zcopy_context {
    MPI_Comm comm;
    MPI_Datatype type;
    int rank, count;
    char *send, *receive, *packed;
    int packed_bytes;
    MPI_Aint nblocks;
    MPI_Aint *offset, *length; /* the layout, for the memcpy limit */
} zcopy_context;

typedef int send_fn(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int recv_fn(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);

/* Rank 0 sends and waits for the echo, rank 1 echoes: the same loop for both paths. */
static void pingpong(const zcopy_context *c, int iterations, send_fn *send, recv_fn *recv)
{
    for (int i = 0; i < iterations; i++) {
        if (c->rank == 0) {
            send(c->send, c->count, c->type, 1, 0, c->comm);
            recv(c->receive, c->count, c->type, 1, 0, c->comm, MPI_STATUS_IGNORE);
        } else if (c->rank == 1) {
            recv(c->receive, c->count, c->type, 0, 0, c->comm, MPI_STATUS_IGNORE);
            send(c->send, c->count, c->type, 0, 0, c->comm);
        }
    }
}

static void zcopy_pingpong(void *context, int iterations)
{
    pingpong(context, iterations, MPIX_Send_zcopy, MPIX_Recv_zcopy);
}

static void datatype_pingpong(void *context, int iterations)
{
    pingpong(context, iterations, MPI_Send, MPI_Recv);
}

static void pack_send(zcopy_context *c, int peer)
{
    int position = 0;
    MPI_Pack(c->send, c->count, c->type, c->packed, c->packed_bytes, &position, c->comm);
    MPI_Send(c->packed, position, MPI_PACKED, peer, 0, c->comm);
}

static void receive_unpack(zcopy_context *c, int peer)
{
    int position = 0;
    MPI_Recv(c->packed, c->packed_bytes, MPI_PACKED, peer, 0, c->comm, MPI_STATUS_IGNORE);
    MPI_Unpack(c->packed, c->packed_bytes, &position, c->receive, c->count, c->type, c->comm);
}

static void pack_pingpong(void *context, int iterations)
{
    zcopy_context *c = context;
    for (int i = 0; i < iterations; i++) {
        if (c->rank == 0) {
            pack_send(c, 1);
            receive_unpack(c, 1);
        } else if (c->rank == 1) {
            receive_unpack(c, 0);
            pack_send(c, 0);
        }
    }
}

/* Two copies per round trip, as the ping-pong moves two messages. */
static void memcpy_limit(void *context, int iterations)
{
    zcopy_context *c = context;
    for (int i = 0; i < 2 * iterations; i++)
        for (MPI_Aint b = 0; b < c->nblocks; b++)
            memcpy(c->receive + c->offset[b], c->send + c->offset[b], c->length[b]);
}

/* The layout as blocks, from MPI's own view of it: pack an index pattern and read back
 * where each byte came from (setup only; the library itself never packs). */
static void layout_of(zcopy_context *c, MPI_Aint span)
{
    int size;
    MPI_Type_size(c->type, &size);
    MPI_Aint bytes = (MPI_Aint)size * c->count;
    int64_t *where = calloc(bytes > 0 ? bytes : 1, sizeof *where);
    c->offset = malloc((bytes + 1) * sizeof *c->offset);
    c->length = malloc((bytes + 1) * sizeof *c->length);
    c->nblocks = 0;
    char *pattern = malloc(span), *packed = malloc(bytes > 0 ? bytes : 1);
    /* Each pass packs one byte of every source offset; together they name, for each
     * packed byte, where it came from. */
    for (int shift = 0; shift < 64 && ((MPI_Aint)1 << shift) < span; shift += 8) {
        for (MPI_Aint i = 0; i < span; i++)
            pattern[i] = (char)((i >> shift) & 0xff);
        int position = 0;
        MPI_Pack(pattern, c->count, c->type, packed, (int)bytes, &position, MPI_COMM_SELF);
        for (MPI_Aint k = 0; k < bytes; k++)
            where[k] |= (int64_t)(unsigned char)packed[k] << shift;
    }
    for (MPI_Aint k = 0; k < bytes; k++) {
        if (c->nblocks > 0 && c->offset[c->nblocks - 1] + c->length[c->nblocks - 1] == where[k])
            c->length[c->nblocks - 1]++;
        else {
            c->offset[c->nblocks] = where[k];
            c->length[c->nblocks++] = 1;
        }
    }
    free(pattern);
    free(packed);
    free(where);
}

static void run_case(const bench_options *options, const char *name, MPI_Datatype type, int count)
{
    zcopy_context c = { .comm = options->comm, .type = type, .rank = options->rank, .count = count };
    MPI_Aint lb, extent, true_lb, true_extent;
    int size;
    MPI_Type_commit(&c.type);
    MPI_Type_get_extent(c.type, &lb, &extent);
    MPI_Type_get_true_extent(c.type, &true_lb, &true_extent);
    MPI_Type_size(c.type, &size);
    MPI_Aint span = true_lb + (count - 1) * extent + true_extent;
    size_t bytes = (size_t)size * count;
    MPI_Pack_size(count, c.type, options->comm, &c.packed_bytes);
    c.packed = malloc(c.packed_bytes);

    /* The cold start: each way's first round trips on a communicator it has not used and
     * on buffers of its own, allocated and written just before, as a program's first
     * messages of a layout find them. Sharing the buffers would hand the second way
     * what the first one's round trips left in them (the first 20 round trips of a vector
     * of 16 KiB blocks took MPI 5.5 ms after zcopy's and 7.3-8.1 ms first; Open MPI). */
    bench_options once = *options;
    once.warmup = 0;
    once.repetitions = 1;
    bench_stats cold_time[2];
    zcopy_context cold[2];
    for (int way = 0; way < 2; way++) {
        cold[way] = c;
        bench_buffer_pair(options, (size_t)span, &cold[way].send, &cold[way].receive);
        MPI_Comm_dup(options->comm, &cold[way].comm);
        cold_time[way] = bench_time(&once, way == 0 ? zcopy_pingpong : datatype_pingpong, &cold[way],
                                    COLD_ROUND_TRIPS);
        MPI_Comm_free(&cold[way].comm);
    }
    for (int way = 0; way < 2; way++)
        free(cold[way].send), free(cold[way].receive);

    bench_buffer_pair(options, (size_t)span, &c.send, &c.receive);
    layout_of(&c, span);
    /* About 64 MiB moved per sample, at least 2 and at most 500 round trips. */
    int iterations = (int)((options->quick ? 16 : 64) * 1048576.0 / (2.0 * bytes));
    iterations = iterations < 2 ? 2 : iterations > 500 ? 500 : iterations;
    bench_stats time[4];
    bench_time_together(options, 4,
                        (bench_case[]){ { zcopy_pingpong, &c },
                                        { datatype_pingpong, &c },
                                        { pack_pingpong, &c },
                                        { memcpy_limit, &c } },
                        iterations, time);
    char label[160];
    snprintf(label, sizeof label, "%s: first %d round trips vs MPI datatype", name, COLD_ROUND_TRIPS);
    bench_row(options, "zcopy", label, 2 * bytes, cold_time[0], cold_time[1]);
    snprintf(label, sizeof label, "%s vs MPI datatype", name);
    bench_row(options, "zcopy", label, 2 * bytes, time[0], time[1]);
    snprintf(label, sizeof label, "%s vs pack/unpack", name);
    bench_row(options, "zcopy", label, 2 * bytes, time[0], time[2]);
    snprintf(label, sizeof label, "%s vs single-copy limit", name);
    bench_row(options, "zcopy", label, 2 * bytes, time[0], time[3]);
    free(c.send);
    free(c.receive);
    free(c.packed);
    free(c.offset);
    free(c.length);
    MPI_Type_free(&c.type);
}

int bench_zcopy(const bench_options *options)
{
    MPI_Datatype type, inner, fields[3];
    char name[96];
    if (options->size < 2) {
        if (options->rank == 0)
            fprintf(stderr, "mpix-bench zcopy: needs 2 ranks\n");
        return 1;
    }
    bench_heading(options, "zcopy", "MPIX_Send/Recv_zcopy", "the named alternative");

    /* MILC su3 z-down: su3 vectors (3 complex floats, 24 B) on a 32^4 lattice (the
     * paper's problem B, 768 KiB); the z = 0 face is a vector over t of contiguous
     * (y, x) planes of su3 vectors: a nested vector. */
    MPI_Type_contiguous(6, MPI_FLOAT, &inner);
    MPI_Datatype plane;
    MPI_Type_contiguous(32 * 32, inner, &plane);
    MPI_Type_create_hvector(32, 1, 32 * 32 * 32 * 24, plane, &type);
    MPI_Type_free(&inner);
    MPI_Type_free(&plane);
    run_case(options, "MILC su3 z-down 32^4 (32 blocks of 24 KiB)", type, 1);

    /* WRF y-vector: 3 fields of (x 136, z 32, y 136) floats, halo of 3 y-rows; each
     * field a vector over z of 3 x-rows, combined in one struct. */
    for (int f = 0; f < 3; f++)
        MPI_Type_vector(32, 3 * 136, 136 * 136, MPI_FLOAT, &fields[f]);
    int lengths[3] = { 1, 1, 1 };
    MPI_Aint displacements[3] = { 0, 136 * 136 * 32 * 4, 2 * 136 * 136 * 32 * 4 };
    MPI_Type_create_struct(3, lengths, displacements, fields, &type);
    for (int f = 0; f < 3; f++)
        MPI_Type_free(&fields[f]);
    run_case(options, "WRF y-vector 3x(136x32x136) (96 blocks of 1.6 KiB)", type, 1);

    /* NAS MG on a 130^3 grid of doubles: the x-face is single doubles at stride 130
     * (the worst fragmentation), the y-face rows of 130 doubles. */
    MPI_Type_vector(130 * 130, 1, 130, MPI_DOUBLE, &type);
    run_case(options, "NAS MG x-face 130^3 (8 B blocks)", type, 1);
    MPI_Type_vector(130, 130, 130 * 130, MPI_DOUBLE, &type);
    run_case(options, "NAS MG y-face 130^3 (1 KiB blocks)", type, 1);

    /* 3D stencil: the y-face of a 130^3 grid of doubles (128^3 and a halo) as a subarray. */
    int sizes[3] = { 130, 130, 130 }, subsizes[3] = { 128, 1, 128 }, starts[3] = { 1, 1, 1 };
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type);
    run_case(options, "3D stencil y-face 128^2 of 130^3, subarray (1 KiB blocks)", type, 1);

    /* Plain vector, 2x stride. */
    MPI_Aint total = options->quick ? 1 << 20 : 4 << 20;
    for (MPI_Aint block = 16; block <= 256 * 1024; block *= options->quick ? 16 : 4) {
        MPI_Type_vector((int)(total / block), (int)block, (int)(2 * block), MPI_BYTE, &type);
        snprintf(name, sizeof name, "vector %ld B blocks, %ld KiB", (long)block, (long)(total >> 10));
        run_case(options, name, type, 1);
    }
    /* Small messages, as the halos of small grids or of many ranks are: one double,
     * vectors of 64, 256 and 1024 doubles at stride 2 (512 B, 2 KiB, 8 KiB), and 16 KiB
     * contiguous, all at or under zcopy's eager limit, so through MPI. */
    MPI_Type_contiguous(1, MPI_DOUBLE, &type);
    run_case(options, "one double (8 B)", type, 1);
    for (int doubles = 64; doubles <= 1024; doubles *= 4) {
        MPI_Type_vector(doubles, 1, 2, MPI_DOUBLE, &type);
        snprintf(name, sizeof name, "vector of %d doubles at stride 2 (%d B)", doubles, doubles * 8);
        run_case(options, name, type, 1);
    }
    MPI_Type_contiguous(2048, MPI_DOUBLE, &type);
    run_case(options, "16 KiB contiguous (2048 doubles)", type, 1);
    bench_note(options, "above 1: MPIX faster; vs single-copy limit: the fraction of a one-process memcpy reached");
    return bench_zcopy_apps(options);
}
