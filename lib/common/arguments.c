/* SPDX-License-Identifier: BSD-3-Clause */
#include "arguments.h"
#include "error.h"

/* MPI's own error for a peer MPI would reject, raised by MPI: a call with that peer that
 * moves nothing because MPI refuses it. MPI_SUCCESS where MPI does not check. */
static int mpi_judges_peer(int peer, int tag, MPI_Comm comm, int direction)
{
    static const char nothing_read;
    int flag;
    if (direction == MPIX_SENDING)
        return PMPI_Send(&nothing_read, 0, MPI_BYTE, peer, tag, comm);
    return PMPI_Iprobe(peer, tag, comm, &flag, MPI_STATUS_IGNORE);
}

int mpix_check_transfer(const char *call, const void *buf, int count, MPI_Datatype datatype, int peer, int tag,
                        MPI_Comm comm, int direction)
{
    int inter = 0, peers = 0, rc;

    /* Communicator, count, datatype (committed) and tag: judged by MPI itself, with a
     * call to MPI_PROC_NULL that moves no data, so a program sees MPI's own classes. */
    if (direction == MPIX_SENDING)
        rc = PMPI_Send(buf, count, datatype, MPI_PROC_NULL, tag, comm);
    else
        rc = PMPI_Recv((void *)buf, count, datatype, MPI_PROC_NULL, tag, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    /* An MPI built without argument checks accepts these; mpix does not. */
    if (comm == MPI_COMM_NULL)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: the communicator is MPI_COMM_NULL", call));
    if (count < 0)
        return mpix_raise_comm(comm, mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: count %d is negative", call, count));
    if (peer == MPI_PROC_NULL || (direction == MPIX_RECEIVING && peer == MPI_ANY_SOURCE))
        return MPI_SUCCESS;
    if ((rc = PMPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS)
        return rc;
    rc = inter ? PMPI_Comm_remote_size(comm, &peers) : PMPI_Comm_size(comm, &peers);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mpix_peer_known(peer, peers, direction))
        return MPI_SUCCESS;
    if ((rc = mpi_judges_peer(peer, tag, comm, direction)) != MPI_SUCCESS)
        return rc;
    return mpix_raise_comm(comm, mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: %s %d is not a rank of 0..%d", call,
                                            direction == MPIX_SENDING ? "destination" : "source", peer, peers - 1));
}

int mpix_check_datatype(MPI_Datatype datatype, MPI_Comm comm)
{
    /* MPICH skips the committed check for count 0; a send to MPI_PROC_NULL reads nothing. */
    static const char nothing_read;
    return PMPI_Send(&nothing_read, 1, datatype, MPI_PROC_NULL, 0, comm);
}

int mpix_raise_comm_or_world(MPI_Comm comm, int code)
{
    return comm == MPI_COMM_NULL ? mpix_raise(code) : mpix_raise_comm(comm, code);
}
