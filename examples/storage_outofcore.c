/* SPDX-License-Identifier: BSD-3-Clause */
/* Out-of-core array: each rank's array is 4x larger than the memory it may use. A
 * combined storage window keeps the first quarter in memory and maps the rest onto a
 * file, in one contiguous range, so the code indexes it like any array.
 * Run: mpirun -np 2 ./storage_outofcore [MiB per rank, default 64] */
#include <mpix/mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    long long mib = argc > 1 ? atoll(argv[1]) : 64, count = mib * (1 << 20) / (long long)sizeof(double);

    char path[256];
    snprintf(path, sizeof path, "/tmp/mpix-outofcore-%d-%d.dat", (int)getpid(), rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_factor", "0.25");   /* a quarter in memory */
    MPI_Info_set(info, "access_style", "sequential");     /* streamed: readahead pays off */
    MPI_Info_set(info, "storage_alloc_unlink", "true");   /* scratch data: remove at free */
    MPI_Info_set(info, "storage_alloc_discard", "true");  /* and never flush it */

    double *array;
    MPI_Win win;
    MPIX_Win_allocate(count * (long long)sizeof(double), sizeof(double), info, MPI_COMM_WORLD, &array, &win);
    MPI_Info_free(&info);

    MPI_Info used;
    char factor[MPI_MAX_INFO_VAL + 1];
    int found;
    MPIX_Win_get_info(win, &used);
    MPI_Info_get(used, "storage_alloc_factor", MPI_MAX_INFO_VAL, factor, &found);
    MPI_Info_free(&used);

    /* Two streaming passes over the whole array: initialise, then reduce. */
    for (long long i = 0; i < count; i++)
        array[i] = (double)(rank * count + i);
    double local = 0, total = 0;
    for (long long i = 0; i < count; i++)
        local += array[i];
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    double n = (double)count * ranks, expected = n * (n - 1) / 2;
    if (rank == 0)
        printf("out-of-core: %lld MiB per rank, %s of it in memory, the rest in %s...; sum %.0f (%s)\n", mib, factor,
               "/tmp/mpix-outofcore-*", total, total == expected ? "correct" : "WRONG");
    MPIX_Win_free(&win);
    MPI_Finalize();
    return total == expected ? 0 : 1;
}
