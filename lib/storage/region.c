/* SPDX-License-Identifier: BSD-3-Clause */
#include "region.h"
#include "node_memory.h"
#include "common/error.h"
#include "common/verbose.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int mpix_storage_region_open(mpix_storage_region *region, const mpix_storage_config *config, long long storage_bytes)
{
    mpix_storage_file closed = MPIX_STORAGE_FILE_CLOSED;
    mpix_storage_log no_log = MPIX_STORAGE_LOG_NONE;
    memset(region, 0, sizeof *region);
    region->config = *config;
    region->file = closed;
    region->log = no_log;
    region->mine.memory_fd = region->mine.file_fd = -1;
    if (storage_bytes <= 0)
        return MPI_SUCCESS;
    return mpix_storage_file_open(config, &region->file);
}

int mpix_storage_region_layout(mpix_storage_region *region, MPI_Comm comm, long long storage_bytes,
                               long long *storage_offset)
{
    long long mine[4] = { region->file.fd >= 0 ? region->file.device : -1, region->file.inode,
                          region->config.offset, mpix_page_round_up(storage_bytes) };
    long long *all, offset = region->config.offset;
    int rank, ranks, rc;

    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS || (rc = PMPI_Comm_size(comm, &ranks)) != MPI_SUCCESS)
        return rc;
    if (!(all = malloc(4 * ranks * sizeof *all)))
        return MPI_ERR_NO_MEM;
    rc = PMPI_Allgather(mine, 4, MPI_LONG_LONG, all, 4, MPI_LONG_LONG, comm);
    for (int r = 0; rc == MPI_SUCCESS && r < rank && mine[0] >= 0; r++)
        if (all[4 * r] == mine[0] && all[4 * r + 1] == mine[1] && all[4 * r + 2] == mine[2])
            offset += all[4 * r + 3];
    free(all);
    *storage_offset = offset;
    return rc;
}

/* Whether this segment's syncs go through a redo log (log.h): windows that fit in memory
 * get consistent checkpoints; out-of-core windows let the kernel write pages back: a
 * memory budget given (a combined window, or factor=auto), streaming access, or a
 * storage part larger than half the node's available memory. */
static int choose_log(const mpix_storage_region *region, int shareable, int *log)
{
    const mpix_storage_config *config = &region->config;
    long long storage_bytes = region->mine.storage_bytes;
    int possible = !shareable && !region->file.block_device;
    *log = 0;
    if (storage_bytes <= 0 || config->sync_mode == MPIX_STORAGE_SYNC_IN_PLACE)
        return MPI_SUCCESS;
    if (config->sync_mode == MPIX_STORAGE_SYNC_LOG) {
        if (!possible)
            return mpix_error(MPIX_ERRKIND_BAD_HINT,
                              "hint mpix_storage_sync=log needs a window of this process alone on a regular file; "
                              "'%.200s' is %s",
                              region->file.path, shareable ? "shared by the processes of a node" : "a block device");
        *log = 1;
        return MPI_SUCCESS;
    }
    *log = possible && !config->factor_auto && region->mine.memory_bytes == 0 &&
           !mpix_storage_wants_readahead(config->access_style) &&
           storage_bytes <= mpix_storage_node_memory(config->node_memory) / 2;
    return MPI_SUCCESS;
}

int mpix_storage_region_prepare(mpix_storage_region *region, long long size, int disp_unit, long long memory_bytes,
                                long long storage_offset, int shareable)
{
    int rc = mpix_segment_init(&region->mine, size, disp_unit, memory_bytes, region->config.storage_first,
                               shareable, &region->file, storage_offset);
    if (rc == MPI_SUCCESS && region->mine.storage_bytes > 0)
        rc = mpix_storage_file_claim(&region->file, region->mine.file_offset + region->mine.shift,
                                     region->mine.storage_bytes);
    if (rc == MPI_SUCCESS)
        rc = choose_log(region, shareable, &region->mine.storage_in_memory);
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_file_reserve(&region->file, storage_offset, region->mine.storage_bytes);
    if (rc == MPI_SUCCESS && region->mine.storage_bytes > 0)
        mpix_storage_file_advise(&region->file, region->config.access_style, storage_offset,
                                 region->mine.storage_bytes);
    return rc;
}

