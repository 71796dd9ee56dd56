/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_VERBOSE=1 (or info key mpix_verbose=true) prints, once per object, which path a
 * module chose and why. */
#ifndef MPIX_COMMON_VERBOSE_H
#define MPIX_COMMON_VERBOSE_H

#include <mpi.h>

/* 1 when verbose output is asked for by @info or the environment. */
int mpix_verbose_enabled(MPI_Info info);

/* One line on stderr: "mpix[world rank R] module: text". Nothing unless enabled. */
void mpix_verbose(MPI_Info info, const char *module, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* The same line, for a caller that decided with mpix_verbose_enabled() when the object
 * was made (its info is gone by the time it reports). */
void mpix_verbose_print(const char *module, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
