/* SPDX-License-Identifier: BSD-3-Clause */
/* The strided face the nonblocking tests exchange, as halo codes build it every
 * iteration. */
#ifndef MPIX_TEST_ZCOPY_FACE_H
#define MPIX_TEST_ZCOPY_FACE_H

#include <mpi.h>

/* @rows rows of @row_doubles doubles, @stride_doubles apart, committed; the caller frees
 * it. */
static inline MPI_Datatype zcopy_face_type(int rows, int row_doubles, int stride_doubles)
{
    MPI_Datatype face;
    MPI_Type_vector(rows, row_doubles, stride_doubles, MPI_DOUBLE, &face);
    MPI_Type_commit(&face);
    return face;
}

#endif
