/* SPDX-License-Identifier: BSD-3-Clause */
/* The paper-compatible Wrapper_* functions, on the hybrid communicator and the spin
 * pieces (spin/control.h). The paper's struct comm_package is fixed, so what the layer
 * needs besides it (the hybrid communicator, a small shared window to synchronize on,
 * the last allgather's prepared exchange) hangs on its shmem_comm as an attribute. The
 * wrappers return void, as the paper's do: errors go to the communicators' error
 * handlers (shmem_comm's, which it inherits from the parent communicator).
 *
 * Synchronization per call, node by node (one step = every process stores its own
 * word, at most one reads them all; one signal = one word written, the others read it):
 *   bcast      root's node: one signal from the root; other nodes: one step collected
 *              by the leader (nobody still reads the last data), the bridge, one signal
 *   allgather  one node: one barrier; several: one step, the bridge, one signal
 *   allreduce  small vectors, one node: no barrier, every process publishes its input
 *              with a call number (allreduce.c) and reduces all of them; up to three
 *              nodes of equal size on oversubscribed machines: the same publication,
 *              every process trades node sums with its counterparts and folds them
 *              (node_sums.c), no signal; more than two nodes traded by pairs (unequal
 *              or more than three, few enough per process, no machine oversubscribed):
 *              the same publication, the node's processes trade node sums, the leader
 *              folds, one signal; otherwise one step, the leader reduces (and the
 *              bridge), one signal;
 *              larger: one barrier, every process reduces a slice, then as allgather */
#include "hy.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/keyval.h"
#include "spin/control.h"

#include <mpix/hy_wrapper.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


typedef struct wrapper_state {
    MPI_Comm hy_comm;
    mpix_hy_state *hy;        /* its state (lives as long as hy_comm, as this state does) */
    MPI_Win sync_win;         /* a shared window over shmem_comm: its spin block, and the
                                 small allreduce's publication slots (leader's segment) */
    mpix_spin_state *sync;    /* that block */
    long long small_bytes;    /* allreduce: up to this no barrier: published inputs (one
                                 node; traded node sums on more than two), or the leader
                                 reduces alone */
    char *scratch;            /* small_bytes: a process's own copy of a small reduction */
    char *published;          /* two slots per process for small_bytes (mpix_hy_small_reduce),
                                 then the node sums received (mpix_hy_small_reduce_nodes) */
    char *node_sum;           /* there: this process's copy of its node's sum */
    size_t published_slot;    /* bytes of one slot */
    unsigned small_calls;     /* small one-node allreduces so far */
    int spin_polls;
    mpix_hy_op allgather;     /* the last allgather's exchange, kept while its shape repeats */
    int allgather_ready;
    mpix_hy_op small;         /* the last small one-node allreduce, kept while its predefined
                                 datatype, count and operation repeat */
    int small_ready;
    struct {                  /* per collective, the last call's type facts: repeated calls ask MPI nothing */
        MPI_Datatype datatype;
        int count;
        MPI_Aint extent;
        int named;
        MPI_Op op;
        int commutative;
    } last[3];
} wrapper_state;

static int delete_wrapper_state(MPI_Comm comm, int keyval, void *value, void *extra)
{
    wrapper_state *state = value;
    (void)comm, (void)keyval, (void)extra;
    int rc = state->allgather_ready ? mpix_hy_op_release(&state->allgather) : MPI_SUCCESS;
    free(state->scratch);
    free(state->node_sum);
    free(state);
    return rc;
}

static mpix_keyval wrapper_keyval = MPIX_COMM_KEYVAL_INIT(delete_wrapper_state);

/* The layer's state, or NULL after raising an error naming @call. */
static wrapper_state *state_of(const struct comm_package *handle, const char *call)
{
    void *state = NULL;
    if (!handle) {
        mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: comm_handle is NULL", call));
        return NULL;
    }
    if (handle->shmem_comm != MPI_COMM_NULL)
        mpix_comm_attr_get(handle->shmem_comm, &wrapper_keyval, &state);
    if (!state)
        mpix_raise_comm(handle->shmem_comm,
                        mpix_error(MPIX_ERRKIND_ARGUMENT,
                                   "%s: comm_handle was not made by Wrapper_MPI_ShmemBridgeComm_create (or is freed)",
                                   call));
    return state;
}

static mpix_hy_state *hy_of(const wrapper_state *state)
{
    return state->hy;
}

