/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program that knows nothing of mpix, written the way programs for MPI storage
 * windows pass their hints: MPI_Win_allocate with alloc_type=storage and a file per
 * rank, file_perm printed with %d, MPI-IO's access_style and striping hints; every rank
 * puts into its right neighbour's window, syncs, and frees it. A dynamic window gets
 * storage memory from MPI_Alloc_mem and attaches it. After the run each rank reads its
 * files back.
 *
 * Usage: plain_storage MODE DIR EXPECT
 *   MODE hints:       the hints in the info arguments (files DIR/win-RANK, DIR/dyn-RANK)
 *   MODE odd:         the hints on odd ranks only, MPI_INFO_NULL on even ones, to the same
 *                     collective calls, as storage-window programs do: only odd ranks
 *                     get files
 *   MODE environment: MPI_INFO_NULL everywhere; MPIX_STORAGE_DEFAULT_HINTS is to name
 *                     DIR/env-%r-%w (so the windows are DIR/env-RANK-0 and -1)
 *   EXPECT files: the files must hold the data; none: no file may appear (plain MPI). */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { COUNT = 1 << 16 };   /* 256 KiB of ints */

static int failures;
#define EXPECT(condition, ...) \
    do { if (!(condition)) { failures++; fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static MPI_Info storage_info(const char *path)
{
    MPI_Info info;
    char mode[16];
    snprintf(mode, sizeof mode, "%d", S_IRUSR | S_IWUSR);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_offset", "0");
    MPI_Info_set(info, "storage_alloc_unlink", "false");
    MPI_Info_set(info, "access_style", "write_mostly");
    MPI_Info_set(info, "file_perm", mode);
    MPI_Info_set(info, "striping_factor", "2");
    MPI_Info_set(info, "striping_unit", "65536");
    return info;
}

static int value_at(int rank, int i) { return rank * 1000003 + i; }

/* The file holds COUNT ints: value_at(rank) except index 0, which the left neighbour put. */
static void check_file(const char *path, int rank, int left, int expect_file)
{
    FILE *file = fopen(path, "rb");
    if (!expect_file) {
        EXPECT(!file, "%s exists, but the run was to use plain MPI", path);
        if (file)
            fclose(file);
        return;
    }
    EXPECT(file, "%s is missing: the window was not a storage window", path);
    if (!file)
        return;
    int *data = malloc(sizeof(int) * COUNT), same = 1;
    EXPECT(fread(data, sizeof(int), COUNT, file) == COUNT, "%s is short", path);
    for (int i = 1; i < COUNT; i++)
        same &= data[i] == value_at(rank, i);
    EXPECT(same, "%s does not hold rank %d's values", path, rank);
    EXPECT(data[0] == -left - 1, "%s: the neighbour's put is %d, not %d", path, data[0], -left - 1);
    free(data);
    fclose(file);
}

static void exchange(MPI_Win win, int *base, int rank, int ranks, MPI_Aint target_disp)
{
    for (int i = 1; i < COUNT; i++)
        base[i] = value_at(rank, i);
    int mine = -rank - 1;
    MPI_Win_lock_all(0, win);
    MPI_Put(&mine, 1, MPI_INT, (rank + 1) % ranks, target_disp, 1, MPI_INT, win);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    MPI_Win_unlock_all(win);
}

int main(int argc, char **argv)
{
    int rank, ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc != 4) {
        fprintf(stderr, "usage: %s hints|odd|environment DIR files|none\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int odd_only = strcmp(argv[1], "odd") == 0, use_hints = odd_only || strcmp(argv[1], "hints") == 0;
    int hinted = use_hints && (!odd_only || rank % 2 == 1);
    int expect_file = strcmp(argv[3], "files") == 0 && (hinted || !use_hints);
    const char *dir = argv[2];
    int left = (rank + ranks - 1) % ranks;
    char window_path[512], dynamic_path[512];
    snprintf(window_path, sizeof window_path, use_hints ? "%s/win-%d" : "%s/env-%d-0", dir, rank);
    snprintf(dynamic_path, sizeof dynamic_path, "%s/dyn-%d", dir, rank);

    /* An allocated window. */
    MPI_Info info = hinted ? storage_info(window_path) : MPI_INFO_NULL;
    int *base = NULL;
    MPI_Win win;
    EXPECT(MPI_Win_allocate(sizeof(int) * COUNT, sizeof(int), info, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS,
           "MPI_Win_allocate");
    exchange(win, base, rank, ranks, 0);
    MPI_Win_free(&win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    check_file(window_path, rank, left, expect_file);

    /* A dynamic window on MPI_Alloc_mem memory (hints only on MPI_Alloc_mem). */
    if (use_hints) {
        info = hinted ? storage_info(dynamic_path) : MPI_INFO_NULL;
        EXPECT(MPI_Alloc_mem(sizeof(int) * COUNT, info, &base) == MPI_SUCCESS, "MPI_Alloc_mem");
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, base, sizeof(int) * COUNT);
        MPI_Aint mine, disps[ranks];
        MPI_Get_address(base, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, disps, 1, MPI_AINT, MPI_COMM_WORLD);
        exchange(win, base, rank, ranks, disps[(rank + 1) % ranks]);
        MPI_Win_detach(win, base);
        MPI_Win_free(&win);
        MPI_Free_mem(base);
        check_file(dynamic_path, rank, left, expect_file);
    }

    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_storage %s: %s (%d failed checks)\n", argv[1], all_failures ? "FAIL" : "PASS", all_failures);
    MPI_Finalize();
    return all_failures != 0;
}
