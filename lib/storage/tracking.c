/* SPDX-License-Identifier: BSD-3-Clause */
#include "tracking.h"
#include "segment.h"
#include "common/error.h"
#include "common/verbose.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Page tracking to 2 MiB after this many dense intervals in a row: the first sync after
 * an allocation typically finds everything written once, which says little about the
 * checkpoints that follow. */
#define DENSE_SYNCS_TO_HUGE 2
/* Syncs between probes: the first period, doubling up to the last. */
#define FIRST_PROBE_PERIOD 4
#define LAST_PROBE_PERIOD 1024
/* Read-ahead requests are capped by the device's read_ahead_kb, so a range is asked for
 * in pieces no larger than this. */
#define REFILL_CHUNK_BYTES (1LL << 20)

/* cachestat(2), Linux 6.5; glibc and older kernel headers do not declare it. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
struct mpix_cachestat_range {
    unsigned long long off, len;
};
struct mpix_cachestat {
    unsigned long long nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static int cachestat(int fd, long long offset, long long length, struct mpix_cachestat *stat)
{
    struct mpix_cachestat_range range = { (unsigned long long)offset, (unsigned long long)length };
    memset(stat, 0, sizeof *stat);
    return (int)syscall(SYS_cachestat, fd, &range, stat, 0);
}

/* Bytes from the mapping's start to its first whole 2 MiB unit (the mapping starts
 * congruent to the file offset modulo 2 MiB, region.c). */
static long long first_unit(long long file_offset)
{
    return (MPIX_HUGE_PAGE_BYTES - file_offset % MPIX_HUGE_PAGE_BYTES) % MPIX_HUGE_PAGE_BYTES;
}

/* Whether the mapping holds a whole 2 MiB unit (a sample for probes). */
static int has_sample(long long file_offset, long long length)
{
    return first_unit(file_offset) + MPIX_HUGE_PAGE_BYTES <= length;
}

/* Whether cachestat(2) can count this file's dirty pages: Linux 6.5 or later, and a file
 * system that writes back (tmpfs has nothing to write and counts nothing dirty). */
static int can_count_dirty_pages(int fd, long long file_offset)
{
    struct mpix_cachestat stat;
    struct statfs file_system;
    return cachestat(fd, file_offset, mpix_page_size(), &stat) == 0 && fstatfs(fd, &file_system) == 0 &&
           (unsigned long)file_system.f_type != TMPFS_MAGIC;
}

void mpix_tracking_start(mpix_storage_tracking *tracking, const mpix_storage_config *config, int fd,
                         long long file_offset, char *start, long long length)
{
    memset(tracking, 0, sizeof *tracking);
    tracking->policy = mpix_storage_wants_readahead(config->access_style) ? MPIX_TRACKING_PAGE
                                                                           : config->tracking;
    tracking->huge_fraction = config->huge_percent / 100.0;
    tracking->probe_period = FIRST_PROBE_PERIOD;
    tracking->verbose = config->verbose;
    if (length <= 0)
        return;
    if (tracking->policy == MPIX_TRACKING_HUGE) {
        madvise(start, length, MADV_HUGEPAGE);
        tracking->huge = 1;
    } else if (tracking->policy == MPIX_TRACKING_AUTO && !(config->access_style & MPIX_ACCESS_RANDOM) &&
               has_sample(file_offset, length) && can_count_dirty_pages(fd, file_offset)) {
        /* 2 MiB from the start: until a sync shows sparse changes, whole folios cost less
         * to fault in, to reach through another process's one-sided copies and to write
         * back. The interval after the first sync is probed, so a window that then
         * changes sparsely is tracked by page from its second sync on. */
        madvise(start, length, MADV_HUGEPAGE);
        tracking->huge = 1;
        tracking->syncs_to_probe = 1;
    }
}

long long mpix_tracking_granularity(const mpix_storage_tracking *tracking)
{
    return tracking->huge ? MPIX_HUGE_PAGE_BYTES : mpix_page_size();
}

/* Clean pages keep their folio size until they leave the page cache: drop them (a sync
 * just cleaned them, so nothing is lost; pages another process maps stay as they are). */
static void drop_clean_pages(int fd, long long file_offset, char *start, long long length)
{
    madvise(start, length, MADV_DONTNEED);
    posix_fadvise(fd, file_offset, length, POSIX_FADV_DONTNEED);
}

static void switch_to_huge(int fd, long long file_offset, char *start, long long length)
{
    drop_clean_pages(fd, file_offset, start, length);
    madvise(start, length, MADV_HUGEPAGE);
}

/* Page tracking faults pages in 4 KiB at a time (MADV_RANDOM): reading a dropped window
 * back that way would cost a device round trip per page, so what was cached is read
 * ahead again in large requests, which fill 4 KiB folios. */
static void switch_to_page(int fd, long long file_offset, char *start, long long length)
{
    long long chunks = (length + REFILL_CHUNK_BYTES - 1) / REFILL_CHUNK_BYTES;
    unsigned char *cached = calloc(chunks > 0 ? chunks : 1, 1);
    struct mpix_cachestat stat;
    for (long long i = 0; cached && i < chunks; i++)
        cached[i] = cachestat(fd, file_offset + i * REFILL_CHUNK_BYTES, REFILL_CHUNK_BYTES, &stat) == 0 &&
                    stat.nr_cache > 0;
    madvise(start, length, MADV_NOHUGEPAGE);
    drop_clean_pages(fd, file_offset, start, length);
    for (long long i = 0; cached && i < chunks; i++)
        if (cached[i])
            posix_fadvise(fd, file_offset + i * REFILL_CHUNK_BYTES, REFILL_CHUNK_BYTES, POSIX_FADV_WILLNEED);
    free(cached);
}

