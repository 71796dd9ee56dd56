/* SPDX-License-Identifier: BSD-3-Clause */
#include "progress.h"
#include "empty_request.h"

int mpix_mpi_progress(void)
{
    MPI_Request pending;
    int flag, rc = mpix_empty_request_start(&pending);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Test(&pending, &flag, MPI_STATUS_IGNORE); /* not complete: MPI runs its progress */
    int complete_rc = PMPI_Grequest_complete(pending);
    int wait_rc = PMPI_Wait(&pending, MPI_STATUS_IGNORE);
    return rc != MPI_SUCCESS ? rc : complete_rc != MPI_SUCCESS ? complete_rc : wait_rc;
}
