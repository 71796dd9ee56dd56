/* SPDX-License-Identifier: BSD-3-Clause */
#include "window.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"
#include "guard/exposed.h"
#include "spin/control.h"

#include <stdlib.h>

/* Peers' segments are reached through /proc/<pid>/fd, which names a process of this
 * node only: a communicator spanning nodes is refused before anything is opened. */
static int check_one_node(MPI_Comm comm)
{
    MPI_Comm node_comm;
    int ranks, node_ranks, rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_size(comm, &ranks)) == MPI_SUCCESS)
        rc = PMPI_Comm_size(node_comm, &node_ranks);
    int free_rc = PMPI_Comm_free(&node_comm);
    if (rc != MPI_SUCCESS || free_rc != MPI_SUCCESS)
        return rc != MPI_SUCCESS ? rc : free_rc;
    if (node_ranks != ranks)
        return mpix_error(MPIX_ERRKIND_ARGUMENT,
                          "MPIX_Win_allocate_shared: the communicator's %d processes span several nodes (%d on this one)",
                          ranks, node_ranks);
    return MPI_SUCCESS;
}

/* Every shared window carries a spin control block (mpix/spin.h). */
static int attach_spin(MPI_Win *win, MPI_Comm comm, MPI_Info info)
{
    int rc = mpix_agree(comm, mpix_spin_attach(*win, comm, info));
    if (rc != MPI_SUCCESS) {
        MPIX_Win_free(win);
        return mpix_raise_comm(comm, rc);
    }
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                      MPI_Win *win)
{
    mpix_storage_config config;
    mpix_storage_window *state;
    mpix_segment *segments;
    int any_storage = 0, ranks, rc;

    rc = mpix_storage_begin(size, disp_unit, info, comm, baseptr, win, "MPIX_Win_allocate_shared", &config,
                            &any_storage);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);
    if (!any_storage) {
        rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
        if (rc == MPI_SUCCESS)
            rc = mpix_raise_comm(comm, mpix_guard_expose_window(*win));
        return rc == MPI_SUCCESS ? attach_spin(win, comm, info) : rc;
    }
    rc = mpix_agree(comm, check_one_node(comm));
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);

    if ((rc = PMPI_Comm_size(comm, &ranks)) != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);
    state = mpix_storage_window_new();
    segments = malloc(ranks * sizeof *segments);
    if (!state || !segments) {
        free(segments);
        free(state);
        return mpix_raise_comm(comm, MPI_ERR_NO_MEM);
    }
    state->shared = 1;
    rc = mpix_storage_plan(state, comm, &config, size, disp_unit, 1);
    /* Peers open our descriptors next: every rank must have its own ready first. */
    rc = mpix_agree(comm, rc);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(&state->region.mine, sizeof(mpix_segment), MPI_BYTE, segments, sizeof(mpix_segment),
                           MPI_BYTE, comm);
    if (rc == MPI_SUCCESS)
        rc = mpix_agree(comm, mpix_storage_region_map(&state->region, segments, ranks, state->rank));
    free(segments);
    if (rc != MPI_SUCCESS)
        return mpix_storage_abandon(state, comm, rc, win);
    rc = mpix_storage_expose(state, state->region.segment_base[state->rank], size, disp_unit, info, comm,
                             "MPIX_Win_allocate_shared", baseptr, win);
    /* Every segment is mapped here: guard finishes transfers on any of them in their call. */
    for (int i = 0; i < ranks && rc == MPI_SUCCESS; i++) {
        MPI_Aint segment_size;
        int segment_disp_unit;
        void *segment_base;
        rc = MPIX_Win_shared_query(*win, i, &segment_size, &segment_disp_unit, &segment_base);
        if (rc == MPI_SUCCESS)
            rc = mpix_raise_win(*win, mpix_guard_expose_memory(*win, segment_base, segment_size, 0));
    }
    return rc == MPI_SUCCESS ? attach_spin(win, comm, info) : rc;
}

MPIX_API int MPIX_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    mpix_storage_window *state = mpix_storage_window_of(win);
    mpix_storage_region *region;

    if (!state || !state->shared)
        return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    region = &state->region;
    if (rank == MPI_PROC_NULL) {
        /* As MPI: the first segment of non-zero size, or size 0 when all are empty. */
        for (rank = 0; rank < region->segment_count - 1 && region->segments[rank].size == 0; rank++)
            ;
    }
    if (rank < 0 || rank >= region->segment_count)
        return mpix_raise_win(win, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                              "MPIX_Win_shared_query: rank %d is not in the window's group of %d",
                                              rank, region->segment_count));
    *size = (MPI_Aint)region->segments[rank].size;
    *disp_unit = region->segments[rank].disp_unit;
    *(void **)baseptr = region->segment_base[rank];
    return MPI_SUCCESS;
}
