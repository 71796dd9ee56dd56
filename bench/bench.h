/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench: shared timing, table output and the subcommand registry. A subcommand
 * times each MPIX path and its standard-MPI counterpart in the same run and prints one
 * row per pair, with the ratio baseline/mpix (above 1: mpix is faster). */
#ifndef MPIX_BENCH_H
#define MPIX_BENCH_H

#include <mpi.h>
#include <stddef.h>

typedef struct bench_options {
    int csv;             /* machine-readable output */
    int quick;           /* short version: fewer sizes and repetitions */
    int threads;         /* --threads: MPI was started with MPI_THREAD_MULTIPLE */
    int warmup;          /* untimed samples before the timed ones */
    int hugepages;       /* message buffers on transparent huge pages (bench_buffer_alloc) */
    int repetitions;     /* timed samples; each sample is the max over ranks */
    long long min_bytes; /* hy: sizes below this are skipped (the largest always runs) */
    MPI_Comm comm;
    int rank, size;
} bench_options;

typedef struct bench_stats {
    double min, median; /* seconds per iteration */
} bench_stats;

/* The timed operation: run it @iterations times. */
typedef void (*bench_fn)(void *context, int iterations);

/* Collective over options->comm. Each sample times @iterations calls between barriers
 * and takes the slowest rank; returns min and median over the timed samples. */
bench_stats bench_time(const bench_options *options, bench_fn fn, void *context, int iterations);

typedef struct bench_case {
    bench_fn fn;
    void *context;
} bench_case;

/* Time @cases operations that are to be compared, their samples interleaved (round r
 * runs every case once, in reverse order on odd rounds) so that a change of the
 * machine's speed during the run weighs on all of them alike; @stats[c] as bench_time. */
void bench_time_together(const bench_options *options, int cases, const bench_case *each, int iterations,
                         bench_stats *stats);

/* bench_time_together for the usual pair: an MPIX path and its MPI baseline. */
void bench_time_pair(const bench_options *options, bench_fn mpix_fn, void *mpix_context, bench_fn baseline_fn,
                     void *baseline_context, int iterations, bench_stats *mpix, bench_stats *baseline);

/* Rank 0 prints one row: the mpix figure, its baseline, and baseline/mpix. @bytes > 0
 * adds bandwidth in GB/s from the medians. */
void bench_row(const bench_options *options, const char *subcommand, const char *case_name, size_t bytes,
               bench_stats mpix, bench_stats baseline);

/* Rank 0 prints a heading (skipped in CSV) naming what the two columns compare. */
void bench_heading(const bench_options *options, const char *subcommand, const char *mpix_label,
                   const char *baseline_label);

/* Rank 0 prints a remark under the table ("# text"; in CSV a comment line, which
 * bench/plot.py skips). */
void bench_note(const bench_options *options, const char *text);

/* A message buffer of @bytes: malloc'd, or on transparent huge pages with --hugepages.
 * Free with free(). */
void *bench_buffer_alloc(const bench_options *options, size_t bytes);
/* A send and a receive buffer of @bytes each (bench_buffer_alloc), written through as a
 * program fills its own: the send buffer with a byte pattern, the receive buffer with
 * zeros. Aborts on @options->comm without memory. */
void bench_buffer_pair(const bench_options *options, size_t bytes, char **send, char **receive);

/* Collective: rank 0 prints (not in CSV) the nodes as the MPI sees them, their host
 * names with ranks each, and the links' rate when the run is under tools/vcluster. */
void bench_describe_nodes(const bench_options *options);

/* The directory for scratch files: $MPIX_BENCH_DIR, or /tmp. */
const char *bench_dir(void);

/* Subcommands; each returns 0 on success. */
int bench_common(const bench_options *options);
int bench_storage(const bench_options *options);
int bench_rma(const bench_options *options);
int bench_spin(const bench_options *options);
int bench_hy(const bench_options *options);
int bench_zcopy(const bench_options *options);
/* The application table of bench_zcopy (zcopy_apps.c). */
int bench_zcopy_apps(const bench_options *options);
/* zcopy's nonblocking table, in a process of its own: what the blocking tables learn of a
 * datatype's shape would otherwise carry over to it, as it would not to a program that
 * only exchanges halos (zcopy_apps.c). */
int bench_zcopy_halo(const bench_options *options);
int bench_guard(const bench_options *options);

#endif
