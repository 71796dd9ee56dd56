/* SPDX-License-Identifier: BSD-3-Clause */
/* The three hybrid micro-benchmarks written against mpix/hy_wrapper.h in C (void
 * pointers where C++ programs use the templates); results compared with
 * MPI_Allgather/MPI_Bcast/MPI_Allreduce, the region layout checked against the header's
 * table, on MPI_COMM_WORLD and a reversed communicator (non-block placement with
 * virtual nodes); then the errors: a root out of range, NULL and invalid arguments
 * reach the communicator's error handler on every process and nothing hangs. */
#include <mpix/mpix.h>
#include <mpix/hy_wrapper.h>
#include "mpix_test.h"

static void allgather_benchmark(MPI_Comm comm, int msg, const char *label)
{
    struct comm_package comm_handle;
    struct allgather_param param_handle;
    MPI_Win win;
    double *s_buf, *r_buf;
    int nprocs, *sharedmem_sizeset, rank;
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(comm, &rank);
    Wrapper_MPI_Sharedmemory_alloc(msg, sizeof(double), nprocs, &comm_handle, (void **)&r_buf, &win);
    Wrapper_ShmemcommSizeset_gather(&comm_handle, &sharedmem_sizeset);
    Wrapper_Create_Allgather_param(msg, &comm_handle, sharedmem_sizeset, &param_handle);
    Wrapper_Get_localpointer(r_buf, rank, msg * sizeof(double), (void **)&s_buf);
    double *expected = malloc(sizeof(double) * msg * nprocs), mine[64];
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < msg; i++)
            s_buf[i] = mine[i] = rank * 1000 + round * 10 + i;
        Wrapper_Hy_Allgather(r_buf, s_buf, msg, MPI_DOUBLE, &param_handle, &comm_handle);
        MPI_Allgather(mine, msg, MPI_DOUBLE, expected, msg, MPI_DOUBLE, comm);
        CHECK(memcmp(expected, r_buf, sizeof(double) * msg * nprocs) == 0, "%s: allgather round %d differs", label,
              round);
        MPI_Barrier(comm); /* everyone has read before the next round writes */
    }
    int total = 0;
    for (int i = 0; i < comm_handle.bridgecomm_size; i++)
        total += sharedmem_sizeset[i];
    CHECK(total == nprocs && param_handle.recvcounts[0] == msg * sharedmem_sizeset[0], "%s: sizes", label);
    free(expected);
    MPI_Win_free(&win);
    Wrapper_Param_Free(&comm_handle, &param_handle); /* the other spelling */
    CHECK(param_handle.recvcounts == NULL && param_handle.displs == NULL, "%s: Wrapper_Param_Free", label);
    Wrapper_ShmemcommSizeset_free(&comm_handle, sharedmem_sizeset);
    Wrapper_Comm_free(&comm_handle);
    CHECK(comm_handle.shmem_comm == MPI_COMM_NULL, "%s: Wrapper_Comm_free", label);
}

