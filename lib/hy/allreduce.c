/* SPDX-License-Identifier: BSD-3-Clause */
/* Hybrid allreduce: inputs in node-rank slots, each process of the node reduces a slice
 * of the vector over all slots, leaders combine nodes over the bridge, then release
 * their node. */
#include "hy.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/lines.h"
#include "common/topo.h"
#include "spin/control.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

/* Up to this many bytes a vector takes the barrier-free path. Measured at 2 ranks on the
 * project's machine (a throwaway loop over MPIX_Hy_allreduce with MPIX_HY_SMALL_BYTES=0
 * and =100000, sizes 1-5 KiB): 2 KiB took 0.27 us barrier-free against 0.50 us sliced
 * (Open MPI; MPICH 0.38 against 0.51), 2.5 KiB 0.49 against 0.50 (MPICH 0.59 against
 * 0.55), 4 KiB 0.60 against 0.53 (MPICH 0.73 against 0.59). The step after 2 KiB is
 * glibc's memcpy changing method on this CPU, which the barrier-free path pays twice. */
enum { LINE = MPIX_LINE_BYTES, HEADER = MPIX_HY_SLOT_HEADER, SPIN_POLLS = 20000 };

/* Up to this many bytes an allreduce from a send buffer writes every input into the
 * slots (one node barrier less, one copy of half the vector more at 2 processes); above,
 * one input of each slice into the result, behind one more barrier. Measured at 2 ranks
 * (mpix-bench hy, Open MPI, alternated with the build before): 4 KiB 0.35 against 0.42
 * us, 32 KiB 1.12 against 0.81-0.92 us; the limit lies between. */
#define INPUTS_IN_SLOTS_BYTES 8192

/* Small-message layout, per node process p, in the shared buffer:
 *   slots[p][parity]: the call number, then from HEADER bytes on (aligned for any
 *                     predefined type) the vector, rounded to cache lines: up to 48 bytes
 *                     the reader's one miss brings number and data (8-256 B measured
 *                     0.05-0.1 us faster than with the vector on the next line, 4 KiB the same)
 *   result[p]: p's own copy of the result
 *   input[p]: p's fixed input area, for MPI_IN_PLACE
 * and once for the node: global[parity], the leader's combined result (several nodes),
 * or where the node's processes trade node sums, sums[parity][node] (node_sums.c).
 * Process p's slots start small_stride bytes after p-1's (the wrapper layer keeps only
 * the slots, sized for its largest small vector, in a window of its own).
 * A node barrier in place of the published call numbers measured slower at 2 processes
 * (0.19 against 0.10 us, 0.62 against 0.50 in the test VM's slow stretches), because
 * the barrier's line moves on top of the input's. */
size_t mpix_hy_small_slot_bytes(size_t vector)
{
    return (HEADER + vector + LINE - 1) / LINE * LINE;
}

static char *small_slot_of(const mpix_hy_op *op, int process, unsigned parity)
{
    return op->base + process * op->small_stride + parity * op->small_slot;
}

static char *small_global(const mpix_hy_op *op, unsigned parity)
{
    return op->base + op->hy->node_size * op->small_stride + parity * op->small_data;
}

/* A peer that has a core of its own arrives within microseconds, and a yield costs more
 * than MPI's whole small allreduce: poll long then. When the processes on this machine
 * (every virtual node of it) outnumber its hardware threads, the peer may need this
 * core: yield at once. */
int mpix_hy_spin_polls(const mpix_hy_state *hy)
{
    mpix_locality where;
    return mpix_topo_locality(&where) == MPI_SUCCESS && hy->machine_size <= where.pus ? SPIN_POLLS : 0;
}

/* The buffer's size, and the small-vector layout when the vector is small. */
static int allreduce_bytes(mpix_hy_op *op, MPI_Aint *bytes)
{
    long long small_bytes;
    int rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_HY_SMALL_BYTES, &small_bytes);
    int node_size = op->hy->node_size;
    MPI_Aint vector = (MPI_Aint)op->count * op->extent;
    op->small = vector <= small_bytes;
    op->small_data = ((size_t)vector + LINE - 1) / LINE * LINE;
    op->small_slot = mpix_hy_small_slot_bytes((size_t)vector);
    op->small_stride = 2 * op->small_slot + 2 * op->small_data;
    op->spin_polls = mpix_hy_spin_polls(op->hy);
    op->inputs_in_slots = vector <= INPUTS_IN_SLOTS_BYTES;
    *bytes = op->small ? (MPI_Aint)(node_size * op->small_stride + 2 * op->small_data +
                                    mpix_hy_node_sums_bytes(op->hy, op->exchange, op->small_slot))
                       : vector * (node_size + 1); /* node_size input slots, then the vector */
    if (rc == MPI_SUCCESS && op->small && op->exchange &&
        !(op->node_sum = malloc(mpix_hy_node_sum_bytes(op->exchange, (size_t)vector))))
        rc = MPI_ERR_NO_MEM;
    return rc;
}

