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
    int *ints = malloc((ni + 1) * sizeof *ints);
    MPI_Aint *addresses = malloc((na + 1) * sizeof *addresses);
    MPI_Datatype *types = malloc((nt + 1) * sizeof *types);
    int got = 0;
    if (!ints || !addresses || !types)
        rc = MPI_ERR_NO_MEM;
    else if ((rc = PMPI_Type_get_contents(type, ni, na, nt, ints, addresses, types)) == MPI_SUCCESS)
        got = 1;
    if (rc == MPI_SUCCESS)
        rc = key_put(key, ints, ni * sizeof *ints);
    if (rc == MPI_SUCCESS)
        rc = key_put(key, addresses, na * sizeof *addresses);
    for (int t = 0; t < nt && rc == MPI_SUCCESS; t++)
        rc = key_put_type(key, types[t]);
    /* The children MPI_Type_get_contents handed out are this call's to free. */
    for (int t = 0; got && t < nt; t++)
        if (!mpix_type_is_named(types[t])) {
            int free_rc = PMPI_Type_free(&types[t]);
            if (rc == MPI_SUCCESS)
                rc = free_rc;
        }
    free(ints);
    free(addresses);
    free(types);
    return rc;
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