static void bcast_benchmark(MPI_Comm comm, int msg, const char *label)
{
    struct comm_package comm_handle;
    MPI_Win win;
    double *start_addr, *bcast_addr;
    int nprocs, rank, sharedmem_rank;
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(comm_handle.shmem_comm, &sharedmem_rank);
    Wrapper_MPI_Sharedmemory_alloc(msg, sizeof(double), 0, &comm_handle, (void **)&start_addr, &win);
    int *shmem_transtable = malloc(nprocs * sizeof(int)), *bridge_transtable = malloc(nprocs * sizeof(int));
    Wrapper_Get_transtable(comm, &comm_handle, &shmem_transtable, &bridge_transtable);
    CHECK(shmem_transtable[rank] == sharedmem_rank, "%s: transtable says %d, node rank %d", label,
          shmem_transtable[rank], sharedmem_rank);
    double *expected = malloc(sizeof(double) * msg);
    for (int root = 0; root < nprocs; root++) {
        /* The root writes its own slot; its node reads it there, other nodes at slot n. */
        int on_root_node = shmem_transtable[root] != MPI_UNDEFINED;
        double *root_slot = start_addr + (on_root_node ? shmem_transtable[root] : 0) * msg;
        if (rank == root)
            for (int i = 0; i < msg; i++)
                root_slot[i] = root * 100.0 + i;
        for (int i = 0; i < msg; i++)
            expected[i] = root * 100.0 + i;
        if (root % 2) /* the other spelling, as the benchmarks have it */
            Wrapper_Hy_bcast((void **)&bcast_addr, start_addr, msg, shmem_transtable, bridge_transtable, MPI_DOUBLE,
                             root, &comm_handle);
        else
            Wrapper_Hy_Bcast((void **)&bcast_addr, start_addr, msg, shmem_transtable, bridge_transtable, MPI_DOUBLE,
                             root, &comm_handle);
        double *where = on_root_node ? root_slot : start_addr + comm_handle.shmemcomm_size * msg;
        CHECK(bcast_addr == where, "%s: bcast from %d at element %td, expected %td", label, root,
              bcast_addr - start_addr, where - start_addr);
        CHECK(memcmp(bcast_addr, expected, sizeof(double) * msg) == 0, "%s: bcast from %d differs", label, root);
        MPI_Barrier(comm);
    }
    free(expected);
    free(shmem_transtable);
    free(bridge_transtable);
    MPI_Win_free(&win);
    Wrapper_Comm_free(&comm_handle);
}

/* A datatype built and freed every round, as applications do: a freed handle may come
 * back for a layout of another size, and the layer must not trust what it learnt of it. */
static void bcast_rebuilt_types(MPI_Comm comm)
{
    struct comm_package comm_handle;
    MPI_Win win;
    double *start_addr, *bcast_addr;
    int nprocs, rank;
    enum { MSG = 5, MOST = 3 };
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(comm, &rank);
    /* The region for the widest type: MSG elements of MOST doubles. */
    Wrapper_MPI_Sharedmemory_alloc(MSG * MOST, sizeof(double), 0, &comm_handle, (void **)&start_addr, &win);
    int *shmem_transtable = malloc(nprocs * sizeof(int)), *bridge_transtable = malloc(nprocs * sizeof(int));
    Wrapper_Get_transtable(comm, &comm_handle, &shmem_transtable, &bridge_transtable);
    for (int round = 0; round < 12; round++) {
        int width = 1 + round % MOST, root = round % nprocs;
        MPI_Datatype type;
        MPI_Type_contiguous(width, MPI_DOUBLE, &type);
        MPI_Type_commit(&type);
        /* Slots are MSG elements of this round's type apart. */
        if (rank == root)
            for (int i = 0; i < MSG * width; i++)
                start_addr[shmem_transtable[root] * MSG * width + i] = round * 100 + i;
        Wrapper_Hy_Bcast((void **)&bcast_addr, start_addr, MSG, shmem_transtable, bridge_transtable, type, root,
                         &comm_handle);
        int wrong = 0;
        for (int i = 0; i < MSG * width; i++)
            wrong += bcast_addr[i] != round * 100 + i;
        CHECK(wrong == 0, "rebuilt types, round %d (width %d, root %d): %d wrong", round, width, root, wrong);
        MPI_Barrier(comm);
        MPI_Type_free(&type);
    }
    free(shmem_transtable);
    free(bridge_transtable);
    MPI_Win_free(&win);
    Wrapper_Comm_free(&comm_handle);
}

/* Counts what reaches the node communicator's handler. */
static int handler_calls, handler_class;
static void record_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

