/* SPDX-License-Identifier: BSD-3-Clause */
#include "log.h"
#include "store_fault.h"
#include "common/error.h"
#include "common/verbose.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define SLOT_MAGIC "mpixslt1"
#define RECORD_MAGIC "mpixrec1"

/* Bytes of one write call and of one early-writeback step when streaming an image. */
#define STREAM_CHUNK (8LL << 20)

/* Slots: 0 is the data file's own bytes of the window, 1 and 2 images in the log. */
enum { SLOTS = 3 };

typedef struct slot_header {
    char magic[8];
    uint64_t log_id, generation, map_offset, begin, end, page, pages, area_bytes;
    uint64_t image_low, image_high; /* images in the log: XXH3-128 of their page digests */
    uint64_t checksum;              /* XXH3-64 of everything above */
} slot_header;

typedef struct record_header {
    char magic[8];
    uint64_t log_id, generation, page_count;
    uint64_t payload_low, payload_high; /* XXH3-128 of the page indices, then the pages */
    uint64_t checksum;                  /* XXH3-64 of everything above */
} record_header;

/* Where slot @slot's image (1 or 2) and the record area start in a log of @pages pages. */
static long long image_at(long long page, long long pages, int slot) { return SLOTS * page + (slot - 1) * pages * page; }
static long long area_at(long long page, long long pages) { return SLOTS * page + 2 * pages * page; }

static int io_error(const char *what, const char *path, int error)
{
    return mpix_error(MPIX_ERRKIND_STORAGE_IO, "%s '%.200s': %s", what, path, strerror(error));
}

static long long round_up(long long bytes, long long unit) { return (bytes + unit - 1) / unit * unit; }

static int write_all(int fd, const void *buffer, long long length, long long offset, const char *path)
{
    const char *from = buffer;
    while (length > 0) {
        ssize_t wrote = pwrite(fd, from, (size_t)(length < STREAM_CHUNK ? length : STREAM_CHUNK), (off_t)offset);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            return io_error("cannot write to", path, wrote < 0 ? errno : ENOSPC);
        from += wrote;
        offset += wrote;
        length -= wrote;
    }
    return MPI_SUCCESS;
}

