/* SPDX-License-Identifier: BSD-3-Clause */
#include "datatype.h"

int mpix_type_is_named(MPI_Datatype type)
{
    int integers, addresses, types, combiner;
    if (PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS)
        return 0;
    return combiner == MPI_COMBINER_NAMED;
}
