/* SPDX-License-Identifier: BSD-3-Clause */
#include "status.h"

int mpix_status_nothing(MPI_Status *status, int source, int tag)
{
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
    int rc = PMPI_Status_set_cancelled(status, 0);
    return rc == MPI_SUCCESS ? PMPI_Status_set_elements_x(status, MPI_BYTE, 0) : rc;
}