/* Raise @code on the node communicator; MPI_SUCCESS passes. */
static void raise_on(const struct comm_package *handle, int code)
{
    mpix_raise_comm(handle->shmem_comm, code);
}

/* The small allreduce's publication slots and received node sums, in the layer's sync
 * window, and its call count, for @op. */
static void set_small_layout(const wrapper_state *state, mpix_hy_op *op)
{
    op->base = state->published;
    op->small_slot = state->published_slot;
    op->small_stride = 2 * state->published_slot;
    op->sums = state->published + op->small_stride * state->hy->node_size;
    op->node_sum = state->node_sum;
    op->calls = state->small_calls;
    op->spin_polls = state->spin_polls;
}

/* Whether @shared, where other processes may be storing these same bytes, differs from
 * @mine. Each byte is read once: memcmp is no snapshot of such memory (glibc re-reads
 * the first differing bytes to order them, finds them equal once another process's store
 * landed in between, and answers "equal" while later bytes are still the last call's: a
 * test of 20000 back-to-back calls at 2 ranks saw it return the previous result). Bytes
 * read equal stay so until this process's next call: every store into the result after
 * this call's publications is of these bytes. */
static int differs(const char *shared, const char *mine, size_t bytes)
{
    size_t at = 0;
    if (((uintptr_t)shared | (uintptr_t)mine) % sizeof(uint64_t) == 0)
        for (; at + sizeof(uint64_t) <= bytes; at += sizeof(uint64_t)) {
            uint64_t word;
            memcpy(&word, mine + at, sizeof word);
            if (atomic_load_explicit((const _Atomic uint64_t *)(shared + at), memory_order_relaxed) != word)
                return 1;
        }
    for (; at < bytes; at++)
        if (atomic_load_explicit((const _Atomic unsigned char *)(shared + at), memory_order_relaxed) !=
            (unsigned char)mine[at])
            return 1;
    return 0;
}

/* Store @mine into @shared where it differs: a process that finds the result there
 * already leaves the line shared instead of taking it for a store of the same bytes
 * (16 ranks on 16 cores, runs alternated: 8 B allreduce 1.83-1.96x MPI against
 * 1.35-1.38x storing always). */
static void store_if_differs(char *shared, const char *mine, size_t bytes)
{
    if (differs(shared, mine, bytes))
        memcpy(shared, mine, bytes);
}

/* The type facts of a call, or an error naming @call; a repeat of the last call's
 * predefined datatype and count reuses its facts. Derived datatypes are asked about
 * every call: a program that frees its datatype and builds another may get the same
 * handle back for a different layout. */
static int describe(mpix_hy_op *op, wrapper_state *state, int kind, int count, MPI_Datatype datatype,
                    const void *start_addr, const char *call)
{
    memset(op, 0, sizeof *op);
    if (!start_addr)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: start_addr is NULL", call);
    if (state->last[kind].datatype == datatype && state->last[kind].count == count && datatype != MPI_DATATYPE_NULL) {
        op->kind = kind;
        op->hy = hy_of(state);
        op->exchange = op->hy->wrapper_exchange;
        op->count = count;
        op->datatype = datatype;
        op->extent = state->last[kind].extent;
        op->named = state->last[kind].named;
        return MPI_SUCCESS;
    }
    int rc = mpix_hy_op_describe(op, hy_of(state), kind, count, datatype);
    op->exchange = hy_of(state)->wrapper_exchange;
    if (rc != MPI_SUCCESS && mpix_error_kind_of(rc) == MPIX_ERRKIND_ARGUMENT)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: msize %d or its datatype is not valid", call, count);
    if (rc == MPI_SUCCESS && op->named) {
        state->last[kind].datatype = datatype;
        state->last[kind].count = count;
        state->last[kind].extent = op->extent;
        state->last[kind].named = op->named;
    }
    return rc;
}

/* Whether @op is one of MPI's own operations, whose handles never change meaning. */
static int predefined_op(MPI_Op op)
{
    static const MPI_Op predefined[] = { MPI_MAX,  MPI_MIN, MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,
                                         MPI_LOR,  MPI_BOR, MPI_LXOR, MPI_BXOR,   MPI_MAXLOC, MPI_MINLOC };
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++)
        if (op == predefined[i])
            return 1;
    return 0;
}

