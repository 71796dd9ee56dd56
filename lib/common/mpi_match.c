/* SPDX-License-Identifier: BSD-3-Clause */
/* An mpix built for one MPI, loaded into a program that runs another, would hand one
 * MPI's handles to the other's functions and crash far from the cause. Handles differ
 * in kind between the families (pointers in Open MPI, integers in MPICH and its ABI
 * relatives), so the check is made once, when the shared library is loaded, before any
 * handle can cross: MPI_Get_library_version is the one call MPI allows at any time and
 * it takes no handle. The MPI that answers is the program's (the first in symbol lookup
 * order), which is the one mpix's calls would reach. */
#include "api.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* "openmpi", "mpich" or "other": the family the program's MPI belongs to. */
static const char *running_family(const char *version)
{
    if (strstr(version, "Open MPI"))
        return "openmpi";
    /* MPICH and the implementations that share its ABI (MVAPICH, Intel MPI, ...). */
    if (strstr(version, "MPICH") || strstr(version, "MVAPICH") || strstr(version, "Intel(R) MPI"))
        return "mpich";
    return "other";
}

__attribute__((constructor)) static void mpix_check_program_mpi(void)
{
    static const char built_family[] = MPIX_BUILD_MPI_VENDOR;
    /* Large enough for either family's MPI_MAX_LIBRARY_VERSION_STRING. */
    char version[8192] = "";
    int length = 0;

    if (strcmp(built_family, "other") == 0)
        return;
    if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS)
        return;
    version[sizeof version - 1] = '\0';
    const char *family = running_family(version);
    if (strcmp(family, "other") == 0 || strcmp(family, built_family) == 0)
        return;
    char *newline = strchr(version, '\n');
    if (newline)
        *newline = '\0';
    fprintf(stderr,
            "mpix: this libmpix was built for %s, but the program runs with '%.80s'. Build and link "
            "the program against the mpix built for its MPI (pkg-config, CMake and Meson name it), "
            "or build mpix with -Dmpi=%s.\n",
            strcmp(built_family, "openmpi") == 0 ? "Open MPI" : "MPICH", version, family);
    fflush(stderr);
    _exit(127);
}