MPIX_API int MPIX_Hy_allreduce_create(MPI_Comm hy_comm, int count, MPI_Datatype datatype, MPI_Op reduction,
                                      void *slot, void *result, MPI_Win *win)
{
    mpix_hy_op *op = calloc(1, sizeof *op);
    int rc = mpix_hy_outputs("MPIX_Hy_allreduce_create", slot, "slot", result, "result");
    if (rc == MPI_SUCCESS && !win)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Hy_allreduce_create: win is NULL");
    if (rc == MPI_SUCCESS && reduction == MPI_OP_NULL)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Hy_allreduce_create: the operation is MPI_OP_NULL");
    if (rc == MPI_SUCCESS && op)
        rc = PMPI_Op_commutative(reduction, &op->commutative);
    rc = mpix_hy_op_open(op, hy_comm, MPIX_HY_ALLREDUCE, count, datatype, allreduce_bytes, rc, win);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm(hy_comm, rc);
    op->op = reduction;
    if (op->small) {
        char *mine = op->base + op->hy->node_rank * op->small_stride;
        op->small_result = mine + 2 * op->small_slot;
        op->small_input = op->small_result + op->small_data;
        for (unsigned parity = 0; parity < 2; parity++) /* call numbers start at 0 */
            atomic_store((_Atomic uint32_t *)small_slot_of(op, op->hy->node_rank, parity), 0);
        op->sums = small_global(op, 2); /* past both globals */
        mpix_hy_node_sums_reset(op);
        if ((rc = mpix_agree(hy_comm, mpix_spin_barrier(op->spin))) != MPI_SUCCESS) {
            MPIX_Win_free(win);
            return mpix_raise_comm(hy_comm, rc);
        }
        *(void **)slot = op->small_input;
        *(void **)result = op->small_result;
        return MPI_SUCCESS;
    }
    op->slots = op->base;
    op->result = op->base + (size_t)op->count * op->extent * op->hy->node_size;
    *(void **)slot = op->slots + (size_t)op->count * op->extent * op->hy->node_rank;
    *(void **)result = op->result;
    return MPI_SUCCESS;
}

/* Every process has published this call, so nobody reads this process's slot of the
 * other parity any more (it held the last call): write each of its lines back unchanged,
 * which fetches them for writing now, while the others reduce and compute, instead of in
 * the next call, where the invalidation of the readers' copies would be a second
 * cross-core trip before they see the input (a two-process loop of the publish and poll
 * alone: 0.39-0.42 us, 0.25-0.29 with the lines taken early, in the same minutes). */
static void take_next_slot(const mpix_hy_op *op, unsigned parity)
{
    char *slot = small_slot_of(op, op->hy->node_rank, parity);
    /* A faster process may already poll the call number: the same value, atomically. */
    _Atomic uint32_t *number = (_Atomic uint32_t *)slot;
    atomic_store_explicit(number, atomic_load_explicit(number, memory_order_relaxed), memory_order_relaxed);
    /* The vector is read only after the next call number is published: ask for its
     * lines in the writable state now. */
    size_t used = mpix_hy_small_slot_bytes((size_t)op->count * op->extent);
    for (size_t line = LINE; line < used; line += LINE)
        __builtin_prefetch(slot + line, 1, 3);
}

/* Small vectors: publish the input with a call number, wait for every other process's,
 * and reduce all of them, in the same order everywhere, into @into.
 * Two alternating slots replace the entry barrier: a process can write slot k+2 only
 * after every process published call k+1, i.e. finished reading call k. The call number
 * is published even when the input could not be copied: nobody is left waiting. */
int mpix_hy_small_reduce(mpix_hy_op *op, const void *input, void *into)
{
    mpix_hy_state *hy = op->hy;
    unsigned call = ++op->calls, parity = call & 1;
    char *mine = small_slot_of(op, hy->node_rank, parity);
    int rc = mpix_hy_copy(op, mine + HEADER, input, op->count);
    mpix_hy_publish(mine, call);
    for (int q = 0; q < hy->node_size; q++)
        mpix_hy_await(op, small_slot_of(op, q, parity), call);
    take_next_slot(op, parity ^ 1u);
    if (rc == MPI_SUCCESS) /* the slots of one parity are small_stride bytes apart */
        rc = mpix_hy_reduce_all(op, small_slot_of(op, 0, parity) + HEADER, op->small_stride, into);
    return rc;
}

/* Small vectors through the publication slots; on several nodes the node's processes
 * trade node sums (node_sums.c), or where each would trade with too many nodes the
 * leader combines the nodes' results and hands the global one to its node. */
