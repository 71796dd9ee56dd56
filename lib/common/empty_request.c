/* SPDX-License-Identifier: BSD-3-Clause */
#include "empty_request.h"
#include "status.h"

#include <stddef.h>

static int query_empty(void *extra_state, MPI_Status *status)
{
    (void)extra_state;
    status->MPI_ERROR = MPI_SUCCESS;
    return mpix_status_nothing(status, MPI_UNDEFINED, MPI_UNDEFINED);
}

static int free_empty(void *extra_state)
{
    (void)extra_state;
    return MPI_SUCCESS;
}

/* Nothing to take back: whoever started it completes it. */
static int cancel_empty(void *extra_state, int complete)
{
    (void)extra_state, (void)complete;
    return MPI_SUCCESS;
}

int mpix_empty_request_start(MPI_Request *request)
{
    return PMPI_Grequest_start(query_empty, free_empty, cancel_empty, NULL, request);
}
