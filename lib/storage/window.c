/* SPDX-License-Identifier: BSD-3-Clause */
#include "window.h"
#include "node_memory.h"
#include "common/agree.h"
#include "common/api.h"
#include "common/error.h"
#include "common/keyval.h"
#include "common/verbose.h"
#include "common/window.h"
#include "guard/exposed.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* @completed: the window existed (flush unless discard, unlink only if asked); otherwise
 * a failed allocation is undone (remove only files it created). */
static int destroy_state(mpix_storage_window *state, int completed)
{
    int rc = mpix_storage_region_destroy(&state->region, completed);
    free(state->attached);
    free(state);
    return rc;
}

/* Reached through MPI_Win_free or MPIX_Win_free. MPICH deletes attributes before the
 * closing synchronisation of MPI_Win_free, so only MPIX_Win_free (which sets
 * `freeing` and tears down after MPI_Win_free returns) is safe against a passive-target
 * peer still inside an epoch; a plain MPI_Win_free still releases everything. */
static int delete_window_state(MPI_Win win, int keyval, void *value, void *extra)
{
    mpix_storage_window *state = value;
    (void)win, (void)keyval, (void)extra;
    if (!state->freeing)
        destroy_state(state, 1);
    return MPI_SUCCESS;
}

static mpix_keyval window_keyval = MPIX_WIN_KEYVAL_INIT(delete_window_state);

mpix_storage_window *mpix_storage_window_new(void)
{
    mpix_storage_window *state = calloc(1, sizeof *state);
    mpix_storage_config no_hints = { 0 };
    if (state && mpix_storage_region_open(&state->region, &no_hints, 0) != MPI_SUCCESS) {
        free(state);
        state = NULL;
    }
    return state;
}

mpix_storage_window *mpix_storage_window_of(MPI_Win win)
{
    void *state = NULL;
    if (win == MPI_WIN_NULL || mpix_win_attr_get(win, &window_keyval, &state) != MPI_SUCCESS)
        return NULL;
    return state;
}

int mpix_storage_window_attach_state(MPI_Win win, mpix_storage_window *state)
{
    return mpix_win_attr_set(win, &window_keyval, state);
}

static int check_arguments(MPI_Aint size, int disp_unit, const void *baseptr, const MPI_Win *win, const char *call)
{
    if (!baseptr || !win)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: the %s argument is NULL", call, !baseptr ? "baseptr" : "win");
    if (size < 0)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: size %ld is negative", call, (long)size);
    if (disp_unit <= 0)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: disp_unit %d is not positive", call, disp_unit);
    return MPI_SUCCESS;
}

int mpix_storage_begin(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, const void *baseptr,
                       const MPI_Win *win, const char *call, mpix_storage_config *config, int *any_storage)
{
    int rc = check_arguments(size, disp_unit, baseptr, win, call);
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_config_parse(info, config);
    rc = mpix_agree(comm, rc);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Allreduce(&config->storage, any_storage, 1, MPI_INT, MPI_LOR, comm);
}

