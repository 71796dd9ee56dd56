/* SPDX-License-Identifier: BSD-3-Clause */
/* Memoized layouts. A layout is kept by the datatype's content key (type_key.c) in a
 * table on the process state: its element layout, the expansion for the last count used
 * (with an id unique in this process), and the path figures path.c keeps on that
 * expansion. A datatype's attribute points at its entry, so a handle used again finds it
 * without building the key; a datatype freed and built again with the same constructors
 * builds the key once and finds the same entry, the same id (a receiver remembers the
 * layout under it and reads nothing) and the same figures. MPI_Type_free deletes the
 * attribute; dup'ed types build their own key (a dup's key differs from its parent's).
 *
 * The table keeps every layout a datatype still names and, beyond those, at most
 * KEPT_LAYOUTS layouts and KEPT_BLOCKS blocks, dropping the least recently used.
 * Threads share it: one lock guards the table and the entries' counts, and an expansion
 * that views still use (a receiver may be reading its blocks from this process's
 * memory) is never replaced; a call with another count then gets a layout of its own,
 * unmemoized. */
#include "zcopy.h"
#include "common/keyval.h"

#include <pthread.h>
#include <stdlib.h>
#include <uthash.h>

enum { KEPT_LAYOUTS = 1024 };
#define KEPT_BLOCKS ((MPI_Aint)4 << 20)   /* 64 MiB of blocks */

typedef struct layout_entry {
    UT_hash_handle hh;
    mpix_type_key key;
    mpix_layout element;
    MPI_Aint extent;
    int count;                /* of the expansion below; -1 before the first */
    mpix_layout expanded;
    uint64_t id;
    int users;                /* views of the expansion not yet released */
    int holders;              /* datatype attributes naming the entry */
    int dropped;              /* out of the table: freed when nothing uses it */
} layout_entry;

struct mpix_layout_table {
    layout_entry *entries;    /* uthash, least recently used first */
    MPI_Aint blocks;          /* in the entries' element and expanded layouts */
};

/* What a datatype's attribute holds. */
typedef struct type_cache {
    layout_entry *entry;
    uint64_t global_id;
    MPI_Comm global_comm;
} type_cache;

static pthread_mutex_t type_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static MPI_Aint blocks_of(const layout_entry *entry) { return entry->element.nblocks + entry->expanded.nblocks; }

static void entry_free(layout_entry *entry)
{
    mpix_type_key_free(&entry->key);
    mpix_layout_free(&entry->element);
    mpix_layout_free(&entry->expanded);
    free(entry);
}

/* Under type_cache_lock: frees a dropped entry nothing uses any more. */
static void entry_settle(layout_entry *entry)
{
    if (entry->dropped && entry->holders == 0 && entry->users == 0)
        entry_free(entry);
}

/* Under type_cache_lock. */
static void entry_drop(mpix_layout_table *table, layout_entry *entry)
{
    HASH_DEL(table->entries, entry);
    table->blocks -= blocks_of(entry);
    entry->dropped = 1;
    entry_settle(entry);
}

/* Under type_cache_lock: the least recently used entries no datatype names, until the
 * table is within its bounds. */
static void table_trim(mpix_layout_table *table)
{
    layout_entry *entry, *next;
    HASH_ITER(hh, table->entries, entry, next) {
        if (HASH_COUNT(table->entries) <= KEPT_LAYOUTS && table->blocks <= KEPT_BLOCKS)
            return;
        if (entry->holders == 0 && entry->users == 0)
            entry_drop(table, entry);
    }
}

