/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal harness for MPI tests: CHECK records a failure with the rank and location and
 * goes on; mpix_test_finish() sums failures over MPI_COMM_WORLD, finalizes, and gives
 * the exit status (0 only if every rank passed). */
#ifndef MPIX_TEST_H
#define MPIX_TEST_H

#include <mpi.h>
#include <mpix/mpix.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Whether @code is an error of mpix category @kind (MPIX_ERRKIND_*). */
static inline int mpix_test_is_kind(int code, int kind)
{
    int error_class = MPI_SUCCESS, kind_class = -1;
    if (code == MPI_SUCCESS || MPI_Error_class(code, &error_class) != MPI_SUCCESS ||
        MPIX_Query_error_class(kind, &kind_class) != MPI_SUCCESS)
        return 0;
    return error_class == kind_class;
}

/* A duplicate of MPI_COMM_WORLD whose error handler counts its calls (returning), and
 * that count: an erroneous call must raise its error once, as MPI's own calls do, or a
 * program's handler runs twice for one error. */
static inline int *mpix_test_raised(void)
{
    static int count;
    return &count;
}
static inline void mpix_test_count_raise(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    ++*mpix_test_raised();
}
static inline MPI_Comm mpix_test_counting_comm(void)
{
    MPI_Comm comm;
    MPI_Errhandler counting;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_errhandler(mpix_test_count_raise, &counting);
    MPI_Comm_set_errhandler(comm, counting);
    MPI_Errhandler_free(&counting);
    return comm;
}
#define EXPECT_RAISED_ONCE(call, what)                                                                       \
    do {                                                                                                     \
        *mpix_test_raised() = 0;                                                                             \
        int raised_rc_ = (call);                                                                             \
        CHECK(raised_rc_ != MPI_SUCCESS && *mpix_test_raised() == 1,                                         \
              "%s: %s returned %d after %d calls of the handler, want an error raised once", what, #call,     \
              raised_rc_, *mpix_test_raised());                                                              \
    } while (0)

/* A call MPI would reject must return an error (with MPI_ERRORS_RETURN in force), not
 * crash and not succeed. */
