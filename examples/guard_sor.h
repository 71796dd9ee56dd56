/* SPDX-License-Identifier: BSD-3-Clause */
/* Red-black SOR on a 2D grid split into row strips, with three ways of exchanging the
 * halo rows:
 *   - sor_run_exchange with MPI_Sendrecv: blocking, four calls per iteration (up and
 *     down, before each colour's sweep), the easiest code to write;
 *   - sor_run_exchange with MPIX_Sendrecv_guarded: the same code, guarded;
 *   - sor_run_overlap: MPI_Isend/MPI_Irecv written by hand, border rows first, the
 *     interior swept while the halo travels.
 * All three give bit-identical grids: a cell of one colour depends only on cells of the
 * other, so the order of updates within a sweep does not matter.
 * Shared by examples/guard_sor.c, tests/guard and `mpix-bench guard`. */
#ifndef MPIX_EXAMPLES_GUARD_SOR_H
#define MPIX_EXAMPLES_GUARD_SOR_H

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

typedef struct sor_grid {
    int rows, cols;          /* owned rows and columns; rows 0 and rows+1 are halo */
    int first_row;           /* global index of owned row 1 */
    double *cells;           /* (rows + 2) x (cols + 2), boundary columns fixed */
    int up, down;            /* neighbour ranks or MPI_PROC_NULL */
    MPI_Comm comm;
    double omega;
} sor_grid;

typedef int sor_sendrecv_fn(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                            MPI_Comm comm, MPI_Status *status);

static inline double *sor_row(const sor_grid *g, int row) { return g->cells + (size_t)row * (size_t)(g->cols + 2); }

/* A strip of @global_rows x @cols split as evenly as the ranks allow (odd counts too):
 * the top edge held at 1, the rest a fixed pattern of the global position, so every
 * split of the same problem starts from the same grid. */
static inline int sor_init(sor_grid *g, MPI_Comm comm, int global_rows, int cols)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    g->comm = comm;
    g->cols = cols;
    g->rows = global_rows / ranks + (rank < global_rows % ranks);
    g->first_row = rank * (global_rows / ranks) + (rank < global_rows % ranks ? rank : global_rows % ranks);
    g->up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    g->down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;
    g->omega = 1.5;
    g->cells = malloc(sizeof(double) * (size_t)(g->rows + 2) * (size_t)(cols + 2));
    if (!g->cells)
        return -1;
    for (int r = 0; r < g->rows + 2; r++) {
        int global = g->first_row + r - 1;   /* -1 and global_rows are the fixed edges */
        for (int c = 0; c < cols + 2; c++)
            sor_row(g, r)[c] = global < 0 ? 1.0 : (double)((global * 31 + c * 17) % 97) / 97.0;
    }
    return 0;
}

static inline void sor_free(sor_grid *g) { free(g->cells); }

/* One colour over owned rows [lo, hi]: cells with (global row + column) % 2 == colour. */
static inline void sor_sweep(sor_grid *g, int colour, int lo, int hi)
{
    const double omega = g->omega;
    for (int r = lo; r <= hi; r++) {
        double *above = sor_row(g, r - 1), *row = sor_row(g, r), *below = sor_row(g, r + 1);
        int start = 1 + ((g->first_row + r - 1 + 1 + colour) & 1);
        for (int c = start; c <= g->cols; c += 2)
            row[c] += omega * (0.25 * (above[c] + below[c] + row[c - 1] + row[c + 1]) - row[c]);
    }
}

/* Two blocking-style calls: my first row up / the row below me from down, my last row
 * down / the row above me from up. */
static inline void sor_exchange(sor_grid *g, sor_sendrecv_fn *sendrecv)
{
    const int n = g->cols + 2;
    sendrecv(sor_row(g, 1), n, MPI_DOUBLE, g->up, 1, sor_row(g, g->rows + 1), n, MPI_DOUBLE, g->down, 1, g->comm,
             MPI_STATUS_IGNORE);
    sendrecv(sor_row(g, g->rows), n, MPI_DOUBLE, g->down, 2, sor_row(g, 0), n, MPI_DOUBLE, g->up, 2, g->comm,
             MPI_STATUS_IGNORE);
}

static inline void sor_run_exchange(sor_grid *g, int iterations, sor_sendrecv_fn *sendrecv)
{
    for (int i = 0; i < iterations; i++) {
        for (int colour = 0; colour < 2; colour++) {
            sor_exchange(g, sendrecv);
            sor_sweep(g, colour, 1, g->rows);
        }
    }
}

static inline void sor_post_halo(sor_grid *g, MPI_Request requests[4])
{
    const int n = g->cols + 2;
    MPI_Irecv(sor_row(g, g->rows + 1), n, MPI_DOUBLE, g->down, 1, g->comm, &requests[0]);
    MPI_Irecv(sor_row(g, 0), n, MPI_DOUBLE, g->up, 2, g->comm, &requests[1]);
    MPI_Isend(sor_row(g, 1), n, MPI_DOUBLE, g->up, 1, g->comm, &requests[2]);
    MPI_Isend(sor_row(g, g->rows), n, MPI_DOUBLE, g->down, 2, g->comm, &requests[3]);
}

/* Hand-written overlap: sweep the border rows, send them, and sweep the interior while
 * they travel. */
static inline void sor_run_overlap(sor_grid *g, int iterations)
{
    MPI_Request requests[4];
    MPI_Status statuses[4];   /* not MPI_STATUSES_IGNORE: GCC warns on MPICH's definition */
    sor_post_halo(g, requests);
    for (int i = 0; i < iterations; i++) {
        for (int colour = 0; colour < 2; colour++) {
            MPI_Waitall(4, requests, statuses);
            sor_sweep(g, colour, 1, 1);
            if (g->rows > 1)
                sor_sweep(g, colour, g->rows, g->rows);
            int last = i == iterations - 1 && colour == 1;
            if (!last)
                sor_post_halo(g, requests);
            if (g->rows > 2)
                sor_sweep(g, colour, 2, g->rows - 1);
        }
    }
}

enum sor_method { SOR_BLOCKING, SOR_GUARDED, SOR_OVERLAP };

/* @iterations of one of the three versions; @guarded_sendrecv is MPIX_Sendrecv_guarded
 * (passed in, so that this header needs no mpix for the plain program). */
static inline void sor_run(sor_grid *g, enum sor_method method, int iterations, sor_sendrecv_fn *guarded_sendrecv)
{
    if (method == SOR_OVERLAP)
        sor_run_overlap(g, iterations);
    else
        sor_run_exchange(g, iterations, method == SOR_BLOCKING ? MPI_Sendrecv : guarded_sendrecv);
}

#endif
