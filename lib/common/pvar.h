/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Pvar_read's modules: each answers for the names of its prefix ("zcopy.",
 * "guard."), given without the prefix. 1 and *value set if @name is one of its
 * variables, 0 if not; *rc is an MPI error met while reading. */
#ifndef MPIX_COMMON_PVAR_H
#define MPIX_COMMON_PVAR_H

#include <mpi.h>
#include <stddef.h>

/* A counter of a module's statistics struct: its name and where it lies (an unsigned long). */
typedef struct mpix_pvar_counter {
    const char *name;
    size_t offset;
} mpix_pvar_counter;

/* The counter named @name among the @n @counters, or NULL. */
const mpix_pvar_counter *mpix_pvar_counter_find(const mpix_pvar_counter *counters, size_t n, const char *name);

/* Its value in the statistics struct @stats. */
static inline MPI_Count mpix_pvar_counter_value(const mpix_pvar_counter *counter, const void *stats)
{
    return (MPI_Count) * (const unsigned long *)((const char *)stats + counter->offset);
}

int mpix_zcopy_pvar_read(const char *name, MPI_Comm comm, MPI_Count *value, int *rc);
int mpix_guard_pvar_read(const char *name, MPI_Count *value);

#endif
