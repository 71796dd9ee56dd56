/* SPDX-License-Identifier: BSD-3-Clause */
/* The check of the plain MPI test programs (programs without mpix, run plain and under
 * the preloaded libraries): a wrong value is counted in `failures` and, for the first
 * ten, printed with the process's `rank`; both are the program's own variables. */
#ifndef MPIX_TEST_PLAIN_CHECK_H
#define MPIX_TEST_PLAIN_CHECK_H

#include <stdio.h>

#define CHECK(condition, ...)                                                                                          \
    do {                                                                                                               \
        if (!(condition) && failures++ < 10) {                                                                         \
            fprintf(stderr, "rank %d: ", rank);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

#endif
