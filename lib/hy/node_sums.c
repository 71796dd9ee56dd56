/* SPDX-License-Identifier: BSD-3-Clause */
/* Small allreduce on several nodes without a leader: every process of a node has the
 * node's sum (mpix_hy_small_reduce), so the exchange of node sums between nodes is
 * shared out among the node's processes in one message step. Two ways:
 *
 * - every process trades (nodes of equal size, at most EXCHANGE_PEERS_MAX other nodes):
 *   node rank r of each node sends its node's sum to node rank r of every other node and
 *   receives theirs into private memory, so each folds every node's sum itself: one
 *   publication step on the node and one message step. 8-byte MPIX_Hy_allreduce, against
 *   Open MPI's MPI_Allreduce or the way it replaced:
 *   4 ranks as 2 nodes of 2 on 2 cores (builds alternated, `mpix-bench --quick hy`)
 *   1.05-1.22x against 0.50-0.82x for the leaders' way
 *   (bench/results/hy-openmpi-4ranks-2vnodes-every-*.txt); 16 ranks on 16 cores, runs
 *   alternated: 2 nodes of 8 1.29-1.60 us against 1.72-2.04 us traded by one pair, 3
 *   nodes of 4 (12 ranks) 1.38-1.70 against 1.58-1.88
 *   (bench/results/hy-openmpi-16core-every-*.txt); 2 nodes of 2 sharing 2 cores without
 *   knowing it (tools/vcluster) 398-438 against 718-858 us.
 * - one pair of processes per pair of nodes trades, and what they receive is published
 *   to the node like the inputs were: each pair of nodes costs one message, so it serves
 *   nodes of any sizes. Measured with 16 ranks on 16 cores, 8-byte MPIX_Hy_allreduce,
 *   runs alternated: 4 nodes of 4 (one partner) 1.88-1.99 us against 2.53-2.56 us for
 *   the leaders' way, 2 nodes of 8 1.74-1.83 against 1.89-1.95; 8 nodes of 2 (four
 *   partners, in a build that allowed them) 2.94-3.01 against 2.74 us. It opens where
 *   every process has at most EXCHANGE_PEERS_MAX nodes to trade with and no machine is
 *   oversubscribed, and MPIX_Hy_* takes it where every process cannot trade (unequal
 *   nodes, more than 3); otherwise the leaders' allreduce serves.
 *
 * Wrapper_* trades by every process only on oversubscribed machines: elsewhere each
 * process would store the result into the region and spin meanwhile, where the other
 * ways let all but the leader sleep (wrapper.c). It trades by pairs on more than two
 * nodes and takes the leaders' way otherwise. Both ways can serve one communicator, on
 * one duplicate: every process makes the same calls in the same order, so each pair of
 * processes' messages still match in call order.
 *
 * A process waiting for its messages tests them and yields one look in eight
 * (mpix_backoff_progress). */
#include "hy.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

enum { EXCHANGE_PEERS_MAX = MPIX_HY_EXCHANGE_PEERS_MAX, HEADER = MPIX_HY_SLOT_HEADER, TAG = 0 };

/* Node @offset (1 .. nodes-1) positions after node @node (mod nodes) is traded with by
 * node @node's process (offset - 1) mod its size, both ways, so each pair of nodes is
 * one pair of processes, the same every call. */
static int trader(const mpix_hy_state *hy, int node, int offset)
{
    return (offset - 1) % hy->node_sizes[node];
}

enum { WAY_AUTO, WAY_TRADE, WAY_LEADERS, WAY_EVERY }; /* keyword order of mpix_hy_small_nodes */

/* Every process trades when every node has the same size and each has at most
 * EXCHANGE_PEERS_MAX others: node rank r of one node with node rank r of each other. */
static void open_every(mpix_hy_state *hy)
{
    mpix_hy_exchange *every = &hy->every;
    if (hy->nodes - 1 > EXCHANGE_PEERS_MAX)
        return;
    for (int node = 0; node < hy->nodes; node++)
        if (hy->node_sizes[node] != hy->node_size)
            return;
    for (int node = 0; node < hy->nodes; node++) {
        if (node == hy->node)
            continue;
        every->peer_node[every->peers] = node;
        every->peer_rank[every->peers++] = hy->members[hy->member_offset[node] + hy->node_rank];
    }
    every->open = every->every = 1;
}

