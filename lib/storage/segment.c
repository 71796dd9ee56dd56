/* SPDX-License-Identifier: BSD-3-Clause */
#include "segment.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Names anonymous mappings in /proc/<pid>/maps ([anon:mpix-...]) so that users, and the
 * leak tests, can tell mpix's memory from the MPI's; kernels before 5.17 ignore it. */
static void name_anonymous(void *start, long long length, const char *name)
{
#ifdef PR_SET_VMA_ANON_NAME
    prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)start, (unsigned long)length, (unsigned long)name);
#else
    (void)start, (void)length, (void)name;
#endif
}

long long mpix_page_size(void) { return sysconf(_SC_PAGESIZE); }

long long mpix_page_round_up(long long bytes)
{
    long long page = mpix_page_size();
    return (bytes + page - 1) / page * page;
}

static long long page_round_down(long long bytes) { return bytes / mpix_page_size() * mpix_page_size(); }

void mpix_segment_split(long long size, double memory_fraction, int storage_first, long long *memory_bytes,
                        long long *storage_bytes)
{
    long long wanted_memory = (long long)(memory_fraction * (double)size);
    if (memory_fraction >= 1.0 || wanted_memory >= size) {
        *memory_bytes = size;
    } else if (memory_fraction <= 0.0) {
        *memory_bytes = 0;
    } else if (!storage_first) {
        *memory_bytes = page_round_down(wanted_memory);
    } else {
        *memory_bytes = size - page_round_down(size - wanted_memory);
    }
    *storage_bytes = size - *memory_bytes;
}

int mpix_segment_init(mpix_segment *segment, long long size, int disp_unit, long long memory_bytes,
                      int storage_first, int shareable, const mpix_storage_file *file, long long storage_offset)
{
    memset(segment, 0, sizeof *segment);
    segment->size = size;
    segment->disp_unit = disp_unit;
    segment->memory_bytes = memory_bytes;
    segment->storage_bytes = size - memory_bytes;
    segment->storage_first = storage_first;
    segment->pid = getpid();
    segment->memory_fd = -1;
    segment->file_fd = segment->storage_bytes > 0 && file ? file->fd : -1;
    segment->file_offset = page_round_down(storage_offset);
    segment->shift = segment->storage_bytes > 0 ? storage_offset - segment->file_offset : 0;

    if (segment->shift != 0 && (memory_bytes > 0 || shareable))
        return mpix_error(MPIX_ERRKIND_ARGUMENT,
                          "storage_alloc_offset %lld is not a multiple of the page size (%lld), which %s needs",
                          storage_offset, mpix_page_size(),
                          shareable ? "a shared storage window" : "a window combining memory and storage");
    if (shareable && memory_bytes > 0) {
        segment->memory_fd = memfd_create("mpix-shared-window", MFD_CLOEXEC);
        if (segment->memory_fd < 0 || ftruncate(segment->memory_fd, mpix_page_round_up(memory_bytes)) != 0) {
            int code = mpix_error(MPIX_ERRKIND_UNSUPPORTED, "cannot create %lld bytes of shareable memory: %s",
                                  memory_bytes, strerror(errno));
            mpix_segment_release(segment);
            return code;
        }
    }
    return MPI_SUCCESS;
}

/* Layout inside the footprint: offsets of the memory and storage mappings. */
static void part_offsets(const mpix_segment *segment, long long *memory_at, long long *storage_at)
{
    long long memory_pages = mpix_page_round_up(segment->memory_bytes);
    long long storage_pages = mpix_page_round_up(segment->shift + segment->storage_bytes);
    *memory_at = segment->storage_first ? storage_pages : 0;
    *storage_at = segment->storage_first ? 0 : memory_pages;
}

long long mpix_segment_storage_offset(const mpix_segment *segment)
{
    long long memory_at, storage_at;
    part_offsets(segment, &memory_at, &storage_at);
    return storage_at;
}

long long mpix_segment_footprint(const mpix_segment *segment)
{
    return mpix_page_round_up(segment->memory_bytes) + mpix_page_round_up(segment->shift + segment->storage_bytes);
}

/* A descriptor for @fd of @pid: our own, or a fresh one opened through /proc. */
static int open_descriptor(int pid, int fd, int *opened)
{
    char path[64];
    *opened = 0;
    if (pid == getpid())
        return fd;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    *opened = 1;
    return open(path, O_RDWR | O_CLOEXEC);
}

/* Map @length bytes at @at: of @fd (of process @pid) at @offset, or when @fd < 0 private
 * memory named @what. */
