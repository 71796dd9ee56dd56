/* SPDX-License-Identifier: BSD-3-Clause */
#include "datatype.h"

int mpix_type_is_named(MPI_Datatype type)
{
    int integers, addresses, types, combiner;
    MPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}
