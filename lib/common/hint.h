/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix's settings: every one is described once, in hint_table.c (name, environment
 * variable, which objects' info carries it, type, default, audience, description). A
 * lookup reads the info key where the setting takes one, else its environment variable,
 * else the table's default; a malformed value becomes an MPIX_ERRKIND_BAD_HINT code that
 * names the key, the value and where it came from. The documentation's settings tables
 * and `mpix-settings` print the same table (tools/settings.c). */
#ifndef MPIX_COMMON_HINT_H
#define MPIX_COMMON_HINT_H

#include <mpi.h>
#include <stddef.h>

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
    MPIX_HINT_STORAGE_LOG_CHANGES,
    MPIX_HINT_STORAGE_STORE_FAULT_NS,
    MPIX_HINT_SPIN_POLLS,
    MPIX_HINT_HY_SMALL_BYTES,
    MPIX_HINT_HY_SMALL_NODES,
    MPIX_HINT_ZCOPY,
    MPIX_HINT_ZCOPY_EAGER_BYTES,
    MPIX_HINT_ZCOPY_COALESCE_BYTES,
    MPIX_HINT_ZCOPY_PTRACER,
    MPIX_HINT_ZCOPY_METHOD,
    MPIX_HINT_ZCOPY_PROGRESS,
    MPIX_HINT_VIRTUAL_NODE_RANKS,
    MPIX_HINT_ZCOPY_ATTACH,
    MPIX_HINT_ZCOPY_SPLIT_BYTES,
    MPIX_HINT_ZCOPY_SLOTS,
    MPIX_HINT_ZCOPY_FOLD_SIGHT,
    MPIX_HINT_ZCOPY_FOLD_CALL_US,
    MPIX_HINT_ZCOPY_KERNEL_IOVEC_NS,
    MPIX_HINT_ZCOPY_MPI_BYTES_PER_NS,
    MPIX_HINT_ZCOPY_PULL_DELAY_US,
    MPIX_HINT_ZCOPY_FOLD_THREAD,
    MPIX_HINT_ZCOPY_COLLAPSE,
    MPIX_HINT_ZCOPY_PACK_BY_COPY,
    MPIX_HINT_ZCOPY_PIPES,
    MPIX_HINT_GUARD,
    MPIX_HINT_GUARD_COPY_BYTES,
    MPIX_HINT_GUARD_CHAIN,
    MPIX_HINT_GUARD_POLL_NS,
    MPIX_HINT_GUARD_CHECK,
    MPIX_HINT_PMPI,
    MPIX_HINT_STORAGE_DEFAULT_HINTS,
    MPIX_HINT_COUNT
} mpix_hint_id;

typedef enum mpix_hint_type {
    MPIX_HINT_TYPE_BOOL,         /* true|false|1|0|yes|no|on|off */
    MPIX_HINT_TYPE_KEYWORD,      /* one of the keywords */
    MPIX_HINT_TYPE_NUMBER,       /* real in [min, max], or one of the keywords */
    MPIX_HINT_TYPE_INTEGER,      /* integer in [min, max], or one of the keywords */
    MPIX_HINT_TYPE_MODE,         /* permission bits 0..0777: octal with a leading 0, else decimal */
    MPIX_HINT_TYPE_STRING,       /* any non-empty text */
    MPIX_HINT_TYPE_KEYWORD_LIST  /* comma-separated keywords */
} mpix_hint_type;

typedef enum mpix_hint_audience {
    MPIX_HINT_FOR_USERS,    /* documented for applications */
    MPIX_HINT_FOR_TESTING   /* forces a path or a fault so that tests reach it */
} mpix_hint_audience;

typedef struct mpix_hint_spec {
    const char *key;          /* the setting's name, and its info key where it takes one */
    const char *env;          /* environment variable, or NULL */
    const char *info_objects; /* whose info carries the key ("window", ...), or NULL: environment only */
    const char *module;       /* common, storage, spin, hy, zcopy, guard */
    mpix_hint_audience audience;
    mpix_hint_type type;
    const char *keywords;     /* '|'-separated, or NULL */
    double min, max;          /* NUMBER and INTEGER */
    const char *default_value;/* parsed as a value; NULL when the module works it out (see description) */
    const char *description;  /* one line */
} mpix_hint_spec;

typedef struct mpix_hint_value {
    int present;            /* 0: neither the info nor the environment set it */
    int has_value;          /* present, or the table's default filled the fields */
    char origin[64];        /* "info", "environment variable NAME" or "default" */
    int keyword;            /* index among the keywords, -1 for a number */
    unsigned keyword_mask;  /* KEYWORD_LIST: bit i for keyword i */
    long long integer;      /* BOOL (0/1), INTEGER, OCTAL */
    double number;          /* NUMBER (and INTEGER, converted) */
    char text[MPI_MAX_INFO_VAL + 1];
} mpix_hint_value;

const mpix_hint_spec *mpix_hint_spec_of(mpix_hint_id id);

/* The value of @spec's environment variable, or NULL where it has none, is not set, or
 * is set but empty (VARIABLE= prog: not set, as most runtimes read it). */
const char *mpix_hint_env(const mpix_hint_spec *spec);

/* Look up and parse one setting. MPI_SUCCESS (value->present tells whether it was set,
 * value->has_value whether a default filled it in) or an MPIX_ERRKIND_BAD_HINT code,
 * not yet raised. @info may be MPI_INFO_NULL; it is not read for settings that take no
 * info. */
int mpix_hint_get(MPI_Info info, mpix_hint_id id, mpix_hint_value *value);

/* Parse @text as a value of @spec into @value: 1 if well formed. Calls no MPI. */
int mpix_hint_parse(const mpix_hint_spec *spec, const char *text, mpix_hint_value *value);

/* What a well-formed value of @spec looks like, e.g. "an integer in [0, 64]". */
void mpix_hint_describe(const mpix_hint_spec *spec, char *text, size_t size);

/* Shorthands for settings with a default in the table: the value in force. */
int mpix_hint_bool(MPI_Info info, mpix_hint_id id, int *result);
int mpix_hint_keyword(MPI_Info info, mpix_hint_id id, int *result);
int mpix_hint_integer(MPI_Info info, mpix_hint_id id, long long *result);

/* With verbose output on, one line per setting of @module in force for the object made
 * with @info: "settings: key=value (origin)". */
void mpix_hint_report(MPI_Info info, const char *module);

#endif
