/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Hy_comm_create: the two-level split, by node, NUMA domain, package or virtual
 * nodes of k consecutive world ranks, and the rank tables every collective uses. */
#include "hy.h"
#include "common/numa.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/keyval.h"
#include "common/lines.h"
#include "common/self_state.h"
#include "common/topo.h"
#include "common/verbose.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { SPLIT_NODE, SPLIT_NUMA, SPLIT_SOCKET }; /* keyword order of mpix_hy_split */

/* The first failure's code, after freeing everything. */
static int free_state(mpix_hy_state *hy)
{
    int rc = MPI_SUCCESS, freed;
    if (hy->node_comm != MPI_COMM_NULL && (freed = PMPI_Comm_free(&hy->node_comm)) != MPI_SUCCESS)
        rc = freed;
    if (hy->bridge_comm != MPI_COMM_NULL && (freed = PMPI_Comm_free(&hy->bridge_comm)) != MPI_SUCCESS && rc == MPI_SUCCESS)
        rc = freed;
    if (hy->exchange_comm != MPI_COMM_NULL && (freed = PMPI_Comm_free(&hy->exchange_comm)) != MPI_SUCCESS &&
        rc == MPI_SUCCESS)
        rc = freed;
    free(hy->node_of);
    free(hy->node_rank_of);
    free(hy->node_sizes);
    free(hy->member_offset);
    free(hy->members);
    free(hy);
    return rc;
}

/* Runs inside MPI_Comm_free on every process, so the inner frees match up. */
static int delete_hy_state(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    return free_state(value);
}

static mpix_keyval hy_keyval = MPIX_COMM_KEYVAL_INIT(delete_hy_state);

mpix_hy_state *mpix_hy_state_of(MPI_Comm hy_comm)
{
    void *state = NULL;
    if (hy_comm == MPI_COMM_NULL || mpix_comm_attr_get(hy_comm, &hy_keyval, &state) != MPI_SUCCESS)
        return NULL;
    return state;
}

/* The node communicator for the split unit in @split, how many processes of @comm share
 * this machine, and with the numa split the domain (OS index) whose memory the node's
 * buffers go to. */
static int split_nodes(MPI_Comm comm, const mpix_hint_value *split, MPI_Comm *node_comm, int *machine_size,
                       int *numa_os_index)
{
    *numa_os_index = -1;
    MPI_Comm shared;
    int rank, rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_size(shared, machine_size)) != MPI_SUCCESS) {
        (void)PMPI_Comm_free(&shared); /* cleanup: rc is the error to report */
        return rc;
    }
    if (!split->present || split->keyword == SPLIT_NODE) {
        *node_comm = shared;
        return MPI_SUCCESS;
    }
    int color = 0;
    if (split->keyword == SPLIT_NUMA || split->keyword == SPLIT_SOCKET) {
        mpix_locality where;
        int found = mpix_topo_locality(&where);
        int index = split->keyword == SPLIT_NUMA ? where.numa_node : where.package;
        color = found == MPI_SUCCESS && index >= 0 ? index : 0;
        if (found == MPI_SUCCESS && split->keyword == SPLIT_NUMA)
            *numa_os_index = where.numa_os_index;
    } else {
        /* Virtual nodes: k consecutive MPI_COMM_WORLD ranks of a physical node, whatever
         * the order of @comm, so reordered communicators see real non-block placement;
         * without the world model (MPI-4 sessions alone), k consecutive ranks of @comm. */
        MPI_Comm world_node;
        int world_node_rank;
        rc = PMPI_Comm_split_type(mpix_mpi_is_active() ? MPI_COMM_WORLD : comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                  &world_node);
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Comm_rank(world_node, &world_node_rank);
            int freed = PMPI_Comm_free(&world_node);
            rc = rc != MPI_SUCCESS ? rc : freed;
        }
        color = rc == MPI_SUCCESS ? world_node_rank / (int)split->integer : 0;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(comm, &rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_split(shared, color, rank, node_comm);
    int freed = PMPI_Comm_free(&shared);
    return rc != MPI_SUCCESS ? rc : freed;
}

