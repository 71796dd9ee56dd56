/* SPDX-License-Identifier: BSD-3-Clause */
/* A datatype's content key: its constructor tree written out as bytes, each node as its
 * combiner and argument counts, its integer and address arguments, then its children
 * the same way, predefined types by handle (constant within a process). Equal keys mean
 * equal type maps, so a datatype freed and built again, as applications do every
 * iteration, finds its layout memoized under its key (type_cache.c). Building a key costs
 * one MPI_Type_get_envelope and MPI_Type_get_contents per constructor and is
 * proportional to the constructors' arguments (a vector: four words; an indexed type:
 * two a block), not to the blocks they describe. */
#include "zcopy.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static int key_put(mpix_type_key *key, const void *data, size_t length)
{
    if (key->length + length > key->capacity) {
        size_t capacity = key->capacity ? key->capacity : 128;
        while (capacity < key->length + length)
            capacity *= 2;
        unsigned char *bytes = realloc(key->bytes, capacity);
        if (!bytes)
            return MPI_ERR_NO_MEM;
        key->bytes = bytes;
        key->capacity = capacity;
    }
    memcpy(key->bytes + key->length, data, length);
    key->length += length;
    return MPI_SUCCESS;
}

static int key_put_type(mpix_type_key *key, MPI_Datatype type)
{
    int ni, na, nt, combiner;
    int rc = PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    int envelope[4] = { combiner, ni, na, nt };
    if ((rc = key_put(key, envelope, sizeof envelope)) != MPI_SUCCESS)
        return rc;
    if (combiner == MPI_COMBINER_NAMED)
        return key_put(key, &type, sizeof type);
    mpix_type_contents c;
    rc = mpix_type_contents_get(type, ni, na, nt, &c);
    if (rc == MPI_SUCCESS)
        rc = key_put(key, c.ints, ni * sizeof *c.ints);
    if (rc == MPI_SUCCESS)
        rc = key_put(key, c.addresses, na * sizeof *c.addresses);
    for (int t = 0; t < nt && rc == MPI_SUCCESS; t++)
        rc = key_put_type(key, c.types[t]);
    int free_rc = mpix_type_contents_free(&c);
    return rc != MPI_SUCCESS ? rc : free_rc;
}

int mpix_type_key_of(MPI_Datatype type, mpix_type_key *key)
{
    *key = (mpix_type_key){ 0 };
    int rc = key_put_type(key, type);
    if (rc != MPI_SUCCESS)
        mpix_type_key_free(key);
    return rc;
}

void mpix_type_key_free(mpix_type_key *key)
{
    free(key->bytes);
    *key = (mpix_type_key){ 0 };
}
