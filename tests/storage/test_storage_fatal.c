/* SPDX-License-Identifier: BSD-3-Clause */
/* With the default error handler a storage allocation that fails aborts the job with
 * mpix's message, as MPI_Win_allocate would with MPI's. */
#include <mpix/mpix.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Info info;
    MPI_Win win;
    void *base;
    MPI_Init(&argc, &argv);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", "/nonexistent-mpix-dir/window");
    MPIX_Win_allocate(4096, 1, info, MPI_COMM_WORLD, &base, &win);
    printf("storage_fatal: the default error handler did not abort\n");
    MPI_Finalize();
    return 0;
}
