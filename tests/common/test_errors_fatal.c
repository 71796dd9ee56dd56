/* SPDX-License-Identifier: BSD-3-Clause */
/* With the default handler (MPI_ERRORS_ARE_FATAL) a bad hint aborts the job, exactly as
 * an MPI error would: registered as a test that must fail. Rank 0 only makes the bad
 * call; reaching the end means the handler was not called. */
#include <mpix/mpix.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Info info;
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "storage_alloc_factor", "banana");
    if (rank == 0)
        MPIX_Info_validate(info);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("errors_fatal: the default error handler did not abort\n");
    MPI_Finalize();
    return 0;
}
