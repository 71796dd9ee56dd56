/* SPDX-License-Identifier: BSD-3-Clause */
#include "window.h"
#include "common/api.h"
#include "common/error.h"
#include "common/hint.h"

#include <stdio.h>

/* The info being filled, and the first error met (later keys are skipped). */
typedef struct info_writer {
    MPI_Info info;
    int rc;
} info_writer;

static void put_text(info_writer *writer, const char *key, const char *value)
{
    if (writer->rc == MPI_SUCCESS)
        writer->rc = PMPI_Info_set(writer->info, key, value);
}

static void set_text(info_writer *writer, mpix_hint_id id, const char *value)
{
    put_text(writer, mpix_hint_spec_of(id)->key, value);
}

static void set_number(info_writer *writer, mpix_hint_id id, const char *format, double value)
{
    char text[64];
    snprintf(text, sizeof text, format, value);
    set_text(writer, id, text);
}

/* Hint @id back to its keywords: those whose bit is set in @mask, comma-separated, in
 * the hint table's order (one bit for a single-keyword hint). */
static void set_keywords(info_writer *writer, mpix_hint_id id, unsigned mask)
{
    const char *keywords = mpix_hint_spec_of(id)->keywords;
    char text[256] = "";
    int index = 0, length = 0;
    for (const char *word = keywords; *word; index++) {
        int word_length = 0;
        while (word[word_length] && word[word_length] != '|')
            word_length++;
        if (mask & (1u << index))
            length += snprintf(text + length, sizeof text - length, "%s%.*s", length ? "," : "", word_length, word);
        word += word_length + (word[word_length] == '|');
    }
    if (length)
        set_text(writer, id, text);
}

MPIX_API int MPIX_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    mpix_storage_window *state;
    int rc = PMPI_Win_get_info(win, info_used);

    if (rc != MPI_SUCCESS || !(state = mpix_storage_window_of(win)) || !state->region.segments)
        return rc;
    const mpix_storage_config *config = &state->region.config;
    const mpix_segment *mine = &state->region.mine;
    info_writer writer = { *info_used, MPI_SUCCESS };
    set_text(&writer, MPIX_HINT_ALLOC_TYPE, mine->storage_bytes > 0 || config->storage ? "storage" : "memory");
    if (mine->storage_bytes > 0) {
        const mpix_storage_tracking *tracking = &state->region.tracking;
        set_text(&writer, MPIX_HINT_STORAGE_FILENAME, state->region.file.path);
        set_number(&writer, MPIX_HINT_STORAGE_OFFSET, "%.0f", (double)(mine->file_offset + mine->shift));
        const mpix_storage_log *log = &state->region.log;
        set_keywords(&writer, MPIX_HINT_STORAGE_SYNC,
                     1u << (log->fd >= 0 ? MPIX_STORAGE_SYNC_LOG : MPIX_STORAGE_SYNC_IN_PLACE));
        if (log->fd >= 0) {
            /* Read-only: syncs the file and its log hold, counted across restarts. */
            char generation[32];
            snprintf(generation, sizeof generation, "%lld", log->generation);
            put_text(&writer, "mpix_storage_generation", generation);
            set_keywords(&writer, MPIX_HINT_STORAGE_LOG_CHANGES,
                         1u << (log->written.userfault_fd >= 0 ? MPIX_LOG_CHANGES_WRITTEN : MPIX_LOG_CHANGES_DIGEST));
            /* Read-only: whether the kernel lists the pages written until the next sync
             * (false: that sync reads every page that holds memory). */
            put_text(&writer, "mpix_storage_log_tracking", log->written.armed ? "true" : "false");
        }
        set_keywords(&writer, MPIX_HINT_STORAGE_TRACKING, 1u << tracking->policy);
        set_number(&writer, MPIX_HINT_STORAGE_HUGE_PERCENT, "%g", config->huge_percent);
        /* Read-only: what the kernel is asked to track changes by until the next sync. */
        char granularity[32];
        snprintf(granularity, sizeof granularity, "%lld", mpix_tracking_granularity(tracking));
        put_text(&writer, "mpix_storage_tracking_bytes", granularity);
        put_text(&writer, "mpix_storage_tracking_probe", tracking->probing ? "true" : "false");
    }
    set_number(&writer, MPIX_HINT_STORAGE_FACTOR, "%.6g",
               mine->size > 0 ? (double)mine->memory_bytes / (double)mine->size : 1.0);
    set_text(&writer, MPIX_HINT_STORAGE_ORDER, config->storage_first ? "storage_first" : "memory_first");
    set_text(&writer, MPIX_HINT_STORAGE_UNLINK, config->unlink_file ? "true" : "false");
    set_text(&writer, MPIX_HINT_STORAGE_DISCARD, config->discard ? "true" : "false");
    set_keywords(&writer, MPIX_HINT_ACCESS_STYLE, config->access_style);
    char perm[16];
    snprintf(perm, sizeof perm, "%04o", config->file_perm);
    set_text(&writer, MPIX_HINT_FILE_PERM, perm);
    if (config->striping_factor)
        set_number(&writer, MPIX_HINT_STRIPING_FACTOR, "%.0f", (double)config->striping_factor);
    if (config->striping_unit)
        set_number(&writer, MPIX_HINT_STRIPING_UNIT, "%.0f", (double)config->striping_unit);
    if (writer.rc != MPI_SUCCESS) {
        (void)PMPI_Info_free(info_used); /* cleanup: writer.rc is the error to report */
        return mpix_raise_win(win, writer.rc);
    }
    return MPI_SUCCESS;
}
