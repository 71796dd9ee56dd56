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
        switch (kv->kind) {
        case MPIX_KEYVAL_COMM: MPI_Comm_free_keyval(&kv->keyval); break;
        case MPIX_KEYVAL_WIN: MPI_Win_free_keyval(&kv->keyval); break;
        case MPIX_KEYVAL_TYPE: MPI_Type_free_keyval(&kv->keyval); break;
        }
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
            rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, kv->delete_fn.comm, &kv->keyval, NULL);
            break;
        case MPIX_KEYVAL_WIN:
            rc = MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, kv->delete_fn.win, &kv->keyval, NULL);
            break;
        case MPIX_KEYVAL_TYPE:
            rc = MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, kv->delete_fn.type, &kv->keyval, NULL);
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

int mpix_comm_attr_get(MPI_Comm comm, mpix_keyval *kv, void **value)
{
    int keyval, found = 0, rc = mpix_keyval_get(kv, &keyval);
    *value = NULL;
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_get_attr(comm, keyval, value, &found);
    if (!found)
        *value = NULL;
    return rc;
}

int mpix_comm_attr_set(MPI_Comm comm, mpix_keyval *kv, void *value)
{
    int keyval, rc = mpix_keyval_get(kv, &keyval);
    return rc == MPI_SUCCESS ? MPI_Comm_set_attr(comm, keyval, value) : rc;
}

int mpix_win_attr_get(MPI_Win win, mpix_keyval *kv, void **value)
{
    int keyval, found = 0, rc = mpix_keyval_get(kv, &keyval);
    *value = NULL;
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_get_attr(win, keyval, value, &found);
    if (!found)
        *value = NULL;
    return rc;
}

int mpix_win_attr_set(MPI_Win win, mpix_keyval *kv, void *value)
{
    int keyval, rc = mpix_keyval_get(kv, &keyval);
    return rc == MPI_SUCCESS ? MPI_Win_set_attr(win, keyval, value) : rc;
}

int mpix_type_attr_get(MPI_Datatype type, mpix_keyval *kv, void **value)
{
    int keyval, found = 0, rc = mpix_keyval_get(kv, &keyval);
    *value = NULL;
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_get_attr(type, keyval, value, &found);
    if (!found)
        *value = NULL;
    return rc;
}

int mpix_type_attr_set(MPI_Datatype type, mpix_keyval *kv, void *value)
{
    int keyval, rc = mpix_keyval_get(kv, &keyval);
    return rc == MPI_SUCCESS ? MPI_Type_set_attr(type, keyval, value) : rc;
}
