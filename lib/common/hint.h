/* SPDX-License-Identifier: BSD-3-Clause */
/* Typed, validating lookup of mpix hints. Every key mpix understands is described once,
 * in hint_table.c; a lookup reads the MPI_Info key, else the hint's environment
 * variable, and a malformed value becomes an MPIX_ERRKIND_BAD_HINT code that names the
 * key, the value and where it came from. */
#ifndef MPIX_COMMON_HINT_H
#define MPIX_COMMON_HINT_H

#include <mpi.h>

typedef enum mpix_hint_id {
    MPIX_HINT_VERBOSE,
    MPIX_HINT_ALLOC_TYPE,
    MPIX_HINT_STORAGE_FILENAME,
    MPIX_HINT_STORAGE_OFFSET,
    MPIX_HINT_STORAGE_FACTOR,
    MPIX_HINT_STORAGE_ORDER,
    MPIX_HINT_STORAGE_UNLINK,
    MPIX_HINT_STORAGE_DISCARD,
    MPIX_HINT_ACCESS_STYLE,
    MPIX_HINT_FILE_PERM,
    MPIX_HINT_STRIPING_FACTOR,
    MPIX_HINT_STRIPING_UNIT,
    MPIX_HINT_HY_SPLIT,
    MPIX_HINT_STORAGE_NODE_MEMORY,
    MPIX_HINT_STORAGE_TRACKING,
    MPIX_HINT_STORAGE_HUGE_PERCENT,
    MPIX_HINT_STORAGE_SYNC,
    MPIX_HINT_SPIN_POLLS,
    MPIX_HINT_HY_SMALL_BYTES,
    MPIX_HINT_ZCOPY,
    MPIX_HINT_ZCOPY_EAGER_BYTES,
    MPIX_HINT_ZCOPY_COALESCE_BYTES,
    MPIX_HINT_ZCOPY_PTRACER,
    MPIX_HINT_ZCOPY_METHOD,
    MPIX_HINT_ZCOPY_NODE_RANKS,
    MPIX_HINT_ZCOPY_ATTACH,
    MPIX_HINT_ZCOPY_SPLIT_BYTES,
    MPIX_HINT_ZCOPY_SLOTS,
    MPIX_HINT_ZCOPY_COLLAPSE,
    MPIX_HINT_GUARD,
    MPIX_HINT_GUARD_COPY_BYTES,
    MPIX_HINT_GUARD_CHAIN,
    MPIX_HINT_GUARD_POLL_NS,
    MPIX_HINT_COUNT
} mpix_hint_id;

typedef enum mpix_hint_type {
    MPIX_HINT_TYPE_BOOL,         /* true|false|1|0|yes|no|on|off */
    MPIX_HINT_TYPE_KEYWORD,      /* one of the keywords */
    MPIX_HINT_TYPE_NUMBER,       /* real in [min, max], or one of the keywords */
    MPIX_HINT_TYPE_INTEGER,      /* integer in [min, max], or one of the keywords */
    MPIX_HINT_TYPE_OCTAL,        /* permission bits, 0..0777 */
    MPIX_HINT_TYPE_STRING,       /* any non-empty text */
    MPIX_HINT_TYPE_KEYWORD_LIST  /* comma-separated keywords */
} mpix_hint_type;

typedef struct mpix_hint_spec {
    const char *key;
    const char *env;        /* environment default, or NULL */
    mpix_hint_type type;
    const char *keywords;   /* '|'-separated, or NULL */
    double min, max;        /* NUMBER and INTEGER */
} mpix_hint_spec;

typedef struct mpix_hint_value {
    int present;            /* 0: neither the info nor the environment set it */
    char origin[64];        /* "info" or "environment variable NAME" */
    int keyword;            /* index among the keywords, -1 for a number */
    unsigned keyword_mask;  /* KEYWORD_LIST: bit i for keyword i */
    long long integer;      /* BOOL (0/1), INTEGER, OCTAL */
    double number;          /* NUMBER (and INTEGER, converted) */
    char text[MPI_MAX_INFO_VAL + 1];
} mpix_hint_value;

const mpix_hint_spec *mpix_hint_spec_of(mpix_hint_id id);

/* Look up and parse one hint. MPI_SUCCESS (value->present tells whether it was set) or
 * an MPIX_ERRKIND_BAD_HINT code, not yet raised. */
int mpix_hint_get(MPI_Info info, mpix_hint_id id, mpix_hint_value *value);

/* Shorthands: *result is the default when the hint is absent. */
int mpix_hint_bool(MPI_Info info, mpix_hint_id id, int default_value, int *result);
int mpix_hint_keyword(MPI_Info info, mpix_hint_id id, int default_keyword, int *result);
int mpix_hint_integer(MPI_Info info, mpix_hint_id id, long long default_value, long long *result);

#endif
