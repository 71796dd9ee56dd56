/* SPDX-License-Identifier: BSD-3-Clause */
/* Storage windows on separate nodes (run under tools/vcluster):
 * - a storage window over all nodes: each rank puts into its right neighbour, which for
 *   the last rank of a node lies on the next node; MPIX_Win_flush_storage completes the
 *   put and says that durability needs MPIX_Win_sync on the target (it cannot reach a
 *   mapping it does not share); after the targets' MPIX_Win_sync and MPIX_Win_free the
 *   files hold every put;
 * - a shared storage window over the communicator of all nodes is refused as an
 *   argument error, on every rank, through the communicator's handler;
 * - a shared storage window of each node: MPIX_Win_flush_storage to the node's next rank
 *   leaves no dirty page in the target's file. */
#include "mpix_test.h"

static int rank, ranks;
static char dir[256];

static MPI_Info storage_info(const char *name)
{
    MPI_Info info;
    char path[512];
    snprintf(path, sizeof path, "%s/%s-%d", dir, name, rank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_type", "storage");
    MPI_Info_set(info, "storage_alloc_filename", path);
    return info;
}

static void across_nodes(long long page)
{
    const long long count = 2 * page / (long long)sizeof(int);
    int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks, unsupported_class, error_class;
    int *local, value = 5000 + rank;
    MPI_Win win;
    MPI_Info info = storage_info("world");
    int rc = MPIX_Win_allocate(count * (MPI_Aint)sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &local, &win);
    MPI_Info_free(&info);
    CHECK(rc == MPI_SUCCESS, "storage window over the nodes: %s", mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long long i = 0; i < count; i++)
        local[i] = -1;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPIX_Query_error_class(MPIX_ERRKIND_UNSUPPORTED, &unsupported_class);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(&value, 1, MPI_INT, right, count - 1, 1, MPI_INT, win);
    rc = MPIX_Win_flush_storage(right, win);
    if (ranks > 1) {
        MPI_Error_class(rc, &error_class);
        CHECK(error_class == unsupported_class && strstr(mpix_test_error_string(rc), "needs MPIX_Win_sync on rank"),
              "flush_storage to rank %d: '%s'", right, mpix_test_error_string(rc));
    }
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    CHECK(local[count - 1] == 5000 + left, "the put of rank %d reads %d", left, local[count - 1]);
    MPI_Win_unlock(rank, win);
    rc = MPIX_Win_sync(win);
    CHECK(rc == MPI_SUCCESS, "MPIX_Win_sync: %s", mpix_test_error_string(rc));
    rc = MPIX_Win_free(&win);
    CHECK(rc == MPI_SUCCESS, "MPIX_Win_free: %s", mpix_test_error_string(rc));

    int on_file = 0;
    char path[512];
    snprintf(path, sizeof path, "%s/world-%d", dir, rank);
    CHECK(mpix_test_read_file(path, (count - 1) * (long long)sizeof(int), &on_file, sizeof on_file) == 0 &&
              on_file == 5000 + left,
          "%s holds %d at its end, rank %d put %d", path, on_file, left, 5000 + left);
}

static void shared_over_nodes(void)
{
    int *local = NULL, argument_class, error_class;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Info info = storage_info("shared-world");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPIX_Win_allocate_shared(4096, 1, info, MPI_COMM_WORLD, &local, &win);
    MPI_Info_free(&info);
    MPIX_Query_error_class(MPIX_ERRKIND_ARGUMENT, &argument_class);
    MPI_Error_class(rc, &error_class);
    CHECK(rc != MPI_SUCCESS && error_class == argument_class && strstr(mpix_test_error_string(rc), "span several nodes"),
          "shared storage window over %d ranks on several nodes: '%s'", ranks, mpix_test_error_string(rc));
    CHECK(win == MPI_WIN_NULL, "a refused window is not MPI_WIN_NULL");
}

static void shared_in_node(long long page)
{
    MPI_Comm node_comm;
    int node_rank, node_ranks, *local;
    MPI_Win win;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_rank(node_comm, &node_rank);
    MPI_Comm_size(node_comm, &node_ranks);
    MPI_Info info = storage_info("shared-node");
    int rc = MPIX_Win_allocate_shared(page, 1, info, node_comm, &local, &win);
    MPI_Info_free(&info);
    CHECK(rc == MPI_SUCCESS, "shared storage window of a node: %s", mpix_test_error_string(rc));
    if (rc != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int right = (node_rank + 1) % node_ranks, value = 7000 + rank, right_world;
    MPI_Group world_group, node_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node_comm, &node_group);
    MPI_Group_translate_ranks(node_group, 1, &right, world_group, &right_world);
    MPI_Barrier(node_comm);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(&value, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    rc = MPIX_Win_flush_storage(right, win);
    CHECK(rc == MPI_SUCCESS, "flush_storage in a node: %s", mpix_test_error_string(rc));
    char path[512];
    snprintf(path, sizeof path, "%s/shared-node-%d", dir, right_world);
    long long dirty = mpix_test_dirty_pages(path);
    CHECK(dirty <= 0, "%lld pages of %s dirty after flush_storage", dirty, path);
    MPI_Win_unlock(right, win);
    MPI_Barrier(node_comm);
    MPIX_Win_free(&win);
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    MPI_Comm_free(&node_comm);
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &rank, &ranks);
    long long page = sysconf(_SC_PAGESIZE);
    mpix_test_tempdir(MPI_COMM_WORLD, dir, sizeof dir);
    across_nodes(page);
    shared_over_nodes();
    shared_in_node(page);
    mpix_test_remove_tree(MPI_COMM_WORLD, dir);
    return mpix_test_finish("vcluster storage");
}
