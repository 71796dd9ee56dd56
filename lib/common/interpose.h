/* SPDX-License-Identifier: BSD-3-Clause */
/* For the interposition libraries only (libmpix-pmpi.so, libmpix-guard.so): which of
 * their wrappers act. Exported from libmpix so that the setting is parsed by the one
 * settings table, but not part of the API. */
#ifndef MPIX_COMMON_INTERPOSE_H
#define MPIX_COMMON_INTERPOSE_H

#include <mpi.h>

enum mpix_interposed {
    MPIX_INTERPOSE_STORAGE = 1 << 0,
    MPIX_INTERPOSE_GUARD = 1 << 1
};

/* The modules MPIX_PMPI names, else those of @library_default ("storage", "guard");
 * parsed once per process. A malformed MPIX_PMPI is reported on stderr once and the
 * default used: the wrappers have no caller to return an error to. */
__attribute__((visibility("default"))) int mpix_interpose_modules(const char *library_default);

/* @info plus the hints of MPIX_STORAGE_DEFAULT_HINTS for keys it lacks, in a new info
 * (*@merged, which the caller frees), or @info itself when there are none; %r becomes
 * the rank in MPI_COMM_WORLD, %w the number of the process's window. A pair without
 * '=' is an MPIX_ERRKIND_BAD_HINT error, raised on @comm (the window's communicator). */
__attribute__((visibility("default"))) int mpix_interpose_default_hints(MPI_Info info, MPI_Comm comm,
                                                                        MPI_Info *merged);

#endif
