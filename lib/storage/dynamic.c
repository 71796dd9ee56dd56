/* SPDX-License-Identifier: BSD-3-Clause */
/* Storage for dynamic windows: MPIX_Alloc_mem maps storage outside any window, so its
 * allocations are kept per process (on MPI_COMM_SELF, released at MPI_Finalize);
 * MPIX_Win_attach records on the window which of them it exposes, for MPIX_Win_sync. */
#include "node_memory.h"
#include "window.h"
#include "common/api.h"
#include "common/error.h"
#include "common/self_state.h"

#include <stdlib.h>

typedef struct allocation_list {
    mpix_storage_region **regions;
    int count, capacity;
} allocation_list;

static int allocations_create(void **state)
{
    *state = calloc(1, sizeof(allocation_list));
    return *state ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Memory still allocated at MPI_Finalize is flushed and released, as MPI_Free_mem would. */
static void allocations_destroy(void *state)
{
    allocation_list *list = state;
    for (int i = 0; i < list->count; i++) {
        mpix_storage_region_destroy(list->regions[i], 1);
        free(list->regions[i]);
    }
    free(list->regions);
    free(list);
}

static mpix_self_slot allocations_slot = MPIX_SELF_SLOT_INIT(allocations_create, allocations_destroy);

/* Index of the allocation holding [base, base + size), or -1. */
static int find_allocation(allocation_list *list, const char *base, long long size)
{
    for (int i = 0; i < list->count; i++) {
        const mpix_storage_region *region = list->regions[i];
        const char *start = region->segment_base[0];
        if (base >= start && base + size <= start + region->mine.size)
            return i;
    }
    return -1;
}

MPIX_API int MPIX_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    mpix_storage_config config;
    mpix_storage_region *region;
    allocation_list *list;
    long long memory_bytes, storage_bytes, budget;
    int rc = mpix_storage_config_parse(info, &config);

    if (rc == MPI_SUCCESS && size < 0)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Alloc_mem: size %ld is negative", (long)size);
    if (rc == MPI_SUCCESS && !baseptr)
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Alloc_mem: baseptr is NULL");
    if (rc != MPI_SUCCESS)
        return mpix_raise(rc);
    if (!config.storage)
        return PMPI_Alloc_mem(size, info, baseptr);
    rc = mpix_self_state(&allocations_slot, (void **)&list);
    if (rc != MPI_SUCCESS)
        return mpix_raise(rc);

    /* Not collective: factor=auto takes the node's budget as this process's alone. */
    budget = mpix_storage_node_memory(config.node_memory);
    mpix_segment_split(size, config.factor_auto ? (size > 0 ? (double)budget / (double)size : 1.0) : config.factor,
                       config.storage_first, &memory_bytes, &storage_bytes);
    region = malloc(sizeof *region);
    if (!region)
        return mpix_raise(MPI_ERR_NO_MEM);
    rc = mpix_storage_region_open(region, &config, storage_bytes);
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_region_prepare(region, size, 1, memory_bytes, config.offset, 0);
    if (rc == MPI_SUCCESS)
        rc = mpix_storage_region_map(region, &region->mine, 1, 0);
    if (rc == MPI_SUCCESS && list->count == list->capacity) {
        int capacity = list->capacity ? 2 * list->capacity : 8;
        mpix_storage_region **regions = realloc(list->regions, capacity * sizeof *regions);
        if (regions) {
            list->regions = regions;
            list->capacity = capacity;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
    }
    if (rc != MPI_SUCCESS) {
        mpix_storage_region_destroy(region, 0);
        free(region);
        return mpix_raise(rc);
    }
    list->regions[list->count++] = region;
    mpix_storage_region_describe(region, "MPIX_Alloc_mem");
    *(void **)baseptr = region->segment_base[0];
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Free_mem(void *base)
{
    allocation_list *list;
    int index, rc;

    /* The memory goes (a storage allocation's written back first): guarded transfers
     * on it finish first, as the blocking calls had. */
    int deferred = MPIX_Guard_complete_all();
    if (mpix_self_state(&allocations_slot, (void **)&list) != MPI_SUCCESS ||
        (index = find_allocation(list, base, 0)) < 0 || list->regions[index]->segment_base[0] != base) {
        rc = PMPI_Free_mem(base);
        return rc != MPI_SUCCESS ? rc : deferred;
    }
    mpix_storage_region *region = list->regions[index];
    list->regions[index] = list->regions[--list->count];
    rc = mpix_storage_region_destroy(region, 1);
    free(region);
    rc = mpix_raise(rc);
    return rc != MPI_SUCCESS ? rc : deferred;
}

MPIX_API int MPIX_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    allocation_list *list;
    mpix_storage_window *state;
    int index, rc = PMPI_Win_attach(win, base, size);

    if (rc != MPI_SUCCESS || mpix_self_state(&allocations_slot, (void **)&list) != MPI_SUCCESS ||
        (index = find_allocation(list, base, size)) < 0)
        return rc;
    state = mpix_storage_window_of(win);
    if (!state) {
        state = mpix_storage_window_new();
        if (!state || (rc = mpix_storage_window_attach_state(win, state)) != MPI_SUCCESS) {
            free(state);
            return mpix_raise_win(win, state ? rc : MPI_ERR_NO_MEM);
        }
    }
    if (state->attached_count == state->attached_capacity) {
        int capacity = state->attached_capacity ? 2 * state->attached_capacity : 4;
        mpix_attached_region *attached = realloc(state->attached, capacity * sizeof *attached);
        if (!attached)
            return mpix_raise_win(win, MPI_ERR_NO_MEM);
        state->attached = attached;
        state->attached_capacity = capacity;
    }
    state->attached[state->attached_count++] = (mpix_attached_region){ base, size, list->regions[index] };
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Win_detach(MPI_Win win, const void *base)
{
    mpix_storage_window *state;
    int rc = PMPI_Win_detach(win, base);

    if (rc != MPI_SUCCESS || !(state = mpix_storage_window_of(win)))
        return rc;
    for (int i = 0; i < state->attached_count; i++) {
        if (state->attached[i].base == base) {
            state->attached[i] = state->attached[--state->attached_count];
            break;
        }
    }
    return MPI_SUCCESS;
}
