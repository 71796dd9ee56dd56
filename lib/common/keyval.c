/* SPDX-License-Identifier: BSD-3-Clause */
#include "keyval.h"
#include "self_state.h"

#include <stdlib.h>

/* Keyvals created so far, freed together at MPI_Finalize. */
typedef struct keyval_registry {
    mpix_keyval **entries;
    int count, capacity;
} keyval_registry;

static int registry_create(void **state)
{
    keyval_registry *registry = calloc(1, sizeof *registry);
    if (!registry)
        return MPI_ERR_NO_MEM;
    *state = registry;
    return MPI_SUCCESS;
}

static void registry_destroy(void *state)
{
    keyval_registry *registry = state;
    for (int i = 0; i < registry->count; i++) {
        mpix_keyval *kv = registry->entries[i];
        int rc = MPI_SUCCESS;
        switch (kv->kind) {
        case MPIX_KEYVAL_COMM: rc = PMPI_Comm_free_keyval(&kv->keyval); break;
        case MPIX_KEYVAL_WIN: rc = PMPI_Win_free_keyval(&kv->keyval); break;
        case MPIX_KEYVAL_TYPE: rc = PMPI_Type_free_keyval(&kv->keyval); break;
        }
        /* Inside MPI_Finalize a failure can only leave the keyval to MPI: nothing to undo. */
        if (rc == MPI_SUCCESS)
            kv->keyval = MPI_KEYVAL_INVALID;
    }
    free(registry->entries);
    free(registry);
}

static mpix_self_slot registry_slot = MPIX_SELF_SLOT_INIT(registry_create, registry_destroy);

int mpix_keyval_get(mpix_keyval *kv, int *keyval)
{
    keyval_registry *registry;
    int rc = MPI_SUCCESS;

    if (kv->keyval != MPI_KEYVAL_INVALID) {
        *keyval = kv->keyval;
        return MPI_SUCCESS;
    }
    rc = mpix_self_state(&registry_slot, (void **)&registry);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_lock();
    if (kv->keyval == MPI_KEYVAL_INVALID) {
        if (registry->count == registry->capacity) {
            int capacity = registry->capacity ? 2 * registry->capacity : 8;
            mpix_keyval **entries = realloc(registry->entries, capacity * sizeof *entries);
            if (!entries) {
                rc = MPI_ERR_NO_MEM;
                goto out;
            }
            registry->entries = entries;
            registry->capacity = capacity;
        }
        switch (kv->kind) {
        case MPIX_KEYVAL_COMM:
            rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, kv->delete_fn.comm, &kv->keyval, NULL);
            break;
        case MPIX_KEYVAL_WIN:
            rc = PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, kv->delete_fn.win, &kv->keyval, NULL);
            break;
        case MPIX_KEYVAL_TYPE:
            rc = PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, kv->delete_fn.type, &kv->keyval, NULL);
            break;
        }
        if (rc == MPI_SUCCESS)
            registry->entries[registry->count++] = kv;
    }
    *keyval = kv->keyval;
out:
    mpix_unlock();
    return rc;
}

/* The same get/set pair for each handle type: a value is NULL when absent. */
#define MPIX_DEFINE_ATTR_ACCESS(prefix, handle_type, get_attr, set_attr)                  \
    int mpix_##prefix##_attr_get(handle_type handle, mpix_keyval *kv, void **value)       \
    {                                                                                     \
        int keyval, found = 0, rc = mpix_keyval_get(kv, &keyval);                         \
        *value = NULL;                                                                    \
        if (rc == MPI_SUCCESS)                                                            \
            rc = get_attr(handle, keyval, value, &found);                                 \
        if (!found)                                                                       \
            *value = NULL;                                                                \
        return rc;                                                                        \
    }                                                                                     \
    int mpix_##prefix##_attr_set(handle_type handle, mpix_keyval *kv, void *value)        \
    {                                                                                     \
        int keyval, rc = mpix_keyval_get(kv, &keyval);                                    \
        return rc == MPI_SUCCESS ? set_attr(handle, keyval, value) : rc;                  \
    }

MPIX_DEFINE_ATTR_ACCESS(comm, MPI_Comm, PMPI_Comm_get_attr, PMPI_Comm_set_attr)
MPIX_DEFINE_ATTR_ACCESS(win, MPI_Win, PMPI_Win_get_attr, PMPI_Win_set_attr)
MPIX_DEFINE_ATTR_ACCESS(type, MPI_Datatype, PMPI_Type_get_attr, PMPI_Type_set_attr)
