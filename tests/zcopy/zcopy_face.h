/* SPDX-License-Identifier: BSD-3-Clause */
/* The strided face the nonblocking tests exchange, as halo codes build it every
 * iteration: 64 rows of 512 doubles, 640 doubles apart (256 KiB over 320 KiB), each
 * element naming its sender, iteration and index, so that a misplaced or stale one
 * shows. */
#ifndef MPIX_TEST_ZCOPY_FACE_H
#define MPIX_TEST_ZCOPY_FACE_H

#include <mpi.h>
#include <stddef.h>

enum { ZCOPY_FACE_ROWS = 64, ZCOPY_FACE_ROW_DOUBLES = 512, ZCOPY_FACE_STRIDE_DOUBLES = 640 };
/* Elements the face holds, and doubles of memory it spans. */
enum {
    ZCOPY_FACE_ELEMENTS = ZCOPY_FACE_ROWS * ZCOPY_FACE_ROW_DOUBLES,
    ZCOPY_FACE_SPAN = ZCOPY_FACE_ROWS * ZCOPY_FACE_STRIDE_DOUBLES
};

/* Element @element of what rank @from sends in @iteration (faces and small messages). */
static inline double zcopy_value(int from, int iteration, int element)
{
    return from * 1e8 + iteration * 1e6 + element;
}

/* The face datatype, committed; the caller frees it. */
static inline MPI_Datatype zcopy_face_type(void)
{
    MPI_Datatype face;
    MPI_Type_vector(ZCOPY_FACE_ROWS, ZCOPY_FACE_ROW_DOUBLES, ZCOPY_FACE_STRIDE_DOUBLES, MPI_DOUBLE, &face);
    MPI_Type_commit(&face);
    return face;
}

/* @face (ZCOPY_FACE_SPAN doubles) as rank @from sends it in @iteration; -2 between rows. */
static inline void zcopy_face_fill(double *face, int from, int iteration)
{
    for (int r = 0; r < ZCOPY_FACE_ROWS; r++)
        for (int e = 0; e < ZCOPY_FACE_STRIDE_DOUBLES; e++)
            face[r * ZCOPY_FACE_STRIDE_DOUBLES + e] =
                e < ZCOPY_FACE_ROW_DOUBLES ? zcopy_value(from, iteration, r * ZCOPY_FACE_ROW_DOUBLES + e) : -2;
}

/* -1 in @n doubles: where nothing may be written, so that a copy into a face's gaps
 * shows. */
static inline void zcopy_blank(double *buffer, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buffer[i] = -1;
}

/* The first double of a blanked @face that is not what @from sent in @iteration (the
 * gaps still -1), or -1 where all are. */
static inline int zcopy_face_wrong(const double *face, int from, int iteration)
{
    for (int r = 0; r < ZCOPY_FACE_ROWS; r++)
        for (int e = 0; e < ZCOPY_FACE_STRIDE_DOUBLES; e++) {
            double want = e < ZCOPY_FACE_ROW_DOUBLES ? zcopy_value(from, iteration, r * ZCOPY_FACE_ROW_DOUBLES + e) : -1;
            if (face[r * ZCOPY_FACE_STRIDE_DOUBLES + e] != want)
                return r * ZCOPY_FACE_STRIDE_DOUBLES + e;
        }
    return -1;
}

#endif
