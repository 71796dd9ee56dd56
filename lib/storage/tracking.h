/* SPDX-License-Identifier: BSD-3-Clause */
/* How finely the kernel tracks what changed in this process's storage mapping, chosen at
 * each MPIX_Win_sync from what changed since the last one.
 *
 * The page cache marks a whole folio dirty on a store, and writeback write-protects it,
 * so the first store after a sync faults. With 4 KiB folios a sync writes exactly the
 * changed pages, but each costs a fault and a small write; with 2 MiB folios
 * (MADV_HUGEPAGE on the file mapping) faults are 512 times rarer and writes large, but a
 * changed byte writes its whole 2 MiB. Which is cheaper depends on the fraction of pages
 * changed between syncs: `auto` measures it with cachestat(2) and switches. */
#ifndef MPIX_STORAGE_TRACKING_H
#define MPIX_STORAGE_TRACKING_H

#include "config.h"

enum { MPIX_TRACKING_AUTO, MPIX_TRACKING_PAGE, MPIX_TRACKING_HUGE }; /* keyword order of the hint */

typedef struct mpix_storage_tracking {
    int policy;               /* mpix_storage_tracking */
    int huge;                 /* the mapping asks for 2 MiB folios now */
    double huge_fraction;     /* auto: changed fraction from which 2 MiB folios are cheaper */
    int dense_syncs;          /* auto: page-tracked syncs in a row at or above the threshold */
    int probing;              /* auto: a sample tracked by page for one interval */
    int probe_period;         /* auto: syncs in huge mode before the next probe */
    int syncs_to_probe;
    int verbose;
} mpix_storage_tracking;

/* Start tracking a mapping of @length bytes at @start of [file_offset, +length) of @fd,
 * made with @config. huge asks for 2 MiB folios now; so does auto, and probes the
 * interval after the first sync, unless access_style says random, the mapping holds no
 * whole 2 MiB unit or the kernel cannot count the file's dirty pages. A readahead
 * access_style (which sizes folios itself) means page. */
void mpix_tracking_start(mpix_storage_tracking *tracking, const mpix_storage_config *config, int fd,
                         long long file_offset, char *start, long long length);

/* MPIX_Win_sync of the mapping: count the dirty pages of [file_offset, +length) of @fd,
 * msync(MS_SYNC) them, then (auto) switch granularity for the next interval. Switching
 * drops the clean pages from this process's mapping and the page cache, so they come back
 * in the new folio size; pages that were cached are read ahead again. @path names the
 * file in errors. */
int mpix_tracking_sync(mpix_storage_tracking *tracking, int fd, long long file_offset, char *start, long long length,
                       const char *path);

/* Bytes per dirty-tracking unit the mapping asks for now: the page size or 2 MiB (also
 * while a probe tracks a sample of it by page). */
long long mpix_tracking_granularity(const mpix_storage_tracking *tracking);

#endif
