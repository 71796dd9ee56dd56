/* SPDX-License-Identifier: BSD-3-Clause */
#include "api.h"
#include "error.h"
#include "hint.h"

MPIX_API int MPIX_Info_validate(MPI_Info info)
{
    for (int id = 0; id < MPIX_HINT_COUNT; id++) {
        mpix_hint_value value;
        int rc = mpix_hint_get(info, (mpix_hint_id)id, &value);
        if (rc != MPI_SUCCESS)
            return mpix_raise(rc);
    }
    return MPI_SUCCESS;
}
