/* SPDX-License-Identifier: BSD-3-Clause */
/* Fortran callers of the interposition libraries, where the MPI's Fortran bindings call
 * the PMPI_ names and so pass by the C wrappers: all of Open MPI's (mpif.h and `use mpi`
 * call mpi_<call>_, `use mpi_f08` calls the C functions ompi_<call>_f, both then
 * PMPI_<call>) and MPICH's mpi_f08 layer (mpi_<call>_f08_ and _f08ts_; its mpif.h and
 * `use mpi` layers call the MPI_ names and reach the C wrappers by themselves). The
 * wrappers take those symbols' place, convert the Fortran arguments and call this
 * library's C wrapper by its MPI_ name, so a tool stacked in front of this one sees the
 * Fortran program's calls as well; fenced calls go on to the MPI's own binding. The
 * MPI gives some wrappers' code other names too (its mpi_f08 layer's, the `use mpi`
 * TYPE(C_PTR) variants'), exported with FORTRAN_ALIAS (common/fortran.h). */
#ifndef MPIX_PMPI_FORTRAN_H
#define MPIX_PMPI_FORTRAN_H

#include "common/fortran.h"

#include <mpi.h>
#include <stdatomic.h>

#define FORTRAN_EXPORT __attribute__((visibility("default")))

/* The symbol of a call's Fortran procedure, and of one that takes a choice buffer:
 * - Open MPI: mpi_<call>_, both; the other names Open MPI gives the same code (ompi_<call>_f,
 *   which its mpi_f08 layer calls; the `use mpi` TYPE(C_PTR) variants) are exported with
 *   OPEN_MPI_ALIAS;
 * - MPICH's mpi_f08 layer (MPIX_FORTRAN_MPICH_F08): the Fortran subroutines
 *   mpi_<call>_f08_, or mpi_<call>_f08ts_ with a choice buffer, which arrives as an array
 *   descriptor whose first member is the address of the data (true of gfortran's
 *   descriptor and of ISO_Fortran_binding's CFI_cdesc_t alike; the memory the wrapped
 *   calls take there is contiguous, so that address is all they need); an absent
 *   optional IERROR is NULL. CHOICE_ADDRESS(argument) is the data's address in both. */
#if defined(MPIX_FORTRAN_MPICH_F08)
#define BINDING(call) mpi_##call##_f08_
#define CHOICE_BINDING(call) mpi_##call##_f08ts_
#define CHOICE_ADDRESS(argument) (*(void **)(argument))
#define OPEN_MPI_ALIAS(other_name, function) _Static_assert(1, "Open MPI only")
#else
#define BINDING(call) mpi_##call##_
#define CHOICE_BINDING(call) mpi_##call##_
#define CHOICE_ADDRESS(argument) (argument)
#define OPEN_MPI_ALIAS(other_name, function) FORTRAN_ALIAS(other_name, function)
#endif

/* The MPI's own definition of the Fortran-callable @symbol (the one this library's
 * wrapper hides), looked up once into *@cache; the process is aborted where the MPI has
 * none, as the call could then not be made at all. */
void *mpix_fortran_next(const char *symbol, _Atomic(void *) *cache);

/* After a fenced call made by the MPI's own binding: where the call succeeded, IERROR
 * reports @deferred, the error of an earlier guarded transfer (lib/guard/preload.c). */
static inline void mpix_fortran_deferred_error(MPI_Fint *ierr, int deferred)
{
    if (ierr && *ierr == MPI_SUCCESS && deferred != MPI_SUCCESS)
        *ierr = (MPI_Fint)deferred;
}

#endif
