/* SPDX-License-Identifier: BSD-3-Clause */
/* The memoized layouts of a datatype, hung on it as an attribute: its element layout,
 * the expansion for the last count used (with an id unique in this process), and the
 * id MPIX_Type_commit_comm agreed on. MPI_Type_free deletes the attribute, so a handle
 * reused for a new type starts with no cache; dup'ed types start empty too.
 *
 * Threads sending one datatype on different communicators share its cache: a lock
 * guards its creation and expansion, and an expansion that views still use (a receiver
 * may be reading its blocks from this process's memory) is never replaced; a call with
 * another count then gets a layout of its own, unmemoized. */
#include "zcopy.h"
#include "common/keyval.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct type_cache {
    mpix_layout element;
    MPI_Aint extent;
    int count;                /* of the expansion below; -1 before the first */
    mpix_layout expanded;
    uint64_t id;
    uint64_t global_id;
    MPI_Comm global_comm;
    _Atomic int users;        /* views of the expansion not yet released (atomic; raised under the lock) */
} type_cache;

static pthread_mutex_t type_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int delete_type_cache(MPI_Datatype type, int keyval, void *value, void *extra)
{
    type_cache *cache = value;
    (void)type, (void)keyval, (void)extra;
    mpix_layout_free(&cache->element);
    mpix_layout_free(&cache->expanded);
    free(cache);
    return MPI_SUCCESS;
}

static mpix_keyval type_cache_keyval = MPIX_TYPE_KEYVAL_INIT(delete_type_cache);

/* Under type_cache_lock. */
static int cache_of(MPI_Datatype type, type_cache **result)
{
    void *value = NULL;
    int rc = mpix_type_attr_get(type, &type_cache_keyval, &value);
    if (rc != MPI_SUCCESS || value) {
        *result = value;
        return rc;
    }
    type_cache *cache = calloc(1, sizeof *cache);
    if (!cache)
        return MPI_ERR_NO_MEM;
    MPI_Aint lb;
    cache->count = -1;
    cache->global_comm = MPI_COMM_NULL;
    rc = PMPI_Type_get_extent(type, &lb, &cache->extent);
    if (rc == MPI_SUCCESS)
        rc = mpix_layout_of_element(type, &cache->element);
    if (rc == MPI_SUCCESS)
        rc = mpix_type_attr_set(type, &type_cache_keyval, cache);
    if (rc != MPI_SUCCESS) {
        delete_type_cache(type, 0, cache, NULL);
        return rc;
    }
    *result = cache;
    return MPI_SUCCESS;
}

int mpix_layout_view_get(MPI_Datatype type, int count, mpix_layout_view *view)
{
    view->id = view->global_id = 0;
    view->global_comm = MPI_COMM_NULL;
    view->owned = (mpix_layout){ 0 };
    view->cache = NULL;
    if (mpix_type_is_named(type)) {
        /* Predefined types take no attributes; their layouts are one block (pairs: two per
         * element), so building one per call costs nothing worth caching. */
        mpix_layout element = { 0 };
        MPI_Aint lb, extent;
        int rc = PMPI_Type_get_extent(type, &lb, &extent);
        if (rc == MPI_SUCCESS)
            rc = mpix_layout_of_element(type, &element);
        if (rc == MPI_SUCCESS)
            rc = mpix_layout_repeat(&element, count, extent, &view->owned);
        mpix_layout_free(&element);
        view->layout = &view->owned;
        return rc;
    }
    type_cache *cache;
    pthread_mutex_lock(&type_cache_lock);
    int rc = cache_of(type, &cache);
    if (rc == MPI_SUCCESS && cache->count != count && atomic_load_explicit(&cache->users, memory_order_acquire) > 0) {
        /* Another thread's message still uses the expansion: this call's is its own. */
        rc = mpix_layout_repeat(&cache->element, count, cache->extent, &view->owned);
        view->layout = &view->owned;
        pthread_mutex_unlock(&type_cache_lock);
        return rc;
    }
    if (rc == MPI_SUCCESS && cache->count != count) {
        /* Takes mpix's init mutex inside type_cache_lock; nothing nests them the other way. */
        mpix_zcopy_process *process;
        mpix_layout expanded;
        rc = mpix_zcopy_process_get(&process);
        if (rc == MPI_SUCCESS)
            rc = mpix_layout_repeat(&cache->element, count, cache->extent, &expanded);
        if (rc == MPI_SUCCESS) {
            mpix_layout_free(&cache->expanded);
            cache->expanded = expanded;
            cache->count = count;
            cache->id = ++process->next_layout_id;
        }
    }
    if (rc == MPI_SUCCESS) {
        atomic_fetch_add_explicit(&cache->users, 1, memory_order_acq_rel);
        view->cache = cache;
        view->layout = &cache->expanded;
        view->id = cache->id;
        view->global_id = cache->global_id;
        view->global_comm = cache->global_comm;
    }
    pthread_mutex_unlock(&type_cache_lock);
    return rc;
}

void mpix_layout_view_release(mpix_layout_view *view)
{
    type_cache *cache = view->cache;
    if (cache) {
        atomic_fetch_sub_explicit(&cache->users, 1, memory_order_acq_rel);
        view->cache = NULL;
    }
    mpix_layout_free(&view->owned);
}

int mpix_type_set_global_id(MPI_Datatype type, MPI_Comm comm, uint64_t global_id)
{
    type_cache *cache;
    pthread_mutex_lock(&type_cache_lock);
    int rc = cache_of(type, &cache);
    if (rc == MPI_SUCCESS) {
        cache->global_id = global_id;
        cache->global_comm = comm;
    }
    pthread_mutex_unlock(&type_cache_lock);
    return rc;
}

int mpix_type_get_global_id(MPI_Datatype type, MPI_Comm comm, uint64_t *global_id)
{
    void *value = NULL;
    pthread_mutex_lock(&type_cache_lock);
    int rc = mpix_type_attr_get(type, &type_cache_keyval, &value);
    type_cache *cache = value;
    *global_id = rc == MPI_SUCCESS && cache && cache->global_comm == comm ? cache->global_id : 0;
    pthread_mutex_unlock(&type_cache_lock);
    return rc;
}
