/* SPDX-License-Identifier: BSD-3-Clause */
/* pthread_create, interposed for guard: the threads a program starts change what guard
 * may do (threads.c). The real function is the next definition after this object's
 * (dlsym RTLD_NEXT: the C library's). Built into libmpix (programs that call the guarded
 * functions link it ahead of the C library) and into libmpix-guard.so and
 * libmpix-pmpi.so, which LD_PRELOAD puts ahead of it where libmpix, their dependency,
 * would come after. */
#include "libc_wrapper.h"

EXPORTED int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *),
                            void *argument)
{
    static _Atomic(void *) next;
    return mpix_interpose_guard_thread_create(
        (mpix_thread_create_function *)mpix_next_definition("pthread_create", &next), thread, attributes, start,
        argument);
}