static int build_tables(MPI_Comm comm, mpix_hy_state *hy)
{
    int mine[2] = { hy->node, hy->node_rank }, *all = malloc(2 * hy->size * sizeof *all);
    hy->node_of = malloc(hy->size * sizeof *hy->node_of);
    hy->node_rank_of = malloc(hy->size * sizeof *hy->node_rank_of);
    hy->node_sizes = calloc(hy->nodes, sizeof *hy->node_sizes);
    hy->member_offset = calloc(hy->nodes + 1, sizeof *hy->member_offset);
    hy->members = malloc(hy->size * sizeof *hy->members);
    if (!all || !hy->node_of || !hy->node_rank_of || !hy->node_sizes || !hy->member_offset || !hy->members) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    int rc = PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    for (int r = 0; rc != MPI_SUCCESS && r < hy->size; r++)
        all[2 * r] = all[2 * r + 1] = 0; /* tables stay in bounds; the code is returned */
    for (int r = 0; r < hy->size; r++) {
        hy->node_of[r] = all[2 * r];
        hy->node_rank_of[r] = all[2 * r + 1];
        hy->node_sizes[all[2 * r]]++;
    }
    for (int j = 0; j < hy->nodes; j++)
        hy->member_offset[j + 1] = hy->member_offset[j] + hy->node_sizes[j];
    for (int r = 0; r < hy->size; r++)
        hy->members[hy->member_offset[all[2 * r]] + all[2 * r + 1]] = r;
    hy->block = 1;
    for (int i = 0; i < hy->size; i++)
        hy->block &= hy->members[i] == i;
    free(all);
    return rc;
}

/* How a small allreduce's node sums travel, for MPIX_VERBOSE. */
static const char *exchange_way(const mpix_hy_exchange *exchange)
{
    return !exchange         ? "leaders combine"
           : exchange->every ? "node sums traded by every process"
                             : "node sums traded by pairs";
}

MPIX_API int MPIX_Hy_comm_create(MPI_Comm comm, MPI_Info info, MPI_Comm *hy_comm)
{
    mpix_hint_value split;
    mpix_hy_state *hy = calloc(1, sizeof *hy);
    int rc = hy ? mpix_hint_get(info, MPIX_HINT_HY_SPLIT, &split) : MPI_ERR_NO_MEM;
    long long virtual_node_ranks = 0;
    int small_nodes = 0; /* a testing setting: the small allreduce's way across nodes */

    if (rc == MPI_SUCCESS)
        rc = mpix_hint_keyword(MPI_INFO_NULL, MPIX_HINT_HY_SMALL_NODES, &small_nodes);
    /* Virtual nodes (a testing setting) stand in for a split nobody asked for. */
    if (rc == MPI_SUCCESS && !split.present)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_VIRTUAL_NODE_RANKS, &virtual_node_ranks);
    if (rc == MPI_SUCCESS && !split.present && virtual_node_ranks > 0) {
        split.present = 1;
        split.keyword = -1;
        split.integer = virtual_node_ranks;
        snprintf(split.text, sizeof split.text, "%lld", virtual_node_ranks);
    }
    if (rc == MPI_SUCCESS)
        mpix_hint_report(info, "hy");

    if (rc == MPI_SUCCESS && !hy_comm)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Hy_comm_create: hy_comm is NULL");
    if (hy)
        hy->node_comm = hy->bridge_comm = hy->exchange_comm = MPI_COMM_NULL;
    if ((rc = mpix_agree(comm, rc)) != MPI_SUCCESS) {
        if (hy)
            free_state(hy);
        return mpix_raise_comm(comm, rc);
    }
    if ((rc = PMPI_Comm_rank(comm, &hy->rank)) == MPI_SUCCESS)
        rc = PMPI_Comm_size(comm, &hy->size);
    if (rc == MPI_SUCCESS)
        rc = split_nodes(comm, &split, &hy->node_comm, &hy->machine_size, &hy->numa_os_index);
    if (rc == MPI_SUCCESS && (rc = PMPI_Comm_rank(hy->node_comm, &hy->node_rank)) == MPI_SUCCESS &&
        (rc = PMPI_Comm_size(hy->node_comm, &hy->node_size)) == MPI_SUCCESS)
        rc = PMPI_Comm_split(comm, hy->node_rank == 0 ? 0 : MPI_UNDEFINED, hy->rank, &hy->bridge_comm);
    if (rc == MPI_SUCCESS) {
        int leader_view[2] = { 0, 0 };
        if (hy->bridge_comm != MPI_COMM_NULL && (rc = PMPI_Comm_rank(hy->bridge_comm, &leader_view[0])) == MPI_SUCCESS)
            rc = PMPI_Comm_size(hy->bridge_comm, &leader_view[1]);
        int sent = PMPI_Bcast(leader_view, 2, MPI_INT, 0, hy->node_comm);
        rc = rc != MPI_SUCCESS ? rc : sent;
        hy->node = leader_view[0];
        hy->nodes = leader_view[1];
    }
    if (rc == MPI_SUCCESS)
        rc = build_tables(comm, hy);
    if (rc == MPI_SUCCESS)
        rc = mpix_hy_exchange_open(comm, hy, small_nodes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_dup(comm, hy_comm);
    if (rc == MPI_SUCCESS && (rc = mpix_comm_attr_set(*hy_comm, &hy_keyval, hy)) != MPI_SUCCESS)
        (void)PMPI_Comm_free(hy_comm); /* cleanup: rc is the error to report */
    if (rc != MPI_SUCCESS) {
        free_state(hy);
        return mpix_raise_comm(comm, rc);
    }
    char small_way[160] = "one node";
    if (hy->nodes > 1)
        snprintf(small_way, sizeof small_way, "MPIX_Hy_* %s, Wrapper_* %s", exchange_way(hy->exchange),
                 exchange_way(hy->wrapper_exchange));
    mpix_verbose(info, "hy", "split %s: node %d of %d, node rank %d of %d, %s placement; small allreduce: %s",
                 split.present ? split.text : "node", hy->node, hy->nodes, hy->node_rank, hy->node_size,
                 hy->block ? "block" : "non-block (reordered)", small_way);
    return MPI_SUCCESS;
}