int mpix_storage_region_map(mpix_storage_region *region, const mpix_segment *segments, int count, int mine_index)
{
    long long total = 0;
    int rc;

    region->segment_count = count;
    region->my_segment = mine_index;
    region->segments = malloc(count * sizeof *region->segments);
    region->segment_at = calloc(count, sizeof *region->segment_at);
    region->segment_base = calloc(count, sizeof *region->segment_base);
    if (!region->segments || !region->segment_at || !region->segment_base)
        return mpix_error(MPIX_ERRKIND_STORAGE_IO, "out of memory describing %d window segments", count);
    memcpy(region->segments, segments, count * sizeof *segments);
    /* This process's storage part at a virtual address congruent to its file offset
     * modulo 2 MiB: 2 MiB folios (tracking.h) then map whole. */
    long long storage_position = 0;
    for (int i = 0; i < count; i++) {
        if (i == mine_index)
            storage_position = total + mpix_segment_storage_offset(&segments[i]);
        total += mpix_segment_footprint(&segments[i]);
    }
    rc = mpix_address_range_reserve(total, segments[mine_index].file_offset - storage_position, &region->reserved);
    if (rc != MPI_SUCCESS)
        return rc;
    region->reserved_length = total > 0 ? total : mpix_page_size();
    char *at = region->reserved;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        region->segment_at[i] = at;
        rc = mpix_segment_map(&segments[i], at, &region->segment_base[i]);
        at += mpix_segment_footprint(&segments[i]);
    }
    /* Every process's mapping gets the advice: folios are sized by whoever touches first. */
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++)
        mpix_segment_advise(&segments[i], region->segment_at[i], region->config.access_style);
    if (rc == MPI_SUCCESS) {
        const mpix_segment *mine = &segments[mine_index];
        char *start;
        long long length;
        mpix_segment_storage_part(mine, region->segment_at[mine_index], &start, &length);
        if (mine->storage_in_memory)
            rc = mpix_storage_log_open(&region->log, &region->file, &region->config, start, mine->file_offset,
                                       length / mpix_page_size(), mine->file_offset + mine->shift,
                                       mine->file_offset + mine->shift + mine->storage_bytes);
        else
            mpix_tracking_start(&region->tracking, &region->config, region->file.fd, mine->file_offset, start,
                                length);
    }
    return rc;
}

int mpix_storage_region_sync(mpix_storage_region *region)
{
    const mpix_segment *mine;
    char *start;
    long long length;
    if (!region->reserved)
        return MPI_SUCCESS;
    if (region->log.fd >= 0)
        return mpix_storage_log_sync(&region->log);
    mine = &region->segments[region->my_segment];
    mpix_segment_storage_part(mine, region->segment_at[region->my_segment], &start, &length);
    return mpix_tracking_sync(&region->tracking, region->file.fd, mine->file_offset, start, length, region->file.path);
}

int mpix_storage_region_destroy(mpix_storage_region *region, int completed)
{
    int rc = MPI_SUCCESS;
    if (completed && region->mine.storage_bytes > 0) {
        if (!region->config.discard)
            rc = mpix_storage_region_sync(region);
        if (region->log.fd >= 0) {
            int log_rc = mpix_storage_log_close(&region->log, !region->config.discard, region->config.unlink_file);
            rc = rc != MPI_SUCCESS ? rc : log_rc;
        }
        if (region->config.verbose)
            mpix_verbose_print("storage", "free: %s '%s'%s",
                     region->config.discard ? "no final flush (storage_alloc_discard) of" : "flushed",
                     region->file.path, region->config.unlink_file ? ", then removed it (storage_alloc_unlink)" : "");
    }
    /* A failed allocation: whatever a replay brought into the file is durable there, so
     * the log goes. (A completed window closed its log above.) */
    if (!completed)
        mpix_storage_log_close(&region->log, 0, 1);
    if (region->reserved)
        munmap(region->reserved, region->reserved_length);
    region->reserved = NULL;
    mpix_segment_release(&region->mine);
    if (!completed)
        mpix_storage_file_restore_size(&region->file);
    mpix_storage_file_close(&region->file, completed ? region->config.unlink_file : region->file.created);
    free(region->segments);
    free(region->segment_at);
    free(region->segment_base);
    region->segments = NULL;
    region->segment_at = region->segment_base = NULL;
    return rc;
}

void mpix_storage_region_describe(const mpix_storage_region *region, const char *what)
{
    const mpix_segment *mine = &region->mine;
    if (!region->config.verbose)
        return;
    mpix_verbose_print("storage",
                 "%s: %lld bytes = %lld in memory%s + %lld on storage '%s' at offset %lld (%s), %d segment(s)",
                 what, mine->size, mine->memory_bytes, mine->memory_fd >= 0 ? " (shareable memfd)" : "",
                 mine->storage_bytes, mine->storage_bytes ? region->file.path : "-",
                 mine->file_offset + mine->shift, region->config.storage_first ? "storage first" : "memory first",
                 region->segment_count);
}