/* Each bad call reaches the handler once, on every process, and returns. */
static void bad_arguments(MPI_Comm comm)
{
    struct comm_package comm_handle;
    MPI_Errhandler handler;
    MPI_Win win;
    double *start_addr, *result;
    int nprocs, sharedmem_rank;
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(comm_handle.shmem_comm, &sharedmem_rank);
    Wrapper_MPI_Sharedmemory_alloc(4, sizeof(double), 0, &comm_handle, (void **)&start_addr, &win);
    int *shmem_transtable = malloc(nprocs * sizeof(int)), *bridge_transtable = malloc(nprocs * sizeof(int));
    Wrapper_Get_transtable(comm, &comm_handle, &shmem_transtable, &bridge_transtable);
    MPI_Comm_create_errhandler(record_error, &handler);
    MPI_Comm_set_errhandler(comm_handle.shmem_comm, handler);
    int argument_class;
    MPIX_Query_error_class(MPIX_ERRKIND_ARGUMENT, &argument_class);
    struct { const char *what; int root; } roots[] = { { "root -1", -1 }, { "root = size", nprocs } };
    for (int i = 0; i < 2; i++) {
        handler_calls = 0;
        Wrapper_Hy_Bcast((void **)&result, start_addr, 4, shmem_transtable, bridge_transtable, MPI_DOUBLE,
                         roots[i].root, &comm_handle);
        CHECK(handler_calls == 1 && handler_class == argument_class, "bcast %s: %d handler calls, class %d",
              roots[i].what, handler_calls, handler_class);
    }
    handler_calls = 0;
    Wrapper_Hy_Bcast(NULL, start_addr, 4, NULL, NULL, MPI_DOUBLE, 0, &comm_handle);
    Wrapper_Hy_Allreduce(NULL, (void **)&result, sharedmem_rank, 4, MPI_DOUBLE, MPI_SUM, &comm_handle, win);
    Wrapper_Hy_Allreduce(start_addr, (void **)&result, sharedmem_rank, -1, MPI_DOUBLE, MPI_SUM, &comm_handle, win);
    Wrapper_Hy_Allreduce(start_addr, (void **)&result, sharedmem_rank, 4, MPI_DATATYPE_NULL, MPI_SUM, &comm_handle,
                         win);
    Wrapper_Hy_Allreduce(start_addr, (void **)&result, sharedmem_rank, 4, MPI_DOUBLE, MPI_OP_NULL, &comm_handle, win);
    Wrapper_Hy_Allgather(NULL, NULL, 4, MPI_DOUBLE, NULL, &comm_handle);
    CHECK(handler_calls == 6, "6 bad calls reached the handler %d times", handler_calls);
    /* The layer still works after the errors. */
    for (int i = 0; i < 4; i++)
            start_addr[sharedmem_rank * 4 + i] = 1.0;
    Wrapper_Hy_Allreduce(start_addr, (void **)&result, sharedmem_rank, 4, MPI_DOUBLE, MPI_SUM, &comm_handle, win);
    CHECK(result[0] == nprocs && result[3] == nprocs, "allreduce after the errors: %g, want %d", result[0], nprocs);
    MPI_Barrier(comm);
    MPI_Comm_set_errhandler(comm_handle.shmem_comm, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&handler);
    free(shmem_transtable);
    free(bridge_transtable);
    MPI_Win_free(&win);
    Wrapper_Comm_free(&comm_handle);

    /* Setup with a NULL handle is an error on every process, never a hang. */
    MPI_Comm_create_errhandler(record_error, &handler);
    MPI_Comm_set_errhandler(comm, handler);
    handler_calls = 0;
    Wrapper_MPI_ShmemBridgeComm_create(comm, NULL);
    CHECK(handler_calls == 1, "create with a NULL comm_handle: %d handler calls", handler_calls);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&handler);
}