/* Whether @op is commutative, asked of MPI once per predefined operation in a row (a
 * user operation freed and created again may come back under the same handle). */
static int commutative(wrapper_state *state, MPI_Op op, int *answer)
{
    if (state->last[MPIX_HY_ALLREDUCE].op == op && op != MPI_OP_NULL) {
        *answer = state->last[MPIX_HY_ALLREDUCE].commutative;
        return MPI_SUCCESS;
    }
    int rc = PMPI_Op_commutative(op, answer);
    if (rc == MPI_SUCCESS && predefined_op(op)) {
        state->last[MPIX_HY_ALLREDUCE].op = op;
        state->last[MPIX_HY_ALLREDUCE].commutative = *answer;
    }
    return rc;
}

/* The window the layer synchronizes on, with the publication slots of small allreduces
 * in the leader's segment, their call numbers at 0 on every process. */
static int open_sync(wrapper_state *state)
{
    const mpix_hy_state *hy = state->hy;
    state->published_slot = state->small_bytes > 0 ? mpix_hy_small_slot_bytes((size_t)state->small_bytes) : 0;
    state->spin_polls = mpix_hy_spin_polls(hy);
    size_t slots = 2 * state->published_slot * hy->node_size;
    const mpix_hy_exchange *exchange = hy->wrapper_exchange;
    size_t sums = mpix_hy_node_sums_bytes(hy, exchange, state->published_slot);
    int rc = mpix_hy_node_buffer(hy, (MPI_Aint)(slots + sums), 1, &state->published, &state->sync_win);
    if (rc == MPI_SUCCESS && !(state->sync = mpix_spin_state_of(state->sync_win)))
        rc = MPI_ERR_INTERN;
    if (rc == MPI_SUCCESS && state->published_slot) {
        char *mine = state->published + 2 * state->published_slot * hy->node_rank;
        for (unsigned parity = 0; parity < 2; parity++) /* call numbers start at 0 */
            atomic_store((_Atomic uint32_t *)(mine + parity * state->published_slot), 0);
        mpix_hy_op traded = { .hy = state->hy, .exchange = exchange };
        set_small_layout(state, &traded);
        mpix_hy_node_sums_reset(&traded);
        size_t node_sum = exchange ? mpix_hy_node_sum_bytes(exchange, (size_t)state->small_bytes) : 0;
        int allocated = !exchange || (state->node_sum = malloc(node_sum)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        rc = mpix_spin_barrier(state->sync); /* passed by every process: the creation agrees after */
        rc = allocated != MPI_SUCCESS ? allocated : rc;
    }
    return rc;
}

MPIX_API void Wrapper_MPI_ShmemBridgeComm_create(MPI_Comm p_comm, struct comm_package *comm_handle)
{
    wrapper_state *state = calloc(1, sizeof *state);
    int node, nodes;
    int rc = state ? mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_HY_SMALL_BYTES, &state->small_bytes)
                   : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && state->small_bytes > 0 && !(state->scratch = malloc((size_t)state->small_bytes)))
        rc = MPI_ERR_NO_MEM;
    if (state)
        state->sync_win = MPI_WIN_NULL;
    for (int kind = 0; state && kind < 3; kind++) {
        state->last[kind].datatype = MPI_DATATYPE_NULL;
        state->last[kind].op = MPI_OP_NULL;
    }
    if (rc == MPI_SUCCESS && !comm_handle)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "Wrapper_MPI_ShmemBridgeComm_create: comm_handle is NULL");
    /* MPIX_Hy_comm_create agrees with every process on any error. */
    if ((rc = mpix_agree(p_comm, rc)) == MPI_SUCCESS)
        rc = MPIX_Hy_comm_create(p_comm, MPI_INFO_NULL, &state->hy_comm);
    if (rc != MPI_SUCCESS) {
        if (state)
            free(state->scratch);
        free(state);
        mpix_raise_comm(p_comm, rc);
        return;
    }
    rc = MPIX_Hy_comm_query(state->hy_comm, &comm_handle->shmem_comm, &comm_handle->bridge_comm, &node, &nodes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_size(comm_handle->shmem_comm, &comm_handle->shmemcomm_size);
    comm_handle->bridgecomm_size = nodes;
    if (rc == MPI_SUCCESS && !(state->hy = mpix_hy_state_of(state->hy_comm)))
        rc = MPI_ERR_INTERN;
    if (rc == MPI_SUCCESS)
        rc = open_sync(state);
    if (rc == MPI_SUCCESS)
        rc = mpix_comm_attr_set(comm_handle->shmem_comm, &wrapper_keyval, state);
    if ((rc = mpix_agree(p_comm, rc)) != MPI_SUCCESS) {
        void *attached = NULL;
        mpix_comm_attr_get(comm_handle->shmem_comm, &wrapper_keyval, &attached);
        /* Cleanup after an agreed failure: rc is the error to report. */
        if (state->sync_win != MPI_WIN_NULL)
            (void)MPIX_Win_free(&state->sync_win);
        (void)PMPI_Comm_free(&state->hy_comm); /* frees the state where it hangs on shmem_comm */
        if (!attached) {
            free(state->scratch);
            free(state->node_sum);
            free(state);
        }
        comm_handle->shmem_comm = comm_handle->bridge_comm = MPI_COMM_NULL;
        mpix_raise_comm(p_comm, rc);
    }
}

