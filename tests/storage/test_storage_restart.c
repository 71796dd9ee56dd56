/* SPDX-License-Identifier: BSD-3-Clause */
/* Durability across process death: "write" fills storage windows (a private one, and a
 * shared combined one whose segments share one file), syncs, and every rank kills
 * itself with SIGKILL; "check", a new job, allocates the same windows on the same files
 * and offsets and must read back what was synced. Driven by restart.sh. */
#include <mpix/mpix.h>
#include "mpix_test.h"

#include <signal.h>

static int rank;

static long long value(int which, long long i) { return (long long)rank * 1000000007LL + which * 7919 + i; }

static MPI_Win open_window(const char *dir, int shared, long long **base, long long count)
{
    char path[512];
    MPI_Info info;
    MPI_Win win;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    if (shared) {
        snprintf(path, sizeof path, "%s/shared-checkpoint", dir);
        MPI_Info_set(info, "storage_alloc_factor", "0.5");
        MPI_Info_set(info, "storage_alloc_offset", "8192");
    } else {
        snprintf(path, sizeof path, "%s/checkpoint-%d", dir, rank);
    }
    MPI_Info_set(info, "storage_alloc_filename", path);
    long long bytes = count * (long long)sizeof(long long);
    int rc = shared ? MPIX_Win_allocate_shared(bytes, sizeof(long long), info, MPI_COMM_WORLD, base, &win)
                    : MPIX_Win_allocate(bytes, sizeof(long long), info, MPI_COMM_WORLD, base, &win);
    CHECK(rc == MPI_SUCCESS, "allocate %s: %s", path, mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Info_free(&info);
    return win;
}

int main(int argc, char **argv)
{
    long long *private_base, *shared_base, count = 3 * 4096 / 8 + 5, shared_count = 4 * 4096 / 8;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc != 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "check"))) {
        fprintf(stderr, "usage: %s write|check DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Win private_win = open_window(argv[2], 0, &private_base, count);
    MPI_Win shared_win = open_window(argv[2], 1, &shared_base, shared_count);
    /* The shared window keeps its first half in memory: only the second half is durable. */
    long long durable_from = shared_count / 2;

    if (strcmp(argv[1], "write") == 0) {
        for (long long i = 0; i < count; i++)
            private_base[i] = value(1, i);
        for (long long i = 0; i < shared_count; i++)
            shared_base[i] = value(2, i);
        CHECK(MPIX_Win_sync(private_win) == MPI_SUCCESS, "sync private");
        CHECK(MPIX_Win_sync(shared_win) == MPI_SUCCESS, "sync shared");
        MPI_Barrier(MPI_COMM_WORLD);
        raise(SIGKILL);
    }
    int wrong = 0;
    for (long long i = 0; i < count; i++)
        wrong += private_base[i] != value(1, i);
    CHECK(wrong == 0, "%d of %lld synced values of the private window were lost", wrong, count);
    wrong = 0;
    for (long long i = durable_from; i < shared_count; i++)
        wrong += shared_base[i] != value(2, i);
    CHECK(wrong == 0, "%d synced values of the shared window's storage part were lost", wrong);
    MPIX_Win_free(&private_win);
    MPIX_Win_free(&shared_win);
    return mpix_test_finish("storage_restart");
}
