// SPDX-License-Identifier: BSD-3-Clause
// A C++ program written the way applications write a halo exchange, calling zcopy's
// nonblocking calls: a block of a 2-D field in a std::vector, split by columns over a
// periodic ring of ranks; each iteration builds the halo datatypes anew (a strided column
// vector one iteration, a subarray of two columns the next), posts MPIX_Irecv_zcopy and
// MPIX_Isend_zcopy for both sides, frees the datatypes before MPI_Waitall, checks every
// ghost cell against what the neighbour wrote, and updates the field. Halo messages of
// 8 and 16 KiB in blocks of 8 and 16 bytes: the path is zcopy's choice
// (MPIX_TEST_ZCOPY_EXPECT: zero_copy, some message must go zero-copy; mpi, none may).
// The program uses MPI's C API; Open MPI's and MPICH's C++ bindings are not linked.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpix/mpix.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "zcopy_stats.h"

namespace {

int failures = 0;

void check(bool condition, int rank, const std::string &what)
{
    if (!condition && ++failures <= 10)
        std::fprintf(stderr, "[rank %d] %s\n", rank, what.c_str());
}

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
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;

    field f{ 1024, 64, 2, {} };
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
        check(rc == MPI_SUCCESS, rank, "posting the halo failed");
        MPI_Status statuses[4];
        check(MPI_Waitall(4, requests, statuses) == MPI_SUCCESS, rank, "MPI_Waitall failed");

        for (int row = 0; row < f.rows; row++)
            for (int k = 1; k <= width; k++) {
                double from_left = f.at(row, -k), from_right = f.at(row, f.columns - 1 + k);
                check(from_left == value(left, iteration, row, f.columns - k), rank,
                      "iteration " + std::to_string(iteration) + " row " + std::to_string(row) + ": left ghost " +
                          std::to_string(from_left));
                check(from_right == value(right, iteration, row, k - 1), rank,
                      "iteration " + std::to_string(iteration) + " row " + std::to_string(row) + ": right ghost " +
                          std::to_string(from_right));
            }
    }

    const char *expect = std::getenv("MPIX_TEST_ZCOPY_EXPECT");
    if (expect && size > 1) {
        unsigned long zero_copy = zcopy_counter(MPI_COMM_WORLD, "sent_zero_copy");
        if (std::getenv("MPIX_TEST_VERBOSE")) {
            zcopy_counters c = zcopy_stats_of(MPI_COMM_WORLD);
            std::printf("[rank %d] eager %lu mpi %lu zero-copy %lu fragmented %lu by shape %lu slower %lu deferred %lu\n",
                        rank, c.sent_eager, c.sent_mpi, c.sent_zero_copy, c.sent_fragmented, c.sent_by_shape,
                        c.sent_slower, c.sent_deferred);
        }
        if (std::strcmp(expect, "zero_copy") == 0)
            check(zero_copy > 0, rank, "no halo message went zero-copy");
        else
            check(zero_copy == 0, rank, std::to_string(zero_copy) + " halo messages went zero-copy");
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("zcopy_halo_cxx: %s (%d failed checks)\n", total ? "FAIL" : "PASS", total);
    MPI_Finalize();
    return total != 0;
}