void mpix_hy_place(const mpix_hy_state *hy, void *base, MPI_Aint bytes)
{
    if (hy->numa_os_index < 0 || hy->node_rank != 0 || bytes <= 0)
        return;
    /* libnuma places whole pages: from the page holding the first byte. */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)base & ~(page - 1);
    mpix_numa_place((void *)start, (size_t)((uintptr_t)base + (uintptr_t)bytes - start), hy->numa_os_index);
}

MPIX_API int MPIX_Hy_comm_query(MPI_Comm hy_comm, MPI_Comm *node_comm, MPI_Comm *bridge_comm, int *node, int *nodes)
{
    mpix_hy_state *hy = mpix_hy_state_of(hy_comm);
    if (!hy)
        return mpix_raise_comm(hy_comm, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                                   "MPIX_Hy_comm_query: not a communicator from MPIX_Hy_comm_create"));
    if (!node_comm || !bridge_comm || !node || !nodes)
        return mpix_raise_comm(hy_comm, mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Hy_comm_query: an output is NULL"));
    *node_comm = hy->node_comm;
    *bridge_comm = hy->bridge_comm;
    *node = hy->node;
    *nodes = hy->nodes;
    return MPI_SUCCESS;
}

int mpix_hy_node_buffer(const mpix_hy_state *hy, MPI_Aint bytes, int disp_unit, void *base, MPI_Win *win)
{
    MPI_Aint size;
    int unit, rc = MPIX_Win_allocate_shared(hy->node_rank == 0 ? mpix_aligned_bytes(bytes, MPIX_LINE_BYTES) : 0,
                                            disp_unit, MPI_INFO_NULL, hy->node_comm, base, win);
    if (rc == MPI_SUCCESS)
        rc = MPIX_Win_shared_query(*win, 0, &size, &unit, base);
    if (rc == MPI_SUCCESS) /* layouts in cache lines (common/lines.h) */
        *(void **)base = mpix_aligned(*(void **)base, MPIX_LINE_BYTES);
    return rc;
}
