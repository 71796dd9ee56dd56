/* Every hint mpix understands, in one place: docs/common.md and each module's page list
 * the same keys. The table fixes syntax only; what a value does is the module's. */
#include "hint.h"

#include <stddef.h>

static const mpix_hint_spec hint_table[MPIX_HINT_COUNT] = {
    [MPIX_HINT_VERBOSE] = { "mpix_verbose", "MPIX_VERBOSE", MPIX_HINT_TYPE_BOOL, NULL, 0, 0 },
    [MPIX_HINT_ALLOC_TYPE] = { "alloc_type", NULL, MPIX_HINT_TYPE_KEYWORD, "memory|storage", 0, 0 },
    [MPIX_HINT_STORAGE_FILENAME] = { "storage_alloc_filename", NULL, MPIX_HINT_TYPE_STRING, NULL, 0, 0 },
    [MPIX_HINT_STORAGE_OFFSET] = { "storage_alloc_offset", NULL, MPIX_HINT_TYPE_INTEGER, NULL, 0, 4.6e18 },
    [MPIX_HINT_STORAGE_FACTOR] = { "storage_alloc_factor", NULL, MPIX_HINT_TYPE_NUMBER, "auto", 0, 1 },
    [MPIX_HINT_STORAGE_ORDER] = { "storage_alloc_order", NULL, MPIX_HINT_TYPE_KEYWORD,
                                  "memory_first|storage_first", 0, 0 },
    [MPIX_HINT_STORAGE_UNLINK] = { "storage_alloc_unlink", NULL, MPIX_HINT_TYPE_BOOL, NULL, 0, 0 },
    [MPIX_HINT_STORAGE_DISCARD] = { "storage_alloc_discard", NULL, MPIX_HINT_TYPE_BOOL, NULL, 0, 0 },
    [MPIX_HINT_ACCESS_STYLE] = { "access_style", NULL, MPIX_HINT_TYPE_KEYWORD_LIST,
                                 "read_once|write_once|read_mostly|write_mostly|sequential|reverse_sequential|random",
                                 0, 0 },
    [MPIX_HINT_FILE_PERM] = { "file_perm", NULL, MPIX_HINT_TYPE_OCTAL, NULL, 0, 0777 },
    [MPIX_HINT_STRIPING_FACTOR] = { "striping_factor", NULL, MPIX_HINT_TYPE_INTEGER, NULL, 1, 65536 },
    [MPIX_HINT_STRIPING_UNIT] = { "striping_unit", NULL, MPIX_HINT_TYPE_INTEGER, NULL, 1, 4.6e18 },
    [MPIX_HINT_HY_SPLIT] = { "mpix_hy_split", "MPIX_HY_SPLIT", MPIX_HINT_TYPE_INTEGER, "node|numa|socket",
                             1, 1 << 30 },
    [MPIX_HINT_STORAGE_NODE_MEMORY] = { "mpix_storage_node_memory", "MPIX_STORAGE_NODE_MEMORY",
                                        MPIX_HINT_TYPE_INTEGER, NULL, 0, 4.6e18 },
    [MPIX_HINT_HY_SMALL_BYTES] = { "mpix_hy_small_bytes", "MPIX_HY_SMALL_BYTES", MPIX_HINT_TYPE_INTEGER, NULL, 0,
                                   1 << 30 },
    [MPIX_HINT_ZCOPY] = { "mpix_zcopy", "MPIX_ZCOPY", MPIX_HINT_TYPE_BOOL, NULL, 0, 0 },
    [MPIX_HINT_ZCOPY_EAGER_BYTES] = { "mpix_zcopy_eager_bytes", "MPIX_ZCOPY_EAGER_BYTES", MPIX_HINT_TYPE_INTEGER,
                                      NULL, 0, 1 << 30 },
    [MPIX_HINT_ZCOPY_COALESCE_BYTES] = { "mpix_zcopy_coalesce_bytes", "MPIX_ZCOPY_COALESCE_BYTES",
                                         MPIX_HINT_TYPE_INTEGER, NULL, 0, 1 << 30 },
    [MPIX_HINT_ZCOPY_PTRACER] = { "mpix_zcopy_ptracer", "MPIX_ZCOPY_PTRACER", MPIX_HINT_TYPE_BOOL, NULL, 0, 0 },
    [MPIX_HINT_ZCOPY_METHOD] = { "mpix_zcopy_method", "MPIX_ZCOPY_METHOD", MPIX_HINT_TYPE_KEYWORD,
                                 "auto|direct|staged", 0, 0 },
    [MPIX_HINT_ZCOPY_NODE_RANKS] = { "mpix_zcopy_node_ranks", "MPIX_ZCOPY_NODE_RANKS", MPIX_HINT_TYPE_INTEGER, NULL,
                                     0, 1 << 30 },
    [MPIX_HINT_ZCOPY_ATTACH] = { "mpix_zcopy_attach", "MPIX_ZCOPY_ATTACH", MPIX_HINT_TYPE_KEYWORD, "probe|refuse|refuse_push", 0,
                                 0 },
    [MPIX_HINT_ZCOPY_SPLIT_BYTES] = { "mpix_zcopy_split_bytes", "MPIX_ZCOPY_SPLIT_BYTES", MPIX_HINT_TYPE_INTEGER,
                                      NULL, 0, 4.6e18 },
    [MPIX_HINT_GUARD] = { "mpix_guard", "MPIX_GUARD", MPIX_HINT_TYPE_BOOL, NULL, 0, 0 },
    [MPIX_HINT_GUARD_COPY_BYTES] = { "mpix_guard_copy_bytes", "MPIX_GUARD_COPY_BYTES", MPIX_HINT_TYPE_INTEGER,
                                     NULL, 0, 1 << 30 },
    [MPIX_HINT_GUARD_CHAIN] = { "mpix_guard_chain", "MPIX_GUARD_CHAIN", MPIX_HINT_TYPE_BOOL, NULL, 0, 0 },
    [MPIX_HINT_GUARD_POLL_NS] = { "mpix_guard_poll_ns", "MPIX_GUARD_POLL_NS", MPIX_HINT_TYPE_INTEGER, NULL, 0, 1e9 },
    [MPIX_HINT_SPIN_POLLS] = { "mpix_spin_polls", "MPIX_SPIN_POLLS", MPIX_HINT_TYPE_INTEGER, NULL, 0, 1e9 },
};

const mpix_hint_spec *mpix_hint_spec_of(mpix_hint_id id) { return &hint_table[id]; }
