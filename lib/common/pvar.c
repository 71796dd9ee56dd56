/* SPDX-License-Identifier: BSD-3-Clause */
#include "pvar.h"
#include "api.h"
#include "error.h"

#include <string.h>

const mpix_pvar_counter *mpix_pvar_counter_find(const mpix_pvar_counter *counters, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, counters[i].name) == 0)
            return &counters[i];
    return NULL;
}

MPIX_API int MPIX_Pvar_read(const char *name, MPI_Comm comm, MPI_Count *value)
{
    int rc = MPI_SUCCESS, known = 0;

    if (!name || !value)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Pvar_read: %s is NULL", name ? "value" : "name"));
    if (strncmp(name, "zcopy.", 6) == 0)
        known = mpix_zcopy_pvar_read(name + 6, comm, value, &rc);
    else if (strncmp(name, "guard.", 6) == 0)
        known = mpix_guard_pvar_read(name + 6, value);
    if (rc != MPI_SUCCESS)
        return mpix_raise(rc);
    if (!known)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Pvar_read: no performance variable '%.64s'", name));
    return MPI_SUCCESS;
}
