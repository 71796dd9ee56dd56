/* SPDX-License-Identifier: BSD-3-Clause */
/* libmpix-pmpi.so, storage: an unchanged program's window calls become mpix's, so that
 * the storage hints in their info arguments (alloc_type=storage, storage_alloc_filename,
 * ...) take effect, and MPI_Win_sync makes storage durable. Without storage hints every
 * call behaves as MPI's (the MPIX_ calls say so of themselves). A program that passes no
 * hints can be given some from the environment (MPIX_STORAGE_DEFAULT_HINTS). */
#include <mpi.h>
#include <mpix/guard.h>
#include <mpix/storage.h>

#include "common/interpose.h"
#include "guard/preload.h"

/* guard's part of libmpix-pmpi.so (guard/preload.c) leaves the window calls to this file,
 * which records the memory a window exposes for it (guard/exposed.h) where guard_on(). */
static int storage_on(void) { return mpix_interpose_modules(MPIX_INTERPOSE_DEFAULT) & MPIX_INTERPOSE_STORAGE; }

typedef int window_allocation(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win);

/* Arguments MPI itself rejects go to MPI, which rejects them with its own classes
 * (MPI_ERR_SIZE, MPI_ERR_DISP, MPI_ERR_COMM, MPI_ERR_ARG), as without mpix. */
static int mpi_rejects(MPI_Aint size, int disp_unit, MPI_Comm comm)
{
    return size < 0 || disp_unit <= 0 || comm == MPI_COMM_NULL;
}

/* @mpix_call with the default hints added to @info, or MPI's @mpi_call when storage is off. */
static int allocate(window_allocation *mpix_call, window_allocation *mpi_call, MPI_Aint size, int disp_unit,
                    MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    int rc;
    if (!storage_on() || mpi_rejects(size, disp_unit, comm)) {
        rc = mpi_call(size, disp_unit, info, comm, baseptr, win);
    } else {
        MPI_Info merged;
        rc = mpix_interpose_default_hints(info, comm, &merged);
        if (rc == MPI_SUCCESS)
            rc = mpix_call(size, disp_unit, merged, comm, baseptr, win);
        if (merged != info)
            (void)PMPI_Info_free(&merged);   /* the call's own result is the one to return */
    }
    return guard_on() ? mpix_interpose_window_created(rc, win) : rc;
}

EXPORT int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return allocate(MPIX_Win_allocate, PMPI_Win_allocate, size, disp_unit, info, comm, baseptr, win);
}

EXPORT int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                   MPI_Win *win)
{
    return allocate(MPIX_Win_allocate_shared, PMPI_Win_allocate_shared, size, disp_unit, info, comm, baseptr, win);
}

/* Whether @rank is out of @win's group (MPI_PROC_NULL is in). MPI_WIN_NULL is left to
 * MPIX_Win_shared_query, which reports it. */
static int rank_outside(MPI_Win win, int rank)
{
    MPI_Group group;
    int ranks = 0;
    if (rank == MPI_PROC_NULL || win == MPI_WIN_NULL || PMPI_Win_get_group(win, &group) != MPI_SUCCESS)
        return 0;
    int rc = PMPI_Group_size(group, &ranks);
    (void)PMPI_Group_free(&group);   /* the size is all that was asked */
    return rc == MPI_SUCCESS && (rank < 0 || rank >= ranks);
}

EXPORT int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    if (!storage_on())
        return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    /* MPI's class for a rank out of range, as MPI_Win_shared_query gives it: the MPI
     * window under a storage window is not of the shared flavour, so MPI itself would
     * answer with another class. */
    if (rank_outside(win, rank)) {
        (void)PMPI_Win_call_errhandler(win, MPI_ERR_RANK);   /* the code is the answer */
        return MPI_ERR_RANK;
    }
    return MPIX_Win_shared_query(win, rank, size, disp_unit, baseptr);
}

EXPORT int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    /* A negative size: MPI's own error, as for the windows. */
    return storage_on() && size >= 0 ? MPIX_Alloc_mem(size, info, baseptr) : PMPI_Alloc_mem(size, info, baseptr);
}


/* MPI_Free_mem, MPI_Win_sync and MPI_Win_free are also the guard part's (guard/preload.c
 * leaves them to this file): memory that goes, or that other processes and the file are
 * about to see, must first hold what guarded transfers owe it. The MPIX_ calls see to
 * that themselves; MPI's own are fenced as guard's other calls are. */
#define FENCED_UNLESS_STORAGE(name, params, args)                                   \
    EXPORT int MPI_##name params                                                    \
    {                                                                               \
        if (storage_on())                                                           \
            return MPIX_##name args;                                                \
        int deferred_ = MPIX_Guard_complete_all();                                  \
        return fenced_code(PMPI_##name args, deferred_);                            \
    }

FENCED_UNLESS_STORAGE(Free_mem, (void *base), (base))
FENCED_UNLESS_STORAGE(Win_sync, (MPI_Win win), (win))
FENCED_UNLESS_STORAGE(Win_free, (MPI_Win *win), (win))

EXPORT int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    int rc = storage_on() ? MPIX_Win_attach(win, base, size) : PMPI_Win_attach(win, base, size);
    return guard_on() ? mpix_interpose_window_attached(rc, win, base, size) : rc;
}

EXPORT int MPI_Win_detach(MPI_Win win, const void *base)
{
    int rc = storage_on() ? MPIX_Win_detach(win, base) : PMPI_Win_detach(win, base);
    return mpix_interpose_window_detached(rc, win, base);
}



EXPORT int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    return storage_on() ? MPIX_Win_get_info(win, info_used) : PMPI_Win_get_info(win, info_used);
}
