/* SPDX-License-Identifier: BSD-3-Clause */
#include "api.h"
#include "error.h"
#include "self_state.h"

#include <stdio.h>
#if MPIX_HAVE_HWLOC
#include <hwloc.h>
#endif
#if MPIX_HAVE_NUMA
#include <numa.h>
#endif

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

#if defined(OPEN_MPI)
#define BUILT_WITH_MPI "Open MPI " STRINGIFY(OMPI_MAJOR_VERSION) "." STRINGIFY(OMPI_MINOR_VERSION) "." STRINGIFY(OMPI_RELEASE_VERSION)
#elif defined(MPICH_VERSION)
#define BUILT_WITH_MPI "MPICH " MPICH_VERSION
#else
#define BUILT_WITH_MPI "MPI " STRINGIFY(MPI_VERSION) "." STRINGIFY(MPI_SUBVERSION)
#endif

MPIX_API int MPIX_Get_library_version(char *version, int *resultlen)
{
    char hwloc_text[32] = "", numa_text[32] = "";
    int length;

    if (!version || !resultlen) {
        int code = mpix_mpi_is_active()
                       ? mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Get_library_version: %s is NULL",
                                    version ? "resultlen" : "version")
                       : MPI_ERR_ARG;
        return mpix_mpi_is_active() ? mpix_raise(code) : code;
    }
#if MPIX_HAVE_HWLOC
    unsigned api = hwloc_get_api_version();
    snprintf(hwloc_text, sizeof hwloc_text, "; hwloc API %u.%u.%u", api >> 16, (api >> 8) & 0xff, api & 0xff);
#endif
#if MPIX_HAVE_NUMA
    snprintf(numa_text, sizeof numa_text, "; libnuma API %d", LIBNUMA_API_VERSION);
#endif
    length = snprintf(version, MPIX_MAX_LIBRARY_VERSION_STRING, "mpix %s (%s%s%s)", MPIX_VERSION_STRING,
                      BUILT_WITH_MPI, hwloc_text, numa_text);
    *resultlen = length < MPIX_MAX_LIBRARY_VERSION_STRING ? length : MPIX_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}