/* Collective: how many of this rank's @size bytes stay in memory (factor, or auto). */
static int memory_bytes_of(MPI_Comm comm, const mpix_storage_config *config, long long size,
                              long long *memory_bytes)
{
    int auto_here = config->storage && config->factor_auto, auto_anywhere = 0, rc;
    double fraction = !config->storage ? 1.0 : config->factor;
    long long storage_bytes;

    rc = PMPI_Allreduce(&auto_here, &auto_anywhere, 1, MPI_INT, MPI_LOR, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (auto_anywhere) {
        MPI_Comm node_comm;
        long long request = auto_here ? size : (long long)(fraction * (double)size);
        rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
        if (rc != MPI_SUCCESS)
            return rc;
        long long share = 0;
        rc = mpix_storage_fair_share(node_comm, request, mpix_storage_node_memory(config->node_memory), &share);
        int free_rc = PMPI_Comm_free(&node_comm);
        if (rc == MPI_SUCCESS)
            rc = free_rc;
        if (rc != MPI_SUCCESS)
            return rc;
        if (auto_here) {
            fraction = size > 0 ? (double)share / (double)size : 1.0;
            if (config->verbose)
                mpix_verbose_print("storage", "factor=auto: %lld of %lld bytes fit in this rank's memory share",
                                   share, size);
        }
    }
    mpix_segment_split(size, fraction, config->storage_first, memory_bytes, &storage_bytes);
    return MPI_SUCCESS;
}

int mpix_storage_plan(mpix_storage_window *state, MPI_Comm comm, const mpix_storage_config *config,
                      MPI_Aint size, int disp_unit, int shareable)
{
    long long memory_bytes = size;
    int rc;

    long long storage_offset = 0;
    if ((rc = PMPI_Comm_rank(comm, &state->rank)) != MPI_SUCCESS)
        return rc;
    rc = memory_bytes_of(comm, config, size, &memory_bytes);
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_region_open(&state->region, config, size - memory_bytes);
    /* Collective: every rank takes part, failed or not. */
    int layout_rc = mpix_storage_region_layout(&state->region, comm, size - memory_bytes, &storage_offset);
    if (rc == MPI_SUCCESS)
        rc = layout_rc;
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_region_prepare(&state->region, size, disp_unit, memory_bytes, storage_offset, shareable);
    return rc;
}

/* The alignment MPI rounded @base down to, reaching @kept; 0 if it did something else. */
static long long base_alignment(const void *base, const void *kept)
{
    for (uintptr_t alignment = 2; alignment <= (uintptr_t)mpix_page_size(); alignment <<= 1)
        if (((uintptr_t)base & ~(alignment - 1)) == (uintptr_t)kept)
            return (long long)alignment;
    return 0;
}

/* One-sided operations reach base + disp * disp_unit only if MPI keeps the base it was
 * given. MPICH 4.0 over UCX 1.13 or later replaces it with the base UCX registered, which
 * UCX aligns down to 16 bytes (fixed in MPICH 4.1, pmodels/mpich#6140): a window at a file
 * offset that is not a multiple of 16 would take every put a few bytes early, silently. */
static int check_base(MPI_Win win, void *base, MPI_Aint size, long long file_offset)
{
    void *kept = NULL;
    int found = 0, rc;
    if (size <= 0)
        return MPI_SUCCESS;
    if ((rc = PMPI_Win_get_attr(win, MPI_WIN_BASE, &kept, &found)) != MPI_SUCCESS)
        return rc;
    if (!found || kept == base)
        return MPI_SUCCESS;
    long long alignment = base_alignment(base, kept);
    return mpix_error(MPIX_ERRKIND_UNSUPPORTED,
                      "MPI_Win_create moved the window base from %p to %p: one-sided operations would be off by "
                      "%td bytes; this MPI aligns window bases to %lld bytes or more, and storage_alloc_offset "
                      "(%lld) must follow",
                      base, kept, (char *)base - (char *)kept, alignment ? alignment : mpix_page_size(),
                      file_offset);
}

int mpix_storage_expose(mpix_storage_window *state, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                        MPI_Comm comm, const char *call, void *baseptr, MPI_Win *win)
{
    int rc = mpix_storage_create_window(base, size, disp_unit, info, comm, win);
    if (rc == MPI_SUCCESS)
        rc = check_base(*win, base, size, state->region.config.offset);
    rc = mpix_agree(comm, rc);
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_window_attach_state(*win, state);
    if (rc != MPI_SUCCESS) {
        if (*win != MPI_WIN_NULL)
            (void)PMPI_Win_free(win); /* cleanup: rc is the error to report */
        return mpix_storage_abandon(state, comm, rc, win);
    }
    mpix_storage_region_describe(&state->region, call);
    *(void **)baseptr = base;
    return MPI_SUCCESS;
}

int mpix_storage_create_window(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    MPI_Errhandler previous;
    char reason[MPI_MAX_ERROR_STRING];
    int rc, ranks, length;

    /* MPI would raise its bare code on the user's handler first; mpix raises its own,
     * which says what to do. */
    if ((rc = PMPI_Comm_get_errhandler(comm, &previous)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return rc;
    rc = PMPI_Win_create(base, size, disp_unit, info, comm, win);
    int restore_rc = PMPI_Comm_set_errhandler(comm, previous);
    if (restore_rc == MPI_SUCCESS)
        restore_rc = PMPI_Errhandler_free(&previous);
    if (rc == MPI_SUCCESS)
        return restore_rc;
    if (PMPI_Comm_size(comm, &ranks) != MPI_SUCCESS || PMPI_Error_string(rc, reason, &length) != MPI_SUCCESS)
        return rc;
#if defined(OPEN_MPI)
    /* Open MPI 4.1 makes a window over memory it did not allocate with osc/rdma or
     * osc/ucx: the first fails over one process (ompi#10726) and, where its
     * shared-memory transport has no single-copy mechanism, over any group; the second
     * needs UCX transports. osc/pt2pt, over point-to-point messages, makes them all. */
    if (ranks == 1)
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED,
                          "MPI_Win_create over one process failed (%s): Open MPI 4.1's osc/rdma cannot "
                          "(open-mpi/ompi#10726); run with OMPI_MCA_osc=sm,ucx,rdma (sm,pt2pt without UCX transports)",
                          reason);
    return mpix_error(MPIX_ERRKIND_UNSUPPORTED,
                      "MPI_Win_create over %d processes failed (%s): Open MPI 4.1's osc/rdma needs a single-copy "
                      "btl_vader_single_copy_mechanism (or RDMA), osc/ucx UCX transports; else run with "
                      "OMPI_MCA_osc=sm,pt2pt",
                      ranks, reason);
#endif
    return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "MPI_Win_create over %d processes failed: %s", ranks, reason);
}

int mpix_storage_abandon(mpix_storage_window *state, MPI_Comm comm, int code, MPI_Win *win)
{
    *win = MPI_WIN_NULL;
    destroy_state(state, 0);
    return mpix_raise_comm(comm, code);
}

MPIX_API int MPIX_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    mpix_storage_config config;
    mpix_storage_window *state;
    int any_storage = 0, rc;

    rc = mpix_storage_begin(size, disp_unit, info, comm, baseptr, win, "MPIX_Win_allocate", &config, &any_storage);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);
    if (!any_storage) {
        rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
        return rc == MPI_SUCCESS ? mpix_raise_comm(comm, mpix_guard_expose_window(*win)) : rc;
    }

    state = mpix_storage_window_new();
    if (!state)
        return mpix_raise_comm(comm, MPI_ERR_NO_MEM);
    rc = mpix_storage_plan(state, comm, &config, size, disp_unit, 0);
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_region_map(&state->region, &state->region.mine, 1, 0);
    rc = mpix_agree(comm, rc);
    if (rc != MPI_SUCCESS)
        return mpix_storage_abandon(state, comm, rc, win);
    rc = mpix_storage_expose(state, size > 0 ? state->region.segment_base[0] : NULL, size, disp_unit, info, comm,
                             "MPIX_Win_allocate", baseptr, win);
    return rc == MPI_SUCCESS ? mpix_raise_comm(comm, mpix_guard_expose_window(*win)) : rc;
}

