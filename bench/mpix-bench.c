/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench [--csv] [--quick] [--hugepages] [--reps N] [--warmup N] [--min-bytes N] [SUBCOMMAND...]
 * Without a subcommand: a short (--quick) run of every subcommand. */
#include "bench.h"

#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct subcommand {
    const char *name;
    int (*run)(const bench_options *options);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    { "common", bench_common, "cost of mpix's settings and object-state lookups over the raw MPI calls" },
    { "storage", bench_storage, "storage windows: put/get vs memory windows, mSTREAM, checkpoint vs MPI-IO" },
    { "hy", bench_hy, "hybrid allgather/bcast/allreduce vs MPI's (MPIX_HY_SPLIT=k for virtual nodes)" },
    { "spin", bench_spin, "spin-synchronized shared windows vs MPI_Barrier" },
    { "zcopy", bench_zcopy, "zero-copy datatype ping-pong vs MPI datatypes, pack/unpack, memcpy limit (2 ranks)" },
    { "zcopy-halo", bench_zcopy_halo, "zcopy's application kernels as nonblocking halo exchanges, run alone (2 ranks)" },
    { "guard", bench_guard, "guarded Red-Black SOR vs blocking MPI_Sendrecv and hand-written Isend/Irecv" },
    { "rma", bench_rma, "MPI-3 one-sided: window kinds, flush vs unlock, Get-Compute-Put overlap" },
};
enum { SUBCOMMAND_COUNT = sizeof subcommands / sizeof subcommands[0] };

static void usage(int rank)
{
    if (rank != 0)
        return;
    printf("usage: mpirun -np N mpix-bench [--csv] [--quick] [--hugepages] [--threads] [--reps N] [--warmup N]\n"
           "                  [--min-bytes N] [SUBCOMMAND...]\n"
           "Without a subcommand, runs a --quick version of every one. --hugepages puts message\n"
           "buffers (zcopy) on transparent huge pages. --threads starts MPI with\n"
           "MPI_THREAD_MULTIPLE (zcopy's halo table with MPIX_ZCOPY_PROGRESS=thread needs it). --min-bytes\n"
           "skips message sizes below N "
           "(hy's sweep of 8 B to 1 MiB; 1 MiB always runs). Subcommands:\n");
    for (int i = 0; i < SUBCOMMAND_COUNT; i++)
        printf("  %-11s %s\n", subcommands[i].name, subcommands[i].summary);
}

static const subcommand *find_subcommand(const char *name)
{
    for (int i = 0; i < SUBCOMMAND_COUNT; i++)
        if (strcmp(subcommands[i].name, name) == 0)
            return &subcommands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    bench_options options = { .warmup = 2, .repetitions = 9, .comm = MPI_COMM_WORLD };
    const subcommand *chosen[SUBCOMMAND_COUNT * 4];
    int chosen_count = 0, status = 0;

    /* --threads: MPI_THREAD_MULTIPLE, which zcopy's progress thread needs (its halo table
     * with MPIX_ZCOPY_PROGRESS=thread); every other figure of such a run is taken at that
     * level too. Decided before MPI_Init, so read from the raw arguments. */
    int threads = 0, provided = MPI_THREAD_SINGLE;
    for (int i = 1; i < argc; i++)
        threads |= strcmp(argv[i], "--threads") == 0;
    if (threads)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(options.comm, &options.rank);
    MPI_Comm_size(options.comm, &options.size);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0) {
            options.csv = 1;
        } else if (strcmp(argv[i], "--quick") == 0) {
            options.quick = 1;
        } else if (strcmp(argv[i], "--hugepages") == 0) {
            options.hugepages = 1;
        } else if (strcmp(argv[i], "--threads") == 0) {
            options.threads = provided == MPI_THREAD_MULTIPLE;
        } else if ((strcmp(argv[i], "--reps") == 0 || strcmp(argv[i], "--warmup") == 0) && i + 1 < argc) {
            int value = atoi(argv[i + 1]);
            if (argv[i][2] == 'r')
                options.repetitions = value > 0 ? value : 1;
            else
                options.warmup = value >= 0 ? value : 0;
            i++;
        } else if (strcmp(argv[i], "--min-bytes") == 0 && i + 1 < argc) {
            options.min_bytes = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(options.rank);
            MPI_Finalize();
            return 0;
        } else if (find_subcommand(argv[i]) && chosen_count < (int)(sizeof chosen / sizeof chosen[0])) {
            chosen[chosen_count++] = find_subcommand(argv[i]);
        } else {
            if (options.rank == 0)
                fprintf(stderr, "mpix-bench: unknown argument '%s'\n", argv[i]);
            usage(options.rank);
            MPI_Finalize();
            return 2;
        }
    }
    if (chosen_count == 0) {
        options.quick = 1;
        for (int i = 0; i < SUBCOMMAND_COUNT; i++)
            chosen[chosen_count++] = &subcommands[i];
    }
    if (options.quick && options.repetitions > 5)
        options.repetitions = 5;
    if (options.rank == 0 && !options.csv) {
        char version[MPIX_MAX_LIBRARY_VERSION_STRING];
        int length;
        MPIX_Get_library_version(version, &length);
        printf("# %s, %d ranks, %d warm-up + %d timed samples%s%s%s\n", version, options.size, options.warmup,
               options.repetitions, options.quick ? " (quick)" : "",
               options.hugepages ? ", message buffers on transparent huge pages" : "",
               options.threads ? ", MPI_THREAD_MULTIPLE" : "");
    }
    bench_describe_nodes(&options);
    for (int i = 0; i < chosen_count; i++)
        status |= chosen[i]->run(&options);
    MPI_Finalize();
    return status;
}
