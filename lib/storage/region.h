/* SPDX-License-Identifier: BSD-3-Clause */
/* A mapped range that mpix owns: the segments of one window (one for a private window,
 * one per process for a shared window) or one MPIX_Alloc_mem allocation, with the file
 * behind this process's segment. */
#ifndef MPIX_STORAGE_REGION_H
#define MPIX_STORAGE_REGION_H

#include "config.h"
#include "file.h"
#include "log.h"
#include "segment.h"
#include "tracking.h"

#include <mpi.h>

typedef struct mpix_storage_region {
    mpix_storage_config config;
    mpix_storage_file file;     /* this process's file, if its segment has a storage part */
    mpix_segment mine;          /* this process's segment */
    char *reserved;             /* the whole address range, NULL until mapped */
    long long reserved_length;
    int segment_count;          /* 1, or the group size of a shared window */
    int my_segment;
    mpix_segment *segments;
    char **segment_at;          /* page-aligned start of each segment's mapping */
    char **segment_base;        /* user-visible start of each segment */
    mpix_storage_tracking tracking; /* of this process's storage part, written back in place */
    mpix_storage_log log;           /* or: its redo log (log.fd >= 0) */
} mpix_storage_region;

/* Start a region: keep @config, open the file if @storage_bytes > 0. */
int mpix_storage_region_open(mpix_storage_region *region, const mpix_storage_config *config, long long storage_bytes);

/* Collective over @comm: where this rank's storage part starts in its file. Ranks that
 * name the same file and offset get consecutive page-rounded slots in rank order. */
int mpix_storage_region_layout(mpix_storage_region *region, MPI_Comm comm, long long storage_bytes,
                               long long *storage_offset);

/* Claim this rank's bytes of the file, reserve its blocks and describe this rank's
 * segment; choose how syncs reach the file (mpix_storage_sync): through a redo log when
 * the segment is not @shareable, the file is a regular file and the part fits in
 * memory, unless the hints say otherwise. */
int mpix_storage_region_prepare(mpix_storage_region *region, long long size, int disp_unit, long long memory_bytes,
                                long long storage_offset, int shareable);

/* Map @count segments (this process's is @mine_index) side by side in one new range. */
int mpix_storage_region_map(mpix_storage_region *region, const mpix_segment *segments, int count, int mine_index);

/* Make this process's storage part durable (unless nothing is on storage): through its
 * redo log, or written back in place choosing the dirty tracking granularity for the
 * next interval (tracking.h). */
int mpix_storage_region_sync(mpix_storage_region *region);

/* Unmap and close. @completed: the allocation succeeded, so flush (unless discard) and
 * unlink only with storage_alloc_unlink; otherwise remove only a file this call created,
 * and give an existing one back its size. */
int mpix_storage_region_destroy(mpix_storage_region *region, int completed);

/* One line for MPIX_VERBOSE: what this process's segment is made of. */
void mpix_storage_region_describe(const mpix_storage_region *region, const char *what);

#endif