static int allreduce_small(mpix_hy_op *op, const void *sendbuf, MPI_Win win)
{
    mpix_hy_state *hy = op->hy;
    const void *input = sendbuf == MPI_IN_PLACE ? op->small_input : sendbuf;
    if (op->exchange)
        return mpix_raise_win(win, mpix_hy_small_reduce_nodes(op, input, op->small_result));
    int rc = mpix_hy_small_reduce(op, input, op->small_result), synced;
    if (hy->nodes == 1)
        return mpix_raise_win(win, rc);
    char *global = small_global(op, op->calls & 1);
    if (hy->node_rank == 0) {
        if (rc == MPI_SUCCESS)
            rc = PMPI_Allreduce(MPI_IN_PLACE, op->small_result, op->count, op->datatype, op->op, hy->bridge_comm);
        if (rc == MPI_SUCCESS)
            rc = mpix_hy_copy(op, global, op->small_result, op->count);
        synced = mpix_spin_signal(op->spin); /* also after a failure: nobody is left waiting */
    } else {
        synced = mpix_spin_wait(op->spin);
        if (rc == MPI_SUCCESS && synced == MPI_SUCCESS)
            rc = mpix_hy_copy(op, op->small_result, global, op->count);
    }
    return mpix_raise_win(win, rc != MPI_SUCCESS ? rc : synced);
}

/* Elements [*first, *last) of the vector are @process's slice of the node reduction. */
static void slice_of(const mpix_hy_op *op, int process, int *first, int *last)
{
    *first = (int)((long long)op->count * process / op->hy->node_size);
    *last = (int)((long long)op->count * (process + 1) / op->hy->node_size);
}

/* Elements [first, last) of the node reduction of @inputs into @into, inputs in
 * node-rank order (so every process that reduces them gets the same bits). */
static int reduce_range(const mpix_hy_op *op, const char *inputs, size_t stride, char *into, int first, int last)
{
    size_t element = (size_t)op->extent;
    int rc = MPI_SUCCESS;
    if (last > first) {
        rc = mpix_hy_copy(op, into + first * element, inputs + first * element, last - first);
        for (int q = 1; q < op->hy->node_size && rc == MPI_SUCCESS; q++)
            rc = PMPI_Reduce_local(inputs + q * stride + first * element, into + first * element, last - first,
                                  op->datatype, op->op);
    }
    return rc;
}

int mpix_hy_reduce_slice(const mpix_hy_op *op, const char *inputs, size_t stride, char *into)
{
    int first, last;
    slice_of(op, op->hy->node_rank, &first, &last);
    return reduce_range(op, inputs, stride, into, first, last);
}

int mpix_hy_reduce_all(const mpix_hy_op *op, const char *inputs, size_t stride, char *into)
{
    return reduce_range(op, inputs, stride, into, 0, op->count);
}

/* Out of place, each process copies into its slot only the parts of its input that the
 * others reduce, and reduces its own slice from @sendbuf, where it is. The slots are free
 * once a call has begun: every process reduced the last call's before any returned from
 * it. The result is not: a process may still read the last one. So either
 * - every input goes into the slots (op->inputs_in_slots) before the one barrier, and
 *   slice s is first copied into the result by its reducer after it; or
 * - behind a barrier that says nobody reads the last result any more, slice s of the
 *   result starts as the input of process s+1 (mod node size), which writes it straight
 *   there: every input byte is copied once, at the cost of that barrier. */
static int write_inputs(const mpix_hy_op *op, const char *sendbuf)
{
    const mpix_hy_state *hy = op->hy;
    size_t element = (size_t)op->extent, vector = (size_t)op->count * element;
    char *mine = op->slots + hy->node_rank * vector;
    int first, last, rc = MPI_SUCCESS;
    for (int s = 0; s < hy->node_size && rc == MPI_SUCCESS; s++) {
        slice_of(op, s, &first, &last);
        if (s == hy->node_rank && (op->inputs_in_slots || hy->node_size > 1))
            continue; /* reduced from @sendbuf (one process, base in the result: copied below) */
        char *into = !op->inputs_in_slots && (s + 1) % hy->node_size == hy->node_rank ? op->result : mine;
        rc = mpix_hy_copy(op, into + first * element, sendbuf + first * element, last - first);
    }
    return rc;
}

/* This process's slice of the result: the inputs in node-rank order (after the one
 * write_inputs put into the result, if it did), its own from @sendbuf. */
