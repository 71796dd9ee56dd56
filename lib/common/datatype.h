/* SPDX-License-Identifier: BSD-3-Clause */
/* Facts about datatypes that more than one module needs. */
#ifndef MPIX_COMMON_DATATYPE_H
#define MPIX_COMMON_DATATYPE_H

#include <mpi.h>

/* Predefined datatypes (MPI_COMBINER_NAMED): no attributes, never freed, never dup'ed. */
int mpix_type_is_named(MPI_Datatype type);

#endif
