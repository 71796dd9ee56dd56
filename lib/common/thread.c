/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/thread.h"

static _Thread_local int creating_own;

int mpix_thread_create(pthread_t *thread, void *(*start)(void *), void *argument)
{
    creating_own = 1;
    int rc = pthread_create(thread, NULL, start, argument);
    creating_own = 0;
    return rc;
}

int mpix_thread_creating_own(void) { return creating_own; }
