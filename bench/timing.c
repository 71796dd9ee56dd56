#include "bench.h"

#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_stats bench_time(const bench_options *options, bench_fn fn, void *context, int iterations)
{
    int samples = options->warmup + options->repetitions;
    double *timed = malloc(options->repetitions * sizeof *timed);
    bench_stats stats;

    for (int sample = 0; sample < samples; sample++) {
        MPI_Barrier(options->comm);
        double start = MPI_Wtime();
        fn(context, iterations);
        double local = (MPI_Wtime() - start) / iterations, slowest;
        MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, options->comm);
        if (sample >= options->warmup)
            timed[sample - options->warmup] = slowest;
    }
    qsort(timed, options->repetitions, sizeof *timed, compare_doubles);
    stats.min = timed[0];
    stats.median = options->repetitions % 2
                       ? timed[options->repetitions / 2]
                       : 0.5 * (timed[options->repetitions / 2 - 1] + timed[options->repetitions / 2]);
    free(timed);
    return stats;
}
