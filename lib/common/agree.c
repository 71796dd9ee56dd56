/* SPDX-License-Identifier: BSD-3-Clause */
#include "agree.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

typedef struct failure_report {
    int kind;
    char text[MPI_MAX_ERROR_STRING];
} failure_report;

int mpix_agree(MPI_Comm comm, int local_code)
{
    struct { int failed; int rank; } mine, first;
    failure_report report;
    int rc, length;

    if ((rc = PMPI_Comm_rank(comm, &mine.rank)) != MPI_SUCCESS)
        return local_code != MPI_SUCCESS ? local_code : rc;
    mine.failed = local_code != MPI_SUCCESS;
    rc = PMPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MAXLOC, comm);
    if (rc != MPI_SUCCESS)
        return mine.failed ? local_code : rc;
    if (!first.failed)
        return MPI_SUCCESS;

    memset(&report, 0, sizeof report);
    if (mine.rank == first.rank) {
        report.kind = mpix_error_kind_of(local_code);
        if (PMPI_Error_string(local_code, report.text, &length) != MPI_SUCCESS)
            snprintf(report.text, sizeof report.text, "error code %d", local_code);
    }
    rc = PMPI_Bcast(&report, sizeof report, MPI_BYTE, first.rank, comm);
    if (mine.failed)
        return local_code;
    if (rc != MPI_SUCCESS)
        return rc;
    return mpix_error(report.kind >= 0 ? (MPIX_Error_kind)report.kind : MPIX_ERRKIND_PEER,
                      "failed on rank %d: %.180s", first.rank, report.text);
}
