/* SPDX-License-Identifier: BSD-3-Clause */
/* Header and data of a zcopy call as one MPI message on the caller's communicator and
 * tag, so that no other receive (another thread's wildcard receive included) can take
 * the data apart from its header. Used for small messages, and for large ones under
 * MPI_THREAD_MULTIPLE (send.c sends the others as two messages). */
#include "zcopy.h"

int mpix_zcopy_message_type(const mpix_zcopy_header *header, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Datatype *message)
{
    int lengths[2] = { (int)sizeof *header, count };
    MPI_Aint at[2];
    MPI_Datatype types[2] = { MPI_BYTE, datatype };
    int rc = PMPI_Get_address(header, &at[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Get_address(buf, &at[1]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_struct(2, lengths, at, types, message);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(message)) != MPI_SUCCESS)
        (void)PMPI_Type_free(message); /* the commit's error is the one to report */
    return rc;
}