int mpix_layout_table_create(mpix_layout_table **table)
{
    *table = calloc(1, sizeof **table);
    return *table ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void mpix_layout_table_destroy(mpix_layout_table *table)
{
    layout_entry *entry, *next;
    if (!table)
        return;
    pthread_mutex_lock(&type_cache_lock);
    HASH_ITER(hh, table->entries, entry, next)
        entry_drop(table, entry);   /* a datatype still naming one frees it when freed */
    pthread_mutex_unlock(&type_cache_lock);
    free(table);
}

static int delete_type_cache(MPI_Datatype type, int keyval, void *value, void *extra)
{
    type_cache *cache = value;
    (void)type, (void)keyval, (void)extra;
    pthread_mutex_lock(&type_cache_lock);
    cache->entry->holders--;
    entry_settle(cache->entry);
    pthread_mutex_unlock(&type_cache_lock);
    free(cache);
    return MPI_SUCCESS;
}

static mpix_keyval type_cache_keyval = MPIX_TYPE_KEYVAL_INIT(delete_type_cache);

/* Under type_cache_lock: the entry of @type's content, found or made, most recently
 * used from now on. */
static int entry_of(mpix_zcopy_comm *zc, MPI_Datatype type, layout_entry **result)
{
    mpix_layout_table *table = zc->process->layouts;
    layout_entry *entry;
    mpix_type_key key;
    int rc = mpix_type_key_of(type, &key);
    if (rc != MPI_SUCCESS)
        return rc;
    HASH_FIND(hh, table->entries, key.bytes, key.length, entry);
    if (entry) {
        mpix_type_key_free(&key);
        HASH_DEL(table->entries, entry);   /* to the most recent end */
        HASH_ADD_KEYPTR(hh, table->entries, entry->key.bytes, entry->key.length, entry);
        *result = entry;
        return MPI_SUCCESS;
    }
    if (!(entry = calloc(1, sizeof *entry))) {
        mpix_type_key_free(&key);
        return MPI_ERR_NO_MEM;
    }
    MPI_Aint lb;
    entry->key = key;
    entry->count = -1;
    rc = PMPI_Type_get_extent(type, &lb, &entry->extent);
    if (rc == MPI_SUCCESS)
        rc = mpix_layout_of_element(type, &entry->element);
    if (rc != MPI_SUCCESS) {
        entry_free(entry);
        return rc;
    }
    HASH_ADD_KEYPTR(hh, table->entries, entry->key.bytes, entry->key.length, entry);
    table->blocks += blocks_of(entry);
    zc->stats.layouts_flattened++;
    table_trim(table);
    *result = entry;
    return MPI_SUCCESS;
}

/* Under type_cache_lock. */
static int cache_of(mpix_zcopy_comm *zc, MPI_Datatype type, type_cache **result)
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
    cache->global_comm = MPI_COMM_NULL;
    if ((rc = entry_of(zc, type, &cache->entry)) != MPI_SUCCESS) {
        free(cache);
        return rc;
    }
    cache->entry->holders++;
    if ((rc = mpix_type_attr_set(type, &type_cache_keyval, cache)) != MPI_SUCCESS) {
        cache->entry->holders--;
        free(cache);
        return rc;
    }
    *result = cache;
    return MPI_SUCCESS;
}

/* Under type_cache_lock: @entry expanded for @count, with a new id when the count
 * changes. */
static int expand(mpix_zcopy_process *process, layout_entry *entry, int count)
{
    mpix_layout expanded;
    int rc = mpix_layout_repeat(&entry->element, count, entry->extent, &expanded);
    if (rc != MPI_SUCCESS)
        return rc;
    process->layouts->blocks += expanded.nblocks - entry->expanded.nblocks;
    mpix_layout_free(&entry->expanded);
    entry->expanded = expanded;
    entry->count = count;
    entry->id = ++process->next_layout_id;
    table_trim(process->layouts);   /* @entry stays: a datatype names it */
    return MPI_SUCCESS;
}

int mpix_layout_cached(MPI_Datatype type, int *cached)
{
    void *value = NULL;
    *cached = 0;
    if (mpix_type_is_named(type))
        return MPI_SUCCESS;
    pthread_mutex_lock(&type_cache_lock);
    int rc = mpix_type_attr_get(type, &type_cache_keyval, &value);
    pthread_mutex_unlock(&type_cache_lock);
    *cached = value != NULL;
    return rc;
}

int mpix_layout_view_get(mpix_zcopy_comm *zc, MPI_Datatype type, int count, mpix_layout_view *view)
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
    int rc = cache_of(zc, type, &cache);
    layout_entry *entry = rc == MPI_SUCCESS ? cache->entry : NULL;
    if (rc == MPI_SUCCESS && entry->count != count && entry->users > 0) {
        /* Another thread's message still uses the expansion: this call's is its own. */
        rc = mpix_layout_repeat(&entry->element, count, entry->extent, &view->owned);
        view->layout = &view->owned;
        pthread_mutex_unlock(&type_cache_lock);
        return rc;
    }
    if (rc == MPI_SUCCESS && entry->count != count)
        rc = expand(zc->process, entry, count);
    if (rc == MPI_SUCCESS) {
        entry->users++;
        view->cache = entry;
        view->layout = &entry->expanded;
        view->id = entry->id;
        view->global_id = cache->global_id;
        view->global_comm = cache->global_comm;
    }
    pthread_mutex_unlock(&type_cache_lock);
    return rc;
}

void mpix_layout_view_release(mpix_layout_view *view)
{
    layout_entry *entry = view->cache;
    if (entry) {
        pthread_mutex_lock(&type_cache_lock);
        entry->users--;
        entry_settle(entry);
        pthread_mutex_unlock(&type_cache_lock);
        view->cache = NULL;
    }
    mpix_layout_free(&view->owned);
}

int mpix_type_set_global_id(mpix_zcopy_comm *zc, MPI_Datatype type, MPI_Comm comm, uint64_t global_id)
{
    type_cache *cache;
    pthread_mutex_lock(&type_cache_lock);
    int rc = cache_of(zc, type, &cache);
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
