/* SPDX-License-Identifier: BSD-3-Clause */
// A C++ program in the style of the hybrid MPI+MPI benchmarks: typed pointers, the
// Wrapper_* templates with explicit element types, both spellings the benchmarks use
// (Wrapper_Hy_bcast / Wrapper_Hy_Bcast, Wrapper_Param_Free), no casts beyond the
// benchmarks' own (void **) for the allocation. Every root of the broadcast, several
// operations and element types of the allreduce, the allgather, each checked against
// MPI's own collective, on MPI_COMM_WORLD and on a communicator in reverse order.
//
// The C++ bindings of the MPI are not used; the build links the C library only.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpix/hy_wrapper.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int failures;

#define EXPECT(condition, ...)                                                          \
    do {                                                                                \
        if (!(condition)) {                                                             \
            int rank_;                                                                  \
            MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                                      \
            std::fprintf(stderr, "[rank %d] %s:%d: ", rank_, __FILE__, __LINE__);       \
            std::fprintf(stderr, __VA_ARGS__);                                          \
            std::fputc('\n', stderr);                                                   \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

template <class T> struct mpi_type;
template <> struct mpi_type<double> { static MPI_Datatype get() { return MPI_DOUBLE; } };
template <> struct mpi_type<int> { static MPI_Datatype get() { return MPI_INT; } };
template <> struct mpi_type<long long> { static MPI_Datatype get() { return MPI_LONG_LONG; } };

// bench_hy_bcast's shape: the root fills its own slot, every process reads *r_buf.
static void bcast_every_root(MPI_Comm comm, int msg, bool lowercase_spelling)
{
    int rank, nprocs, sharedmem_rank;
    struct comm_package comm_handle;
    MPI_Win win;
    double *s_buf = NULL, *r_buf = NULL;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    int *bridge_transtable = (int *)std::malloc(sizeof(int) * nprocs);
    int *shmem_transtable = (int *)std::malloc(sizeof(int) * nprocs);
    Wrapper_Get_transtable(comm, &comm_handle, &shmem_transtable, &bridge_transtable);
    Wrapper_MPI_Sharedmemory_alloc(msg, sizeof(double), 0, &comm_handle, (void **)&s_buf, &win);
    MPI_Comm_rank(comm_handle.shmem_comm, &sharedmem_rank);

    // The tables are MPI_Group_translate_ranks' answer for this process's node.
    MPI_Group all, node;
    MPI_Comm_group(comm, &all);
    MPI_Comm_group(comm_handle.shmem_comm, &node);
    std::vector<int> ranks(nprocs), expected_node(nprocs);
    for (int i = 0; i < nprocs; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(all, nprocs, ranks.data(), node, expected_node.data());
    for (int i = 0; i < nprocs; i++)
        EXPECT(shmem_transtable[i] == expected_node[i], "shmem_transtable[%d] = %d, MPI says %d", i,
               shmem_transtable[i], expected_node[i]);
    MPI_Group_free(&all);
    MPI_Group_free(&node);

    std::vector<double> expected(msg);
    for (int round = 0; round < 2; round++)
        for (int root = 0; root < nprocs; root++) {
            if (rank == root)
                for (int i = 0; i < msg; i++)
                    s_buf[shmem_transtable[root] * msg + i] = root * 1000.0 + round * 100 + i;
            if (lowercase_spelling)
                Wrapper_Hy_bcast<double>(&r_buf, s_buf, msg, shmem_transtable, bridge_transtable, MPI_DOUBLE, root,
                                         &comm_handle);
            else
                Wrapper_Hy_Bcast<double>(&r_buf, s_buf, msg, shmem_transtable, bridge_transtable, MPI_DOUBLE, root,
                                         &comm_handle);
            if (rank == root)
                std::memcpy(expected.data(), s_buf + shmem_transtable[root] * msg, sizeof(double) * msg);
            MPI_Bcast(expected.data(), msg, MPI_DOUBLE, root, comm);
            EXPECT(std::memcmp(r_buf, expected.data(), sizeof(double) * msg) == 0,
                   "bcast of %d from root %d (round %d): r_buf[0] = %g, MPI_Bcast gives %g", msg, root, round,
                   r_buf[0], expected[0]);
            double *slot = shmem_transtable[root] != MPI_UNDEFINED ? s_buf + shmem_transtable[root] * msg
                                                                   : s_buf + comm_handle.shmemcomm_size * msg;
            EXPECT(r_buf == slot, "bcast from %d: r_buf at element %td, expected %td", root, r_buf - s_buf,
                   slot - s_buf);
            MPI_Barrier(comm); // every process has read before the next root writes
        }
    MPI_Win_free(&win);
    std::free(bridge_transtable);
    std::free(shmem_transtable);
    Wrapper_Comm_free(&comm_handle);
}

// bench_hy_allgather's shape.
static void allgather(MPI_Comm comm, int msg)
{
    int rank, nprocs, *sharedmem_sizeset;
    struct comm_package comm_handle;
    struct allgather_param param_handle;
    MPI_Win win;
    double *s_buf = NULL, *r_buf = NULL;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    Wrapper_ShmemcommSizeset_gather(&comm_handle, &sharedmem_sizeset);
    Wrapper_MPI_Sharedmemory_alloc(msg, sizeof(double), nprocs, &comm_handle, (void **)&r_buf, &win);
    Wrapper_Create_Allgather_param(msg, &comm_handle, sharedmem_sizeset, &param_handle);
    Wrapper_Get_localpointer(r_buf, rank, msg * sizeof(double), (void **)&s_buf);
    std::vector<double> mine(msg), expected((size_t)msg * nprocs);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < msg; i++)
            s_buf[i] = mine[i] = i + rank * msg + round * 0.5;
        Wrapper_Hy_Allgather<double>(r_buf, s_buf, msg, MPI_DOUBLE, &param_handle, &comm_handle);
        MPI_Allgather(mine.data(), msg, MPI_DOUBLE, expected.data(), msg, MPI_DOUBLE, comm);
        EXPECT(std::memcmp(r_buf, expected.data(), sizeof(double) * msg * nprocs) == 0,
               "allgather of %d, round %d differs", msg, round);
        MPI_Barrier(comm);
    }
    MPI_Win_free(&win);
    Wrapper_Param_Free(&comm_handle, &param_handle);
    Wrapper_ShmemcommSizeset_free(&comm_handle, sharedmem_sizeset);
    Wrapper_Comm_free(&comm_handle);
}

// bench_hy_allreduce's shape, for element type T and @op.
template <class T>
static void allreduce(MPI_Comm comm, int msg, MPI_Op op, const char *op_name)
{
    int rank, sharedmem_rank;
    struct comm_package comm_handle;
    MPI_Win win;
    T *s_buf = NULL, *r_buf = NULL, *result_addr = NULL;
    MPI_Datatype type = mpi_type<T>::get();
    MPI_Comm_rank(comm, &rank);
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    Wrapper_MPI_Sharedmemory_alloc(msg, sizeof(T), 0, &comm_handle, (void **)&r_buf, &win);
    MPI_Comm_rank(comm_handle.shmem_comm, &sharedmem_rank);
    Wrapper_Get_localpointer(r_buf, sharedmem_rank, msg * sizeof(T), (void **)&s_buf);
    std::vector<T> mine(msg), expected(msg);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < msg; i++)
            s_buf[i] = mine[i] = (T)((i + rank + round) % 5 + 1);
        Wrapper_Hy_Allreduce<T>(r_buf, &result_addr, sharedmem_rank, msg, type, op, &comm_handle, win);
        MPI_Allreduce(mine.data(), expected.data(), msg, type, op, comm);
        EXPECT(std::memcmp(result_addr, expected.data(), sizeof(T) * msg) == 0,
               "allreduce %s of %d, round %d: result[0] = %g, MPI_Allreduce gives %g", op_name, msg, round,
               (double)result_addr[0], (double)expected[0]);
        MPI_Barrier(comm);
    }
    MPI_Win_free(&win);
    Wrapper_Comm_free(&comm_handle);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, &reversed);
    MPI_Comm comms[2] = { MPI_COMM_WORLD, reversed };
    const int sizes[] = { 1, 8, 300, 1000 }; // 8 B to 8 KB: both allreduce paths
    for (int c = 0; c < 2; c++)
        for (int s = 0; s < 4; s++) {
            bcast_every_root(comms[c], sizes[s], s % 2 == 1);
            allgather(comms[c], sizes[s]);
            allreduce<double>(comms[c], sizes[s], MPI_SUM, "MPI_SUM");
            allreduce<double>(comms[c], sizes[s], MPI_MAX, "MPI_MAX");
            allreduce<int>(comms[c], sizes[s], MPI_PROD, "MPI_PROD");
            allreduce<long long>(comms[c], sizes[s], MPI_MIN, "MPI_MIN");
            allreduce<int>(comms[c], sizes[s], MPI_BXOR, "MPI_BXOR");
        }
    MPI_Comm_free(&reversed);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("hy_wrapper_cxx: %d ranks, %s\n", nprocs, total == 0 ? "all checks passed" : "FAILED");
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
