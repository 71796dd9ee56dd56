// SPDX-License-Identifier: BSD-3-Clause
// A C++ program written the way applications write a halo exchange, calling zcopy's
// nonblocking calls: a block of a 2-D field in a std::vector, split by columns over a
// periodic ring of ranks; each iteration builds the halo datatypes anew (a strided column
// vector one iteration, a subarray of two columns the next), posts MPIX_Irecv_zcopy and
// MPIX_Isend_zcopy for both sides, frees the datatypes before MPI_Waitall, checks every
// ghost cell against what the neighbour wrote, and updates the field. Halo messages of
// 32 and 64 KiB in blocks of 8 and 16 bytes (longer than those MPICH's zcopy sends
// without header): the path is zcopy's choice
// (MPIX_TEST_ZCOPY_EXPECT: zero_copy, some message must go zero-copy; mpi, none may).
// The program uses MPI's C API; Open MPI's and MPICH's C++ bindings are not linked.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpix/mpix.h>
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <vector>

namespace {

// What rank @owner writes at global (row, column) in @iteration.
double value(int owner, int iteration, int row, int column)
{
    return owner * 1e6 + iteration * 1e3 + row + column * 1e-3;
}

struct field {
    int rows, columns, halo;     // owned columns; halo columns on each side
    std::vector<double> cells;   // rows x (columns + 2 halo), row-major
    int stride() const { return columns + 2 * halo; }
    double &at(int row, int column) { return cells[static_cast<size_t>(row) * stride() + column + halo]; }
};

// The datatype of @width columns of the field, as this iteration's code builds it.
MPI_Datatype halo_type(const field &f, int width, bool subarray)
{
    MPI_Datatype type;
    if (subarray) {
        int sizes[2] = { f.rows, f.stride() }, subsizes[2] = { f.rows, width }, starts[2] = { 0, 0 };
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type);
    } else {
        MPI_Type_vector(f.rows, width, f.stride(), MPI_DOUBLE, &type);
    }
    MPI_Type_commit(&type);
    return type;
}

}  // namespace

int main(int argc, char **argv)
{
    int rank, size;
    mpix_test_start(&argc, &argv, &rank, &size);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;

    field f{ 4096, 64, 2, {} };
    f.cells.assign(static_cast<size_t>(f.rows) * f.stride(), -1.0);
    const int iterations = 40;
    for (int iteration = 0; iteration < iterations; iteration++) {
        for (int row = 0; row < f.rows; row++)
            for (int column = 0; column < f.columns; column++)
                f.at(row, column) = value(rank, iteration, row, column);

        const bool subarray = iteration % 2 == 1;
        const int width = subarray ? f.halo : 1;
        MPI_Datatype type = halo_type(f, width, subarray);
        // A subarray's extent is the whole field: displace by the start column instead.
        double *base = f.cells.data();
        auto column_start = [&](int column) { return base + column + f.halo; };
        MPI_Request requests[4];
        int rc = MPIX_Irecv_zcopy(column_start(-width), 1, type, left, 1, MPI_COMM_WORLD, &requests[0]);
        rc |= MPIX_Irecv_zcopy(column_start(f.columns), 1, type, right, 2, MPI_COMM_WORLD, &requests[1]);
        rc |= MPIX_Isend_zcopy(column_start(f.columns - width), 1, type, right, 1, MPI_COMM_WORLD, &requests[2]);
        rc |= MPIX_Isend_zcopy(column_start(0), 1, type, left, 2, MPI_COMM_WORLD, &requests[3]);
        MPI_Type_free(&type);   // allowed: the calls keep what they need
        CHECK(rc == MPI_SUCCESS, "iteration %d: posting the halo failed", iteration);
        MPI_Status statuses[4];
        CHECK(MPI_Waitall(4, requests, statuses) == MPI_SUCCESS, "iteration %d: MPI_Waitall failed", iteration);

        int wrong_left = 0, wrong_right = 0;
        for (int row = 0; row < f.rows; row++)
            for (int k = 1; k <= width; k++) {
                wrong_left += f.at(row, -k) != value(left, iteration, row, f.columns - k);
                wrong_right += f.at(row, f.columns - 1 + k) != value(right, iteration, row, k - 1);
            }
        CHECK(wrong_left == 0, "iteration %d: %d of %d left ghost cells differ (row 0: %g)", iteration, wrong_left,
              f.rows * width, f.at(0, -1));
        CHECK(wrong_right == 0, "iteration %d: %d of %d right ghost cells differ (row 0: %g)", iteration, wrong_right,
              f.rows * width, f.at(0, f.columns));
    }

    const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
    if (expect && size > 1) {
        zcopy_counters sent = zcopy_stats_of(MPI_COMM_WORLD);
        if (getenv("MPIX_TEST_VERBOSE"))
            printf("[rank %d] eager %lu mpi %lu zero-copy %lu fragmented %lu by shape %lu slower %lu deferred %lu\n", rank,
                   sent.sent_eager, sent.sent_mpi, sent.sent_zero_copy, sent.sent_fragmented, sent.sent_by_shape,
                   sent.sent_slower, sent.sent_deferred);
        if (strcmp(expect, "zero_copy") == 0)
            CHECK(sent.sent_zero_copy > 0, "no halo message went zero-copy");
        else
            CHECK(sent.sent_zero_copy == 0, "%lu halo messages went zero-copy", sent.sent_zero_copy);
    }
    return mpix_test_finish("zcopy_halo_cxx");
}
