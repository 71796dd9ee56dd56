/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy state of a communicator, hung on it as an attribute: the knobs read when it was
 * first used, peer ranks in MPI_COMM_WORLD (the directory's index), the layouts received
 * from peers by (peer, id), the layouts of collectively committed types by global id,
 * and the staging buffer of coalesced copies. */
#include "zcopy.h"
#include "common/keyval.h"
#include "common/progress.h"
#include "common/relax.h"
#include "common/self_state.h"

#include <stdlib.h>
#include <uthash.h>

/* A bound on remembered sender layouts per communicator: the oldest goes first. Layouts
 * of a running program are few; the bound only stops a type-churning one from growing. */
enum { RECEIVED_MAX = 256 };
enum { SCRATCH_BYTES = 256 * 1024 };

typedef struct received_key {
    uint64_t peer, id;    /* no padding: uthash compares keys bytewise */
} received_key;

struct mpix_zcopy_received {
    received_key key;
    mpix_layout layout;
    UT_hash_handle hh;
};

struct mpix_zcopy_global {
    uint64_t id;
    mpix_layout element;
    MPI_Aint extent;
    int count;                /* of the expansion below, -1 before the first */
    mpix_layout expanded;
    UT_hash_handle hh;
};

/* The communicator whose state this thread found last, and how many states had been
 * freed then. A state is freed only with its communicator, whose handle may then name
 * another one: the memo holds while no state was freed since. It saves the attribute
 * lookup (MPI_Comm_get_attr, 12 ns with MPICH 4.0) that every zcopy call makes, on both
 * sides of a small message whose round trip is under 1 us. The initial-exec model makes
 * the memo a load at a fixed offset from the thread pointer, where the default one for a
 * shared library calls __tls_get_addr on every lookup. */
static _Atomic unsigned long states_freed;
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    MPI_Comm comm;
    mpix_zcopy_comm *zc;
    unsigned long states_freed;
} found_last;

static void free_state(mpix_zcopy_comm *zc)
{
    atomic_fetch_add_explicit(&states_freed, 1, memory_order_release);
    mpix_zcopy_received *received, *next_received;
    HASH_ITER(hh, zc->received, received, next_received) {
        HASH_DEL(zc->received, received);
        mpix_layout_free(&received->layout);
        free(received);
    }
    mpix_zcopy_global *global, *next_global;
    HASH_ITER(hh, zc->globals, global, next_global) {
        HASH_DEL(zc->globals, global);
        mpix_layout_free(&global->element);
        mpix_layout_free(&global->expanded);
        free(global);
    }
    mpix_zcopy_probed_free(zc);
    free(atomic_load_explicit(&zc->world_ranks, memory_order_relaxed));
    mpix_scratch_release(&zc->staging);
    mpix_scratch_release(&zc->packing);
    mpix_scratch_release(&zc->unpacking);
    pthread_mutex_destroy(&zc->lock);
    free(zc);
}

static int delete_zcopy_state(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    mpix_zcopy_comm *zc = value;
    /* MPI_Comm_free lets pending operations complete: the passes of the progress thread
     * or of MPI's progress still use the communicator (valid until this returns) and
     * this state for them. */
    for (unsigned long poll = 0; atomic_load_explicit(&zc->requests_pending, memory_order_acquire) > 0; poll++) {
        if (poll % 64 == 0) { /* progress for them; a failure shows in their calls */
            (void)mpix_mpi_progress();
            mpix_zcopy_progress_poke(zc->process);
        }
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    /* The folding thread writes this state's statistics for the units it holds. */
    for (unsigned long poll = 0; atomic_load_explicit(&zc->folds_pending, memory_order_acquire) > 0; poll++)
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    free_state(zc);
    return MPI_SUCCESS;
}

static mpix_keyval zcopy_keyval = MPIX_COMM_KEYVAL_INIT(delete_zcopy_state);

/* The size of the (remote) group and this process's rank. */
static int count_peers(MPI_Comm comm, mpix_zcopy_comm *zc)
{
    int inter = 0, rc = PMPI_Comm_test_inter(comm, &inter);
    if (rc == MPI_SUCCESS)
        rc = inter ? PMPI_Comm_remote_size(comm, &zc->peers) : PMPI_Comm_size(comm, &zc->peers);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(comm, &zc->rank);
    return rc;
}

/* Peers by MPI_COMM_WORLD rank: a local translation (MPI_UNDEFINED for processes of
 * another world, and for all in a program of MPI-4 sessions alone, which then always get
 * the MPI path), into a table of its own. */
static int *translate_peers(mpix_zcopy_comm *zc)
{
    int inter = 0;
    MPI_Group peers, world;
    if (!mpix_mpi_is_active()) {   /* MPI-4 sessions alone: no world, so none */
        int *none = malloc(zc->peers * sizeof *none);
        for (int i = 0; none && i < zc->peers; i++)
            none[i] = MPI_UNDEFINED;
        return none;
    }
    if (PMPI_Comm_test_inter(zc->comm, &inter) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_group(zc->comm, &peers) : PMPI_Comm_group(zc->comm, &peers)) != MPI_SUCCESS)
        return NULL;
    int *ranks = malloc(zc->peers * sizeof *ranks), *world_ranks = malloc(zc->peers * sizeof *world_ranks);
    int rc = ranks && world_ranks ? PMPI_Comm_group(MPI_COMM_WORLD, &world) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < zc->peers; i++)
            ranks[i] = i;
        rc = PMPI_Group_translate_ranks(peers, zc->peers, ranks, world, world_ranks);
        if (PMPI_Group_free(&world) != MPI_SUCCESS)
            rc = MPI_ERR_INTERN;
    }
    if (PMPI_Group_free(&peers) != MPI_SUCCESS)
        rc = MPI_ERR_INTERN;
    free(ranks);
    if (rc != MPI_SUCCESS) {
        free(world_ranks);
        return NULL;
    }
    return world_ranks;
}