/* One pair of processes per pair of nodes, where each process trades with at most
 * EXCHANGE_PEERS_MAX nodes ((nodes - 1) / its node's size, rounded up). */
static void open_pairs(mpix_hy_state *hy)
{
    mpix_hy_exchange *pairs = &hy->pairs;
    for (int node = 0; node < hy->nodes; node++)
        if ((hy->nodes - 1 + hy->node_sizes[node] - 1) / hy->node_sizes[node] > EXCHANGE_PEERS_MAX)
            return;
    for (int offset = 1; offset < hy->nodes; offset++) {
        if (trader(hy, hy->node, offset) != hy->node_rank)
            continue;
        int node = (hy->node + offset) % hy->nodes;
        int node_rank = trader(hy, node, hy->nodes - offset);
        pairs->peer_node[pairs->peers] = node;
        pairs->peer_rank[pairs->peers++] = hy->members[hy->member_offset[node] + node_rank];
    }
    pairs->open = 1;
}

int mpix_hy_exchange_open(MPI_Comm comm, mpix_hy_state *hy, int way)
{
    hy->exchange_comm = MPI_COMM_NULL;
    hy->every = hy->pairs = (mpix_hy_exchange){ 0 };
    hy->exchange = hy->wrapper_exchange = NULL;
    if (hy->nodes < 2 || way == WAY_LEADERS)
        return MPI_SUCCESS;
    /* Whether each machine's processes fit its hardware threads. Where they do not, a
     * pair trader is the one process of its node that its others wait for, twice a call
     * (its sum, then what it received): 4 ranks as 2 nodes on 2 cores, 8 B, MPICH, 94-275
     * us traded against 24-28 us by the leaders (Open MPI 5.1 against 6.4 us); every
     * process trading waits for no one of its node but its own message step. Every
     * process must choose alike, and machines differ: agreed over @comm. */
    int fits = mpix_hy_spin_polls(hy) > 0, agreed[2], rc;
    int mine[2] = { fits, -fits }; /* minimum: all fit; minus the maximum: any fits */
    if ((rc = PMPI_Allreduce(mine, agreed, 2, MPI_INT, MPI_MIN, comm)) != MPI_SUCCESS)
        return rc;
    int all_fit = agreed[0], oversubscribed = agreed[1] == 0;
    /* The node tables are the same on every process, so every process chooses alike. */
    if (way == WAY_EVERY || way == WAY_AUTO)
        open_every(hy);
    if (way == WAY_TRADE || all_fit)
        open_pairs(hy);
    const mpix_hy_exchange *pairs = hy->pairs.open ? &hy->pairs : NULL;
    hy->exchange = hy->every.open ? &hy->every : pairs;
    /* Wrapper_*: see the top of this file; pairs on two nodes lose to its leaders. */
    hy->wrapper_exchange = hy->every.open && (oversubscribed || way == WAY_EVERY) ? &hy->every
                           : hy->nodes > 2                                        ? pairs
                                                                                  : NULL;
    if (!hy->exchange && !hy->wrapper_exchange)
        return MPI_SUCCESS;
    /* The library's own messages never meet the program's on the hybrid communicator. */
    return PMPI_Comm_dup(comm, &hy->exchange_comm);
}

size_t mpix_hy_node_sums_bytes(const mpix_hy_state *hy, const mpix_hy_exchange *exchange, size_t slot)
{
    return exchange && !exchange->every ? 2 * (size_t)hy->nodes * slot : 0;
}

size_t mpix_hy_node_sum_bytes(const mpix_hy_exchange *exchange, size_t vector)
{
    return (exchange->every ? 1 + (size_t)exchange->peers : 1) * vector + 1; /* never 0 bytes */
}

static char *sum_slot(const mpix_hy_op *op, int node, unsigned parity)
{
    return op->sums + ((size_t)parity * op->hy->nodes + (size_t)node) * op->small_slot;
}

void mpix_hy_node_sums_reset(const mpix_hy_op *op)
{
    const mpix_hy_exchange *pairs = op->exchange;
    if (!pairs || pairs->every)
        return;
    for (int peer = 0; peer < pairs->peers; peer++)
        for (unsigned parity = 0; parity < 2; parity++)
            atomic_store((_Atomic uint32_t *)sum_slot(op, pairs->peer_node[peer], parity), 0);
}