MPIX_API int MPIX_Win_free(MPI_Win *win)
{
    mpix_storage_window *state = win ? mpix_storage_window_of(*win) : NULL;
    int rc;

    if (!win)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Win_free: win is NULL"));
    /* The window's memory goes (and a storage window's is written back): a guarded
     * receive into it, or a send from it, finishes first, as the blocking call had. */
    int deferred = MPIX_Guard_complete_all();
    if (!state) {
        rc = PMPI_Win_free(win);
        return rc != MPI_SUCCESS ? rc : deferred;
    }
    state->freeing = 1;
    rc = PMPI_Win_free(win);
    if (rc != MPI_SUCCESS) {
        state->freeing = 0;
        return rc;
    }
    rc = mpix_raise(destroy_state(state, 1));
    return rc != MPI_SUCCESS ? rc : deferred;
}

/* MPI_Win_sync for a storage window, inside or outside a passive-target epoch. MPICH
 * refuses it outside one (MPI_ERR_RMA_SYNC); on a window of the unified model, which
 * MPI_Win_create gives on both MPIs, the call is a memory barrier, so a full fence
 * gives the same guarantee there. */
static int sync_window_copies(MPI_Win win)
{
    MPI_Errhandler previous;
    int rc, error_class, *model, found = 0;

    if ((rc = PMPI_Win_get_errhandler(win, &previous)) != MPI_SUCCESS ||
        (rc = PMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return rc;
    rc = PMPI_Win_sync(win);
    int restore_rc = PMPI_Win_set_errhandler(win, previous);
    if (restore_rc == MPI_SUCCESS)
        restore_rc = PMPI_Errhandler_free(&previous);
    if (rc == MPI_SUCCESS)
        return restore_rc;
    if (PMPI_Error_class(rc, &error_class) != MPI_SUCCESS ||
        PMPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &found) != MPI_SUCCESS)
        return rc;
    if (error_class == MPI_ERR_RMA_SYNC && found && *model == MPI_WIN_UNIFIED) {
        atomic_thread_fence(memory_order_seq_cst);
        return MPI_SUCCESS;
    }
    return rc;
}

MPIX_API int MPIX_Win_sync(MPI_Win win)
{
    mpix_storage_window *state = mpix_storage_window_of(win);
    /* What a guarded receive still owes the window is written before it is made visible
     * and durable (page protection in this process hides nothing from the file or from
     * other processes). */
    int deferred = MPIX_Guard_complete_all(), rc;

    if (!state) {
        rc = PMPI_Win_sync(win);
        return rc != MPI_SUCCESS ? rc : deferred;
    }
    rc = sync_window_copies(win);
    if (rc != MPI_SUCCESS)
        return mpix_raise_win(win, rc);
    rc = mpix_storage_region_sync(&state->region);
    for (int i = 0; i < state->attached_count && rc == MPI_SUCCESS; i++)
        rc = mpix_storage_region_sync(state->attached[i].region);
    rc = mpix_raise_win(win, rc);
    return rc != MPI_SUCCESS ? rc : deferred;
}

MPIX_API int MPIX_Win_flush_storage(int rank, MPI_Win win)
{
    mpix_storage_window *state;
    int ranks = 0, rc = mpix_win_group_size(win, &ranks);

    /* Not every MPI checks the rank of a flush (Open MPI 4.1's osc/sm does not). */
    if (rc != MPI_SUCCESS)
        return rc;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= ranks))
        return mpix_raise_win(win, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                              "MPIX_Win_flush_storage: rank %d is out of range (the window has %d)",
                                              rank, ranks));
    int deferred = MPIX_Guard_complete_all();   /* as MPIX_Win_sync */
    rc = PMPI_Win_flush(rank, win);
    if (rc != MPI_SUCCESS || !(state = mpix_storage_window_of(win)) || rank == MPI_PROC_NULL)
        return rc != MPI_SUCCESS ? rc : deferred;
    if (state->shared && rank >= 0 && rank < state->region.segment_count)
        rc = mpix_segment_sync(&state->region.segments[rank], state->region.segment_at[rank], NULL);
    else if (!state->shared && state->region.segment_count == 1 && rank == state->rank)
        rc = mpix_storage_region_sync(&state->region);
    else
        rc = mpix_error(MPIX_ERRKIND_UNSUPPORTED,
                        "MPIX_Win_flush_storage: rank %d's storage is not mapped by this process (not a shared "
                        "storage window on this node); RMA is complete, durability needs MPIX_Win_sync on rank %d",
                        rank, rank);
    rc = mpix_raise_win(win, rc);
    return rc != MPI_SUCCESS ? rc : deferred;
}