int mpix_zcopy_world_rank(mpix_zcopy_comm *zc, int rank)
{
    int *world_ranks = atomic_load_explicit(&zc->world_ranks, memory_order_acquire);
    if (!world_ranks && (world_ranks = translate_peers(zc))) {
        int *none = NULL;   /* another thread may have made one meanwhile: the first stays */
        if (!atomic_compare_exchange_strong_explicit(&zc->world_ranks, &none, world_ranks, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            free(world_ranks);
            world_ranks = none;
        }
    }
    /* A rank out of range (a program's bad argument, which MPI then reports) has none. */
    return world_ranks && rank >= 0 && rank < zc->peers ? world_ranks[rank] : MPI_UNDEFINED;
}

int mpix_zcopy_peer_attachable(mpix_zcopy_comm *zc, int rank)
{
    int world = mpix_zcopy_world_rank(zc, rank);
    return world != MPI_UNDEFINED && zc->process->access[world] == MPIX_ZCOPY_ACCESS_OK;
}

int mpix_zcopy_comm_get(MPI_Comm comm, mpix_zcopy_comm **state)
{
    unsigned long freed = atomic_load_explicit(&states_freed, memory_order_acquire);
    if (found_last.zc && found_last.comm == comm && found_last.states_freed == freed) {
        *state = found_last.zc;
        return MPI_SUCCESS;
    }
    void *value = NULL;
    int rc = mpix_comm_attr_get(comm, &zcopy_keyval, &value);
    if (rc != MPI_SUCCESS || value) {
        if (value)
            found_last.comm = comm, found_last.zc = value, found_last.states_freed = freed;
        *state = value;
        return rc;
    }
    /* First use, perhaps by several threads at once: one creates the state, under the
     * library's lock (the process state first: it takes that lock itself), and the
     * others find it; two states set in turn would free the first while in use. */
    mpix_zcopy_process *process;
    if ((rc = mpix_zcopy_process_get(&process)) != MPI_SUCCESS)
        return rc;
    mpix_lock();
    rc = mpix_comm_attr_get(comm, &zcopy_keyval, &value);
    if (rc != MPI_SUCCESS || value) {
        mpix_unlock();
        *state = value;
        return rc;
    }
    mpix_zcopy_comm *zc = calloc(1, sizeof *zc);
    if (!zc) {
        mpix_unlock();
        return MPI_ERR_NO_MEM;
    }
    zc->process = process;
    pthread_mutex_init(&zc->lock, NULL);
    zc->settings = process->settings;
    zc->comm = comm;
    rc = count_peers(comm, zc);
    if (rc == MPI_SUCCESS)
        rc = mpix_comm_attr_set(comm, &zcopy_keyval, zc);
    mpix_unlock();
    if (rc != MPI_SUCCESS) {
        free_state(zc);
        return rc;
    }
    *state = zc;
    return MPI_SUCCESS;
}

size_t mpix_zcopy_scratch_bytes(void) { return SCRATCH_BYTES; }

void mpix_zcopy_comm_enter(mpix_zcopy_comm *zc)
{
    pthread_mutex_lock(&zc->lock);
    zc->calls_in_flight++;
    pthread_mutex_unlock(&zc->lock);
}

void mpix_zcopy_comm_leave(mpix_zcopy_comm *zc)
{
    pthread_mutex_lock(&zc->lock);
    zc->calls_in_flight--;
    pthread_mutex_unlock(&zc->lock);
}

/* Made by the first call that stages a span: most communicators never do. */
char *mpix_zcopy_scratch_take(mpix_zcopy_comm *zc)
{
    return mpix_scratch_take(&zc->staging, SCRATCH_BYTES);
}

void mpix_zcopy_scratch_give(mpix_zcopy_comm *zc, char *scratch)
{
    mpix_scratch_give(&zc->staging, scratch);
}

mpix_layout *mpix_zcopy_received_find(mpix_zcopy_comm *zc, int peer, uint64_t id)
{
    received_key key = { (uint64_t)peer, id };
    mpix_zcopy_received *found = NULL;
    pthread_mutex_lock(&zc->lock);
    HASH_FIND(hh, zc->received, &key, sizeof key, found);
    pthread_mutex_unlock(&zc->lock);
    return found ? &found->layout : NULL;
}

mpix_layout *mpix_zcopy_received_add(mpix_zcopy_comm *zc, int peer, uint64_t id, mpix_layout *layout)
{
    received_key key = { (uint64_t)peer, id };
    mpix_zcopy_received *entry = calloc(1, sizeof *entry), *known = NULL;
    if (!entry)
        return NULL;
    pthread_mutex_lock(&zc->lock);
    HASH_FIND(hh, zc->received, &key, sizeof key, known);
    /* Known already (another thread read it too), or full while other calls may use
     * entries: the caller uses its copy once. */
    if (known || (zc->received_count == RECEIVED_MAX && zc->calls_in_flight > 1)) {
        pthread_mutex_unlock(&zc->lock);
        free(entry);
        return NULL;
    }
    if (zc->received_count == RECEIVED_MAX) {
        mpix_zcopy_received *oldest = zc->received; /* uthash keeps insertion order */
        HASH_DEL(zc->received, oldest);
        mpix_layout_free(&oldest->layout);
        free(oldest);
        zc->received_count--;
    }
    entry->key = key;
    entry->layout = *layout;
    *layout = (mpix_layout){ 0 };
    HASH_ADD(hh, zc->received, key, sizeof entry->key, entry);
    zc->received_count++;
    pthread_mutex_unlock(&zc->lock);
    return &entry->layout;
}

int mpix_zcopy_global_add(mpix_zcopy_comm *zc, uint64_t global_id, MPI_Datatype type)
{
    mpix_zcopy_global *entry = calloc(1, sizeof *entry);
    if (!entry)
        return MPI_ERR_NO_MEM;
    MPI_Aint lb;
    int rc = PMPI_Type_get_extent(type, &lb, &entry->extent);
    if (rc == MPI_SUCCESS)
        rc = mpix_layout_of_element(type, &entry->element);
    if (rc != MPI_SUCCESS) {
        free(entry);
        return rc;
    }
    entry->id = global_id;
    entry->count = -1;
    pthread_mutex_lock(&zc->lock);
    HASH_ADD(hh, zc->globals, id, sizeof entry->id, entry);
    pthread_mutex_unlock(&zc->lock);
    return MPI_SUCCESS;
}

/* The peer's layout for @count elements of the type agreed as @global_id: since every
 * process committed the same type map, it is this process's own. */
mpix_layout *mpix_zcopy_global_find(mpix_zcopy_comm *zc, uint64_t global_id, int count)
{
    mpix_zcopy_global *entry = NULL;
    mpix_layout *found = NULL;
    pthread_mutex_lock(&zc->lock);
    HASH_FIND(hh, zc->globals, &global_id, sizeof global_id, entry);
    if (entry && entry->count == count)
        found = &entry->expanded;
    /* Another count: re-expanded only by a call alone on the communicator (another
     * may be using the expansion); otherwise the caller reads the peer's layout. */
    else if (entry && zc->calls_in_flight <= 1) {
        mpix_layout expanded;
        if (mpix_layout_repeat(&entry->element, count, entry->extent, &expanded) == MPI_SUCCESS) {
            mpix_layout_free(&entry->expanded);
            entry->expanded = expanded;
            entry->count = count;
            found = &entry->expanded;
        }
    }
    pthread_mutex_unlock(&zc->lock);
    return found;
}

void mpix_zcopy_global_remove(mpix_zcopy_comm *zc, uint64_t global_id)
{
    mpix_zcopy_global *entry = NULL;
    pthread_mutex_lock(&zc->lock);
    HASH_FIND(hh, zc->globals, &global_id, sizeof global_id, entry);
    if (entry)
        HASH_DEL(zc->globals, entry);
    pthread_mutex_unlock(&zc->lock);
    if (entry) {
        mpix_layout_free(&entry->element);
        mpix_layout_free(&entry->expanded);
        free(entry);
    }
}
