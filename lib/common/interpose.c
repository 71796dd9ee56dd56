/* SPDX-License-Identifier: BSD-3-Clause */
#include "interpose.h"
#include "error.h"
#include "hint.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static _Atomic int parsed_modules = -1;

/* Keyword order in the settings table: storage, guard, zcopy, none. */
static int modules_of(const mpix_hint_value *value)
{
    return ((value->keyword_mask & 1) ? MPIX_INTERPOSE_STORAGE : 0) | ((value->keyword_mask & 2) ? MPIX_INTERPOSE_GUARD : 0) |
           ((value->keyword_mask & 4) ? MPIX_INTERPOSE_ZCOPY : 0);
}

int mpix_interpose_modules(const char *library_default)
{
    int modules = atomic_load_explicit(&parsed_modules, memory_order_acquire);
    if (modules >= 0)
        return modules;
    const mpix_hint_spec *spec = mpix_hint_spec_of(MPIX_HINT_PMPI);
    mpix_hint_value value;
    int rc = mpix_hint_get(MPI_INFO_NULL, MPIX_HINT_PMPI, &value);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int length = 0;
        if (PMPI_Error_string(rc, text, &length) != MPI_SUCCESS)
            snprintf(text, sizeof text, "error %d", rc);
        fprintf(stderr, "mpix: %s; using %s\n", text, library_default);
    }
    if (rc != MPI_SUCCESS || !value.has_value)
        (void)mpix_hint_parse(spec, library_default, &value);   /* the libraries' own defaults parse */
    modules = modules_of(&value);
    atomic_store_explicit(&parsed_modules, modules, memory_order_release);
    return modules;
}

/* Windows this process has allocated through the wrappers, for %w. */
static _Atomic int windows_allocated;

int mpix_interpose_default_hints(MPI_Info info, MPI_Comm comm, MPI_Info *merged)
{
    mpix_hint_value defaults;
    int rc = mpix_hint_get(MPI_INFO_NULL, MPIX_HINT_STORAGE_DEFAULT_HINTS, &defaults);
    *merged = info;
    if (rc != MPI_SUCCESS || !defaults.has_value)
        return rc;
    int world_rank = 0, window = atomic_fetch_add_explicit(&windows_allocated, 1, memory_order_relaxed);
    if ((rc = PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank)) != MPI_SUCCESS)
        return rc;
    if ((rc = info == MPI_INFO_NULL ? PMPI_Info_create(merged) : PMPI_Info_dup(info, merged)) != MPI_SUCCESS)
        return rc;
    char text[sizeof defaults.text], *save = NULL;
    snprintf(text, sizeof text, "%s", defaults.text);
    for (char *pair = strtok_r(text, ";", &save); pair && rc == MPI_SUCCESS; pair = strtok_r(NULL, ";", &save)) {
        char *equals = strchr(pair, '=');
        if (!equals || equals == pair)
            return mpix_raise_comm(comm, mpix_error(MPIX_ERRKIND_BAD_HINT,
                                                    "MPIX_STORAGE_DEFAULT_HINTS: '%s' is not key=value", pair));
        *equals = '\0';
        int flag = 0, length = 0;
        if ((rc = PMPI_Info_get_valuelen(*merged, pair, &length, &flag)) != MPI_SUCCESS || flag)
            continue;   /* the program's own value wins */
        char value[MPI_MAX_INFO_VAL];
        size_t used = 0;
        for (const char *c = equals + 1; *c && used + 12 < sizeof value; c++) {
            if (c[0] == '%' && c[1] == 'r')
                used += (size_t)snprintf(value + used, sizeof value - used, "%d", world_rank), c++;
            else if (c[0] == '%' && c[1] == 'w')
                used += (size_t)snprintf(value + used, sizeof value - used, "%d", window), c++;
            else
                value[used++] = *c;
        }
        value[used] = '\0';
        rc = PMPI_Info_set(*merged, pair, value);
    }
    return rc;
}
