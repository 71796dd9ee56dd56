/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Type_commit_comm / MPIX_Type_free_comm: one layout id agreed by every process of a
 * communicator (seed 004's collective datatype creation), so that no process ever reads
 * a peer's layout for this type: the peer's layout is its own. */
#include "zcopy.h"
#include "common/arguments.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"

#include <stddef.h>

/* The handles both calls need before anything collective starts. */
static int check_type_arguments(const char *call, const MPI_Datatype *datatype, MPI_Comm comm)
{
    if (!datatype)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: datatype is NULL", call);
    if (comm == MPI_COMM_NULL)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: the communicator is MPI_COMM_NULL", call);
    if (*datatype == MPI_DATATYPE_NULL)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: *datatype is MPI_DATATYPE_NULL", call);
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Type_commit_comm(MPI_Datatype *datatype, MPI_Comm comm)
{
    mpix_zcopy_comm *zc = NULL;
    int inter = 0, rc = check_type_arguments("MPIX_Type_commit_comm", datatype, comm);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm_or_world(comm, rc);
    rc = PMPI_Comm_test_inter(comm, &inter);
    if (rc == MPI_SUCCESS && inter)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Type_commit_comm: an intercommunicator cannot agree on one id; "
                                               "use an intracommunicator");
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(datatype);
    if (rc == MPI_SUCCESS)
        rc = mpix_zcopy_comm_get(comm, &zc);
    if (inter)
        return mpix_raise_comm(comm, rc);
    if ((rc = mpix_agree(comm, rc)) != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);

    /* Ids above every id any member has used are new to all of them. */
    uint64_t proposal = zc->process->next_global_id + 1, agreed = 0;
    rc = PMPI_Allreduce(&proposal, &agreed, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);
    zc->process->next_global_id = agreed;
    /* Predefined types need no id: their layouts travel inside the header. */
    if (!mpix_type_is_named(*datatype)) {
        rc = mpix_zcopy_global_add(zc, agreed, *datatype);
        if (rc == MPI_SUCCESS)
            rc = mpix_type_set_global_id(zc, *datatype, comm, agreed);
        if (rc != MPI_SUCCESS)
            mpix_zcopy_global_remove(zc, agreed);
    }
    return mpix_raise_comm(comm, mpix_agree(comm, rc));
}

MPIX_API int MPIX_Type_free_comm(MPI_Datatype *datatype, MPI_Comm comm)
{
    mpix_zcopy_comm *zc;
    uint64_t global_id = 0;
    int rc = check_type_arguments("MPIX_Type_free_comm", datatype, comm);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm_or_world(comm, rc);
    rc = mpix_zcopy_comm_get(comm, &zc);
    if (rc == MPI_SUCCESS && !mpix_type_is_named(*datatype))
        rc = mpix_type_get_global_id(*datatype, comm, &global_id);
    if (rc == MPI_SUCCESS && global_id)
        mpix_zcopy_global_remove(zc, global_id);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_free(datatype);
    return mpix_raise_comm(comm, rc);
}
