/* SPDX-License-Identifier: BSD-3-Clause */
#include "written_pages.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Kernel ABI of Linux 6.7 (include/uapi/linux/fs.h, userfaultfd.h), for C libraries whose
 * headers are older; a kernel without it refuses the calls and tracking stays off. */
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
struct page_region {
    uint64_t start, end, categories;
};
struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#endif

/* Regions a look asks for at once: written pages come in runs, and the walk resumes where
 * a full vector stopped it. */
#define REGIONS_PER_CALL 256

int mpix_written_pages_open(mpix_written_pages *tracker, char *start, long long pages, long long page_bytes)
{
    memset(tracker, 0, sizeof *tracker);
    tracker->userfault_fd = tracker->pagemap_fd = -1;
    tracker->start = start;
    tracker->pages = pages;
    tracker->page_bytes = page_bytes;
    if (pages <= 0)
        return 0;
    /* User-mode faults only: allowed without privilege, and asynchronous write-protect
     * resolves kernel-mode faults (copies into the range) without the userfaultfd. */
    int userfault_fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (userfault_fd < 0)
        return 0;
    struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
    struct uffdio_register range = { .range = { (uintptr_t)start, (uint64_t)(pages * page_bytes) },
                                     .mode = UFFDIO_REGISTER_MODE_WP };
    int pagemap_fd = -1;
    if (ioctl(userfault_fd, UFFDIO_API, &api) != 0 || !(api.features & UFFD_FEATURE_WP_ASYNC) ||
        ioctl(userfault_fd, UFFDIO_REGISTER, &range) != 0 ||
        (pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0) {
        close(userfault_fd);
        return 0;
    }
    tracker->userfault_fd = userfault_fd;
    tracker->pagemap_fd = pagemap_fd;
    /* A kernel with asynchronous write-protect but no PAGEMAP_SCAN (none released) or one
     * that refuses it here: find out now, not at the first sync. */
    struct pm_scan_arg probe = { .size = sizeof probe, .flags = PM_SCAN_CHECK_WPASYNC, .start = (uintptr_t)start,
                                 .end = (uintptr_t)start + (uint64_t)page_bytes, .category_mask = PAGE_IS_WRITTEN,
                                 .return_mask = PAGE_IS_WRITTEN };
    if (ioctl(pagemap_fd, PAGEMAP_SCAN, &probe) < 0) {
        mpix_written_pages_close(tracker);
        return 0;
    }
    return 1;
}

/* Pages that hold memory; a page never touched is neither, and counts as written while
 * unprotected. */
#define POPULATED (PAGE_IS_PRESENT | PAGE_IS_SWAPPED)

/* Walk the range with PAGEMAP_SCAN as @ask says (its range and vector are set here) and
 * list the pages of the regions found, in increasing order, into @pages (room for
 * @room), those @wanted accepts where it is given. Returns how many, or -1 when the
 * kernel's answer was incomplete or did not fit. */
static long long scan_pages(const mpix_written_pages *tracker, struct pm_scan_arg ask, long long *pages,
                            long long room, int (*wanted)(long long page, void *context), void *context)
{
    struct page_region regions[REGIONS_PER_CALL];
    uint64_t base = (uintptr_t)tracker->start, end = base + (uint64_t)(tracker->pages * tracker->page_bytes);
    long long count = 0;
    ask.size = sizeof ask;
    ask.vec = (uintptr_t)regions;
    ask.vec_len = REGIONS_PER_CALL;
    ask.end = end;
    for (uint64_t at = base; at < end;) {
        ask.start = at;
        long found = ioctl(tracker->pagemap_fd, PAGEMAP_SCAN, &ask);
        if (found < 0 && errno == EINTR)
            continue;
        if (found < 0 || ask.walk_end <= at)
            return -1;
        for (long i = 0; i < found; i++)
            for (uint64_t page = regions[i].start; page < regions[i].end; page += (uint64_t)tracker->page_bytes) {
                long long index = (long long)((page - base) / (uint64_t)tracker->page_bytes);
                if (wanted && !wanted(index, context))
                    continue;
                if (count == room)
                    return -1;
                pages[count++] = index;
            }
        at = ask.walk_end;
    }
    return count;
}

long long mpix_written_pages_populated(mpix_written_pages *tracker, long long *populated)
{
    if (tracker->userfault_fd < 0)
        return -1;
    struct pm_scan_arg ask = { .category_anyof_mask = POPULATED, .return_mask = POPULATED };
    return scan_pages(tracker, ask, populated, tracker->pages, NULL, NULL);
}

/* Each run of listed pages is protected on its own: protecting a page the program never
 * touched would leave a marker that a read turns into a page of memory. */
int mpix_written_pages_arm(mpix_written_pages *tracker, const long long *pages, long long count)
{
    if (tracker->userfault_fd < 0)
        return -1;
    for (long long first = 0; first < count;) {
        long long run = 1;
        while (first + run < count && pages[first + run] == pages[first] + run)
            run++;
        struct uffdio_writeprotect change = {
            .range = { (uintptr_t)tracker->start + (uint64_t)(pages[first] * tracker->page_bytes),
                       (uint64_t)(run * tracker->page_bytes) },
            .mode = UFFDIO_WRITEPROTECT_MODE_WP
        };
        if (ioctl(tracker->userfault_fd, UFFDIO_WRITEPROTECT, &change) != 0) {
            mpix_written_pages_close(tracker);
            return -1;
        }
        first += run;
    }
    tracker->armed = 1;
    return 0;
}

void mpix_written_pages_disarm(mpix_written_pages *tracker)
{
    struct uffdio_writeprotect change = {
        .range = { (uintptr_t)tracker->start, (uint64_t)(tracker->pages * tracker->page_bytes) }, .mode = 0
    };
    if (tracker->userfault_fd >= 0 && tracker->armed && ioctl(tracker->userfault_fd, UFFDIO_WRITEPROTECT, &change) != 0)
        mpix_written_pages_close(tracker);
    tracker->armed = 0;
}

long long mpix_written_pages_look(mpix_written_pages *tracker, long long *written)
{
    if (tracker->userfault_fd < 0 || !tracker->armed)
        return -1;
    struct pm_scan_arg ask = { .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC, .category_mask = PAGE_IS_WRITTEN,
                               .category_anyof_mask = POPULATED, .return_mask = PAGE_IS_WRITTEN };
    long long count = scan_pages(tracker, ask, written, tracker->pages, NULL, NULL);
    if (count < 0)
        mpix_written_pages_close(tracker);
    return count;
}

long long mpix_written_pages_holes(mpix_written_pages *tracker, long long *holes, long long room,
                                   int (*wanted)(long long page, void *context), void *context)
{
    if (tracker->userfault_fd < 0)
        return -1;
    struct pm_scan_arg ask = { .category_inverted = POPULATED, .category_mask = POPULATED,
                               .return_mask = PAGE_IS_WRITTEN };
    return scan_pages(tracker, ask, holes, room, wanted, context);
}

int mpix_written_pages_complete(void)
{
    if (access("/dev/xpmem", F_OK) == 0)
        return 0;
    FILE *status = fopen("/proc/self/status", "r");
    if (!status)
        return 0;
    char line[256];
    long long pinned_kib = -1;
    while (fgets(line, sizeof line, status))
        if (sscanf(line, "VmPin: %lld", &pinned_kib) == 1)
            break;
    fclose(status);
    return pinned_kib == 0;
}

void mpix_written_pages_close(mpix_written_pages *tracker)
{
    /* Closing the userfaultfd unregisters the range and lifts its protection. */
    if (tracker->userfault_fd >= 0)
        close(tracker->userfault_fd);
    if (tracker->pagemap_fd >= 0)
        close(tracker->pagemap_fd);
    tracker->userfault_fd = tracker->pagemap_fd = -1;
    tracker->armed = 0;
}