MPIX_API void Wrapper_MPI_Sharedmemory_alloc(int msize, int bsize, int flag, struct comm_package *comm_handle,
                                             void **shmem_addr, MPI_Win *winPtr)
{
    wrapper_state *state = state_of(comm_handle, "Wrapper_MPI_Sharedmemory_alloc");
    if (!state)
        return;
    int rc = MPI_SUCCESS;
    long long elements = flag == 0 ? (long long)(comm_handle->shmemcomm_size + 2) * msize + 1
                                   : (long long)msize * flag;
    if (msize < 0 || bsize <= 0 || flag < 0)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "Wrapper_MPI_Sharedmemory_alloc: msize %d, bsize %d, flag %d", msize,
                        bsize, flag);
    else if (!shmem_addr || !winPtr)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "Wrapper_MPI_Sharedmemory_alloc: %s is NULL",
                        !shmem_addr ? "shmem_addr" : "winPtr");
    if ((rc = mpix_agree(comm_handle->shmem_comm, rc)) != MPI_SUCCESS) {
        raise_on(comm_handle, rc);
        return;
    }
    /* The region starts on a cache line: slots of whole lines share none. */
    MPI_Aint bytes = (MPI_Aint)(elements * bsize);
    rc = mpix_hy_node_buffer(hy_of(state), bytes, bsize, shmem_addr, winPtr);
    if (rc == MPI_SUCCESS)
        mpix_hy_place(hy_of(state), *shmem_addr, bytes);
    raise_on(comm_handle, rc);
}

MPIX_API void Wrapper_Get_localpointer(void *start_addr, int rank, int dsize, void **local_addr)
{
    if (!local_addr) {
        mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "Wrapper_Get_localpointer: local_addr is NULL"));
        return;
    }
    *local_addr = (char *)start_addr + (ptrdiff_t)rank * dsize;
}

MPIX_API void Wrapper_ShmemcommSizeset_gather(const struct comm_package *comm_handle, int **sharedmem_sizeset)
{
    wrapper_state *state = state_of(comm_handle, "Wrapper_ShmemcommSizeset_gather");
    if (!state)
        return;
    if (!sharedmem_sizeset) {
        raise_on(comm_handle, mpix_error(MPIX_ERRKIND_ARGUMENT, "Wrapper_ShmemcommSizeset_gather: sharedmem_sizeset is NULL"));
        return;
    }
    mpix_hy_state *hy = hy_of(state);
    *sharedmem_sizeset = malloc(hy->nodes * sizeof **sharedmem_sizeset);
    if (!*sharedmem_sizeset) {
        raise_on(comm_handle, MPI_ERR_NO_MEM);
        return;
    }
    memcpy(*sharedmem_sizeset, hy->node_sizes, hy->nodes * sizeof **sharedmem_sizeset);
}

