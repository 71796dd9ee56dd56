/* SPDX-License-Identifier: BSD-3-Clause */
/* The exposed-memory list (exposed.h): one process list on MPI_COMM_SELF, entries removed
 * by the delete callback of an attribute on each window, so that nothing outlives the
 * window or is found through a reused handle. */
#include "exposed.h"
#include "common/api.h"
#include "common/interpose.h"
#include "common/keyval.h"
#include "common/self_state.h"
#include "common/window.h"

#include <stdlib.h>

typedef struct exposed_range {
    MPI_Win win;
    uintptr_t lo, hi;
    const void *attached;   /* the base given to MPI_Win_attach, NULL for the window's own memory */
} exposed_range;

typedef struct exposed_list {
    exposed_range *ranges;
    int count, capacity;
} exposed_list;

static int list_create(void **state)
{
    *state = calloc(1, sizeof(exposed_list));
    return *state ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Read without the lock by guard (exposed.h); NULL until a window registers and after
 * MPI_Finalize. */
static exposed_list *known;

static void list_destroy(void *state)
{
    exposed_list *list = state;
    known = NULL;
    free(list->ranges);
    free(list);
}

static mpix_self_slot list_slot = MPIX_SELF_SLOT_INIT(list_create, list_destroy);

/* Remove @win's entries: all of them (@attached_only 0), or the one attached at @base. */
static void forget(MPI_Win win, int attached_only, const void *base)
{
    mpix_lock();
    exposed_list *list = known;
    for (int i = 0; list && i < list->count;) {
        exposed_range *range = &list->ranges[i];
        if (range->win == win && (!attached_only || (range->attached && range->attached == base)))
            *range = list->ranges[--list->count];
        else
            i++;
    }
    mpix_unlock();
}

static int delete_window(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)keyval, (void)value, (void)extra;
    forget(win, 0, NULL);
    return MPI_SUCCESS;
}

static mpix_keyval window_keyval = MPIX_WIN_KEYVAL_INIT(delete_window);

static int add(MPI_Win win, const void *base, MPI_Aint size, const void *attached)
{
    if (!base || size <= 0)
        return MPI_SUCCESS;
    exposed_list *list;
    mpix_lock();
    int rc = mpix_self_state(&list_slot, (void **)&list);
    if (rc == MPI_SUCCESS && list->count == list->capacity) {
        int capacity = list->capacity ? 2 * list->capacity : 8;
        exposed_range *ranges = realloc(list->ranges, (size_t)capacity * sizeof *ranges);
        if (ranges) {
            list->ranges = ranges;
            list->capacity = capacity;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
    }
    if (rc == MPI_SUCCESS) {
        list->ranges[list->count++] = (exposed_range){ win, (uintptr_t)base, (uintptr_t)base + (uintptr_t)size,
                                                       attached };
        known = list;
    }
    mpix_unlock();
    return rc;
}

/* Mark @win as having entries (its attribute's delete callback forgets them);
 * *@marked_before says whether it was already. */
static int mark(MPI_Win win, int *marked_before)
{
    void *marker = NULL;
    int rc = mpix_win_attr_get(win, &window_keyval, &marker);
    *marked_before = marker != NULL;
    return rc != MPI_SUCCESS || marker ? rc : mpix_win_attr_set(win, &window_keyval, &window_keyval);
}

/* The window's memory here: every rank's segment of a shared window (mapped in this
 * process too), else the local base and size. */
int mpix_guard_expose_window(MPI_Win win)
{
    int registered;
    int rc = mark(win, &registered);
    if (rc != MPI_SUCCESS || registered)
        return rc;
    int flavor = MPI_WIN_FLAVOR_CREATE, found = 0, *flavor_value;
    if ((rc = PMPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor_value, &found)) == MPI_SUCCESS && found)
        flavor = *flavor_value;
    if (rc != MPI_SUCCESS || flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return rc;   /* a dynamic window exposes what is attached */
    if (flavor == MPI_WIN_FLAVOR_SHARED) {
        int ranks = 0;
        rc = mpix_win_group_size(win, &ranks);
        for (int rank = 0; rank < ranks && rc == MPI_SUCCESS; rank++) {
            MPI_Aint size;
            int disp_unit;
            void *base;
            if ((rc = PMPI_Win_shared_query(win, rank, &size, &disp_unit, &base)) == MPI_SUCCESS)
                rc = add(win, base, size, NULL);
        }
        return rc;
    }
    void *base;
    MPI_Aint *size;
    int has_base = 0, has_size = 0;
    if ((rc = PMPI_Win_get_attr(win, MPI_WIN_BASE, &base, &has_base)) != MPI_SUCCESS ||
        (rc = PMPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &has_size)) != MPI_SUCCESS)
        return rc;
    return has_base && has_size ? add(win, base, *size, NULL) : MPI_SUCCESS;
}

int mpix_guard_expose_memory(MPI_Win win, const void *base, MPI_Aint size, int attached)
{
    int registered;
    int rc = mark(win, &registered);
    return rc == MPI_SUCCESS ? add(win, base, size, attached ? base : NULL) : rc;
}

void mpix_guard_expose_detached(MPI_Win win, const void *base) { forget(win, 1, base); }

int mpix_guard_exposed(uintptr_t lo, uintptr_t hi)
{
    const exposed_list *list = known;
    for (int i = 0; list && i < list->count; i++)
        if (list->ranges[i].lo < hi && lo < list->ranges[i].hi)
            return 1;
    return 0;
}

/* For the interposition libraries (common/interpose.h): the MPI call's own code first. */
MPIX_API int mpix_interpose_window_created(int rc, const MPI_Win *win)
{
    return rc == MPI_SUCCESS && *win != MPI_WIN_NULL ? mpix_guard_expose_window(*win) : rc;
}

MPIX_API void mpix_interpose_window_exposing(const void *base, MPI_Aint size)
{
    if (base && size > 0)
        mpix_interpose_guard_release(base, (size_t)size);
}

/* Attached memory is reached by others only once this process tells them where it is,
 * after the call: its guarded transfers are finished before the call returns. */
MPIX_API int mpix_interpose_window_attached(int rc, MPI_Win win, const void *base, MPI_Aint size)
{
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_interpose_window_exposing(base, size);
    return mpix_guard_expose_memory(win, base, size, 1);
}

MPIX_API int mpix_interpose_window_detached(int rc, MPI_Win win, const void *base)
{
    if (rc == MPI_SUCCESS)
        mpix_guard_expose_detached(win, base);
    return rc;
}
