/* SPDX-License-Identifier: BSD-3-Clause */
/* Which pages of a private anonymous range were written since the last look, as the
 * kernel saw them: the range is write-protected through a userfaultfd in asynchronous
 * mode (Linux 6.7: the first store to a protected page is let through by the kernel
 * itself, no signal, no thread: 0.8-1 us on one VM, 12-15 us on a PVM guest), and
 * PAGEMAP_SCAN lists the pages written since and protects them again in the same step.
 * Pages never populated are not protected: a store populates them as written.
 *
 * A look costs a walk of the range's page-table entries (0.03-0.1 ms for 64 MiB), not a
 * read of its bytes; it sees every store that goes through the process's page tables: its
 * own, a kernel copy into the range (read(2), another process's process_vm_writev as MPI
 * one-sided copies use), a short-term DMA pin. It does not see writes into pages pinned
 * for a device before the look (RDMA registrations) or mapped into another process
 * (XPMEM): mpix_written_pages_complete() tells whether the process has such memory. */
#ifndef MPIX_STORAGE_WRITTEN_PAGES_H
#define MPIX_STORAGE_WRITTEN_PAGES_H

typedef struct mpix_written_pages {
    int userfault_fd;   /* -1: the kernel cannot track this range */
    int pagemap_fd;     /* /proc/self/pagemap, where PAGEMAP_SCAN is asked */
    char *start;
    long long pages, page_bytes;
    int armed;          /* stores since the last arm or look are being tracked */
} mpix_written_pages;

#define MPIX_WRITTEN_PAGES_NONE { .userfault_fd = -1, .pagemap_fd = -1 }

/* Prepare tracking of the @pages pages at @start (page-aligned, private anonymous memory).
 * Returns 1 when the kernel can track them, 0 when it cannot (no userfaultfd, no
 * asynchronous write-protect, no PAGEMAP_SCAN): the caller reads the pages instead.
 * Nothing is tracked until mpix_written_pages_arm(). */
int mpix_written_pages_open(mpix_written_pages *tracker, char *start, long long pages, long long page_bytes);

/* The pages that hold memory now (present or swapped out), listed in increasing order
 * into @populated (room for every page); the others were never touched or were given back
 * (madvise) and hold zeros. Costs a page-table walk (0.05-0.2 ms for 64 MiB). Returns how
 * many, or -1 when the kernel's answer was incomplete. */
long long mpix_written_pages_populated(mpix_written_pages *tracker, long long *populated);

/* Start tracking: write-protect the @count pages listed in @pages (increasing), as
 * mpix_written_pages_populated() lists them; every store from now on into them, and into
 * pages that held no memory, is reported by the next look. A page populated between the
 * listing and this call is reported too (it is not protected). Costs a call per run of
 * pages (about 1.5 ms for 64 MiB of 4 KiB entries). Returns 0, or -1 when the kernel
 * refused (tracking is then off for good). */
int mpix_written_pages_arm(mpix_written_pages *tracker, const long long *pages, long long count);

/* Let stores through at full speed again; nothing is tracked until the next arm. */
void mpix_written_pages_disarm(mpix_written_pages *tracker);

/* The pages written since the arm or the last look, in increasing order, into @written
 * (room for every page of the range); they are protected again in the same step, so a
 * store racing with the look is reported now or by the next one. Returns how many, or -1
 * when the look failed (tracking is then off for good: read every page). */
long long mpix_written_pages_look(mpix_written_pages *tracker, long long *written);

/* The pages that hold no memory (never touched, or given back by madvise) and for which
 * @wanted returns non-zero, in increasing order, into @holes (room for @room). Protects
 * nothing. Returns how many, or -1 when the kernel's answer was incomplete or did not fit
 * (the caller reads every page). */
long long mpix_written_pages_holes(mpix_written_pages *tracker, long long *holes, long long room,
                                   int (*wanted)(long long page, void *context), void *context);

/* 1 when a look sees every write: the process holds no memory pinned for a device (VmPin
 * in /proc/self/status is 0) and there is no XPMEM device through which other processes
 * could map its pages; 0 otherwise. */
int mpix_written_pages_complete(void);

void mpix_written_pages_close(mpix_written_pages *tracker);

#endif
