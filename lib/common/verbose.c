/* SPDX-License-Identifier: BSD-3-Clause */
#include "verbose.h"
#include "hint.h"
#include "self_state.h"

#include <stdarg.h>
#include <stdio.h>

int mpix_verbose_enabled(MPI_Info info)
{
    int enabled = 0;
    /* A malformed value is reported by the call that takes the info; here it means off. */
    if (mpix_hint_bool(info, MPIX_HINT_VERBOSE, &enabled) != MPI_SUCCESS)
        return 0;
    return enabled;
}

static void print_line(const char *module, const char *format, va_list args)
{
    char text[512];
    int rank = -1;
    if (mpix_mpi_is_active())
        if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
            rank = -1;
    vsnprintf(text, sizeof text, format, args);
    fprintf(stderr, "mpix[world rank %d] %s: %s\n", rank, module, text);   /* -1: no world (MPI-4 sessions) */
}

void mpix_verbose(MPI_Info info, const char *module, const char *format, ...)
{
    va_list args;
    if (!mpix_verbose_enabled(info))
        return;
    va_start(args, format);
    print_line(module, format, args);
    va_end(args);
}

void mpix_verbose_print(const char *module, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    print_line(module, format, args);
    va_end(args);
}
