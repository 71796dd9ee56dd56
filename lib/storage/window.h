/* SPDX-License-Identifier: BSD-3-Clause */
/* What mpix keeps on a storage window (an attribute), and the steps every collective
 * storage allocation shares. */
#ifndef MPIX_STORAGE_WINDOW_H
#define MPIX_STORAGE_WINDOW_H

#include "region.h"

typedef struct mpix_attached_region {
    char *base;
    long long size;
    mpix_storage_region *region; /* the MPIX_Alloc_mem allocation it lies in */
} mpix_attached_region;

typedef struct mpix_storage_window {
    mpix_storage_region region;  /* segments of a storage window; empty for dynamic windows */
    int shared;                  /* made by MPIX_Win_allocate_shared */
    int rank;                    /* this process's rank in the window's group */
    int freeing;                 /* MPIX_Win_free tears down after MPI_Win_free returns */
    mpix_attached_region *attached;
    int attached_count, attached_capacity;
} mpix_storage_window;

/* A new, empty state (no mapping, no file); NULL when out of memory. */
mpix_storage_window *mpix_storage_window_new(void);

/* The window's mpix state, or NULL for a window mpix did not make on storage. */
mpix_storage_window *mpix_storage_window_of(MPI_Win win);

/* Hang @state on @win (freed with the window). */
int mpix_storage_window_attach_state(MPI_Win win, mpix_storage_window *state);

/* Collective: check the arguments (NULL outputs are MPIX_ERRKIND_ARGUMENT) and parse the
 * hints on every rank, agreeing on failure; *any_storage tells whether any rank asked
 * for storage (then every rank takes the storage path). A code, not raised. */
int mpix_storage_begin(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, const void *baseptr,
                       const MPI_Win *win, const char *call, mpix_storage_config *config, int *any_storage);

/* Collective: split this rank's @size bytes, open its file, place it in the file and
 * reserve its blocks. A local code, not yet agreed. */
int mpix_storage_plan(mpix_storage_window *state, MPI_Comm comm, const mpix_storage_config *config,
                      MPI_Aint size, int disp_unit, int shareable);

/* Collective, last step: MPI_Win_create over @base, hang @state on the window, return
 * the base; on failure undo everything (raised on @comm). */
int mpix_storage_expose(mpix_storage_window *state, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                        MPI_Comm comm, const char *call, void *baseptr, MPI_Win *win);

/* MPI_Win_create over mapped memory; a failure becomes an MPIX_ERRKIND_UNSUPPORTED code
 * naming MPI's reason (and Open MPI's single-process osc/rdma bug), not yet raised. */
int mpix_storage_create_window(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win);

/* Undo a failed allocation on every rank (*win becomes MPI_WIN_NULL), and return @code
 * raised on @comm. */
int mpix_storage_abandon(mpix_storage_window *state, MPI_Comm comm, int code, MPI_Win *win);

#endif