static int reduce_own_slice(const mpix_hy_op *op, const char *sendbuf)
{
    const mpix_hy_state *hy = op->hy;
    size_t element = (size_t)op->extent, vector = (size_t)op->count * element;
    int first, last, rc = MPI_SUCCESS, base = op->inputs_in_slots ? -1 : (hy->node_rank + 1) % hy->node_size;
    slice_of(op, hy->node_rank, &first, &last);
    if (last == first || base == hy->node_rank) /* one process: write_inputs copied it all */
        return MPI_SUCCESS;
    char *into = op->result + first * element;
    int started = base >= 0;
    for (int q = 0; q < hy->node_size && rc == MPI_SUCCESS; q++) {
        if (q == base)
            continue;
        const char *input = (q == hy->node_rank ? sendbuf : op->slots + q * vector) + first * element;
        rc = started ? PMPI_Reduce_local(input, into, last - first, op->datatype, op->op)
                     : mpix_hy_copy(op, into, input, last - first);
        started = 1;
    }
    return rc;
}

/* Non-commutative operations need MPI's rank order: MPI_Allreduce serves them. */
static int allreduce_by_mpi(mpix_hy_op *op, const void *sendbuf, MPI_Win win)
{
    mpix_hy_state *hy = op->hy;
    char *mine = op->small ? op->small_input : op->slots + (size_t)hy->node_rank * op->count * op->extent;
    char *result = op->small ? op->small_result : op->result;
    char *scratch = malloc((size_t)op->count * op->extent + 1);
    int rc = scratch ? MPI_SUCCESS : MPI_ERR_NO_MEM, synced;
    synced = mpix_spin_barrier(op->spin);
    /* Every process calls MPI_Allreduce, even one without memory, so none is left in it. */
    int reduced = PMPI_Allreduce(sendbuf == MPI_IN_PLACE ? mine : sendbuf, scratch ? scratch : mine, scratch ? op->count : 0,
                                 op->datatype, op->op, op->hy_comm);
    rc = rc != MPI_SUCCESS ? rc : reduced;
    if (synced == MPI_SUCCESS)
        synced = mpix_spin_barrier(op->spin); /* nobody reads the old result any more */
    if ((op->small || hy->node_rank == 0) && rc == MPI_SUCCESS)
        rc = mpix_hy_copy(op, result, scratch, op->count);
    if (synced == MPI_SUCCESS)
        synced = mpix_spin_barrier(op->spin);
    free(scratch);
    return mpix_raise_win(win, rc != MPI_SUCCESS ? rc : synced);
}

/* Three steps on the node: everyone is done reading the last result (a barrier, needed
 * only when part of a send buffer is written into the result), every input is written
 * (a barrier), every slice is reduced; on one node the last is a barrier too, on several the
 * leader collects, combines nodes and signals. */
MPIX_API int MPIX_Hy_allreduce(const void *sendbuf, MPI_Win win)
{
    mpix_hy_op *op;
    int rc = mpix_hy_op_of(win, MPIX_HY_ALLREDUCE, "MPIX_Hy_allreduce", &op);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!op->commutative)
        return allreduce_by_mpi(op, sendbuf, win);
    if (op->small)
        return allreduce_small(op, sendbuf, win);
    mpix_hy_state *hy = op->hy;
    size_t element = (size_t)op->extent, vector = (size_t)op->count * element;

    /* In place the caller wrote its slot already, after its node had read the last
     * result; out of place the inputs go into the slots, or partly into the result behind
     * a barrier (write_inputs). Then one barrier says every input is there. */
    int synced = MPI_SUCCESS;
    if (sendbuf != MPI_IN_PLACE) {
        if (!op->inputs_in_slots)
            synced = mpix_spin_barrier(op->spin);
        if (synced == MPI_SUCCESS)
            rc = write_inputs(op, sendbuf);
    }
    if (synced == MPI_SUCCESS)
        synced = mpix_spin_barrier(op->spin);
    if (rc == MPI_SUCCESS && synced == MPI_SUCCESS)
        rc = sendbuf == MPI_IN_PLACE ? mpix_hy_reduce_slice(op, op->slots, vector, op->result)
                                     : reduce_own_slice(op, sendbuf);
    if (synced != MPI_SUCCESS)
        return synced; /* raised already */
    if (hy->nodes == 1) {
        synced = mpix_spin_barrier(op->spin);
    } else if (hy->node_rank == 0) {
        synced = mpix_spin_collect(op->spin);
        if (rc == MPI_SUCCESS && synced == MPI_SUCCESS)
            rc = PMPI_Allreduce(MPI_IN_PLACE, op->result, op->count, op->datatype, op->op, hy->bridge_comm);
        int signalled = mpix_spin_signal(op->spin); /* also after a failure: nobody is left waiting */
        synced = synced != MPI_SUCCESS ? synced : signalled;
    } else {
        synced = mpix_spin_arrive_and_wait(op->spin);
    }
    return mpix_raise_win(win, rc != MPI_SUCCESS ? rc : synced);
}