static int read_all(int fd, void *buffer, long long length, long long offset)
{
    char *to = buffer;
    while (length > 0) {
        ssize_t got = pread(fd, to, (size_t)length, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        to += got;
        offset += got;
        length -= got;
    }
    return 0;
}

static int data_sync(int fd, const char *path)
{
    if (fdatasync(fd) != 0)
        return io_error("cannot make durable", path, errno);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- the data file (slot 0) */

/* Write pages [first, first + count) of @source to the data file, inside [begin, end). */
static int write_data_pages(mpix_storage_log *log, const char *source, long long first, long long count)
{
    long long from = log->map_offset + first * log->page, to = from + count * log->page;
    if (from < log->begin)
        from = log->begin;
    if (to > log->end)
        to = log->end;
    if (to <= from)
        return MPI_SUCCESS;
    return write_all(log->data_fd, source + (from - log->map_offset - first * log->page), to - from, from,
                     log->data_path);
}

/* Copy the whole mapping at @source into slot @slot (not yet durable). An image in the log
 * starts its writeback chunk by chunk, so the device works while the rest is copied (a
 * dense 64 MiB sync took 22-29 ms instead of 31-33 with one writeback at the end). */
static int write_image(mpix_storage_log *log, int slot, const char *source)
{
    if (slot == 0)
        return write_data_pages(log, source, 0, log->pages);
    long long at = image_at(log->page, log->pages, slot), bytes = log->pages * log->page;
    for (long long done = 0; done < bytes; done += STREAM_CHUNK) {
        long long chunk = bytes - done < STREAM_CHUNK ? bytes - done : STREAM_CHUNK;
        int rc = write_all(log->fd, source + done, chunk, at + done, log->path);
        if (rc != MPI_SUCCESS)
            return rc;
        sync_file_range(log->fd, (off_t)(at + done), (off_t)chunk, SYNC_FILE_RANGE_WRITE);
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- slot headers */

static uint64_t slot_checksum(const slot_header *header)
{
    return XXH3_64bits(header, offsetof(slot_header, checksum));
}

/* An image's checksum: of its page digests, which a sync has just brought up to date. */
static XXH128_hash_t image_checksum(const mpix_page_digests *digests)
{
    return XXH3_128bits(digests->digest, (size_t)(digests->pages * sizeof *digests->digest));
}

/* Write slot @slot's header for @generation (an image in the log carries the checksum of
 * the window's current digests) and make the log durable: one fdatasync covers an image
 * written just before into the log, as the checksum tells a torn one. */
static int write_slot_header(mpix_storage_log *log, int slot, long long generation)
{
    XXH128_hash_t image = { 0, 0 };
    if (slot > 0)
        image = image_checksum(&log->digests);
    slot_header header = { SLOT_MAGIC, log->log_id, (uint64_t)generation, (uint64_t)log->map_offset,
                           (uint64_t)log->begin, (uint64_t)log->end, (uint64_t)log->page, (uint64_t)log->pages,
                           (uint64_t)log->area_bytes, image.low64, image.high64, 0 };
    header.checksum = slot_checksum(&header);
    int rc = write_all(log->fd, &header, sizeof header, slot * log->page, log->path);
    return rc == MPI_SUCCESS ? data_sync(log->fd, log->path) : rc;
}

static int read_slot_header(int fd, int slot, long long page, slot_header *header)
{
    return read_all(fd, header, sizeof *header, slot * page) == 0 &&
           memcmp(header->magic, SLOT_MAGIC, 8) == 0 && header->checksum == slot_checksum(header) &&
           header->page == (uint64_t)page && header->pages > 0 && header->end > header->begin;
}

/* Read the image of slot @slot (1 or 2) into @image and check it against its header. */
static int read_image(int fd, int slot, const slot_header *header, char *image)
{
    long long page = (long long)header->page, pages = (long long)header->pages;
    mpix_page_digests digests;
    if (read_all(fd, image, pages * page, image_at(page, pages, slot)) != 0 ||
        mpix_page_digests_init(&digests, image, pages, page) != MPI_SUCCESS)
        return 0;
    XXH128_hash_t sum = image_checksum(&digests);
    mpix_page_digests_free(&digests);
    return sum.low64 == header->image_low && sum.high64 == header->image_high;
}

/* ---------------------------------------------------------------- records */

static uint64_t record_checksum(const record_header *header)
{
    return XXH3_64bits(header, offsetof(record_header, checksum));
}

/* A record: a header page, the pages, then their indices (whole pages). The header goes
 * last, so the pages can stream out while the rest of the window is still examined. */
static long long record_bytes_of(long long page_count, long long page)
{
    return page + page_count * page + round_up(page_count * 8, page);
}

/* Pages examined between two early-writeback steps of a record: of every page, or of the
 * pages the kernel listed as written, all of which may go out (a 10% record of 64 MiB took
 * 4.9 ms in steps of 256 listed pages, 6.2-6.7 ms in steps of 2048). */
#define STREAM_PAGES 2048
#define STREAM_LISTED_PAGES 256

typedef struct record_writer {
    mpix_storage_log *log;
    long long pages_at;      /* log offset of the record's first page */
    long long written;       /* bytes of pages written so far */
    long long room;          /* bytes the area has left for this record */
    struct iovec iov[64];
    int pieces;
    XXH3_state_t *state;
} record_writer;

static int flush_pieces(record_writer *writer)
{
    long long bytes = 0;
    for (int i = 0; i < writer->pieces; i++)
        bytes += (long long)writer->iov[i].iov_len;
    if (bytes == 0)
        return MPI_SUCCESS;
    ssize_t wrote;
    do
        wrote = pwritev(writer->log->fd, writer->iov, writer->pieces, (off_t)(writer->pages_at + writer->written));
    while (wrote < 0 && errno == EINTR);
    if (wrote != bytes)
        return wrote < 0 ? io_error("cannot write the log", writer->log->path, errno)
                         : mpix_error(MPIX_ERRKIND_STORAGE_IO, "short write to the log '%.200s'", writer->log->path);
    writer->written += bytes;
    writer->pieces = 0;
    return MPI_SUCCESS;
}

static int add_page(record_writer *writer, char *page)
{
    size_t page_bytes = (size_t)writer->log->page;
    XXH3_128bits_update(writer->state, page, page_bytes);
    if (writer->pieces > 0 &&
        (char *)writer->iov[writer->pieces - 1].iov_base + writer->iov[writer->pieces - 1].iov_len == page) {
        writer->iov[writer->pieces - 1].iov_len += page_bytes;
        return MPI_SUCCESS;
    }
    if (writer->pieces == (int)(sizeof writer->iov / sizeof writer->iov[0])) {
        int rc = flush_pieces(writer);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    writer->iov[writer->pieces++] = (struct iovec){ page, page_bytes };
    return MPI_SUCCESS;
}

/* Examine the pages (the @listed ones of @list, or every page when @list is NULL) and
 * stream the changed ones into a record of @generation at the end of the area, starting
 * their writeback chunk by chunk so the device works while the rest is examined. *count
 * receives how many changed. The record is finished and durable when *recorded is 1; it is
 * not (*recorded 0) when nothing changed, when half the pages or more changed, or when the
 * area has no room: the caller then writes an image. */
static int stream_record(mpix_storage_log *log, long long generation, const long long *list, long long listed,
                         long long *count, int *recorded)
{
    record_writer writer = { .log = log };
    long long at = area_at(log->page, log->pages) + log->area_used;
    int rc = MPI_SUCCESS, streaming = 1;

    *count = 0;
    *recorded = 0;
    writer.pages_at = at + log->page;
    writer.room = log->area_bytes - log->area_used;
    writer.state = XXH3_createState();
    if (!writer.state)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "out of memory for a log record");
    XXH3_128bits_reset(writer.state);
    long long examined = list ? listed : log->pages, step = list ? STREAM_LISTED_PAGES : STREAM_PAGES;
    for (long long first = 0; first < examined && rc == MPI_SUCCESS; first += step) {
        long long span = examined - first < step ? examined - first : step;
        long long before = *count, written_before = writer.written;
        *count += list ? mpix_page_digests_changed_among(&log->digests, log->memory, list + first, span,
                                                         log->changed + before)
                       : mpix_page_digests_changed(&log->digests, log->memory, first, span, log->changed + before);
        if (streaming && (2 * *count >= log->pages || record_bytes_of(*count, log->page) > writer.room))
            streaming = 0;
        for (long long i = before; i < *count && streaming && rc == MPI_SUCCESS; i++)
            rc = add_page(&writer, log->memory + log->changed[i] * log->page);
        if (streaming && rc == MPI_SUCCESS)
            rc = flush_pieces(&writer);
        if (streaming && rc == MPI_SUCCESS && writer.written > written_before)
            sync_file_range(log->fd, (off_t)(writer.pages_at + written_before),
                            (off_t)(writer.written - written_before), SYNC_FILE_RANGE_WRITE);
    }
    if (rc == MPI_SUCCESS && streaming && *count > 0) {
        long long index_bytes = round_up(*count * 8, log->page);
        uint64_t *indices = calloc(1, index_bytes);
        if (!indices)
            rc = mpix_error(MPIX_ERRKIND_STORAGE_IO, "out of memory for a log record of %lld pages", *count);
        for (long long i = 0; rc == MPI_SUCCESS && i < *count; i++)
            indices[i] = (uint64_t)log->changed[i];
        if (rc == MPI_SUCCESS) {
            XXH3_128bits_update(writer.state, indices, (size_t)(*count * 8));
            rc = write_all(log->fd, indices, index_bytes, writer.pages_at + *count * log->page, log->path);
        }
        free(indices);
        if (rc == MPI_SUCCESS) {
            XXH128_hash_t payload = XXH3_128bits_digest(writer.state);
            record_header header = { RECORD_MAGIC, log->log_id, (uint64_t)generation, (uint64_t)*count,
                                     payload.low64, payload.high64, 0 };
            header.checksum = record_checksum(&header);
            rc = write_all(log->fd, &header, sizeof header, at, log->path);
        }
        if (rc == MPI_SUCCESS)
            rc = data_sync(log->fd, log->path);
        if (rc == MPI_SUCCESS) {
            log->last_record_bytes = record_bytes_of(*count, log->page);
            log->area_used += log->last_record_bytes;
            *recorded = 1;
        }
    }
    XXH3_freeState(writer.state);
    return rc;
}

/* Read the record at @at of the area of a log laid out as @geometry: 1 and its header
 * and payload (indices, then pages; malloc'd) when it is whole, of this log's life and
 * of generation @generation. */
static int read_record(int fd, const slot_header *geometry, long long at, long long generation,
                       record_header *header, char **payload, long long *record_bytes)
{
    long long page = (long long)geometry->page, area_end = (long long)geometry->area_bytes;
    long long area_start = area_at(page, (long long)geometry->pages);
    *payload = NULL;
    if (at + page > area_end || read_all(fd, header, sizeof *header, area_start + at) != 0)
        return 0;
    if (memcmp(header->magic, RECORD_MAGIC, 8) != 0 || header->checksum != record_checksum(header) ||
        header->log_id != geometry->log_id || header->generation != (uint64_t)generation ||
        header->page_count == 0 || header->page_count > geometry->pages)
        return 0;
    long long count = (long long)header->page_count;
    *record_bytes = record_bytes_of(count, page);
    if (at + *record_bytes > area_end)
        return 0;
    char *data = malloc(count * 8 + count * page);
    if (!data || read_all(fd, data + count * 8, count * page, area_start + at + page) != 0 ||
        read_all(fd, data, count * 8, area_start + at + page + count * page) != 0) {
        free(data);
        return 0;
    }
    XXH3_state_t *state = XXH3_createState();
    int valid = state != NULL;
    if (valid) {
        XXH3_128bits_reset(state);
        XXH3_128bits_update(state, data + count * 8, (size_t)(count * page));
        XXH3_128bits_update(state, data, (size_t)(count * 8));
        XXH128_hash_t digest = XXH3_128bits_digest(state);
        valid = digest.low64 == header->payload_low && digest.high64 == header->payload_high;
        XXH3_freeState(state);
    }
    const uint64_t *indices = (const uint64_t *)data;
    for (long long i = 0; i < count && valid; i++)
        valid = indices[i] < geometry->pages;
    if (!valid) {
        free(data);
        return 0;
    }
    *payload = data;
    return 1;
}

/* The generation the chain of slot @slot reaches: its image, then the area's records. */
static long long chain_reach(int fd, const slot_header *header)
{
    long long generation = (long long)header->generation, at = 0, bytes;
    record_header record;
    char *payload;
    while (read_record(fd, header, at, generation + 1, &record, &payload, &bytes)) {
        free(payload);
        generation++;
        at += bytes;
    }
    return generation;
}

/* ---------------------------------------------------------------- recovery */

/* A log left by a crash: bring the data file to the furthest generation a slot's chain
 * reaches and make it durable. *generation receives it (-1: nothing to recover). */
static int replay(mpix_storage_log *log, long long *generation)
{
    slot_header headers[SLOTS];
    long long reach[SLOTS];
    char *image = NULL;
    int best = -1, rc = MPI_SUCCESS;

    *generation = -1;
    for (int slot = 0; slot < SLOTS; slot++) {
        reach[slot] = -1;
        if (read_slot_header(log->fd, slot, log->page, &headers[slot]))
            reach[slot] = chain_reach(log->fd, &headers[slot]);
        /* Ties go to the lower slot: the same generation, and the data file needs no copy. */
        if (reach[slot] >= 0 && (best < 0 || reach[slot] > reach[best])) {
            char *candidate = NULL;
            if (slot > 0) {
                candidate = malloc((long long)headers[slot].pages * log->page);
                if (!candidate || !read_image(log->fd, slot, &headers[slot], candidate)) {
                    free(candidate);
                    continue; /* torn while written: its chain never became the base */
                }
            }
            free(image);
            image = candidate;
            best = slot;
        }
    }
    if (best < 0)
        return MPI_SUCCESS;
    const slot_header *geometry = &headers[best];
    mpix_storage_log replayed = *log;
    replayed.page = (long long)geometry->page;
    replayed.pages = (long long)geometry->pages;
    replayed.map_offset = (long long)geometry->map_offset;
    replayed.begin = (long long)geometry->begin;
    replayed.end = (long long)geometry->end;
    if (image)
        rc = write_data_pages(&replayed, image, 0, replayed.pages);
    free(image);
    long long at = 0, bytes, reached = (long long)geometry->generation;
    record_header record;
    char *payload;
    while (rc == MPI_SUCCESS && reached < reach[best] &&
           read_record(log->fd, geometry, at, reached + 1, &record, &payload, &bytes)) {
        const uint64_t *indices = (const uint64_t *)payload;
        const char *pages = payload + record.page_count * 8;
        for (uint64_t i = 0; i < record.page_count && rc == MPI_SUCCESS; i++)
            rc = write_data_pages(&replayed, pages + i * replayed.page, (long long)indices[i], 1);
        free(payload);
        reached++;
        at += bytes;
    }
    if (rc == MPI_SUCCESS)
        rc = data_sync(log->data_fd, log->data_path);
    if (rc == MPI_SUCCESS && log->verbose)
        mpix_verbose_print("storage", "replayed the log '%s': generation %lld (slot %d %s, then %lld record(s))",
                           log->path, reached, best, best ? "image" : "data file",
                           reached - (long long)geometry->generation);
    *generation = reached;
    return rc;
}

/* ---------------------------------------------------------------- open, sync, close */

void mpix_storage_log_path(const char *data_path, long long begin, char *path, int path_size)
{
    /* A name too long for PATH_MAX becomes "" and fails to open with a clear error. */
    if (snprintf(path, path_size, "%s.mpix-log.%lld", data_path, begin) >= path_size)
        path[0] = '\0';
}

/* fsync the directory holding @path, so a new file's name is durable with its data. */
static int sync_directory(const char *path)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return io_error("cannot open the directory of", path, errno);
    int failed = fsync(fd) != 0 && errno != EINVAL;
    int error = errno;
    close(fd);
    return failed ? io_error("cannot make durable the directory of", path, error) : MPI_SUCCESS;
}

static uint64_t new_log_id(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed[3] = { (uint64_t)now.tv_sec, (uint64_t)now.tv_nsec, (uint64_t)getpid() };
    return XXH3_64bits(seed, sizeof seed);
}

/* Reserve the log's blocks up to @to: a full disk is an error at allocation, not at a
 * sync. Reserved blocks are not written: a 6 GiB window's log, written with zeros, took
 * 31-49 s to allocate (18 GiB at 0.4 GB/s), reserved 0.4 s per GiB for the window's own
 * read; syncs into reserved blocks cost the same as into written ones (ext4, 300 syncs
 * of 1 and 16 pages, 40 of 10% and 100% of 64 MiB: bench/results/storage.md). */
static int reserve(mpix_storage_log *log, long long from, long long to)
{
    if (to <= from)
        return MPI_SUCCESS;
    int error = posix_fallocate(log->fd, (off_t)from, (off_t)(to - from));
    return error ? io_error("cannot reserve room for", log->path, error) : MPI_SUCCESS;
}

/* The window's bytes [begin, end) of the data file into its fresh memory, and the first
 * digests of its pages. Only the file's data is read: a hole reads as zeros, which fresh
 * memory holds already, so a new window's allocation neither reads nor touches its memory
 * (a new 6 GiB window took 14 s, zeroing the page cache and the memory it read into, and
 * digesting every page). */
static int read_window(mpix_storage_log *log)
{
    if (mpix_page_digests_init_zeros(&log->digests, log->pages, log->page) != MPI_SUCCESS)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "out of memory for the digests of %lld pages", log->pages);
    for (long long at = log->begin; at < log->end;) {
        off_t data = lseek(log->data_fd, (off_t)at, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break; /* the rest is a hole */
        long long from = data < 0 ? at : (long long)data; /* no map of holes: read the rest */
        if (from >= log->end)
            break;
        off_t hole = data < 0 ? -1 : lseek(log->data_fd, data, SEEK_HOLE);
        long long to = hole < 0 || hole > log->end ? log->end : (long long)hole;
        if (read_all(log->data_fd, log->memory + (from - log->map_offset), to - from, from) != 0)
            return io_error("cannot read the window from", log->data_path, errno ? errno : EIO);
        long long first = (from - log->map_offset) / log->page;
        long long past = (to - log->map_offset + log->page - 1) / log->page;
        mpix_page_digests_renew_pages(&log->digests, log->memory, first, past - first);
        at = to;
    }
    return MPI_SUCCESS;
}

int mpix_storage_log_open(mpix_storage_log *log, const mpix_storage_file *file, const mpix_storage_config *config,
                          char *memory, long long map_offset, long long pages, long long begin, long long end)
{
    struct stat status;
    long long recovered = -1;
    int rc;

    memset(log, 0, sizeof *log);
    log->fd = -1;
    log->written.userfault_fd = log->written.pagemap_fd = -1;
    log->data_fd = file->fd;
    snprintf(log->data_path, sizeof log->data_path, "%s", file->path);
    log->memory = memory;
    log->page = sysconf(_SC_PAGESIZE);
    log->pages = pages;
    log->map_offset = map_offset;
    log->begin = begin;
    log->end = end;
    log->area_bytes = pages * log->page;
    log->verbose = config->verbose;
    mpix_storage_log_path(file->path, begin, log->path, sizeof log->path);

    rc = mpix_storage_file_open_private(log->path, config->file_perm, &log->fd, &status);
    if (rc != MPI_SUCCESS)
        return rc;
    if (status.st_size >= SLOTS * log->page)
        rc = replay(log, &recovered);
    /* A log that could not be replayed stays for the next try; otherwise the data file
     * now holds everything it had. */
    int keep_on_failure = rc != MPI_SUCCESS;
    log->generation = recovered > 0 ? recovered : 0;
    log->log_id = new_log_id();
    log->touched = calloc(pages, 1);
    log->changed = malloc(pages * sizeof *log->changed);
    if (rc == MPI_SUCCESS && (!log->touched || !log->changed))
        rc = mpix_error(MPIX_ERRKIND_STORAGE_IO, "out of memory for the log of %lld pages", pages);
    /* The data file, with whatever was replayed into it, is generation `generation`. */
    long long log_bytes = area_at(log->page, pages) + log->area_bytes;
    if (rc == MPI_SUCCESS && status.st_size < log_bytes)
        rc = reserve(log, status.st_size, log_bytes);
    if (rc == MPI_SUCCESS)
        rc = data_sync(log->data_fd, log->data_path);
    /* Slot 0 first: until the images' old headers are gone, they reach no further. */
    if (rc == MPI_SUCCESS)
        rc = write_slot_header(log, 0, log->generation);
    for (int slot = 1; slot < SLOTS && rc == MPI_SUCCESS; slot++) {
        slot_header empty;
        memset(&empty, 0, sizeof empty);
        rc = write_all(log->fd, &empty, sizeof empty, slot * log->page, log->path);
    }
    if (rc == MPI_SUCCESS)
        rc = sync_directory(log->path);
    if (rc == MPI_SUCCESS)
        rc = read_window(log);
    /* The window has its copy now. Pages cached by small reads would make later image
     * writes of the file go back in as many small folios, which writeback handles at
     * half the speed of the large ones a fresh write creates. */
    if (rc == MPI_SUCCESS)
        posix_fadvise(log->data_fd, (off_t)begin, (off_t)(end - begin), POSIX_FADV_DONTNEED);
    /* Armed by the first sync, not here: the first store to a protected 2 MiB folio splits
     * its mapping into 4 KiB entries, and a window that is never synced keeps its folios
     * whole (one-sided copies into it walked a third of the time on 2 MiB entries). */
    if (rc == MPI_SUCCESS && config->log_changes != MPIX_LOG_CHANGES_DIGEST &&
        mpix_written_pages_open(&log->written, memory, pages, log->page)) {
        log->written_list = malloc(pages * sizeof *log->written_list);
        if (!log->written_list)
            mpix_written_pages_close(&log->written);
        log->trust_written = config->log_changes == MPIX_LOG_CHANGES_WRITTEN;
    }
    if (rc != MPI_SUCCESS) {
        mpix_storage_log_close(log, 0, !keep_on_failure);
        return rc;
    }
    if (log->verbose)
        mpix_verbose_print("storage", "log '%s': generation %lld%s, %lld bytes for records, changes found by %s",
                           log->path, log->generation, recovered >= 0 ? " (recovered)" : "", log->area_bytes,
                           log->written.userfault_fd >= 0 ? "the kernel's written pages" : "page digests");
    return MPI_SUCCESS;
}

static void start_area_again(mpix_storage_log *log)
{
    memset(log->touched, 0, log->pages);
    log->touched_count = 0;
    log->area_used = 0;
}

/* The data file is the base and the area is full: write the pages changed since the
 * file's generation into it in place (or all of it, when that is a large part), then move
 * its header to the current generation, and the area starts again. A torn write here is
 * covered by the records, which stay valid until the header moves. */
static int compact_into_file(mpix_storage_log *log)
{
    int rc = MPI_SUCCESS;
    if (log->touched_count * 8 > log->pages) {
        rc = write_image(log, 0, log->memory);
    } else {
        for (long long first = 0; first < log->pages && rc == MPI_SUCCESS;) {
            if (!log->touched[first]) {
                first++;
                continue;
            }
            long long count = 1;
            while (first + count < log->pages && log->touched[first + count])
                count++;
            rc = write_data_pages(log, log->memory + first * log->page, first, count);
            first += count;
        }
    }
    if (rc == MPI_SUCCESS)
        rc = data_sync(log->data_fd, log->data_path);
    if (rc == MPI_SUCCESS)
        rc = write_slot_header(log, 0, log->generation);
    if (rc == MPI_SUCCESS)
        start_area_again(log);
    return rc;
}

/* A whole image of @generation into @slot, which is not the base: the base and its
 * records stay valid until the new header is durable. An image in the log takes one
 * fdatasync with its header; the data file takes its own first. */
static int switch_to(mpix_storage_log *log, int slot, long long generation, int image_written)
{
    int rc = image_written ? MPI_SUCCESS : write_image(log, slot, log->memory);
    if (rc == MPI_SUCCESS && slot == 0)
        rc = data_sync(log->data_fd, log->data_path);
    if (rc == MPI_SUCCESS)
        rc = write_slot_header(log, slot, generation);
    if (rc == MPI_SUCCESS) {
        log->base_slot = slot;
        start_area_again(log);
    }
    return rc;
}

static int other_image(const mpix_storage_log *log) { return log->base_slot == 1 ? 2 : 1; }

/* Pages compared with their digests to estimate how many changed since the last sync. */
#define CHANGE_SAMPLES 64

/* How many of @count pages changed since the last sync, estimated from a sample (their
 * digests are left as they are, for the sync's own pass): the pages listed in @list, or
 * every page when @list is NULL. One page at a random place in each of 64 equal
 * stretches: evenly spaced pages meet a program's strided stores never or every time
 * (every 10th page changed: none of 64 samples 256 pages apart, or all of them). */
static long long changed_estimate(const mpix_storage_log *log, const long long *list, long long count)
{
    long long samples = count < CHANGE_SAMPLES ? count : CHANGE_SAMPLES, changed = 0;
    for (long long k = 0; k < samples; k++) {
        long long from = k * count / samples, stretch = (k + 1) * count / samples - from;
        uint64_t seed[2] = { (uint64_t)log->generation, (uint64_t)k };
        long long at = from + (long long)(XXH3_64bits(seed, sizeof seed) % (uint64_t)stretch);
        changed += mpix_page_digests_differs(&log->digests, log->memory, list ? list[at] : at);
    }
    return samples > 0 ? changed * count / samples : 0;
}

/* After a dense sync: whether half the pages changed again. A sparse sync after a dense
 * one then costs a read of every page instead of a whole image written ahead. */
static int still_dense(const mpix_storage_log *log)
{
    return 2 * changed_estimate(log, NULL, log->pages) >= log->pages;
}

static int had_data(long long page, void *context)
{
    return !mpix_page_digests_was_zero(&((mpix_storage_log *)context)->digests, page);
}

/* To the @listed sorted pages of log->written_list, add the pages that hold no memory but
 * had data at the last sync: the program gave their memory back (madvise), so they hold
 * zeros now, a change that no write made. They go into log->changed first, free until the
 * sync fills it. Returns the new count, or -1 (read every page). */
static long long add_emptied_pages(mpix_storage_log *log, long long listed)
{
    long long *list = log->written_list, *extra = log->changed;
    long long extras = mpix_written_pages_holes(&log->written, extra, log->pages - listed, had_data, log);
    if (extras < 0)
        return -1;
    long long k = listed + extras - 1, i = listed - 1, j = extras - 1;
    while (j >= 0)
        list[k--] = i >= 0 && list[i] > extra[j] ? list[i--] : extra[j--];
    return listed + extras;
}

/* Whether @changed pages of a sync interval are few enough to track them: a store to a
 * tracked page costs a fault the first time in an interval (measured once per process),
 * reading a page in a pass over the window what this window's passes took. From a
 * quarter of the pages on, never. */
static int few_enough_to_track(const mpix_storage_log *log, long long changed)
{
    double fault_ns = mpix_storage_store_fault_ns();
    return 4 * changed < log->pages &&
           (double)changed * fault_ns < (double)log->pages * mpix_page_digests_ns_per_page(&log->digests);
}

/* Which pages this sync must read, into log->written_list: returns how many, or -1 for
 * every page. @written_count gets how many the kernel listed as written, or -1 when it
 * was not asked. While tracking is off (after a sync with many changes) the pages that
 * hold memory are read, and tracking is armed first when a sample of them says few
 * changed. Either way the pages a program never touched are not read (a read costs a
 * fault each: a new 6 GiB window's first sync took 23 s). */
static long long pages_to_read(mpix_storage_log *log, int dense, long long *written_count)
{
    mpix_written_pages *written = &log->written;
    long long *list = log->written_list;
    *written_count = -1;
    if (written->userfault_fd < 0 || dense || log->read_all_next)
        return -1;
    /* Memory pinned for a device is populated, so listing what holds memory sees it;
     * only the kernel's written flags miss the device's writes. */
    int complete = log->trust_written || mpix_written_pages_complete();
    if (!complete)
        mpix_written_pages_disarm(written);
    long long listed;
    if (written->armed) {
        listed = *written_count = mpix_written_pages_look(written, list);
    } else {
        listed = mpix_written_pages_populated(written, list);
        if (listed >= 0 && complete && few_enough_to_track(log, changed_estimate(log, list, listed)))
            mpix_written_pages_arm(written, list, listed);
    }
    return listed < 0 ? -1 : add_emptied_pages(log, listed);
}

int mpix_storage_log_sync(mpix_storage_log *log)
{
    long long generation = log->generation + 1, count;
    int rc = MPI_SUCCESS, image_written = 0, recorded = 0;
    int dense = log->last_dense && still_dense(log);
    long long written_count, listed = pages_to_read(log, dense, &written_count);

    if (dense) {
        /* After a dense sync, with a sample of pages changed again: copy the image out
         * first, and let the device write it while the digests tell what changed. */
        int slot = other_image(log);
        rc = write_image(log, slot, log->memory);
        if (rc != MPI_SUCCESS)
            return rc;
        image_written = 1;
        count = mpix_page_digests_changed(&log->digests, log->memory, 0, log->pages, log->changed);
    } else {
        rc = stream_record(log, generation, listed >= 0 ? log->written_list : NULL, listed, &count, &recorded);
    }
    if (rc == MPI_SUCCESS && !few_enough_to_track(log, written_count > count ? written_count : count))
        mpix_written_pages_disarm(&log->written);
    if (rc == MPI_SUCCESS && count == 0) {
        /* The last generation stands. An image copied ahead was unused: expect no more. */
        log->last_dense = 0;
        return MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS && !recorded)
        rc = switch_to(log, other_image(log), generation, image_written);
    if (rc == MPI_SUCCESS && recorded)
        for (long long i = 0; i < count; i++) {
            log->touched_count += !log->touched[log->changed[i]];
            log->touched[log->changed[i]] = 1;
        }
    if (rc != MPI_SUCCESS) {
        /* The digests already count these pages as written: read every page again. */
        memset(log->digests.digest, 0, log->pages * sizeof *log->digests.digest);
        log->last_dense = 0;
        log->read_all_next = 1;
        return rc;
    }
    log->generation = generation;
    log->last_dense = 2 * count >= log->pages;
    log->read_all_next = 0;
    /* Make room before the next sync needs it, while memory still holds this generation. */
    if (log->base_slot == 0 && log->area_used > 0 && log->area_used + log->last_record_bytes > log->area_bytes)
        rc = compact_into_file(log);
    return rc;
}

int mpix_storage_log_close(mpix_storage_log *log, int make_current, int remove)
{
    int rc = MPI_SUCCESS;
    if (log->fd >= 0 && make_current && !remove) {
        if (log->base_slot != 0)
            rc = switch_to(log, 0, log->generation, 0);
        else if (log->area_used > 0)
            rc = compact_into_file(log);
        if (rc == MPI_SUCCESS) {
            unlink(log->path);
            if (log->verbose)
                mpix_verbose_print("storage", "log '%s': generation %lld written into '%s', log removed", log->path,
                                   log->generation, log->data_path);
        }
    }
    if (log->fd >= 0) {
        close(log->fd);
        if (remove)
            unlink(log->path);
    }
    log->fd = -1;
    mpix_written_pages_close(&log->written);
    free(log->written_list);
    log->written_list = NULL;
    mpix_page_digests_free(&log->digests);
    free(log->touched);
    free(log->changed);
    log->touched = NULL;
    log->changed = NULL;
    return rc;
}