/* A probe tracks one 2 MiB unit in this many by page for one interval: a sample that
 * measures the changed share without paying page tracking on the whole window. */
#define PROBE_SAMPLE_EVERY 8

/* Apply @action to the probe's sample: every PROBE_SAMPLE_EVERY-th whole 2 MiB unit. */
static void for_each_sample(int fd, long long file_offset, char *start, long long length,
                            void (*action)(int, long long, char *, long long, void *), void *context)
{
    for (long long at = first_unit(file_offset); at + MPIX_HUGE_PAGE_BYTES <= length;
         at += PROBE_SAMPLE_EVERY * MPIX_HUGE_PAGE_BYTES)
        action(fd, file_offset + at, start + at, MPIX_HUGE_PAGE_BYTES, context);
}

static void sample_to_page(int fd, long long file_offset, char *start, long long length, void *context)
{
    (void)context;
    switch_to_page(fd, file_offset, start, length);
}

static void sample_to_huge(int fd, long long file_offset, char *start, long long length, void *context)
{
    (void)context;
    switch_to_huge(fd, file_offset, start, length);
}

static void count_sample(int fd, long long file_offset, char *start, long long length, void *context)
{
    long long *pages = context; /* [dirty, total] */
    struct mpix_cachestat stat;
    (void)start;
    if (cachestat(fd, file_offset, length, &stat) == 0)
        pages[0] += (long long)stat.nr_dirty;
    pages[1] += length / mpix_page_size();
}

/* Auto: dense intervals (a share at or above the threshold) favour 2 MiB folios. Under
 * them the share counts whole 2 MiB units, an upper bound, so falling below the threshold
 * there is conclusive; staying above it is not, hence a probe every probe period: one
 * unit in PROBE_SAMPLE_EVERY tracked by page for one interval, its exact share deciding.
 * The period doubles while probes find the changes still dense. @fraction is the whole
 * mapping's share; @sample_fraction the sample's, when a probe ran. */
static void choose(mpix_storage_tracking *tracking, double fraction, double sample_fraction, int fd,
                   long long file_offset, char *start, long long length, const char *path)
{
    int was_huge = tracking->huge, was_probing = tracking->probing;
    int dense = (was_probing ? sample_fraction : fraction) >= tracking->huge_fraction;

    if (!tracking->huge) {
        tracking->dense_syncs = dense ? tracking->dense_syncs + 1 : 0;
        if (dense && tracking->dense_syncs >= DENSE_SYNCS_TO_HUGE && has_sample(file_offset, length)) {
            tracking->probe_period = tracking->syncs_to_probe = FIRST_PROBE_PERIOD;
            switch_to_huge(fd, file_offset, start, length);
            tracking->huge = 1;
        }
    } else if (!dense) {
        tracking->probing = tracking->dense_syncs = 0;
        switch_to_page(fd, file_offset, start, length);
        tracking->huge = 0;
    } else if (was_probing) {
        tracking->probing = 0;
        tracking->probe_period = tracking->probe_period * 2 > LAST_PROBE_PERIOD ? LAST_PROBE_PERIOD
                                                                                 : tracking->probe_period * 2;
        tracking->syncs_to_probe = tracking->probe_period;
        for_each_sample(fd, file_offset, start, length, sample_to_huge, NULL);
    } else if (--tracking->syncs_to_probe == 0) {
        tracking->probing = 1;
        for_each_sample(fd, file_offset, start, length, sample_to_page, NULL);
    }
    if (tracking->verbose && (tracking->huge != was_huge || tracking->probing != was_probing))
        mpix_verbose_print("storage", "'%s': %.1f%% of the pages were dirty at this sync%s: %s", path,
                           100.0 * (was_probing ? sample_fraction : fraction), was_probing ? " (probe sample)" : "",
                           tracking->probing  ? "probing one 2 MiB unit in 8 by page"
                           : tracking->huge   ? "tracking changes per 2 MiB"
                                              : "tracking changes per page");
}

int mpix_tracking_sync(mpix_storage_tracking *tracking, int fd, long long file_offset, char *start, long long length,
                       const char *path)
{
    struct mpix_cachestat before;
    long long sample[2] = { 0, 0 }; /* dirty and total pages of a probe's sample */
    int measured;

    if (length == 0)
        return MPI_SUCCESS;
    measured = tracking->policy == MPIX_TRACKING_AUTO && cachestat(fd, file_offset, length, &before) == 0;
    if (measured && tracking->probing)
        for_each_sample(fd, file_offset, start, length, count_sample, sample);
    int rc = mpix_storage_msync(start, length, path);
    if (rc != MPI_SUCCESS || !measured)
        return rc;
    choose(tracking, (double)before.nr_dirty * (double)mpix_page_size() / (double)length,
           sample[1] > 0 ? (double)sample[0] / (double)sample[1] : 0.0, fd, file_offset, start, length, path);
    return MPI_SUCCESS;
}
