/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench zcopy, application table: communication kernels modelled on MILC, NAS MG (a
 * fine and a coarse level), WRF, LAMMPS and a 3D FFT transpose, each written as the
 * application writes it: every outer iteration builds and commits its datatypes,
 * exchanges a few messages between ranks 0 and 1 (a round trip each), and frees them.
 * Nothing is warmed up: the first outer iteration of each way is timed alone and printed
 * as the cold start, then the ways' samples are interleaved. Compared:
 * MPIX_Send/Recv_zcopy, MPI_Send/MPI_Recv with the same datatypes, MPI_Pack + a
 * contiguous MPI_Send + MPI_Unpack, and the program's own MPI_Send/MPI_Recv as
 * libmpix-pmpi.so with MPIX_PMPI=zcopy makes them (its functions called directly: under
 * LD_PRELOAD one wrapper call more). One more table runs the kernels with receives sized
 * by a probe (MPIX_Probe_zcopy against MPI_Probe); mpix-bench zcopy-halo runs them as
 * nonblocking halos, in a process of its own. */
#include "bench.h"

#include <mpix/mpix.h>
#include "common/interpose.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct app_context app_context;

/* A kernel builds the (committed) datatype of one message for each side and names the
 * buffer it is relative to (MPI_BOTTOM for absolute addresses). */
typedef struct app_kernel {
    const char *name;
    int messages;          /* round trips per outer iteration */
    size_t buffer_bytes;   /* of each side's array (LAMMPS: its own per-atom arrays) */
    void (*build)(app_context *c, int receiving, MPI_Datatype *type, void **base);
} app_kernel;

struct app_context {
    const app_kernel *kernel;
    MPI_Comm comm;
    int rank;
    char *send, *receive, *packed;
    int packed_bytes;
    /* LAMMPS: per-atom arrays of both sides and the atoms sent */
    double *x[2], *v[2], *q[2];
    int *tag[2], *species[2];
    int *send_list;
    int round;   /* outer iterations of this context so far: LAMMPS's count changes with it */
};

