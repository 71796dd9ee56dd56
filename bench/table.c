/* SPDX-License-Identifier: BSD-3-Clause */
#include "bench.h"

#include <stdio.h>

void bench_heading(const bench_options *options, const char *subcommand, const char *mpix_label,
                   const char *baseline_label)
{
    if (options->rank != 0)
        return;
    if (options->csv) {
        static int header_printed;
        if (!header_printed++)
            printf("subcommand,case,bytes,ranks,mpix_median_us,mpix_min_us,baseline_median_us,baseline_min_us,"
                   "ratio,mpix_GBps,baseline_GBps\n");
        return;
    }
    printf("\n## mpix-bench %s, %d ranks: %s vs %s (ratio = baseline/mpix, above 1 = mpix faster)\n",
           subcommand, options->size, mpix_label, baseline_label);
    printf("%-46s %10s %12s %12s %12s %12s %8s %9s %9s\n", "case", "bytes", "mpix med us", "mpix min us",
           "base med us", "base min us", "ratio", "mpix GB/s", "base GB/s");
}

void bench_row(const bench_options *options, const char *subcommand, const char *case_name, size_t bytes,
               bench_stats mpix, bench_stats baseline)
{
    double ratio = baseline.median / mpix.median;
    double mpix_rate = bytes ? bytes / mpix.median / 1e9 : 0, baseline_rate = bytes ? bytes / baseline.median / 1e9 : 0;

    if (options->rank != 0)
        return;
    if (options->csv)
        /* Case names may hold commas: quoted, as RFC 4180 has it. */
        printf("%s,\"%s\",%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", subcommand, case_name, bytes, options->size,
               mpix.median * 1e6, mpix.min * 1e6, baseline.median * 1e6, baseline.min * 1e6, ratio, mpix_rate,
               baseline_rate);
    else if (bytes)
        printf("%-46s %10zu %12.3f %12.3f %12.3f %12.3f %7.2fx %9.2f %9.2f\n", case_name, bytes, mpix.median * 1e6,
               mpix.min * 1e6, baseline.median * 1e6, baseline.min * 1e6, ratio, mpix_rate, baseline_rate);
    else
        printf("%-46s %10s %12.3f %12.3f %12.3f %12.3f %7.2fx %9s %9s\n", case_name, "-", mpix.median * 1e6,
               mpix.min * 1e6, baseline.median * 1e6, baseline.min * 1e6, ratio, "-", "-");
    fflush(stdout);
}

void bench_note(const bench_options *options, const char *text)
{
    if (options->rank == 0) {
        printf("# %s\n", text);
        fflush(stdout);
    }
}
