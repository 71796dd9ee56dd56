/* SPDX-License-Identifier: BSD-3-Clause */
/* Consistent checkpoints of a storage window that fits in memory: a redo log.
 *
 * The window's storage part is private memory; the file changes only when a sync has
 * made its data durable elsewhere first. MPIX_Win_sync finds the pages changed since the
 * last sync (page_digest.h) and makes them durable as one sequential record in a log file
 * beside the data: one write, one fdatasync. A crash at any instant, of the process or
 * of the node, leaves the state of the last completed sync recoverable; the next
 * allocation on the file replays it.
 *
 * The log file holds three slot headers, two image slots and a record area:
 *   [0, 3 page)              headers of slot 0 (the data file's own bytes of the window),
 *                            slot 1 and slot 2 (the images below)
 *   [3 page, + 2 mapping)    the images of slots 1 and 2
 *   [.., + mapping)          records, each one sync: header, pages, page indices
 * A slot header says which generation (count of completed syncs) its image holds, with a
 * checksum for the images in the log; the records that follow in the area, with
 * consecutive generations and valid checksums, bring it forward. Recovery takes the
 * slot whose chain reaches furthest.
 *
 * A sync writes one record while the area has room. A sync that changes half the window
 * or more, or finds the area full, writes a whole image into an image slot that is not
 * the base instead (one write and one fdatasync with its header: a dense checkpoint
 * costs what rewriting the window costs). While the data file is the base, a full area
 * is emptied by writing the changed pages into the file in place (the records cover a
 * torn write until its header moves). Freeing the window writes the last generation into
 * the data file and removes the log. */
#ifndef MPIX_STORAGE_LOG_H
#define MPIX_STORAGE_LOG_H

#include "config.h"
#include "file.h"
#include "page_digest.h"
#include "written_pages.h"

#include <limits.h>
#include <stdint.h>

typedef struct mpix_storage_log {
    int fd;                   /* -1: no log (the window writes back in place) */
    char path[PATH_MAX];
    int data_fd;
    char data_path[PATH_MAX];
    char *memory;             /* the window's storage part: the mapping's first page */
    long long page, pages;    /* the mapping, in pages */
    long long map_offset;     /* data-file offset of the mapping's first page */
    long long begin, end;     /* the window's bytes in the data file; writes there stay inside */
    long long area_bytes;     /* room for records */
    uint64_t log_id;          /* this log's life: records of an earlier one never replay */
    long long generation;     /* syncs completed (durable) */
    int base_slot;            /* 0: the data file, 1: the log's image */
    long long area_used;
    long long last_record_bytes;
    int last_dense;           /* the last sync changed half the pages or more */
    unsigned char *touched;   /* per page: changed since the base slot's image */
    long long touched_count;
    long long *changed;       /* scratch: changed page indices */
    mpix_page_digests digests;
    mpix_written_pages written; /* the kernel's list of written pages, where it keeps one */
    long long *written_list;  /* scratch: the pages it listed */
    int trust_written;        /* mpix_storage_log_changes=written: no check for pinned memory */
    int read_all_next;        /* the next sync reads every page (after a failed one) */
    int verbose;
} mpix_storage_log;

#define MPIX_STORAGE_LOG_NONE { .fd = -1, .data_fd = -1, .written = MPIX_WRITTEN_PAGES_NONE }

/* Where the log of the window bytes at @begin of @data_path lives. */
void mpix_storage_log_path(const char *data_path, long long begin, char *path, int path_size);

/* Open (or create) the log of [begin, end) of @file, whose mapping of @pages pages starts
 * at @map_offset and is private memory at @memory. A log left by a crash is replayed into
 * the data file first. Then the memory is filled from the file. A code, not raised. */
int mpix_storage_log_open(mpix_storage_log *log, const mpix_storage_file *file, const mpix_storage_config *config,
                          char *memory, long long map_offset, long long pages, long long begin, long long end);

/* MPIX_Win_sync: make the pages changed since the last sync durable as one generation. */
int mpix_storage_log_sync(mpix_storage_log *log);

/* Close the log. @make_current: bring the data file to the last sync and remove the log
 * (a window freed normally); otherwise leave both as they are, the last sync recoverable
 * (storage_alloc_discard). @remove: the data file goes too, so does the log. */
int mpix_storage_log_close(mpix_storage_log *log, int make_current, int remove);

#endif