typedef int send_fn(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int recv_fn(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);

/* ---- kernels ---------------------------------------------------------------------- */

enum { MILC_L = 32, MG_N = 130, MG_COARSE_N = 10, WRF_X = 136, WRF_Z = 32, FFT_N = 128 };
enum { LAMMPS_ATOMS = 32768, LAMMPS_SENT = 2048 };

/* The atoms an exchange sends: as in LAMMPS, a different number every time (those that
 * left the box): 1793 to 2048 here, in an order that repeats a count only after 256
 * exchanges, the same on both ranks. */
static int lammps_sent(const app_context *c) { return LAMMPS_SENT - (c->round * 37) % 256; }

/* MILC su3 z-down on a 32^4 lattice of su3 vectors (6 floats): a vector over t of
 * contiguous (y, x) planes, 32 blocks of 24 KiB. */
static void build_milc(app_context *c, int receiving, MPI_Datatype *type, void **base)
{
    MPI_Datatype su3, plane;
    MPI_Type_contiguous(6, MPI_FLOAT, &su3);
    MPI_Type_contiguous(MILC_L * MILC_L, su3, &plane);
    MPI_Type_create_hvector(MILC_L, 1, (MPI_Aint)MILC_L * MILC_L * MILC_L * 24, plane, type);
    MPI_Type_free(&su3);
    MPI_Type_free(&plane);
    MPI_Type_commit(type);
    *base = receiving ? c->receive : c->send;
}

/* NAS MG on 130^3 doubles: the x-face, single doubles at stride 130. */
static void build_mg_x(app_context *c, int receiving, MPI_Datatype *type, void **base)
{
    MPI_Type_vector(MG_N * MG_N, 1, MG_N, MPI_DOUBLE, type);
    MPI_Type_commit(type);
    *base = receiving ? c->receive : c->send;
}

/* NAS MG y-face: rows of 130 doubles at stride 130^2. */
static void build_mg_y(app_context *c, int receiving, MPI_Datatype *type, void **base)
{
    MPI_Type_vector(MG_N, MG_N, MG_N * MG_N, MPI_DOUBLE, type);
    MPI_Type_commit(type);
    *base = receiving ? c->receive : c->send;
}

/* NAS MG's coarse levels: the y-face of a 10^3 grid (8^3 and a halo), rows of 10
 * doubles at stride 10^2: 800 bytes a message. */
static void build_mg_coarse_y(app_context *c, int receiving, MPI_Datatype *type, void **base)
{
    MPI_Type_vector(MG_COARSE_N, MG_COARSE_N, MG_COARSE_N * MG_COARSE_N, MPI_DOUBLE, type);
    MPI_Type_commit(type);
    *base = receiving ? c->receive : c->send;
}

/* WRF y-halo of 3 fields of (x 136, z 32, y 136) floats, 3 rows deep: a struct of one
 * vector per field, 96 blocks of 1.6 KiB. */
static void build_wrf(app_context *c, int receiving, MPI_Datatype *type, void **base)
{
    MPI_Datatype fields[3];
    int lengths[3] = { 1, 1, 1 };
    MPI_Aint field_bytes = (MPI_Aint)WRF_X * WRF_X * WRF_Z * 4;
    MPI_Aint displacements[3] = { 0, field_bytes, 2 * field_bytes };
    for (int f = 0; f < 3; f++)
        MPI_Type_vector(WRF_Z, 3 * WRF_X, WRF_X * WRF_X, MPI_FLOAT, &fields[f]);
    MPI_Type_create_struct(3, lengths, displacements, fields, type);
    for (int f = 0; f < 3; f++)
        MPI_Type_free(&fields[f]);
    MPI_Type_commit(type);
    *base = receiving ? c->receive : c->send;
}

/* LAMMPS full exchange: the sender picks atoms by index from its per-atom arrays
 * (coordinates, velocities, charge, tag, type) with one hindexed-block type per array at
 * absolute addresses, joined in a struct at MPI_BOTTOM; the receiver appends them after
 * its own atoms, contiguous in each array. */
static void build_lammps(app_context *c, int receiving, MPI_Datatype *type, void **base)
{
    int side = receiving ? 1 : 0, sent = lammps_sent(c);
    MPI_Datatype parts[5], triple;
    MPI_Aint addresses[5];
    int lengths[5] = { 1, 1, 1, 1, 1 };
    MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
    if (!receiving) {
        MPI_Aint *at = malloc(sent * sizeof *at);
        void *arrays[5] = { c->x[0], c->v[0], c->q[0], c->tag[0], c->species[0] };
        size_t sizes[5] = { 24, 24, 8, 4, 4 };
        MPI_Datatype elements[5] = { triple, triple, MPI_DOUBLE, MPI_INT, MPI_INT };
        for (int p = 0; p < 5; p++) {
            for (int i = 0; i < sent; i++)
                MPI_Get_address((char *)arrays[p] + c->send_list[i] * sizes[p], &at[i]);
            MPI_Type_create_hindexed_block(sent, 1, at, elements[p], &parts[p]);
            addresses[p] = 0;
        }
        free(at);
    } else {
        MPI_Type_contiguous(sent, triple, &parts[0]);
        MPI_Type_contiguous(sent, triple, &parts[1]);
        MPI_Type_contiguous(sent, MPI_DOUBLE, &parts[2]);
        MPI_Type_contiguous(sent, MPI_INT, &parts[3]);
        MPI_Type_contiguous(sent, MPI_INT, &parts[4]);
        MPI_Get_address(c->x[side] + 3 * LAMMPS_ATOMS, &addresses[0]);
        MPI_Get_address(c->v[side] + 3 * LAMMPS_ATOMS, &addresses[1]);
        MPI_Get_address(c->q[side] + LAMMPS_ATOMS, &addresses[2]);
        MPI_Get_address(c->tag[side] + LAMMPS_ATOMS, &addresses[3]);
        MPI_Get_address(c->species[side] + LAMMPS_ATOMS, &addresses[4]);
    }
    MPI_Type_create_struct(5, lengths, addresses, parts, type);
    for (int p = 0; p < 5; p++)
        MPI_Type_free(&parts[p]);
    MPI_Type_free(&triple);
    MPI_Type_commit(type);
    *base = MPI_BOTTOM;
}

/* 3D FFT transpose of a 128^3 grid of complex doubles on two ranks: each holds a slab of
 * 64 x-planes and sends the half of every plane the other rank will own, a subarray of
 * 4096 blocks of 2 KiB. */
static void build_fft(app_context *c, int receiving, MPI_Datatype *type, void **base)
{
    MPI_Datatype complex_double;
    int sizes[3] = { FFT_N / 2, FFT_N, FFT_N }, subsizes[3] = { FFT_N / 2, FFT_N / 2, FFT_N };
    int starts[3] = { 0, receiving ? 0 : FFT_N / 2, 0 };
    MPI_Type_contiguous(2, MPI_DOUBLE, &complex_double);
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, complex_double, type);
    MPI_Type_free(&complex_double);
    MPI_Type_commit(type);
    *base = receiving ? c->receive : c->send;
}