#define EXPECT_ERROR(call, what)                                                                             \
    do {                                                                                                     \
        int expect_rc_ = (call);                                                                             \
        CHECK(expect_rc_ != MPI_SUCCESS, "%s: %s succeeded", what, #call);                                   \
        if (expect_rc_ != MPI_SUCCESS && getenv("MPIX_TEST_VERBOSE"))                                        \
            printf("%s: %s\n", what, mpix_test_error_string(expect_rc_));                                    \
    } while (0)

/* A call MPI would reject gives MPI's own error class for it, as MPI's call would. */
#define EXPECT_CLASS(call, error_class, what)                                                                \
    do {                                                                                                     \
        int class_rc_ = (call), class_ = MPI_SUCCESS;                                                        \
        if (class_rc_ != MPI_SUCCESS)                                                                        \
            MPI_Error_class(class_rc_, &class_);                                                             \
        CHECK(class_ == (error_class), "%s: %s gave class %d (%s), want %s", what, #call, class_,            \
              class_rc_ == MPI_SUCCESS ? "success" : mpix_test_error_string(class_rc_), #error_class);       \
    } while (0)

/* A performance variable of mpix (MPIX_Pvar_read); aborts the job if it is unknown. */
static inline long long mpix_test_pvar(const char *name, MPI_Comm comm)
{
    MPI_Count value = 0;
    if (MPIX_Pvar_read(name, comm, &value) != MPI_SUCCESS) {
        fprintf(stderr, "MPIX_Pvar_read(%s) failed\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return (long long)value;
}

/* MPI_Init, this rank and the job size, and MPI_ERRORS_RETURN on MPI_COMM_WORLD so that
 * tests see the codes that calls return. */
static inline void mpix_test_start(int *argc, char ***argv, int *rank, int *ranks)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, ranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* mpix_test_start under MPI_THREAD_MULTIPLE for a test written for @want_ranks ranks:
 * 1 when the test can run; 0 (with a failed check recorded) when MPI gave a lower
 * thread level or the job has another size. */
static inline int mpix_test_start_threads(int *argc, char ***argv, int *rank, int want_ranks)
{
    int provided, ranks;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread gave thread level %d, want MPI_THREAD_MULTIPLE",
          provided);
    CHECK(ranks == want_ranks, "run with %d ranks, not %d", want_ranks, ranks);
    return provided == MPI_THREAD_MULTIPLE && ranks == want_ranks;
}

/* Capture what this process writes to stderr between begin and end into @text. */
typedef struct mpix_test_capture {
    char path[64];
    int file, saved;
} mpix_test_capture;

static inline void mpix_test_capture_begin(mpix_test_capture *capture)
{
    snprintf(capture->path, sizeof capture->path, "/tmp/mpix-test-stderr-XXXXXX");
    capture->file = mkstemp(capture->path);
    fflush(stderr);
    capture->saved = dup(2);
    dup2(capture->file, 2);
}

static inline void mpix_test_capture_end(mpix_test_capture *capture, char *text, size_t size)
{
    fflush(stderr);
    dup2(capture->saved, 2);
    close(capture->saved);
    ssize_t length = pread(capture->file, text, size - 1, 0);
    text[length > 0 ? length : 0] = '\0';
    close(capture->file);
    unlink(capture->path);
}

/* A fresh directory under /tmp, the same path on every rank of @comm. */
static inline void mpix_test_tempdir(MPI_Comm comm, char *path, size_t size)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        snprintf(path, size, "/tmp/mpix-test-XXXXXX");
        if (!mkdtemp(path))
            path[0] = '\0';
    }
    MPI_Bcast(path, (int)size, MPI_CHAR, 0, comm);
}

static int mpix_test_remove_entry(const char *path, const struct stat *status, int type, struct FTW *walk)
{
    (void)status, (void)type, (void)walk;
    return remove(path);
}

/* Remove @path and everything below it (rank 0 of @comm, after everyone is done). */
static inline void mpix_test_remove_tree(MPI_Comm comm, const char *path)
{
    int rank;
    MPI_Barrier(comm);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && path[0])
        nftw(path, mpix_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Mappings mpix makes (files of the tests' directories, its memfds, its named anonymous
 * memory [anon:mpix-...]); MPI's own lazily made buffers and threads are not counted,
 * so a failed or freed allocation must leave the number unchanged. */
static inline int mpix_test_mapping_count(void)
{
    char line[512], permissions[8] = "", path[400];
    int count = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps)) {
        path[0] = '\0';
        if (sscanf(line, "%*s %7s %*s %*s %*s %399s", permissions, path) < 1)
            continue;
        if (strstr(path, "/tmp/mpix-test") || strstr(path, "mpix-shared-window") || strstr(path, "[anon:mpix-"))
            count++;
    }
    if (maps)
        fclose(maps);
    return count;
}

/* Read @length bytes of @path at @offset through the file, not through any mapping. */
static inline int mpix_test_read_file(const char *path, long long offset, void *buffer, size_t length)
{
    int fd = open(path, O_RDONLY);
    ssize_t got = fd >= 0 ? pread(fd, buffer, length, (off_t)offset) : -1;
    if (fd >= 0)
        close(fd);
    return got == (ssize_t)length ? 0 : -1;
}

/* Dirty page-cache pages of @path (cachestat, Linux 6.5+): what a sync has not yet put
 * on the device. -1 when the kernel cannot tell. */
static inline long long mpix_test_dirty_pages(const char *path)
{
    struct { unsigned long long offset, length; } range = { 0, 0 }; /* length 0: to the end */
    struct { unsigned long long cache, dirty, writeback, evicted, recently_evicted; } stat;
    int fd = open(path, O_RDONLY);
    long rc = fd >= 0 ? syscall(451 /* cachestat */, fd, &range, &stat, 0) : -1;
    if (fd >= 0)
        close(fd);
    return rc == 0 ? (long long)stat.dirty : -1;
}

static inline int mpix_test_file_exists(const char *path)
{
    struct stat status;
    return stat(path, &status) == 0;
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