MPIX_API void Wrapper_Create_Allgather_param(int msize, const struct comm_package *comm_handle,
                                             int *sharedmem_sizeset, struct allgather_param *param_handle)
{
    wrapper_state *state = state_of(comm_handle, "Wrapper_Create_Allgather_param");
    if (!state)
        return;
    if (!sharedmem_sizeset || !param_handle || msize < 0) {
        raise_on(comm_handle, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                         "Wrapper_Create_Allgather_param: msize %d, sharedmem_sizeset %p, "
                                         "param_handle %p",
                                         msize, (void *)sharedmem_sizeset, (void *)param_handle));
        return;
    }
    int nodes = comm_handle->bridgecomm_size;
    param_handle->recvcounts = malloc(nodes * sizeof *param_handle->recvcounts);
    param_handle->displs = malloc(nodes * sizeof *param_handle->displs);
    if (!param_handle->recvcounts || !param_handle->displs) {
        free(param_handle->recvcounts);
        free(param_handle->displs);
        param_handle->recvcounts = param_handle->displs = NULL;
        raise_on(comm_handle, MPI_ERR_NO_MEM);
        return;
    }
    for (int i = 0, displacement = 0; i < nodes; i++) {
        param_handle->recvcounts[i] = msize * sharedmem_sizeset[i];
        param_handle->displs[i] = displacement;
        displacement += param_handle->recvcounts[i];
    }
}

/* The leaders' exchange for this shape, prepared once and kept while calls repeat it. */
static int allgather_exchange(wrapper_state *state, void *start_addr, int msize, MPI_Datatype data_type)
{
    mpix_hy_op *op = &state->allgather;
    if (state->allgather_ready && (op->count != msize || op->datatype != data_type)) {
        mpix_hy_op_release(op);
        state->allgather_ready = 0;
    }
    int rc = MPI_SUCCESS;
    if (!state->allgather_ready) {
        rc = mpix_hy_op_describe(op, hy_of(state), MPIX_HY_ALLGATHER, msize, data_type);
        if (rc == MPI_SUCCESS)
            rc = mpix_hy_allgather_prepare(op);
        if (rc != MPI_SUCCESS) {
            mpix_hy_op_release(op);
            return rc;
        }
        state->allgather_ready = 1;
    }
    op->result = start_addr;
    return mpix_hy_allgather_exchange(op);
}

MPIX_API void Wrapper_Hy_Allgather(void *start_addr, void *local_addr, int msize, MPI_Datatype data_type,
                                   struct allgather_param *param_handle, struct comm_package *comm_handle)
{
    static const char call[] = "Wrapper_Hy_Allgather";
    wrapper_state *state = state_of(comm_handle, call);
    (void)local_addr, (void)param_handle; /* the slot is written in place; counts come from the tables */
    if (!state)
        return;
    mpix_hy_op op;
    int rc = describe(&op, state, MPIX_HY_ALLGATHER, msize, data_type, start_addr, call), synced;
    if (rc != MPI_SUCCESS) {
        raise_on(comm_handle, rc);
        return;
    }
    mpix_hy_state *hy = op.hy;
    if (hy->nodes == 1) {
        synced = mpix_spin_barrier(state->sync); /* every slot of the node is written */
    } else if (hy->node_rank == 0) {
        synced = mpix_spin_collect(state->sync);
        if (synced == MPI_SUCCESS)
            rc = allgather_exchange(state, start_addr, msize, data_type);
        int signalled = mpix_spin_signal(state->sync); /* also after a failure: nobody is left waiting */
        synced = synced != MPI_SUCCESS ? synced : signalled;
    } else {
        synced = mpix_spin_arrive_and_wait(state->sync);
    }
    raise_on(comm_handle, rc != MPI_SUCCESS ? rc : synced);
}

MPIX_API void Wrapper_Get_transtable(MPI_Comm p_comm, const struct comm_package *comm_handle, int **shmem_transtable,
                                     int **bridge_transtable)
{
    wrapper_state *state = state_of(comm_handle, "Wrapper_Get_transtable");
    if (!state)
        return;
    mpix_hy_state *hy = hy_of(state);
    int size, rc = PMPI_Comm_size(p_comm, &size);
    if (rc == MPI_SUCCESS && size != hy->size)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT,
                        "Wrapper_Get_transtable: p_comm has %d processes, the split was made over %d", size, hy->size);
    if (rc == MPI_SUCCESS && (!shmem_transtable || !*shmem_transtable || !bridge_transtable || !*bridge_transtable))
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "Wrapper_Get_transtable: a table (or its address) is NULL");
    if (rc != MPI_SUCCESS) {
        raise_on(comm_handle, rc);
        return;
    }
    /* As MPI_Group_translate_ranks gives them: a rank's node rank where it shares this
     * process's node, MPI_UNDEFINED elsewhere; and on every process (not only leaders)
     * the bridge rank of each rank's node. */
    for (int r = 0; r < size; r++) {
        (*shmem_transtable)[r] = hy->node_of[r] == hy->node ? hy->node_rank_of[r] : MPI_UNDEFINED;
        (*bridge_transtable)[r] = hy->node_of[r];
    }
}

