/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/verbose.h"

#include <stdio.h>
#include <string.h>

int mpix_storage_config_parse(MPI_Info info, mpix_storage_config *config)
{
    mpix_hint_value value;
    int rc;

    memset(config, 0, sizeof *config);
    config->node_memory = -1; /* worked out from the node when not given */
    config->verbose = mpix_verbose_enabled(info);

#define GET(id) \
    if ((rc = mpix_hint_get(info, (id), &value)) != MPI_SUCCESS) \
        return rc; \
    if (value.has_value)

    GET(MPIX_HINT_ALLOC_TYPE) config->storage = value.keyword == 1;
    GET(MPIX_HINT_STORAGE_FILENAME) snprintf(config->filename, sizeof config->filename, "%s", value.text);
    GET(MPIX_HINT_STORAGE_OFFSET) config->offset = value.integer;
    GET(MPIX_HINT_STORAGE_FACTOR) {
        config->factor_auto = value.keyword == 0;
        config->factor = value.number;
    }
    GET(MPIX_HINT_STORAGE_ORDER) config->storage_first = value.keyword == 1;
    GET(MPIX_HINT_STORAGE_UNLINK) config->unlink_file = (int)value.integer;
    GET(MPIX_HINT_STORAGE_DISCARD) config->discard = (int)value.integer;
    GET(MPIX_HINT_ACCESS_STYLE) config->access_style = value.keyword_mask;
    GET(MPIX_HINT_FILE_PERM) config->file_perm = (int)value.integer;
    GET(MPIX_HINT_STRIPING_FACTOR) config->striping_factor = value.integer;
    GET(MPIX_HINT_STRIPING_UNIT) config->striping_unit = value.integer;
    GET(MPIX_HINT_STORAGE_NODE_MEMORY) config->node_memory = value.integer;
    GET(MPIX_HINT_STORAGE_TRACKING) config->tracking = value.keyword;
    GET(MPIX_HINT_STORAGE_HUGE_PERCENT) config->huge_percent = value.number;
    GET(MPIX_HINT_STORAGE_SYNC) config->sync_mode = value.keyword;
    GET(MPIX_HINT_STORAGE_LOG_CHANGES) config->log_changes = value.keyword;
#undef GET
    mpix_hint_report(info, "storage");

    /* A window writes its file: a mode without the owner's write bit could never open. */
    if (config->storage && (config->file_perm & 0200) == 0)
        return mpix_error(MPIX_ERRKIND_BAD_HINT,
                          "hint file_perm=%04o leaves the owner no write permission, which a storage window needs",
                          config->file_perm);
    if (config->storage && config->filename[0] == '\0')
        return mpix_error(MPIX_ERRKIND_BAD_HINT,
                          "hint alloc_type=storage needs storage_alloc_filename (the file or block device to map)");
    return MPI_SUCCESS;
}
