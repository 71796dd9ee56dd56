/* SPDX-License-Identifier: BSD-3-Clause */
#include "pmpi/fortran.h"

#include <dlfcn.h>
#include <stdio.h>

void *mpix_fortran_next(const char *symbol, _Atomic(void *) *cache)
{
    void *function = atomic_load_explicit(cache, memory_order_acquire);
    if (function)
        return function;
    function = dlsym(RTLD_NEXT, symbol);
    if (!function) {
        fprintf(stderr, "mpix: the MPI library defines no Fortran binding %s to forward this call to\n", symbol);
        (void)PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    atomic_store_explicit(cache, function, memory_order_release);
    return function;
}