MPIX_API void Wrapper_Hy_Bcast(void **bcast_addr, void *start_addr, int msize, int *shmem_transtable,
                               int *bridge_transtable, MPI_Datatype data_type, int root,
                               struct comm_package *comm_handle)
{
    static const char call[] = "Wrapper_Hy_Bcast";
    wrapper_state *state = state_of(comm_handle, call);
    /* The tables hold what the split already knows (Wrapper_Get_transtable): the layer
     * reads its own copy, valid for every placement. */
    (void)shmem_transtable, (void)bridge_transtable;
    if (!state)
        return;
    mpix_hy_op op;
    int rc = describe(&op, state, MPIX_HY_BCAST, msize, data_type, start_addr, call), synced;
    mpix_hy_state *hy = hy_of(state);
    if (rc == MPI_SUCCESS && !bcast_addr)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: bcast_addr is NULL", call);
    if (rc == MPI_SUCCESS && (root < 0 || root >= hy->size))
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: root %d is not a rank of 0..%d", call, root, hy->size - 1);
    if (rc != MPI_SUCCESS) {
        raise_on(comm_handle, rc);
        return;
    }
    size_t vector = (size_t)msize * op.extent;
    int root_node = hy->node_of[root];
    if (hy->node == root_node) {
        /* The root wrote its own slot before the call: the node reads it there. */
        char *data = (char *)start_addr + (size_t)hy->node_rank_of[root] * vector;
        *bcast_addr = data;
        synced = hy->rank == root ? mpix_spin_signal(state->sync) : mpix_spin_wait(state->sync);
        if (synced == MPI_SUCCESS && hy->node_rank == 0 && hy->nodes > 1)
            rc = PMPI_Bcast(data, msize, data_type, root_node, hy->bridge_comm);
    } else {
        char *data = (char *)start_addr + (size_t)hy->node_size * vector;
        *bcast_addr = data;
        if (hy->node_rank == 0) {
            synced = mpix_spin_collect(state->sync); /* nobody reads the last data any more */
            if (synced == MPI_SUCCESS)
                rc = PMPI_Bcast(data, msize, data_type, root_node, hy->bridge_comm);
            int signalled = mpix_spin_signal(state->sync);
            synced = synced != MPI_SUCCESS ? synced : signalled;
        } else {
            synced = mpix_spin_arrive_and_wait(state->sync);
        }
    }
    raise_on(comm_handle, rc != MPI_SUCCESS ? rc : synced);
}

/* A non-commutative operation needs MPI's rank order: every process reduces through
 * MPI_Allreduce from its slot, and the leader stores the result once its node has stopped
 * reading the last one. */
static int allreduce_by_mpi(wrapper_state *state, const mpix_hy_op *op, const char *slot, char *result)
{
    char *scratch = malloc((size_t)op->count * op->extent + 1);
    int rc = scratch ? MPI_SUCCESS : MPI_ERR_NO_MEM, synced = mpix_spin_barrier(state->sync);
    int reduced = PMPI_Allreduce(slot, scratch ? scratch : result, scratch ? op->count : 0, op->datatype, op->op,
                                 state->hy_comm);
    rc = rc != MPI_SUCCESS ? rc : reduced;
    if (synced == MPI_SUCCESS && op->hy->node_rank == 0) {
        synced = mpix_spin_collect(state->sync);
        if (rc == MPI_SUCCESS && synced == MPI_SUCCESS)
            rc = mpix_hy_copy(op, result, scratch, op->count);
        int signalled = mpix_spin_signal(state->sync);
        synced = synced != MPI_SUCCESS ? synced : signalled;
    } else if (synced == MPI_SUCCESS) {
        synced = mpix_spin_arrive_and_wait(state->sync);
    }
    free(scratch);
    return rc != MPI_SUCCESS ? rc : synced;
}

/* Small, one node: every process publishes its slot's input with a call number and
 * reduces all published inputs, in the same order, into its own copy, then stores it as
 * the result: all store the same bytes, so whatever a process reads there once it
 * returned is this call's result. A process reads the others' published copies, not
 * their slots, so a slot may be rewritten as soon as its process returned; and it writes
 * the result only once every process published this call, i.e. left the last one. No
 * barrier, no leader's signal. @reduction is set up for the call (set_small_layout). */
