/* SPDX-License-Identifier: BSD-3-Clause */
#include "window.h"

int mpix_win_group_size(MPI_Win win, int *ranks)
{
    MPI_Group group;
    int rc = PMPI_Win_get_group(win, &group);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Group_size(group, ranks);
    int freed = PMPI_Group_free(&group);
    return rc != MPI_SUCCESS ? rc : freed;
}
