/* SPDX-License-Identifier: BSD-3-Clause */
/* The hy calls for Fortran programs: mpix_<call>_ for mpif.h and `use mpi` (integer
 * handles) and mpix_<call>_f08_, the same code, for the `use mpi_f08` interfaces of the
 * module mpix_hy (include/mpix/hy.f90), as in zcopy/fortran.c. A RESULT, BUFFER or SLOT
 * argument is where the C call stores an address: TYPE(C_PTR) and
 * INTEGER(KIND=MPI_ADDRESS_KIND) alike are one pointer-sized word passed by reference.
 * A SENDBUF may be the binding's MPI_IN_PLACE. Errors have already gone through the
 * communicator's or the window's handler in the C call; IERROR carries its code. */
#include "common/api.h"
#include "common/fortran.h"

#include <mpi.h>
#include <mpix/hy.h>

MPIX_API void mpix_hy_comm_create_(const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *hy_comm, MPI_Fint *ierror)
{
    MPI_Comm c_hy_comm = MPI_COMM_NULL;
    int rc = MPIX_Hy_comm_create(PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), &c_hy_comm);
    if (rc == MPI_SUCCESS)
        *hy_comm = PMPI_Comm_c2f(c_hy_comm);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_hy_comm_create_f08_, mpix_hy_comm_create_);

MPIX_API void mpix_hy_comm_query_(const MPI_Fint *hy_comm, MPI_Fint *node_comm, MPI_Fint *bridge_comm, MPI_Fint *node,
                                  MPI_Fint *nodes, MPI_Fint *ierror)
{
    MPI_Comm c_node_comm = MPI_COMM_NULL, c_bridge_comm = MPI_COMM_NULL;
    int c_node = 0, c_nodes = 0;
    int rc = MPIX_Hy_comm_query(PMPI_Comm_f2c(*hy_comm), &c_node_comm, &c_bridge_comm, &c_node, &c_nodes);
    if (rc == MPI_SUCCESS) {
        *node_comm = PMPI_Comm_c2f(c_node_comm);
        *bridge_comm = PMPI_Comm_c2f(c_bridge_comm);
        *node = (MPI_Fint)c_node;
        *nodes = (MPI_Fint)c_nodes;
    }
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_hy_comm_query_f08_, mpix_hy_comm_query_);

MPIX_API void mpix_hy_allgather_create_(const MPI_Fint *hy_comm, const MPI_Fint *count, const MPI_Fint *datatype,
                                        void **result, MPI_Fint *win, MPI_Fint *ierror)
{
    MPI_Win c_win = MPI_WIN_NULL;
    int rc = MPIX_Hy_allgather_create(PMPI_Comm_f2c(*hy_comm), (int)*count, PMPI_Type_f2c(*datatype), result, &c_win);
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_hy_allgather_create_f08_, mpix_hy_allgather_create_);

MPIX_API void mpix_hy_allgather_(void *sendbuf, const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Hy_allgather(mpix_fortran_send_buffer(sendbuf), PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_hy_allgather_f08_, mpix_hy_allgather_);

MPIX_API void mpix_hy_bcast_create_(const MPI_Fint *hy_comm, const MPI_Fint *count, const MPI_Fint *datatype,
                                    void **buffer, MPI_Fint *win, MPI_Fint *ierror)
{
    MPI_Win c_win = MPI_WIN_NULL;
    int rc = MPIX_Hy_bcast_create(PMPI_Comm_f2c(*hy_comm), (int)*count, PMPI_Type_f2c(*datatype), buffer, &c_win);
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_hy_bcast_create_f08_, mpix_hy_bcast_create_);

MPIX_API void mpix_hy_bcast_(void *sendbuf, const MPI_Fint *root, const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Hy_bcast(mpix_fortran_send_buffer(sendbuf), (int)*root, PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_hy_bcast_f08_, mpix_hy_bcast_);

MPIX_API void mpix_hy_allreduce_create_(const MPI_Fint *hy_comm, const MPI_Fint *count, const MPI_Fint *datatype,
                                        const MPI_Fint *op, void **slot, void **result, MPI_Fint *win,
                                        MPI_Fint *ierror)
{
    MPI_Win c_win = MPI_WIN_NULL;
    int rc = MPIX_Hy_allreduce_create(PMPI_Comm_f2c(*hy_comm), (int)*count, PMPI_Type_f2c(*datatype),
                                      PMPI_Op_f2c(*op), slot, result, &c_win);
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_hy_allreduce_create_f08_, mpix_hy_allreduce_create_);

MPIX_API void mpix_hy_allreduce_(void *sendbuf, const MPI_Fint *win, MPI_Fint *ierror)
{
    mpix_fortran_error(ierror, MPIX_Hy_allreduce(mpix_fortran_send_buffer(sendbuf), PMPI_Win_f2c(*win)));
}
FORTRAN_ALIAS(mpix_hy_allreduce_f08_, mpix_hy_allreduce_);

MPIX_API void mpix_hy_free_(MPI_Fint *win, MPI_Fint *ierror)
{
    MPI_Win c_win = PMPI_Win_f2c(*win);
    int rc = MPIX_Hy_free(&c_win);
    *win = PMPI_Win_c2f(c_win);
    mpix_fortran_error(ierror, rc);
}
FORTRAN_ALIAS(mpix_hy_free_f08_, mpix_hy_free_);
