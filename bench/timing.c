/* SPDX-License-Identifier: BSD-3-Clause */
#include "bench.h"

#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bench_stats summarize(double *timed, int repetitions)
{
    bench_stats stats;
    qsort(timed, repetitions, sizeof *timed, compare_doubles);
    stats.min = timed[0];
    stats.median = repetitions % 2 ? timed[repetitions / 2] : 0.5 * (timed[repetitions / 2 - 1] + timed[repetitions / 2]);
    return stats;
}

void bench_time_together(const bench_options *options, int cases, const bench_case *each, int iterations,
                         bench_stats *stats)
{
    int samples = options->warmup + options->repetitions;
    double *timed = malloc((size_t)cases * options->repetitions * sizeof *timed);

    for (int sample = 0; sample < samples; sample++) {
        for (int turn = 0; turn < cases; turn++) {
            /* ABBA order: a drift during one round weighs on every case alike */
            int c = sample % 2 ? cases - 1 - turn : turn;
            MPI_Barrier(options->comm);
            double start = MPI_Wtime();
            each[c].fn(each[c].context, iterations);
            double local = (MPI_Wtime() - start) / iterations, slowest;
            MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, options->comm);
            if (sample >= options->warmup)
                timed[(size_t)c * options->repetitions + sample - options->warmup] = slowest;
        }
    }
    for (int c = 0; c < cases; c++)
        stats[c] = summarize(timed + (size_t)c * options->repetitions, options->repetitions);
    free(timed);
}

bench_stats bench_time(const bench_options *options, bench_fn fn, void *context, int iterations)
{
    bench_stats stats;
    bench_time_together(options, 1, &(bench_case){ fn, context }, iterations, &stats);
    return stats;
}

void bench_time_pair(const bench_options *options, bench_fn mpix_fn, void *mpix_context, bench_fn baseline_fn,
                     void *baseline_context, int iterations, bench_stats *mpix, bench_stats *baseline)
{
    bench_stats stats[2];
    bench_time_together(options, 2, (bench_case[]){ { mpix_fn, mpix_context }, { baseline_fn, baseline_context } },
                        iterations, stats);
    *mpix = stats[0];
    *baseline = stats[1];
}