static void allreduce_benchmark(MPI_Comm comm, int msg, const char *label)
{
    struct comm_package comm_handle;
    MPI_Win win;
    double *start_addr, *local, *result_addr;
    int rank, sharedmem_rank;
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(comm_handle.shmem_comm, &sharedmem_rank);
    Wrapper_MPI_Sharedmemory_alloc(msg, sizeof(double), 0, &comm_handle, (void **)&start_addr, &win);
    Wrapper_Get_localpointer(start_addr, sharedmem_rank, msg * sizeof(double), (void **)&local);
    double *mine = malloc(sizeof(double) * msg), *expected = malloc(sizeof(double) * msg);
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < msg; i++)
            local[i] = mine[i] = (rank + i + round) % 9;
        Wrapper_Hy_Allreduce(start_addr, (void **)&result_addr, sharedmem_rank, msg, MPI_DOUBLE, MPI_SUM,
                             &comm_handle, win);
        MPI_Allreduce(mine, expected, msg, MPI_DOUBLE, MPI_SUM, comm);
        CHECK(memcmp(expected, result_addr, sizeof(double) * msg) == 0, "%s: allreduce round %d differs", label,
              round);
        /* The contract: node-reduced at shmemcomm_size*msize, global one further on. */
        double *contract = start_addr + (comm_handle.shmemcomm_size + (comm_handle.bridgecomm_size > 1)) * msg;
        CHECK(result_addr == contract, "%s: result at %td elements, the contract says %td", label,
              result_addr - start_addr, contract - start_addr);
        MPI_Barrier(comm);
    }
    free(mine);
    free(expected);
    MPI_Win_free(&win);
    Wrapper_Comm_free(&comm_handle);
}

/* Allreduces back to back, as a solver's loop calls them: each process writes its next
 * input into its slot as soon as a call returns and checks the result at once, with no
 * other synchronization between calls. Two regions on one handle, one of a small vector
 * (no barrier on one node) and one above the small-vector limit, take turns. */
static void allreduce_back_to_back(MPI_Comm comm, const char *label)
{
    enum { REGIONS = 2, ROUNDS = 600 };
    const int counts[REGIONS] = { 3, 512 };
    struct comm_package comm_handle;
    MPI_Win win[REGIONS];
    double *start_addr[REGIONS], *local[REGIONS], *result_addr;
    int rank, size, sharedmem_rank, wrong = 0, first_wrong = -1;
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm_handle.shmem_comm, &sharedmem_rank);
    for (int r = 0; r < REGIONS; r++) {
        Wrapper_MPI_Sharedmemory_alloc(counts[r], sizeof(double), 0, &comm_handle, (void **)&start_addr[r], &win[r]);
        Wrapper_Get_localpointer(start_addr[r], sharedmem_rank, counts[r] * sizeof(double), (void **)&local[r]);
    }
    for (int round = 0; round < ROUNDS; round++) {
        int r = round % 3 == 2, msg = counts[r]; /* two small calls, then a large one */
        for (int i = 0; i < msg; i++)
            local[r][i] = (rank * 3 + i + round) % 11;
        Wrapper_Hy_Allreduce(start_addr[r], (void **)&result_addr, sharedmem_rank, msg, MPI_DOUBLE, MPI_SUM,
                             &comm_handle, win[r]);
        for (int i = 0; i < msg; i++) {
            double expected = 0;
            for (int q = 0; q < size; q++)
                expected += (q * 3 + i + round) % 11;
            if (result_addr[i] != expected && wrong++ == 0)
                first_wrong = round;
        }
    }
    CHECK(wrong == 0, "%s: %d wrong elements in %d back-to-back allreduces, first in round %d", label, wrong, ROUNDS,
          first_wrong);
    for (int r = 0; r < REGIONS; r++)
        MPI_Win_free(&win[r]);
    Wrapper_Comm_free(&comm_handle);
}

/* A user operation: the elementwise maximum of doubles, commutative. */
static void user_max(void *in, void *inout, int *length, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *length; i++)
        if (((double *)in)[i] > ((double *)inout)[i])
            ((double *)inout)[i] = ((double *)in)[i];
}

/* Small allreduces back to back on one handle whose datatype, count and operation change
 * from call to call (a repeated call reuses the last one's set-up): sums and maxima of
 * doubles, of 1 and 3 elements, sums of 2 ints, and a user operation, each result
 * checked against the inputs every process wrote. Each count and type has a region of
 * its own: in one region the slots of a longer vector would cover the last call's
 * result, which a slower process may still be reading. */
