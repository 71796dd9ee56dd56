// SPDX-License-Identifier: BSD-3-Clause
// Guarded transfers from C++ written the way C++ is written: std::vector buffers that
// go out of scope (operator delete) as soon as MPIX_Sendrecv_guarded returns, one of
// them received into and deleted unread, of 100 KB (the C library's heap) and 1 MiB
// (blocks it unmaps when freed). guard finishes what still needs a block before it goes
// (lib/guard/release.c); before, MPI read an unmapped send buffer and the job died. Every
// received vector is checked; any failure aborts the job.
// The MPI's deprecated C++ bindings are left out, as C++ programs of today leave them.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <mpix/guard.h>

#include <cstdio>
#include <memory>
#include <vector>

static double value(int owner, int step, std::size_t i)
{
    return owner * 1e7 + step * 1e5 + static_cast<double>(i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    int wrong = 0;
    for (int step = 0; step < 12; step++) {
        const std::size_t n = (step % 2 ? 1 << 20 : 100000) / sizeof(double);
        std::vector<double> incoming(n);
        {
            std::vector<double> outgoing(n);
            for (std::size_t i = 0; i < n; i++)
                outgoing[i] = value(rank, step, i);
            MPIX_Sendrecv_guarded(outgoing.data(), static_cast<int>(n), MPI_DOUBLE, right, step, incoming.data(),
                                  static_cast<int>(n), MPI_DOUBLE, left, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }   // outgoing deleted while MPI may still read it in place
        auto unread = std::make_unique<std::vector<double>>(n);
        MPIX_Sendrecv_guarded(incoming.data(), static_cast<int>(n), MPI_DOUBLE, right, 100 + step, unread->data(),
                              static_cast<int>(n), MPI_DOUBLE, left, 100 + step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        unread.reset();   // deleted before its message was copied in
        for (std::size_t i = 0; i < n; i++)
            if (incoming[i] != value(left, step, i)) {
                std::printf("rank %d: step %d: element %zu is %g\n", rank, step, i, incoming[i]);
                wrong++;
                break;
            }
    }
    if (wrong)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (MPIX_Guard_complete_all() != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0)
        std::printf("guard_free_cxx: %d ranks passed\n", ranks);
    MPI_Finalize();
    return 0;
}
