/* SPDX-License-Identifier: BSD-3-Clause */
#include "self_state.h"

#include <pthread.h>
#include <stdatomic.h>

/* Recursive: a state's create function may report an error (a bad setting), and
 * mpix_error creates its own state on first use, under the same lock. */
static pthread_mutex_t init_mutex;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_mutex_create(void)
{
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&init_mutex, &attributes);
    pthread_mutexattr_destroy(&attributes);
}

void mpix_lock(void)
{
    pthread_once(&init_once, init_mutex_create);
    pthread_mutex_lock(&init_mutex);
}

void mpix_unlock(void) { pthread_mutex_unlock(&init_mutex); }

int mpix_mpi_is_active(void)
{
    int initialized = 0, finalized = 0;
    if (PMPI_Initialized(&initialized) != MPI_SUCCESS || PMPI_Finalized(&finalized) != MPI_SUCCESS)
        return 0;
    return initialized && !finalized;
}

static int delete_self_state(MPI_Comm comm, int keyval, void *state, void *extra)
{
    mpix_self_slot *slot = extra;
    (void)comm;
    atomic_store_explicit(&slot->state, NULL, memory_order_release);
    slot->destroy(state);
    /* Freeing the keyval here lets a slot be recreated if MPI is ever started again
     * (MPI-4 sessions) and keeps no stale keyval number around. */
    slot->keyval = MPI_KEYVAL_INVALID;
    return PMPI_Comm_free_keyval(&keyval);
}

int mpix_self_state(mpix_self_slot *slot, void **state)
{
    int found = 0, rc = MPI_SUCCESS;
    void *value = atomic_load_explicit(&slot->state, memory_order_acquire);

    if (value) {
        *state = value;
        return MPI_SUCCESS;
    }
    if (!mpix_mpi_is_active())
        return MPI_ERR_OTHER;
    mpix_lock();
    if (slot->keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_self_state, &slot->keyval, slot);
        if (rc != MPI_SUCCESS)
            goto out;
    } else {
        rc = PMPI_Comm_get_attr(MPI_COMM_SELF, slot->keyval, &value, &found);
        if (rc != MPI_SUCCESS)
            goto out;
    }
    if (!found) {
        rc = slot->create(&value);
        if (rc != MPI_SUCCESS)
            goto out;
        rc = PMPI_Comm_set_attr(MPI_COMM_SELF, slot->keyval, value);
        if (rc != MPI_SUCCESS) {
            slot->destroy(value);
            goto out;
        }
    }
    *state = value;
    atomic_store_explicit(&slot->state, value, memory_order_release);
out:
    mpix_unlock();
    return rc;
}