/* Where @peer's node sum lands: in every-process trading this process's private memory
 * after its own node's sum, otherwise the node's slot for that node. */
static char *received_sum(const mpix_hy_op *op, int peer, unsigned parity)
{
    size_t vector = (size_t)op->count * (size_t)op->extent;
    return op->exchange->every ? op->node_sum + (1 + (size_t)peer) * vector
                               : sum_slot(op, op->exchange->peer_node[peer], parity) + HEADER;
}

/* A waiting process tests its requests and yields now and then: Open MPI's progress
 * yields by itself where ranks outnumber cores, MPICH 4.0's never does (MPI_Waitall there
 * holds the core the peer needs: 4 ranks on 2 cores took milliseconds a call). */
static int wait_all(int count, MPI_Request *requests, MPI_Status *statuses)
{
    int done = 0, rc = MPI_SUCCESS;
    for (unsigned long poll = 0; rc == MPI_SUCCESS && !done; poll++) {
        rc = PMPI_Testall(count, requests, &done, statuses);
        if (rc == MPI_SUCCESS && !done)
            mpix_backoff_progress(poll);
    }
    return rc;
}

/* Receives land in private memory or in the node's slots directly. The slots of one
 * parity are free when a call starts: every process of the node that folds (all, or
 * with @into NULL elsewhere only the leader) read them two calls ago, before it
 * published the last call's input, which this process saw. Private memory is free once
 * the last call returned. Messages of a pair of processes match in call order (one tag,
 * one communicator), and a message only lands once received here. */
int mpix_hy_small_reduce_nodes(mpix_hy_op *op, const void *input, void *into)
{
    mpix_hy_state *hy = op->hy;
    const mpix_hy_exchange *exchange = op->exchange;
    unsigned call = op->calls + 1, parity = call & 1;
    MPI_Request requests[2 * EXCHANGE_PEERS_MAX];
    MPI_Status statuses[2 * EXCHANGE_PEERS_MAX]; /* not MPI_STATUSES_IGNORE: GCC takes MPICH's for an array */
    int posted = 0, rc = MPI_SUCCESS, step;
    for (int peer = 0; peer < exchange->peers && rc == MPI_SUCCESS; peer++)
        if ((rc = PMPI_Irecv(received_sum(op, peer, parity), op->count, op->datatype, exchange->peer_rank[peer], TAG,
                             hy->exchange_comm, &requests[posted])) == MPI_SUCCESS)
            posted++;
    step = mpix_hy_small_reduce(op, input, op->node_sum);
    rc = rc != MPI_SUCCESS ? rc : step;
    /* Sent even after a failure, so no peer waits for it forever. */
    for (int peer = 0; peer < exchange->peers; peer++)
        if ((step = PMPI_Isend(op->node_sum, op->count, op->datatype, exchange->peer_rank[peer], TAG, hy->exchange_comm,
                               &requests[posted])) == MPI_SUCCESS)
            posted++;
        else if (rc == MPI_SUCCESS)
            rc = step;
    if (posted > 0 && (step = wait_all(posted, requests, statuses)) != MPI_SUCCESS && rc == MPI_SUCCESS)
        rc = step;
    if (!exchange->every) {
        /* Published even after a failure: nobody is left waiting. */
        for (int peer = 0; peer < exchange->peers; peer++)
            mpix_hy_publish(sum_slot(op, exchange->peer_node[peer], parity), call);
        if (!into)
            return rc;
        for (int node = 0; node < hy->nodes; node++)
            if (node != hy->node)
                mpix_hy_await(op, sum_slot(op, node, parity), call);
    }
    /* Node sums in node order, as every process of every node folds them: the same bits
     * everywhere. */
    for (int node = 0, peer = 0; node < hy->nodes && rc == MPI_SUCCESS; node++) {
        const char *sum = node == hy->node ? op->node_sum
                          : exchange->every ? received_sum(op, peer++, parity)
                                            : sum_slot(op, node, parity) + HEADER;
        rc = node == 0 ? mpix_hy_copy(op, into, sum, op->count)
                       : PMPI_Reduce_local(sum, into, op->count, op->datatype, op->op);
    }
    return rc;
}
