/* SPDX-License-Identifier: BSD-3-Clause */
/* The storage hints of one allocation, parsed and checked once. */
#ifndef MPIX_STORAGE_CONFIG_H
#define MPIX_STORAGE_CONFIG_H

#include <limits.h>
#include <mpi.h>

/* Fraction of pages (percent) changed between two syncs from which tracking changes per
 * 2 MiB is cheaper than per page: where the two checkpoint costs cross in mpix-bench
 * storage on the development VM (docs/storage.md, Costs). */

typedef struct mpix_storage_config {
    int storage;                /* alloc_type=storage */
    char filename[PATH_MAX];
    long long offset;           /* storage_alloc_offset */
    int factor_auto;            /* storage_alloc_factor=auto */
    double factor;              /* fraction in memory when not auto */
    int storage_first;          /* storage_alloc_order=storage_first */
    int unlink_file;            /* storage_alloc_unlink */
    int discard;                /* storage_alloc_discard */
    unsigned access_style;      /* bit i: i-th keyword of access_style */
    int file_perm;              /* mode of a created file */
    long long striping_factor;  /* 0: not given */
    long long striping_unit;    /* 0: not given */
    long long node_memory;      /* -1: detect */
    int tracking;               /* mpix_storage_tracking: MPIX_TRACKING_* */
    double huge_percent;        /* mpix_storage_huge_percent */
    int sync_mode;              /* mpix_storage_sync: MPIX_STORAGE_SYNC_* */
    int log_changes;            /* mpix_storage_log_changes: MPIX_LOG_CHANGES_* */
    int verbose;                /* mpix_verbose / MPIX_VERBOSE */
} mpix_storage_config;

/* mpix_storage_sync, in the keyword order of the hint. */
enum { MPIX_STORAGE_SYNC_AUTO, MPIX_STORAGE_SYNC_LOG, MPIX_STORAGE_SYNC_IN_PLACE };

/* mpix_storage_log_changes, in the keyword order of the hint. */
enum { MPIX_LOG_CHANGES_AUTO, MPIX_LOG_CHANGES_WRITTEN, MPIX_LOG_CHANGES_DIGEST };

/* access_style keyword bits, in the order of the hint table. */
enum {
    MPIX_ACCESS_READ_ONCE = 1u << 0,
    MPIX_ACCESS_WRITE_ONCE = 1u << 1,
    MPIX_ACCESS_READ_MOSTLY = 1u << 2,
    MPIX_ACCESS_WRITE_MOSTLY = 1u << 3,
    MPIX_ACCESS_SEQUENTIAL = 1u << 4,
    MPIX_ACCESS_REVERSE_SEQUENTIAL = 1u << 5,
    MPIX_ACCESS_RANDOM = 1u << 6,
};

/* Parse every storage hint of @info. MPI_SUCCESS or an mpix code naming the bad key and
 * value (not raised). alloc_type=storage without a filename is an error. */
int mpix_storage_config_parse(MPI_Info info, mpix_storage_config *config);

#endif
