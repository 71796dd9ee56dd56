/* SPDX-License-Identifier: BSD-3-Clause */
/* Threads the program starts itself. A guarded receive holds only while no thread but the
 * one that calls MPI reads the program's buffers: another thread's fault may not call MPI
 * to finish the transfer (fault.c opens the page for it, so it reads the bytes from
 * before the message, or crashes where the page was never guard's). MPI_THREAD_SINGLE
 * promises one thread, yet programs that call MPI_Init start thread pools all the same (a
 * threaded BLAS, std::thread workers). So every pthread_create is seen here
 * (thread_create.c): before a thread of the program's starts, the program's thread
 * finishes every guarded transfer, and while any such thread runs the guarded calls are
 * the plain ones (api.c). Threads MPI starts (its progress and runtime threads, UCX's) do
 * not count: a frame of the call that starts one lies in the MPI library, or the caller
 * is itself a thread MPI started. Nor do libmpix's own (common/thread.h). A creation
 * whose stack cannot be read counts as the program's, which only costs the overlap. */
#include "guard.h"
#include "common/api.h"
#include "common/interpose.h"
#include "common/thread.h"

#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

enum { FRAMES = 64 };

/* Threads the program started that have not ended: a fact of the process, as are the
 * threads themselves, so it outlives any guard state. */
static atomic_int program_threads;
/* This thread was started by MPI, or by a thread that MPI started. */
static _Thread_local int started_by_mpi;
/* A pthread_create of this thread is being handled: a second wrapper reached from the
 * first (libmpix-guard.so preloaded into a program linked with libmpix) passes through. */
static _Thread_local int creating;

int mpix_guard_program_threads(void) { return atomic_load_explicit(&program_threads, memory_order_acquire); }

/* The addresses the MPI library (the object that defines PMPI_Init) is mapped at, found
 * once: a range test per frame, where dladdr would search symbol tables. Where that
 * object is the program itself (an MPI linked in statically, or PMPI_Init's address
 * bound to the program's own stub), the range stays empty: every frame would match. */
typedef struct address_range { uintptr_t lo, hi; } address_range;
static address_range mpi_library;
static pthread_once_t mpi_library_found = PTHREAD_ONCE_INIT;

static int find_mpi_library(struct dl_phdr_info *object, size_t size, void *context)
{
    (void)size;
    uintptr_t wanted = (uintptr_t)PMPI_Init;
    address_range span = { UINTPTR_MAX, 0 };
    int holds = 0;
    for (int i = 0; i < object->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &object->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD)
            continue;
        uintptr_t lo = object->dlpi_addr + segment->p_vaddr, hi = lo + segment->p_memsz;
        holds |= lo <= wanted && wanted < hi;
        span.lo = lo < span.lo ? lo : span.lo;
        span.hi = hi > span.hi ? hi : span.hi;
    }
    if (holds && object->dlpi_name && object->dlpi_name[0] != '\0')
        *(address_range *)context = span;
    return holds;
}

static void find_mpi_library_once(void) { dl_iterate_phdr(find_mpi_library, &mpi_library); }

static int called_from_mpi(void)
{
    if (started_by_mpi || mpix_thread_creating_own())
        return 1;
    pthread_once(&mpi_library_found, find_mpi_library_once);
    void *frames[FRAMES];
    int count = backtrace(frames, FRAMES);
    for (int i = 0; i < count; i++)
        if ((uintptr_t)frames[i] >= mpi_library.lo && (uintptr_t)frames[i] < mpi_library.hi)
            return 1;
    return 0;
}

typedef struct thread_start {
    void *(*start)(void *);
    void *argument;
    int by_mpi;
} thread_start;

static void program_thread_ended(void *unused)
{
    (void)unused;
    atomic_fetch_sub_explicit(&program_threads, 1, memory_order_release);
}

/* The new thread's first function: it counts down however the thread ends (return,
 * pthread_exit, cancellation). */
static void *run_thread(void *argument)
{
    thread_start begin = *(thread_start *)argument;
    free(argument);
    started_by_mpi = begin.by_mpi;
    if (begin.by_mpi)
        return begin.start(begin.argument);
    void *volatile result = NULL;
    pthread_cleanup_push(program_thread_ended, NULL);
    result = begin.start(begin.argument);
    pthread_cleanup_pop(1);
    return result;
}

MPIX_API int mpix_interpose_guard_thread_create(mpix_thread_create_function *next, pthread_t *thread,
                                                const pthread_attr_t *attributes, void *(*start)(void *),
                                                void *argument)
{
    if (!next)
        return EAGAIN;
    if (creating)
        return next(thread, attributes, start, argument);
    thread_start *begin = malloc(sizeof *begin);
    if (!begin)
        return EAGAIN;
    creating = 1;
    int by_mpi = called_from_mpi();
    *begin = (thread_start){ start, argument, by_mpi };
    if (!by_mpi) {
        atomic_fetch_add_explicit(&program_threads, 1, memory_order_acq_rel);
        mpix_guard_before_program_thread();
    }
    int rc = next(thread, attributes, run_thread, begin);
    if (rc != 0) {
        free(begin);
        if (!by_mpi)
            atomic_fetch_sub_explicit(&program_threads, 1, memory_order_release);
    }
    creating = 0;
    return rc;
}
