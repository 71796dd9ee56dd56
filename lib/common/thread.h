/* SPDX-License-Identifier: BSD-3-Clause */
/* Threads libmpix starts for itself (zcopy's progress and folding threads). guard sees
 * every pthread_create and suspends its guarded transfers while threads the program
 * started run (lib/guard/threads.c); the library's own threads, like MPI's, do not count,
 * and are started here so that guard can tell. */
#ifndef MPIX_COMMON_THREAD_H
#define MPIX_COMMON_THREAD_H

#include <pthread.h>

/* pthread_create with default attributes, for a thread of the library's own. */
int mpix_thread_create(pthread_t *thread, void *(*start)(void *), void *argument);

/* Whether this thread is inside mpix_thread_create. */
int mpix_thread_creating_own(void);

#endif
