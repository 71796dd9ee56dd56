/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program that knows nothing of mpix, written the way programs for MPI storage
 * windows pass their hints: MPI_Win_allocate with alloc_type=storage and a file per
 * rank, file_perm printed with %d, MPI-IO's access_style and striping hints; every rank
 * puts into its right neighbour's window, syncs, and frees it. A dynamic window gets
 * storage memory from MPI_Alloc_mem and attaches it. Then small allocations share files
 * at byte offsets that are not page multiples, as those programs place them: two
 * MPI_Alloc_mem of a few ints back to back in one file per rank, and one window whose
 * ranks each take their own four ints of one common file. After the run each rank reads
 * its files back. Last, wrong arguments to those calls must give MPI's own error classes.
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
#include <unistd.h>

enum { COUNT = 1 << 16 };   /* 256 KiB of ints */

static int failures;
#define EXPECT(condition, ...) \
    do { if (!(condition)) { failures++; fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static MPI_Info storage_info(const char *path, long offset)
{
    MPI_Info info;
    char mode[16], offset_text[32];
    snprintf(mode, sizeof mode, "%d", S_IRUSR | S_IWUSR);
    snprintf(offset_text, sizeof offset_text, "%ld", offset);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    MPI_Info_set(info, "storage_alloc_offset", offset_text);
    MPI_Info_set(info, "storage_alloc_unlink", "false");
    MPI_Info_set(info, "access_style", "write_mostly");
    MPI_Info_set(info, "file_perm", mode);
    MPI_Info_set(info, "striping_factor", "2");
    MPI_Info_set(info, "striping_unit", "65536");
    return info;
}

static int value_at(int rank, int i) { return rank * 1000003 + i; }

/* The file holds @count ints from int @first on: value_at(rank) except the first, which
 * the left neighbour put. */
static void check_ints(const char *path, long first, int count, int rank, int left, int expect_file)
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
    int *data = calloc(count, sizeof(int)), same = 1;
    EXPECT(fseek(file, first * (long)sizeof(int), SEEK_SET) == 0 &&
           fread(data, sizeof(int), count, file) == (size_t)count, "%s is short of ints %ld to %ld", path, first,
           first + count);
    for (int i = 1; i < count; i++)
        same &= data[i] == value_at(rank, i);
    EXPECT(same, "%s does not hold rank %d's values at ints %ld to %ld", path, rank, first, first + count);
    EXPECT(data[0] == -left - 1, "%s: the neighbour's put at int %ld is %d, not %d", path, first, data[0],
           -left - 1);
    free(data);
    fclose(file);
}

static void exchange(MPI_Win win, int *base, int count, int rank, int ranks, MPI_Aint target_disp)
{
    for (int i = 1; i < count; i++)
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

/* Small windows side by side inside one page of a file: each is its own bytes there. */
static void small_neighbours(const char *dir, int rank, int ranks, int hinted, int expect_file)
{
    const int small = ranks;   /* ints per allocation, as small as such programs make them */
    const long bytes = (long)sizeof(int) * small;
    int left = (rank + ranks - 1) % ranks;
    char pair_path[512], common_path[512];
    snprintf(pair_path, sizeof pair_path, "%s/small-%d", dir, rank);
    snprintf(common_path, sizeof common_path, "%s/small-common", dir);

    /* Two MPI_Alloc_mem in one file, the second right after the first. */
    int *halves[2];
    MPI_Win win;
    MPI_Aint mine[2], disps[2][ranks];
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int h = 0; h < 2; h++) {
        MPI_Info info = hinted ? storage_info(pair_path, h * bytes) : MPI_INFO_NULL;
        EXPECT(MPI_Alloc_mem(bytes, info, &halves[h]) == MPI_SUCCESS, "MPI_Alloc_mem of %ld bytes at offset %ld",
               bytes, h * bytes);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        MPI_Win_attach(win, halves[h], bytes);
        MPI_Get_address(halves[h], &mine[h]);
        MPI_Allgather(&mine[h], 1, MPI_AINT, disps[h], 1, MPI_AINT, MPI_COMM_WORLD);
    }
    for (int h = 0; h < 2; h++)
        exchange(win, halves[h], small, rank, ranks, disps[h][(rank + 1) % ranks]);
    for (int h = 0; h < 2; h++) {
        MPI_Win_detach(win, halves[h]);
        MPI_Free_mem(halves[h]);
    }
    MPI_Win_free(&win);
    for (int h = 0; h < 2; h++)
        check_ints(pair_path, h * small, small, rank, left, expect_file);

    /* One window, every rank's part at its own offset of one common file: 16 bytes each,
     * as some MPIs keep a window's base only where it is a multiple of 16. */
    const int part = 4;
    MPI_Info info = hinted ? storage_info(common_path, rank * part * (long)sizeof(int)) : MPI_INFO_NULL;
    int *base = NULL;
    EXPECT(MPI_Win_allocate(part * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS,
           "MPI_Win_allocate of %d ints at int %d of a common file", part, rank * part);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    exchange(win, base, part, rank, ranks, 0);
    MPI_Win_free(&win);
    MPI_Barrier(MPI_COMM_WORLD);   /* every part written back before any rank reads */
    if (hinted)   /* an unhinted rank has no part there, but others may have made the file */
        check_ints(common_path, (long)rank * part, part, rank, left, expect_file);
}

static void expect_class(int code, int want, const char *what)
{
    int error_class = MPI_SUCCESS;
    if (code != MPI_SUCCESS)
        MPI_Error_class(code, &error_class);
    EXPECT(error_class == want, "%s: class %d, want %d", what, error_class, want);
}

/* Wrong arguments to the storage calls get MPI's own error classes, with the storage
 * hints as without them; no file is made for a window MPI refuses. */
static void wrong_arguments(const char *dir, int rank, int hinted, int all_hinted)
{
    char path[512];
    snprintf(path, sizeof path, "%s/refused-%d", dir, rank);
    MPI_Info info = hinted ? storage_info(path, 0) : MPI_INFO_NULL;
    int *base = NULL;
    MPI_Win win;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect_class(MPI_Win_allocate(-8, sizeof(int), info, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE,
                 "MPI_Win_allocate of -8 bytes");
    expect_class(MPI_Win_allocate(64, 0, info, MPI_COMM_WORLD, &base, &win), MPI_ERR_DISP,
                 "MPI_Win_allocate with disp_unit 0");
    expect_class(MPI_Win_allocate_shared(-8, sizeof(int), info, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE,
                 "MPI_Win_allocate_shared of -8 bytes");
    expect_class(MPI_Win_allocate(64, sizeof(int), info, MPI_COMM_NULL, &base, &win), MPI_ERR_COMM,
                 "MPI_Win_allocate on MPI_COMM_NULL");
    expect_class(MPI_Alloc_mem(-8, info, &base), MPI_ERR_ARG, "MPI_Alloc_mem of -8 bytes");
    EXPECT(access(path, F_OK) != 0, "%s exists after calls MPI refused", path);
    /* A shared window: one file for the node, where every rank has the hints. */
    char shared_path[512];
    snprintf(shared_path, sizeof shared_path, "%s/refused-shared", dir);
    MPI_Info shared_info = all_hinted ? storage_info(shared_path, 0) : MPI_INFO_NULL;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    EXPECT(MPI_Win_allocate_shared(64, sizeof(int), shared_info, node, &base, &win) == MPI_SUCCESS,
           "MPI_Win_allocate_shared");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Aint bytes;
    int unit;
    expect_class(MPI_Win_shared_query(win, 99, &bytes, &unit, &base), MPI_ERR_RANK, "MPI_Win_shared_query of rank 99");
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    if (shared_info != MPI_INFO_NULL)
        MPI_Info_free(&shared_info);
    if (rank == 0)
        unlink(shared_path);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
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
    MPI_Info info = hinted ? storage_info(window_path, 0) : MPI_INFO_NULL;
    int *base = NULL;
    MPI_Win win;
    EXPECT(MPI_Win_allocate(sizeof(int) * COUNT, sizeof(int), info, MPI_COMM_WORLD, &base, &win) == MPI_SUCCESS,
           "MPI_Win_allocate");
    exchange(win, base, COUNT, rank, ranks, 0);
    MPI_Win_free(&win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    check_ints(window_path, 0, COUNT, rank, left, expect_file);

    /* A dynamic window on MPI_Alloc_mem memory (hints only on MPI_Alloc_mem). */
    if (use_hints) {
        info = hinted ? storage_info(dynamic_path, 0) : MPI_INFO_NULL;
        EXPECT(MPI_Alloc_mem(sizeof(int) * COUNT, info, &base) == MPI_SUCCESS, "MPI_Alloc_mem");
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, base, sizeof(int) * COUNT);
        MPI_Aint mine, disps[ranks];
        MPI_Get_address(base, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, disps, 1, MPI_AINT, MPI_COMM_WORLD);
        exchange(win, base, COUNT, rank, ranks, disps[(rank + 1) % ranks]);
        MPI_Win_detach(win, base);
        MPI_Win_free(&win);
        MPI_Free_mem(base);
        check_ints(dynamic_path, 0, COUNT, rank, left, expect_file);
        small_neighbours(dir, rank, ranks, hinted, strcmp(argv[3], "files") == 0 && hinted);
    }
    wrong_arguments(dir, rank, hinted, use_hints && !odd_only);

    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("plain_storage %s: %s (%d failed checks)\n", argv[1], all_failures ? "FAIL" : "PASS", all_failures);
    MPI_Finalize();
    return all_failures != 0;
}