static void allreduce_alternating(MPI_Comm comm, const char *label)
{
    enum { ROUNDS = 400, REGIONS = 3 };
    struct comm_package comm_handle;
    MPI_Win win[REGIONS];
    MPI_Op user;
    char *start_addr[REGIONS], *local;
    void *result_addr;
    int rank, size, sharedmem_rank, wrong = 0, first_wrong = -1;
    MPI_Op_create(user_max, 1, &user);
    Wrapper_MPI_ShmemBridgeComm_create(comm, &comm_handle);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm_handle.shmem_comm, &sharedmem_rank);
    const int counts[REGIONS] = { 1, 3, 2 }, sizes[REGIONS] = { sizeof(double), sizeof(double), sizeof(int) };
    for (int r = 0; r < REGIONS; r++)
        Wrapper_MPI_Sharedmemory_alloc(counts[r], sizes[r], 0, &comm_handle, (void **)&start_addr[r], &win[r]);
    for (int round = 0; round < ROUNDS; round++) {
        int step = round % 7; /* runs of equal calls, and changes of every kind */
        int r = step == 2 || step == 3 ? 1 : step == 4 ? 2 : 0, count = counts[r], is_int = r == 2;
        MPI_Op op = step == 1 ? MPI_MAX : step == 5 ? user : MPI_SUM;
        size_t vector = (size_t)count * (is_int ? sizeof(int) : sizeof(double));
        Wrapper_Get_localpointer(start_addr[r], sharedmem_rank, (int)vector, (void **)&local);
        for (int i = 0; i < count; i++)
            if (is_int)
                ((int *)local)[i] = (rank * 5 + i + round) % 13;
            else
                ((double *)local)[i] = (rank * 3 + i + round) % 11;
        Wrapper_Hy_Allreduce(start_addr[r], &result_addr, sharedmem_rank, count, is_int ? MPI_INT : MPI_DOUBLE, op,
                             &comm_handle, win[r]);
        for (int i = 0; i < count; i++) {
            double expected = 0, got = is_int ? ((int *)result_addr)[i] : ((double *)result_addr)[i];
            for (int q = 0; q < size; q++) {
                double input = is_int ? (q * 5 + i + round) % 13 : (q * 3 + i + round) % 11;
                expected = op == MPI_SUM ? expected + input : (q == 0 || input > expected ? input : expected);
            }
            if (got != expected && wrong++ == 0)
                first_wrong = round;
        }
    }
    CHECK(wrong == 0, "%s: %d wrong elements in %d alternating allreduces, first in round %d", label, wrong, ROUNDS,
          first_wrong);
    for (int r = 0; r < REGIONS; r++)
        MPI_Win_free(&win[r]);
    Wrapper_Comm_free(&comm_handle);
    MPI_Op_free(&user);
}

int main(int argc, char **argv)
{
    int rank, size;
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    const int sizes[] = { 1, 7, 33 };
    for (int s = 0; s < 3; s++) {
        allgather_benchmark(MPI_COMM_WORLD, sizes[s], "world");
        allgather_benchmark(reversed, sizes[s], "reversed");
        bcast_benchmark(MPI_COMM_WORLD, sizes[s], "world");
        bcast_benchmark(reversed, sizes[s], "reversed");
        allreduce_benchmark(MPI_COMM_WORLD, sizes[s], "world");
        allreduce_benchmark(reversed, sizes[s], "reversed");
    }
    allreduce_back_to_back(MPI_COMM_WORLD, "world");
    allreduce_back_to_back(reversed, "reversed");
    allreduce_alternating(MPI_COMM_WORLD, "world");
    allreduce_alternating(reversed, "reversed");
    bcast_rebuilt_types(MPI_COMM_WORLD);
    bcast_rebuilt_types(reversed);
    bad_arguments(MPI_COMM_WORLD);
    MPI_Comm_free(&reversed);
    return mpix_test_finish("hy_wrapper");
}