static const app_kernel kernels[] = {
    { "MILC su3 z-down 32^4, 24 KiB blocks", 4, (size_t)MILC_L * MILC_L * MILC_L * MILC_L * 24, build_milc },
    { "NAS MG x-face 130^3, 8 B blocks", 2, (size_t)MG_N * MG_N * MG_N * 8, build_mg_x },
    { "NAS MG y-face 130^3, 1 KiB blocks", 2, (size_t)MG_N * MG_N * MG_N * 8, build_mg_y },
    { "NAS MG coarse y-face 10^3, 80 B blocks", 2, (size_t)MG_COARSE_N * MG_COARSE_N * MG_COARSE_N * 8,
      build_mg_coarse_y },
    { "WRF y-halo 3 fields, 1.6 KiB blocks", 3, (size_t)3 * WRF_X * WRF_X * WRF_Z * 4, build_wrf },
    { "LAMMPS exchange 1793-2048 of 32768 atoms, MPI_BOTTOM", 2, 64, build_lammps },
    { "3D FFT transpose 128^3 on 2 ranks, 2 KiB blocks", 1, (size_t)FFT_N * FFT_N * FFT_N * 16 / 2, build_fft },
};

/* ---- the three ways ----------------------------------------------------------------- */

typedef int isend_fn(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int irecv_fn(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int probe_fn(int, int, MPI_Comm, MPI_Status *);

/* The calls a way makes: blocking (send, recv) or nonblocking (isend, irecv), and the
 * probe that sizes a receive. */
typedef struct app_calls {
    send_fn *send;
    recv_fn *recv;
    isend_fn *isend;
    irecv_fn *irecv;
    probe_fn *probe;
} app_calls;

/* One message of an outer iteration (tag @m) between ranks 0 and 1, with the types
 * this iteration built. */
typedef void exchange_fn(app_context *c, const app_calls *calls, int m, MPI_Datatype send_type, void *send_base,
                         MPI_Datatype receive_type, void *receive_base);

/* A round trip: rank 0 sends first, rank 1 echoes. */
static void round_trip(app_context *c, const app_calls *calls, int m, MPI_Datatype send_type, void *send_base,
                       MPI_Datatype receive_type, void *receive_base)
{
    if (c->rank == 0) {
        calls->send(send_base, 1, send_type, 1, m, c->comm);
        calls->recv(receive_base, 1, receive_type, 1, m, c->comm, MPI_STATUS_IGNORE);
    } else if (c->rank == 1) {
        calls->recv(receive_base, 1, receive_type, 0, m, c->comm, MPI_STATUS_IGNORE);
        calls->send(send_base, 1, send_type, 0, m, c->comm);
    }
}

/* A receive sized by a probe, as a program that does not know the length does it: the
 * probe, MPI_Get_count in the receive's datatype, the receive of that many. */
static void probed_receive(app_context *c, const app_calls *calls, int peer, int m, MPI_Datatype receive_type,
                           void *receive_base)
{
    MPI_Status status;
    int count;
    calls->probe(peer, m, c->comm, &status);
    MPI_Get_count(&status, receive_type, &count);
    calls->recv(receive_base, count, receive_type, status.MPI_SOURCE, status.MPI_TAG, c->comm, MPI_STATUS_IGNORE);
}

/* A round trip whose receives are sized by probes. */
static void probed_round_trip(app_context *c, const app_calls *calls, int m, MPI_Datatype send_type, void *send_base,
                              MPI_Datatype receive_type, void *receive_base)
{
    if (c->rank == 0) {
        calls->send(send_base, 1, send_type, 1, m, c->comm);
        probed_receive(c, calls, 1, m, receive_type, receive_base);
    } else if (c->rank == 1) {
        probed_receive(c, calls, 0, m, receive_type, receive_base);
        calls->send(send_base, 1, send_type, 0, m, c->comm);
    }
}

/* The halo pattern: each of ranks 0 and 1 posts its receive from the other, then its
 * send to it, and waits for both (MPI_Waitall), both directions at once. */
static void halo(app_context *c, const app_calls *calls, int m, MPI_Datatype send_type, void *send_base,
                 MPI_Datatype receive_type, void *receive_base)
{
    MPI_Request requests[2];
    if (c->rank > 1)
        return;
    calls->irecv(receive_base, 1, receive_type, 1 - c->rank, m, c->comm, &requests[0]);
    calls->isend(send_base, 1, send_type, 1 - c->rank, m, c->comm, &requests[1]);
    MPI_Status statuses[2];
    MPI_Waitall(2, requests, statuses);
}

/* @iterations outer iterations as the application runs them: build the types, exchange
 * the kernel's messages, free the types. */
static void iterate(app_context *c, int iterations, exchange_fn *exchange, const app_calls *calls)
{
    for (int i = 0; i < iterations; i++, c->round++) {
        MPI_Datatype send_type, receive_type;
        void *send_base, *receive_base;
        c->kernel->build(c, 0, &send_type, &send_base);
        c->kernel->build(c, 1, &receive_type, &receive_base);
        for (int m = 0; m < c->kernel->messages; m++)
            exchange(c, calls, m, send_type, send_base, receive_type, receive_base);
        MPI_Type_free(&send_type);
        MPI_Type_free(&receive_type);
    }
}

static const app_calls zcopy_calls = { MPIX_Send_zcopy, MPIX_Recv_zcopy, MPIX_Isend_zcopy, MPIX_Irecv_zcopy,
                                       MPIX_Probe_zcopy };
static const app_calls mpi_calls = { MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Probe };
static const app_calls interposed_calls = { mpix_interpose_zcopy_send, mpix_interpose_zcopy_recv, NULL, NULL, NULL };

static void zcopy_way(void *context, int iterations) { iterate(context, iterations, round_trip, &zcopy_calls); }
static void datatype_way(void *context, int iterations) { iterate(context, iterations, round_trip, &mpi_calls); }
static void interposed_way(void *context, int iterations)
{
    iterate(context, iterations, round_trip, &interposed_calls);
}
static void zcopy_probed(void *context, int iterations)
{
    iterate(context, iterations, probed_round_trip, &zcopy_calls);
}
static void datatype_probed(void *context, int iterations)
{
    iterate(context, iterations, probed_round_trip, &mpi_calls);
}
static void zcopy_halo(void *context, int iterations) { iterate(context, iterations, halo, &zcopy_calls); }
static void datatype_halo(void *context, int iterations) { iterate(context, iterations, halo, &mpi_calls); }

/* MPICH 4.0 refuses MPI_Pack and MPI_Unpack at MPI_BOTTOM (a null buffer): a type of
 * absolute addresses is packed from a real address with the type shifted back by it. */
static void off_bottom(MPI_Datatype *type, void **base, void *anchor)
{
    if (*base != MPI_BOTTOM)
        return;
    MPI_Aint at;
    int one = 1;
    MPI_Datatype shifted;
    MPI_Get_address(anchor, &at);
    MPI_Aint displacement = -at;
    MPI_Type_create_struct(1, &one, &displacement, type, &shifted);
    MPI_Type_commit(&shifted);
    MPI_Type_free(type);
    *type = shifted;
    *base = anchor;
}

static void pack_way(void *context, int iterations)
{
    app_context *c = context;
    for (int i = 0; i < iterations; i++, c->round++) {
        MPI_Datatype send_type, receive_type;
        void *send_base, *receive_base;
        c->kernel->build(c, 0, &send_type, &send_base);
        c->kernel->build(c, 1, &receive_type, &receive_base);
        off_bottom(&send_type, &send_base, c->send);
        off_bottom(&receive_type, &receive_base, c->receive);
        for (int m = 0; m < c->kernel->messages; m++)
            for (int turn = 0; turn < 2; turn++) {
                int sending = (c->rank == 0) == (turn == 0), peer = 1 - c->rank, position = 0;
                if (c->rank > 1)
                    break;
                if (sending) {
                    MPI_Pack(send_base, 1, send_type, c->packed, c->packed_bytes, &position, c->comm);
                    MPI_Send(c->packed, position, MPI_PACKED, peer, m, c->comm);
                } else {
                    MPI_Recv(c->packed, c->packed_bytes, MPI_PACKED, peer, m, c->comm, MPI_STATUS_IGNORE);
                    MPI_Unpack(c->packed, c->packed_bytes, &position, receive_base, 1, receive_type, c->comm);
                }
            }
        MPI_Type_free(&send_type);
        MPI_Type_free(&receive_type);
    }
}

/* ---- setup and rows --------------------------------------------------------------- */

static void lammps_arrays(const bench_options *options, app_context *c)
{
    for (int side = 0; side < 2; side++) {
        size_t atoms = LAMMPS_ATOMS + LAMMPS_SENT;   /* room for received atoms */
        c->x[side] = bench_buffer_alloc(options, atoms * 24);
        c->v[side] = bench_buffer_alloc(options, atoms * 24);
        c->q[side] = bench_buffer_alloc(options, atoms * 8);
        c->tag[side] = bench_buffer_alloc(options, atoms * 4);
        c->species[side] = bench_buffer_alloc(options, atoms * 4);
        for (size_t a = 0; a < atoms; a++) {
            for (int d = 0; d < 3; d++)
                c->x[side][3 * a + d] = a + 0.1 * d, c->v[side][3 * a + d] = -(double)a;
            c->q[side][a] = a % 3 - 1.0;
            c->tag[side][a] = (int)a + 1;
            c->species[side][a] = (int)(a % 4) + 1;
        }
    }
    /* Atoms near one face of the box: about one in sixteen, in index order. */
    c->send_list = malloc(LAMMPS_SENT * sizeof *c->send_list);
    for (int i = 0; i < LAMMPS_SENT; i++)
        c->send_list[i] = 16 * i + (i * 7) % 13;
}

static void free_context(app_context *c)
{
    free(c->send);
    free(c->receive);
    free(c->packed);
    for (int side = 0; side < 2; side++) {
        free(c->x[side]);
        free(c->v[side]);
        free(c->q[side]);
        free(c->tag[side]);
        free(c->species[side]);
    }
    free(c->send_list);
}

/* A kernel's buffers, allocated and written as the program fills them, on a communicator
 * of their own (zcopy's state of a communicator starts cold); returns the bytes one
 * message carries. */
static int setup_context(const bench_options *options, const app_kernel *kernel, app_context *c)
{
    *c = (app_context){ .kernel = kernel, .rank = options->rank };
    MPI_Comm_dup(options->comm, &c->comm);
    bench_buffer_pair(options, kernel->buffer_bytes, &c->send, &c->receive);
    if (kernel->build == build_lammps)
        lammps_arrays(options, c);

    MPI_Datatype type;
    void *base;
    int size;
    kernel->build(c, 0, &type, &base);
    MPI_Type_size(type, &size);
    MPI_Pack_size(1, type, c->comm, &c->packed_bytes);
    MPI_Type_free(&type);
    c->packed = malloc(c->packed_bytes);
    return size;
}

/* One outer iteration of @way, alone, on a context of its own: the first iteration the
 * baseline pays on a communicator and buffers it never used. */
static bench_stats cold_on_fresh(const bench_options *options, const bench_options *once, const app_kernel *kernel,
                                 bench_fn way)
{
    app_context fresh;
    setup_context(options, kernel, &fresh);
    bench_stats cold = bench_time(once, way, &fresh, 1);
    free_context(&fresh);
    MPI_Comm_free(&fresh.comm);
    return cold;
}

static void run_kernel(const bench_options *options, const app_kernel *kernel)
{
    app_context c;
    int size = setup_context(options, kernel, &c);
    size_t moved = 2 * (size_t)kernel->messages * size;   /* per outer iteration */

    /* No sample is discarded, whatever --warmup says: a program has no untimed
     * iterations. The first iteration of each way is one sample of its own, on
     * buffers of its own written just before: on shared ones the second way would
     * find what the first left in them (pages folded, caches and TLB warm). */
    bench_options unwarmed = *options, once = *options;
    unwarmed.warmup = once.warmup = 0;
    once.repetitions = 1;
    char label[192];
    bench_stats cold_zcopy = bench_time(&once, zcopy_way, &c, 1);
    bench_stats cold_datatype = cold_on_fresh(options, &once, kernel, datatype_way);
    snprintf(label, sizeof label, "%s: first iteration vs MPI datatype", kernel->name);
    bench_row(options, "zcopy-apps", label, moved, cold_zcopy, cold_datatype);
    /* The interposed calls on a communicator of their own start cold there (peers'
     * layouts); datatypes' layouts are the process's, flattened by the way above. */
    app_context interposed = c;
    MPI_Comm_dup(options->comm, &interposed.comm);
    bench_stats cold_interposed = bench_time(&once, interposed_way, &interposed, 1);
    snprintf(label, sizeof label, "%s: first iteration, unchanged MPI_Send/Recv under libmpix-pmpi.so vs MPI datatype",
             kernel->name);
    bench_row(options, "zcopy-apps", label, moved, cold_interposed, cold_datatype);

    /* About 32 MiB moved per sample (8 with --quick), 1 to 50 outer iterations. */
    int iterations = (int)((options->quick ? 8 : 32) * 1048576.0 / moved);
    iterations = iterations < 1 ? 1 : iterations > 50 ? 50 : iterations;
    /* The interposed calls run next to the explicit ones, so that in the ABBA order
     * neither follows the pack way, which leaves the caches full of its own buffer. */
    bench_stats time[4];
    bench_time_together(&unwarmed, 4,
                        (bench_case[]){ { zcopy_way, &c }, { interposed_way, &interposed }, { datatype_way, &c },
                                        { pack_way, &c } },
                        iterations, time);
    snprintf(label, sizeof label, "%s vs MPI datatype", kernel->name);
    bench_row(options, "zcopy-apps", label, moved, time[0], time[2]);
    snprintf(label, sizeof label, "%s vs pack/unpack", kernel->name);
    bench_row(options, "zcopy-apps", label, moved, time[0], time[3]);
    snprintf(label, sizeof label, "%s: unchanged MPI_Send/Recv under libmpix-pmpi.so vs MPIX_Send/Recv_zcopy",
             kernel->name);
    bench_row(options, "zcopy-apps", label, moved, time[1], time[0]);
    free_context(&c);
    MPI_Comm_free(&c.comm);
    MPI_Comm_free(&interposed.comm);
}

/* The kernel in another pattern (@pattern: the table and the words its rows add), zcopy's
 * way against MPI's: first iteration of each way alone, then interleaved samples. */
static void run_pair(const bench_options *options, const app_kernel *kernel, const char *table, const char *pattern,
                     bench_fn zcopy_fn, bench_fn datatype_fn)
{
    app_context c;
    int size = setup_context(options, kernel, &c);
    size_t moved = 2 * (size_t)kernel->messages * size;
    bench_options unwarmed = *options, once = *options;
    unwarmed.warmup = once.warmup = 0;
    once.repetitions = 1;
    char label[192];
    bench_stats cold_zcopy = bench_time(&once, zcopy_fn, &c, 1);
    bench_stats cold_datatype = cold_on_fresh(options, &once, kernel, datatype_fn);
    snprintf(label, sizeof label, "%s, %s: first iteration vs MPI datatype", kernel->name, pattern);
    bench_row(options, table, label, moved, cold_zcopy, cold_datatype);
    int iterations = (int)((options->quick ? 8 : 32) * 1048576.0 / moved);
    iterations = iterations < 1 ? 1 : iterations > 50 ? 50 : iterations;
    bench_stats zcopy_time, datatype_time;
    bench_time_pair(&unwarmed, zcopy_fn, &c, datatype_fn, &c, iterations, &zcopy_time, &datatype_time);
    snprintf(label, sizeof label, "%s, %s vs MPI datatype", kernel->name, pattern);
    bench_row(options, table, label, moved, zcopy_time, datatype_time);
    free_context(&c);
    MPI_Comm_free(&c.comm);
}

/* The blocking round trip with every receive sized by a probe. */
static void probe_table(const bench_options *options)
{
    bench_heading(options, "zcopy-probe", "MPIX_Probe_zcopy + MPIX_Recv_zcopy", "MPI_Probe + MPI_Recv");
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
        run_pair(options, &kernels[k], "zcopy-probe", "receives sized by a probe", zcopy_probed, datatype_probed);
    bench_note(options, "each receive: probe, MPI_Get_count, receive of that count; datatypes built and freed "
                        "every iteration; nothing warmed up");
}

/* The nonblocking table, every kernel as a halo exchange: at any thread level, unless the
 * progress thread is asked for (MPIX_ZCOPY_PROGRESS=thread), which needs
 * MPI_THREAD_MULTIPLE (--threads) and MPICH 4.1 or later (lib/zcopy/request.c). */
static void halo_table(const bench_options *options)
{
    const char *progress = getenv("MPIX_ZCOPY_PROGRESS");
    if (progress && strcmp(progress, "thread") == 0) {
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
        bench_note(options, "halo table (MPIX_Isend/Irecv_zcopy): not run, this MPI refuses the progress thread");
        return;
#endif
        if (!options->threads) {
            bench_note(options, "halo table (MPIX_Isend/Irecv_zcopy): not run, the progress thread needs --threads");
            return;
        }
    }
    bench_heading(options, "zcopy-halo", "MPIX_Isend/Irecv_zcopy + MPI_Waitall", "MPI_Isend/Irecv + MPI_Waitall");
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
        run_pair(options, &kernels[k], "zcopy-halo", "halo (Isend/Irecv/Waitall)", zcopy_halo, datatype_halo);
    bench_note(options, "both ranks post a receive and a send and wait for both; datatypes built and freed "
                        "every iteration; nothing warmed up");
}

int bench_zcopy_apps(const bench_options *options)
{
    bench_heading(options, "zcopy-apps", "MPIX_Send/Recv_zcopy", "the named alternative");
    /* What libmpix-pmpi.so does at MPI_Init with MPIX_PMPI=zcopy (collective). */
    if (mpix_interpose_zcopy_init(0) != MPI_SUCCESS)
        bench_note(options, "zcopy interposition could not start: its rows are plain MPI");
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
        run_kernel(options, &kernels[k]);
    bench_note(options, "each iteration builds, uses and frees its datatypes; nothing warmed up; "
                        "first iteration: each way's first, alone");
    probe_table(options);
    return 0;
}

int bench_zcopy_halo(const bench_options *options)
{
    if (options->size < 2) {
        if (options->rank == 0)
            fprintf(stderr, "mpix-bench zcopy-halo: needs 2 ranks\n");
        return 1;
    }
    halo_table(options);
    return 0;
}
