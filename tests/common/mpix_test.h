/* Minimal harness for MPI tests: CHECK records a failure with the rank and location and
 * goes on; mpix_test_finish() sums failures over MPI_COMM_WORLD, finalizes, and gives
 * the exit status (0 only if every rank passed). */
#ifndef MPIX_TEST_H
#define MPIX_TEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int mpix_test_failures;

static void mpix_test_fail(const char *file, int line, const char *condition, const char *format, ...)
{
    int rank = -1, initialized = 0, finalized = 0;
    va_list args;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", rank, file, line, condition);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    mpix_test_failures++;
}

#define CHECK(condition, ...) \
    do { if (!(condition)) mpix_test_fail(__FILE__, __LINE__, #condition, __VA_ARGS__); } while (0)

/* The text of an MPI error code, for checks on what an error says. */
static inline const char *mpix_test_error_string(int code)
{
    static char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    text[0] = '\0';
    MPI_Error_string(code, text, &length);
    return text;
}

static inline int mpix_test_finish(const char *name)
{
    int total = 0, rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&mpix_test_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s (%d failed checks)\n", name, total ? "FAIL" : "PASS", total);
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif
