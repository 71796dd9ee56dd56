/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench guard: the paper's Red-Black 2D SOR (the overlap paper, §1.2) on row strips of an
 * N x N grid, time per iteration of three versions of the same program:
 *   - blocking: MPI_Sendrecv four times an iteration;
 *   - guarded:  the same code with MPIX_Sendrecv_guarded;
 *   - overlap:  hand-written MPI_Isend/MPI_Irecv, border rows first, interior meanwhile.
 * Rows: guarded vs blocking and overlap vs blocking (each timed as an interleaved pair),
 * guarded vs overlap (from the two pairs); a note gives the
 * share of the hand-written speedup that guard recovers, and guard's mprotect calls and
 * faults per iteration (MPIX_Pvar_read), with chains as MPIX_GUARD_CHAIN sets them. The transport is mpirun's choice: run it
 * under `--mca btl tcp,self` for TCP loopback. (mpix-bench links mpix statically: for the
 * LD_PRELOAD=libmpix-guard.so version time examples/guard_sor, which links libmpix.so.) */
#include "bench.h"
#include "../examples/guard_sor.h"

#include <mpix/mpix.h>
#include <stdio.h>

typedef struct sor_context {
    sor_grid grid;
    enum sor_method method;
} sor_context;

static void run_sor(void *context, int iterations)
{
    sor_context *c = context;
    sor_run(&c->grid, c->method, iterations, MPIX_Sendrecv_guarded);
    /* Each sample ends with the grid complete, as the next phase of a program would
     * find it: the last guarded receives are finished here, inside the timing. */
    MPIX_Guard_complete_all();
}

/* The three versions on grids of their own: guarded and blocking interleaved as one
 * pair (@guarded, @blocking[0]), then hand-written overlap and blocking as another
 * (@overlap, @blocking[1]). Pairs, because in the ABBA order of
 * three cases the first and last run twice in a row (A B C C B A A ...) and find their
 * grid warm, the middle one never: at 2048 x 2048 the guarded calls made plain
 * MPI_Sendrecv (MPIX_GUARD=off), as the middle case, ran 0.87x of the same code first. */
static void time_methods(const bench_options *options, int n, int iterations, bench_stats *guarded,
                         bench_stats *overlap, bench_stats blocking[2])
{
    sor_context context[3];
    for (int method = SOR_BLOCKING; method <= SOR_OVERLAP; method++) {
        context[method].method = method;
        if (sor_init(&context[method].grid, options->comm, n, n) != 0)
            MPI_Abort(options->comm, 1);
    }
    bench_time_pair(options, run_sor, &context[SOR_GUARDED], run_sor, &context[SOR_BLOCKING], iterations,
                    guarded, &blocking[0]);
    bench_time_pair(options, run_sor, &context[SOR_OVERLAP], run_sor, &context[SOR_BLOCKING], iterations,
                    overlap, &blocking[1]);
    for (int method = SOR_BLOCKING; method <= SOR_OVERLAP; method++)
        sor_free(&context[method].grid);
}

static MPI_Count guard_pvar(const char *name)
{
    MPI_Count value = 0;
    if (MPIX_Pvar_read(name, MPI_COMM_NULL, &value) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return value;
}

/* mprotect calls and faults per iteration, counted over a separate run. */
static void count_per_iteration(int n, MPI_Comm comm, int iterations, double *mprotects, double *faults)
{
    sor_context context = { .method = SOR_GUARDED };
    *mprotects = *faults = 0;
    if (sor_init(&context.grid, comm, n, n) != 0)
        MPI_Abort(comm, 1);
    run_sor(&context, 1);   /* the first guarded call sets guard up */
    /* Guarded on every rank, or counted on none: a rank whose program threads run makes
     * the plain calls. */
    int active = guard_pvar("guard.active") != 0;
    if (MPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        MPI_Abort(comm, 1);
    if (active) {
        MPI_Count mprotect_calls = guard_pvar("guard.mprotect_calls"), fault_count = guard_pvar("guard.faults");
        run_sor(&context, iterations);
        *mprotects = (double)(guard_pvar("guard.mprotect_calls") - mprotect_calls) / iterations;
        *faults = (double)(guard_pvar("guard.faults") - fault_count) / iterations;
    }
    sor_free(&context.grid);
}

int bench_guard(const bench_options *options)
{
    static const int sizes[] = { 256, 512, 1024, 2048 };
    char name[96], text[256];
    bench_heading(options, "guard", "guarded/overlap SOR", "blocking/overlap SOR");

    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        if (options->quick && n > 512)
            break;
        /* About 0.2 s a sample at 2 ranks: 4 * n^2 cell updates an iteration. */
        int iterations = (int)(4e7 / ((double)n * n));
        if (options->quick)
            iterations /= 8;
        if (iterations < 2)
            iterations = 2;
        bench_stats guarded, overlap, blocking[2];
        time_methods(options, n, iterations, &guarded, &overlap, blocking);
        snprintf(name, sizeof name, "sor %dx%d guarded vs blocking", n, n);
        bench_row(options, "guard", name, 0, guarded, blocking[0]);
        snprintf(name, sizeof name, "sor %dx%d overlap vs blocking", n, n);
        bench_row(options, "guard", name, 0, overlap, blocking[1]);
        snprintf(name, sizeof name, "sor %dx%d guarded vs overlap", n, n);
        bench_row(options, "guard", name, 0, guarded, overlap);

        /* Each saving against the blocking time of its own pair. */
        double saved_by_hand = blocking[1].median - overlap.median, saved_by_guard = blocking[0].median - guarded.median;
        double mprotects = 0, faults = 0;
        count_per_iteration(n, options->comm, iterations, &mprotects, &faults);
        snprintf(text, sizeof text,
                 "sor %d: guard recovers %.0f%% of the hand-written speedup (%.1f of %.1f us/iteration); "
                 "per iteration %.1f mprotect calls, %.1f faults (chains %s)",
                 n, saved_by_hand > 0 ? 100.0 * saved_by_guard / saved_by_hand : 0.0, saved_by_guard * 1e6,
                 saved_by_hand * 1e6, mprotects, faults, guard_pvar("guard.chain") ? "on" : "off");
        bench_note(options, text);
    }
    bench_note(options, "ratio above 1: the first version is faster; times are per SOR iteration (max over ranks)");
    return 0;
}