static int map_part(int pid, int fd, char *at, long long length, long long offset, const char *what)
{
    int opened, descriptor;
    void *mapped;

    if (length == 0)
        return MPI_SUCCESS;
    if (fd < 0) {
        mapped = mmap(at, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (mapped != MAP_FAILED)
            name_anonymous(mapped, length, what);
    } else {
        descriptor = open_descriptor(pid, fd, &opened);
        if (descriptor < 0)
            return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "cannot open the %s of process %d (/proc/%d/fd/%d): %s",
                              what, pid, pid, fd, strerror(errno));
        mapped = mmap(at, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, descriptor, offset);
        if (opened)
            close(descriptor);
    }
    if (mapped == MAP_FAILED)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot map %lld bytes of the %s at file offset %lld: %s",
                          length, what, offset, strerror(errno));
    return MPI_SUCCESS;
}

int mpix_segment_map(const mpix_segment *segment, char *at, char **base)
{
    long long memory_at, storage_at;
    int rc;

    part_offsets(segment, &memory_at, &storage_at);
    rc = map_part(segment->pid, segment->memory_fd, at + memory_at, mpix_page_round_up(segment->memory_bytes), 0,
                  segment->memory_fd < 0 ? "mpix-window-memory" : "window memory");
    if (rc == MPI_SUCCESS)
        rc = map_part(segment->pid, segment->storage_in_memory ? -1 : segment->file_fd, at + storage_at,
                      mpix_page_round_up(segment->shift + segment->storage_bytes), segment->file_offset,
                      segment->storage_in_memory ? "mpix-window-logged" : "storage file");
    *base = at + (segment->storage_first || segment->memory_bytes == 0 ? segment->shift : 0);
    return rc;
}

void mpix_segment_storage_part(const mpix_segment *segment, char *at, char **start, long long *length)
{
    long long memory_at, storage_at;
    part_offsets(segment, &memory_at, &storage_at);
    *start = at + storage_at;
    *length = segment->storage_bytes > 0 ? mpix_page_round_up(segment->shift + segment->storage_bytes) : 0;
}

int mpix_storage_msync(char *start, long long length, const char *path)
{
    if (length > 0 && msync(start, length, MS_SYNC) != 0)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot flush the window on '%.200s' to storage: %s",
                          path ? path : "(peer's file)", strerror(errno));
    return MPI_SUCCESS;
}

int mpix_segment_sync(const mpix_segment *segment, char *at, const char *path)
{
    char *start;
    long long length;
    mpix_segment_storage_part(segment, at, &start, &length);
    return mpix_storage_msync(start, length, path);
}

int mpix_storage_wants_readahead(unsigned access_style)
{
    return (access_style & (MPIX_ACCESS_SEQUENTIAL | MPIX_ACCESS_READ_ONCE | MPIX_ACCESS_READ_MOSTLY |
                            MPIX_ACCESS_REVERSE_SEQUENTIAL)) != 0;
}

/* Readahead fills the page cache with large folios, and the kernel tracks dirtiness per
 * folio: one changed byte then costs a large write at the next sync. Without a hint
 * that promises streaming reads, mpix keeps folios small (MADV_RANDOM) so that
 * MPIX_Win_sync writes what changed and no more. */
void mpix_segment_advise(const mpix_segment *segment, char *at, unsigned access_style)
{
    char *start;
    long long length;
    int advice = MADV_RANDOM;
    mpix_segment_storage_part(segment, at, &start, &length);
    if (length == 0)
        return;
    /* A logged storage part is private memory, read whole at every sync and copied by
     * other processes' one-sided calls: 2 MiB pages make both walk fewer page-table
     * entries (changes are found by digest, not by faults, so page size costs nothing). */
    if (segment->storage_in_memory) {
        madvise(start, length, MADV_HUGEPAGE);
        return;
    }
    if (mpix_storage_wants_readahead(access_style))
        advice = access_style & (MPIX_ACCESS_SEQUENTIAL | MPIX_ACCESS_READ_ONCE) ? MADV_SEQUENTIAL : MADV_NORMAL;
    madvise(start, length, advice);
}

void mpix_segment_release(mpix_segment *segment)
{
    if (segment->memory_fd >= 0)
        close(segment->memory_fd);
    segment->memory_fd = -1;
}

int mpix_address_range_reserve(long long length, long long phase, char **start)
{
    long long wanted = length > 0 ? length : mpix_page_size();
    long long extra = wanted >= MPIX_HUGE_PAGE_BYTES ? MPIX_HUGE_PAGE_BYTES : 0;
    char *range = mmap(NULL, wanted + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "cannot reserve %lld bytes of address space: %s", length,
                          strerror(errno));
    if (extra) {
        long long skip = ((phase - (long long)(unsigned long)range) % extra + extra) % extra;
        if (skip)
            munmap(range, skip);
        munmap(range + skip + wanted, extra - skip);
        range += skip;
    }
    name_anonymous(range, wanted, "mpix-address-range");
    *start = range;
    return MPI_SUCCESS;
}