static int allreduce_one_node(wrapper_state *state, mpix_hy_op *reduction, char *slots)
{
    size_t vector = (size_t)reduction->count * reduction->extent;
    char *node_reduced = slots + reduction->hy->node_size * vector;
    reduction->calls = state->small_calls;
    int rc = mpix_hy_small_reduce(reduction, slots + reduction->hy->node_rank * vector, state->scratch);
    state->small_calls = reduction->calls;
    if (rc == MPI_SUCCESS)
        store_if_differs(node_reduced, state->scratch, vector);
    return rc;
}

MPIX_API void Wrapper_Hy_Allreduce(void *start_addr, void **result_addr, int sharedmem_rank, int msize,
                                   MPI_Datatype data_type, MPI_Op op, struct comm_package *comm_handle, MPI_Win win)
{
    static const char call[] = "Wrapper_Hy_Allreduce";
    wrapper_state *state = state_of(comm_handle, call);
    (void)sharedmem_rank, (void)win; /* the layer knows the node rank; it syncs on its own window */
    if (!state)
        return;
    /* A repeat of the last small one-node call: its set-up is kept (it cost a third of
     * the call: 8 B at 1 rank, 39 ns a call against 22 for MPIX_Hy_allreduce). */
    if (state->small_ready && state->small.datatype == data_type && state->small.count == msize &&
        state->small.op == op && start_addr && result_addr) {
        *result_addr = (char *)start_addr + (size_t)state->hy->node_size * msize * state->small.extent;
        raise_on(comm_handle, allreduce_one_node(state, &state->small, start_addr));
        return;
    }
    mpix_hy_op reduction;
    int rc = describe(&reduction, state, MPIX_HY_ALLREDUCE, msize, data_type, start_addr, call), synced;
    if (rc == MPI_SUCCESS && !result_addr)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: result_addr is NULL", call);
    if (rc == MPI_SUCCESS && op == MPI_OP_NULL)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: op is MPI_OP_NULL", call);
    if (rc == MPI_SUCCESS)
        rc = commutative(state, op, &reduction.commutative);
    if (rc != MPI_SUCCESS) {
        raise_on(comm_handle, rc);
        return;
    }
    reduction.op = op;
    mpix_hy_state *hy = reduction.hy;
    size_t vector = (size_t)msize * reduction.extent;
    char *slots = start_addr, *node_reduced = slots + hy->node_size * vector, *global = node_reduced + vector;
    char *result = hy->nodes > 1 ? global : node_reduced;
    *result_addr = result;
    if (!reduction.commutative) {
        raise_on(comm_handle, allreduce_by_mpi(state, &reduction, slots + hy->node_rank * vector, result));
        return;
    }
    int leader = hy->node_rank == 0;
    const mpix_hy_exchange *exchange = hy->wrapper_exchange;
    if ((long long)vector <= state->small_bytes && exchange && exchange->every) {
        /* Small, few equal nodes (oversubscribed): every process trades with its counterparts
         * (node_sums.c), folds the node sums and stores what differs, as on one node. It
         * stores only once every process of its node has published this call, i.e. has
         * left the last one and reads its result no more. Elsewhere that way spins in every
         * process where the leaders' lets the others sleep: 2 nodes of 2 sharing 2 cores
         * without knowing it (tools/vcluster) 537 us against 40 us by the leaders; 16 ranks
         * on 16 cores, 8 B, 2 nodes of 8 2.08-2.15 against 1.74-1.91 us. */
        set_small_layout(state, &reduction);
        rc = mpix_hy_small_reduce_nodes(&reduction, slots + hy->node_rank * vector, state->scratch);
        state->small_calls = reduction.calls;
        if (rc == MPI_SUCCESS) {
            store_if_differs(node_reduced, state->node_sum, vector);
            store_if_differs(global, state->scratch, vector);
        }
        raise_on(comm_handle, rc);
        return;
    }
    if ((long long)vector <= state->small_bytes && exchange) {
        /* Small, more than two nodes traded by pairs: every process publishes its input as on one node,
         * the node's processes trade node sums (node_sums.c), and the leader alone folds
         * them, stores the result and signals. Measured against the leaders' allreduce
         * (16 ranks on 16 cores, runs alternated, 8 B): 4 nodes of 4 1.69-1.86 us against
         * 1.92-1.97 us; 2 nodes of 8, where the leaders' allreduce is one exchange
         * too, 1.58-2.10 against 1.61-1.80 us (512 B: 3.05-3.16 against 2.13-2.37), so two
         * nodes keep the leaders' way. Every process folding and storing, as on one
         * node, was slower still: the result shares a line with the slots that the next
         * call's inputs are written to (2 nodes of 8: 2.25-2.49 against 1.82-1.89 us). */
        set_small_layout(state, &reduction);
        rc = mpix_hy_small_reduce_nodes(&reduction, slots + hy->node_rank * vector, leader ? state->scratch : NULL);
        state->small_calls = reduction.calls;
        if (!leader) {
            synced = mpix_spin_wait(state->sync);
        } else {
            if (rc == MPI_SUCCESS) {
                memcpy(node_reduced, state->node_sum, vector);
                memcpy(global, state->scratch, vector);
            }
            synced = mpix_spin_signal(state->sync); /* also after a failure: nobody is left waiting */
        }
        raise_on(comm_handle, rc != MPI_SUCCESS ? rc : synced);
        return;
    }
    if ((long long)vector <= state->small_bytes && hy->nodes == 1) {
        set_small_layout(state, &reduction);
        state->small = reduction;
        state->small_ready = reduction.named && state->last[MPIX_HY_ALLREDUCE].op == op;
        raise_on(comm_handle, allreduce_one_node(state, &state->small, start_addr));
        return;
    }
    if ((long long)vector <= state->small_bytes) {
        /* Small, several nodes: one step collected by the leader (every slot is written,
         * nobody reads the last result), the leader reduces alone, then signals. */
        if (!leader) {
            raise_on(comm_handle, mpix_spin_arrive_and_wait(state->sync));
            return;
        }
        synced = mpix_spin_collect(state->sync);
        if (synced == MPI_SUCCESS)
            rc = mpix_hy_reduce_all(&reduction, slots, vector, node_reduced);
    } else {
        /* Larger: every process reduces a slice; the barrier also tells that nobody reads
         * the last result. */
        synced = mpix_spin_barrier(state->sync);
        if (synced == MPI_SUCCESS)
            rc = mpix_hy_reduce_slice(&reduction, slots, vector, node_reduced);
        if (synced == MPI_SUCCESS && (hy->nodes == 1 || !leader)) {
            /* Synchronize even after a failed reduction: nobody is left waiting. */
            synced = hy->nodes == 1 ? mpix_spin_barrier(state->sync) : mpix_spin_arrive_and_wait(state->sync);
            raise_on(comm_handle, rc != MPI_SUCCESS ? rc : synced);
            return;
        }
        if (synced == MPI_SUCCESS)
            synced = mpix_spin_collect(state->sync);
    }
    if (synced != MPI_SUCCESS) {
        raise_on(comm_handle, synced);
        return;
    }
    if (hy->nodes > 1 && rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(node_reduced, global, msize, data_type, op, hy->bridge_comm);
    synced = mpix_spin_signal(state->sync); /* also after a failure: nobody is left waiting */
    raise_on(comm_handle, rc != MPI_SUCCESS ? rc : synced);
}

MPIX_API void Wrapper_ShmemcommSizeset_free(struct comm_package *comm_handle, int *sharedmem_sizeset)
{
    (void)comm_handle;
    free(sharedmem_sizeset);
}

MPIX_API void Wrapper_Param_free(struct comm_package *comm_handle, struct allgather_param *param_handle)
{
    (void)comm_handle;
    if (!param_handle)
        return;
    free(param_handle->recvcounts);
    free(param_handle->displs);
    param_handle->recvcounts = param_handle->displs = NULL;
}

MPIX_API void Wrapper_Comm_free(struct comm_package *comm_handle)
{
    wrapper_state *state = state_of(comm_handle, "Wrapper_Comm_free");
    if (!state)
        return;
    MPI_Comm hy_comm = state->hy_comm;
    int rc = MPIX_Win_free(&state->sync_win);
    int freed = PMPI_Comm_free(&hy_comm); /* frees shmem_comm and bridge_comm, and with them this state */
    comm_handle->shmem_comm = comm_handle->bridge_comm = MPI_COMM_NULL;
    mpix_raise(rc != MPI_SUCCESS ? rc : freed);
}
