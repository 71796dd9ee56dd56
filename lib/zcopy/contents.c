/* SPDX-License-Identifier: BSD-3-Clause */
/* A constructor's arguments as MPI_Type_get_contents hands them out, and their release:
 * the derived children it returns are the caller's to free (Open MPI duplicates them). */
#include "zcopy.h"
#include "common/datatype.h"

#include <stdlib.h>
#include <string.h>

int mpix_type_contents_get(MPI_Datatype type, int integers, int addresses, int datatypes, mpix_type_contents *c)
{
    memset(c, 0, sizeof *c);
    /* One more than asked: a constructor may have no arguments of a kind. */
    c->ints = malloc((size_t)(integers + 1) * sizeof *c->ints);
    c->addresses = malloc((size_t)(addresses + 1) * sizeof *c->addresses);
    c->types = malloc((size_t)(datatypes + 1) * sizeof *c->types);
    if (!c->ints || !c->addresses || !c->types) {
        mpix_type_contents_free(c);
        return MPI_ERR_NO_MEM;
    }
    int rc = PMPI_Type_get_contents(type, integers, addresses, datatypes, c->ints, c->addresses, c->types);
    if (rc == MPI_SUCCESS)
        c->ntypes = datatypes;
    return rc;
}

int mpix_type_contents_free(mpix_type_contents *c)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < c->ntypes && rc == MPI_SUCCESS; i++)
        if (!mpix_type_is_named(c->types[i]))
            rc = PMPI_Type_free(&c->types[i]); /* a handle MPI no longer knows: the rest are no better */
    free(c->ints);
    free(c->addresses);
    free(c->types);
    memset(c, 0, sizeof *c);
    return rc;
}
