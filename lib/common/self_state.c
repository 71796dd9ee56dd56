/* SPDX-License-Identifier: BSD-3-Clause */
#include "self_state.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

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

/* Which communicator mpix_self_comm gives, once known: the world model's MPI_COMM_SELF
 * (MPI_Init comes once, so it stays) or the library's own (below). */
enum { ANCHOR_UNKNOWN, ANCHOR_WORLD, ANCHOR_OWN };
static _Atomic int anchor;
static MPI_Comm own_self = MPI_COMM_NULL;

#if MPI_VERSION >= 4
/* A program of MPI-4 sessions alone has no MPI_COMM_SELF. The state then hangs on a
 * communicator of this process alone, made from a session of the library's own (as the
 * sessions model has libraries do), both freed when the process exits: the state's
 * destroy functions run there, while MPI still works, since this session keeps it
 * initialized after the program finalized its own. */
static MPI_Session own_session = MPI_SESSION_NULL;
static pid_t own_session_pid;   /* a child the program forks inherits the exit handler */

static void own_session_close(void)
{
    if (getpid() != own_session_pid)   /* a forked child's exit: the session is the parent's */
        return;
    atomic_store_explicit(&anchor, ANCHOR_UNKNOWN, memory_order_relaxed);
    if (own_self != MPI_COMM_NULL)
        (void)PMPI_Comm_free(&own_self);   /* at exit: nothing is left to report to */
    (void)PMPI_Session_finalize(&own_session);
}

/* Under the lock. */
static int own_self_comm(MPI_Comm *self)
{
    MPI_Group group = MPI_GROUP_NULL;
    int finalized = 0, rc = PMPI_Finalized(&finalized);
    if (rc != MPI_SUCCESS || finalized)   /* the world model came and went: MPI is over */
        return MPI_ERR_OTHER;
    if (own_self == MPI_COMM_NULL) {
        if (own_session == MPI_SESSION_NULL) {
            if ((rc = PMPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &own_session)) != MPI_SUCCESS)
                return rc;
            own_session_pid = getpid();
            if (atexit(own_session_close) != 0) {
                (void)PMPI_Session_finalize(&own_session);   /* cleanup: the failure is reported */
                return MPI_ERR_NO_MEM;
            }
        }
        rc = PMPI_Group_from_session_pset(own_session, "mpi://SELF", &group);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Comm_create_from_group(group, "org.mpix.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &own_self);
        if (group != MPI_GROUP_NULL && PMPI_Group_free(&group) != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = MPI_ERR_INTERN;
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *self = own_self;
    return MPI_SUCCESS;
}
#else
static int own_self_comm(MPI_Comm *self)
{
    (void)self;
    return MPI_ERR_OTHER;   /* no sessions before MPI-4: MPI is not initialized */
}
#endif

/* Under the lock: MPI_COMM_SELF while the world model runs, else the library's own. */
static int find_self_comm(MPI_Comm *self)
{
    int rc = MPI_SUCCESS;
    if (mpix_mpi_is_active()) {
        *self = MPI_COMM_SELF;
        atomic_store_explicit(&anchor, ANCHOR_WORLD, memory_order_release);
    } else if ((rc = own_self_comm(self)) == MPI_SUCCESS) {
        atomic_store_explicit(&anchor, ANCHOR_OWN, memory_order_release);
    }
    return rc;
}

int mpix_self_comm(MPI_Comm *self)
{
    int known = atomic_load_explicit(&anchor, memory_order_acquire);
    if (known != ANCHOR_UNKNOWN) {
        *self = known == ANCHOR_WORLD ? MPI_COMM_SELF : own_self;
        return MPI_SUCCESS;
    }
    mpix_lock();
    int rc = find_self_comm(self);
    mpix_unlock();
    return rc;
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
    MPI_Comm self;
    mpix_lock();
    if ((rc = find_self_comm(&self)) != MPI_SUCCESS)
        goto out;
    if (slot->keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_self_state, &slot->keyval, slot);
        if (rc != MPI_SUCCESS)
            goto out;
    } else {
        rc = PMPI_Comm_get_attr(self, slot->keyval, &value, &found);
        if (rc != MPI_SUCCESS)
            goto out;
    }
    if (!found) {
        rc = slot->create(&value);
        if (rc != MPI_SUCCESS)
            goto out;
        rc = PMPI_Comm_set_attr(self, slot->keyval, value);
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
