/* SPDX-License-Identifier: BSD-3-Clause */
/* A program written outside mpix: it only knows <mpix/mpix.h> and what pkg-config (or
 * Meson's dependency('mpix')) tells it. Built and run by tests/consumer/consumers.sh. */
#include <mpix/mpix.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    char version[MPIX_MAX_LIBRARY_VERSION_STRING];
    int length, rank, size, bad_hint_class, error_class, failures = 0, total = 0;
    MPI_Info info;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    failures += MPIX_Get_library_version(version, &length) != MPI_SUCCESS;
    failures += strncmp(version, "mpix " MPIX_VERSION_STRING, strlen("mpix " MPIX_VERSION_STRING)) != 0;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "tape");
    MPIX_Query_error_class(MPIX_ERRKIND_BAD_HINT, &bad_hint_class);
    MPI_Error_class(MPIX_Info_validate(info), &error_class);
    failures += error_class != bad_hint_class;
    MPI_Info_free(&info);

    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("consumer: %s on %d ranks with %s\n", total ? "FAIL" : "OK", size, version);
    MPI_Finalize();
    return total != 0;
}
