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

static int protect(mpix_written_pages *tracker, int on)
{
    struct uffdio_writeprotect change = {
        .range = { (uintptr_t)tracker->start, (uint64_t)(tracker->pages * tracker->page_bytes) },
        .mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
    };
    return ioctl(tracker->userfault_fd, UFFDIO_WRITEPROTECT, &change);
}

int mpix_written_pages_arm(mpix_written_pages *tracker)
{
    if (tracker->userfault_fd < 0)
        return -1;
    if (protect(tracker, 1) != 0) {
        mpix_written_pages_close(tracker);
        return -1;
    }
    tracker->armed = 1;
    return 0;
}

void mpix_written_pages_disarm(mpix_written_pages *tracker)
{
    if (tracker->userfault_fd >= 0 && tracker->armed && protect(tracker, 0) != 0)
        mpix_written_pages_close(tracker);
    tracker->armed = 0;
}

long long mpix_written_pages_look(mpix_written_pages *tracker, long long *written)
{
    if (tracker->userfault_fd < 0 || !tracker->armed)
        return -1;
    struct page_region regions[REGIONS_PER_CALL];
    uint64_t base = (uintptr_t)tracker->start, end = base + (uint64_t)(tracker->pages * tracker->page_bytes);
    long long count = 0;
    for (uint64_t at = base; at < end;) {
        struct pm_scan_arg scan = { .size = sizeof scan, .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
                                    .start = at, .end = end, .vec = (uintptr_t)regions,
                                    .vec_len = REGIONS_PER_CALL, .category_mask = PAGE_IS_WRITTEN,
                                    .return_mask = PAGE_IS_WRITTEN };
        long found = ioctl(tracker->pagemap_fd, PAGEMAP_SCAN, &scan);
        if (found < 0 && errno == EINTR)
            continue;
        if (found < 0 || scan.walk_end <= at) {
            mpix_written_pages_close(tracker);
            return -1;
        }
        for (long i = 0; i < found; i++)
            for (uint64_t page = regions[i].start; page < regions[i].end; page += (uint64_t)tracker->page_bytes)
                written[count++] = (long long)((page - base) / (uint64_t)tracker->page_bytes);
        at = scan.walk_end;
    }
    return count;
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
