/* SPDX-License-Identifier: BSD-3-Clause */
/* One rank's piece of a storage window: a memory part and a storage part mapped side by
 * side at fixed addresses. The descriptor is plain data so that node peers can map the
 * same segment into their own address space (shared windows). */
#ifndef MPIX_STORAGE_SEGMENT_H
#define MPIX_STORAGE_SEGMENT_H

#include "config.h"
#include "file.h"
#include "common/pages.h"

#include <stddef.h>

typedef struct mpix_segment {
    long long size;          /* bytes the user asked for */
    long long memory_bytes;  /* memory part */
    long long storage_bytes; /* storage part */
    long long file_offset;   /* page-aligned file offset where the storage mapping starts */
    long long shift;         /* user base minus mapping start: an unaligned storage_alloc_offset */
    int storage_first;
    int disp_unit;
    int pid;                 /* owner, and its descriptors, for peers to open the same pages */
    int memory_fd;           /* -1: private anonymous memory */
    int file_fd;             /* -1: no storage part */
    int storage_in_memory;   /* the storage part is private memory that a redo log saves (log.h) */
} mpix_segment;

long long mpix_page_size(void);
long long mpix_page_round_up(long long bytes);

/* Split @size bytes into memory and storage by @memory_fraction, on page boundaries:
 * the part that comes first is a whole number of pages so the second starts on one. */
void mpix_segment_split(long long size, double memory_fraction, int storage_first, long long *memory_bytes,
                        long long *storage_bytes);

/* Fill @segment for this rank. @shareable: the memory part must be mappable by node
 * peers (a memfd). @file may be NULL when storage_bytes is 0. @storage_offset is where
 * the storage part's data starts in the file. Errors name the offending offset. */
int mpix_segment_init(mpix_segment *segment, long long size, int disp_unit, long long memory_bytes,
                      int storage_first, int shareable, const mpix_storage_file *file, long long storage_offset);

/* Offset of the storage part inside the segment's mapping. */
long long mpix_segment_storage_offset(const mpix_segment *segment);

/* Bytes of address space the segment occupies (whole pages). */
long long mpix_segment_footprint(const mpix_segment *segment);

/* Map the segment at the page-aligned address @at (inside a reserved range), through
 * our own descriptors or, for a peer's segment, through /proc/<pid>/fd. *base receives
 * the user-visible start. */
int mpix_segment_map(const mpix_segment *segment, char *at, char **base);

/* Where the storage part of a segment mapped at @at lies: @start, @length (whole pages). */
void mpix_segment_storage_part(const mpix_segment *segment, char *at, char **start, long long *length);

/* msync(MS_SYNC) of [@start, +@length) of a storage mapping; @path (NULL: a peer's file)
 * names it in the MPIX_ERRKIND_STORAGE_IO error. */
int mpix_storage_msync(char *start, long long length, const char *path);

/* mpix_storage_msync of the storage part mapped at @at. */
int mpix_segment_sync(const mpix_segment *segment, char *at, const char *path);

/* 1 when access_style promises streaming reads (sequential, read_once, read_mostly,
 * reverse_sequential): readahead is worth coarser dirty tracking. */
int mpix_storage_wants_readahead(unsigned access_style);

/* Apply access_style to the mapping of the storage part at @at (default: MADV_RANDOM,
 * page-granular dirty tracking). */
void mpix_segment_advise(const mpix_segment *segment, char *at, unsigned access_style);

/* Close the memory descriptor the segment owns. */
void mpix_segment_release(mpix_segment *segment);

/* Reserve @length bytes of address space (no memory, no swap) to map segments into. A
 * range of 2 MiB or more starts at @phase modulo 2 MiB, so that a file part placed at
 * file offset phase + k * 2 MiB can be mapped by 2 MiB entries. */
int mpix_address_range_reserve(long long length, long long phase, char **start);

#endif
