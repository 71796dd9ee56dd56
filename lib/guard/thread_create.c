/* SPDX-License-Identifier: BSD-3-Clause */
/* pthread_create, interposed for guard: the threads a program starts change what guard
 * may do (threads.c). The real function is the next definition after this object's
 * (dlsym RTLD_NEXT: the C library's). Built into libmpix (programs that call the guarded
 * functions link it ahead of the C library) and into libmpix-guard.so and
 * libmpix-pmpi.so, which LD_PRELOAD puts ahead of it where libmpix, their dependency,
 * would come after. */
#include "common/interpose.h"

#include <dlfcn.h>
#include <stdatomic.h>

static _Atomic(mpix_thread_create_function *) next_create;

__attribute__((visibility("default"))) int pthread_create(pthread_t *thread, const pthread_attr_t *attributes,
                                                          void *(*start)(void *), void *argument)
{
    mpix_thread_create_function *next = atomic_load_explicit(&next_create, memory_order_acquire);
    if (!next) {
        next = (mpix_thread_create_function *)dlsym(RTLD_NEXT, "pthread_create");
        atomic_store_explicit(&next_create, next, memory_order_release);
    }
    return mpix_interpose_guard_thread_create(next, thread, attributes, start, argument);
}
