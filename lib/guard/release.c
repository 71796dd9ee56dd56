/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory given back while a guarded transfer still needs it. A program may free a send
 * buffer as soon as MPI_Send returns, and a receive buffer unread after MPI_Recv; when a
 * guarded call returns, MPI may still be reading a large send buffer in place, and a
 * receive still has to copy in. The C library's free hands a large block back with
 * munmap (and trims the heap) without touching its pages, so no fault tells guard: MPI
 * then reads memory that is gone (a crash in MPI's progress, or EFAULT in the peer's
 * process_vm_readv), and the copy-in writes to it. free, realloc and reallocarray are
 * therefore interposed: before the block goes, the transfers that need its bytes are
 * finished, as the blocking calls would have finished them
 * (mpix_interpose_guard_release: nothing unless guard has transfers in flight, and only
 * on the program's thread outside guard's own MPI calls). The real functions are the
 * next definitions after this object's (dlsym RTLD_NEXT: the C library's, or an
 * allocator linked or preloaded after it).
 * munmap is not interposed: UCX and Open MPI rewrite every object's munmap to their own
 * hooks, so a wrapper here would not be reached; a program that unmaps memory itself
 * completes it first (MPIX_Guard_complete), as for any system call.
 *
 * Built into libmpix (programs that call the guarded functions link it ahead of the C
 * library) and into libmpix-guard.so and libmpix-pmpi.so, which LD_PRELOAD puts ahead of
 * it where libmpix, their dependency, would come after. */
#include "libc_wrapper.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef void free_function(void *);
typedef void *realloc_function(void *, size_t);
typedef size_t usable_size_function(void *);

/* The real functions, all found at the first call of either wrapper. */
static _Atomic(free_function *) next_free;
static _Atomic(realloc_function *) next_realloc;
static _Atomic(usable_size_function *) next_usable_size;
/* dlsym itself may free (an earlier error message) and allocate: a free made while the
 * lookup is under way goes straight to the real free, or is dropped (a few bytes, once)
 * before that is known. */
static _Thread_local int looking_up;

static void look_up(void)
{
    looking_up = 1;
    atomic_store_explicit(&next_free, (free_function *)dlsym(RTLD_NEXT, "free"), memory_order_release);
    atomic_store_explicit(&next_realloc, (realloc_function *)dlsym(RTLD_NEXT, "realloc"), memory_order_release);
    atomic_store_explicit(&next_usable_size, (usable_size_function *)dlsym(RTLD_NEXT, "malloc_usable_size"),
                          memory_order_release);
    looking_up = 0;
}

/* Finishes the guarded transfers that need the bytes of the block at @memory (all of
 * them from its start, where the allocator cannot say how long it is). */
static void release(void *memory)
{
    if (looking_up)
        return;
    usable_size_function *usable_size = atomic_load_explicit(&next_usable_size, memory_order_acquire);
    mpix_interpose_guard_release(memory, usable_size ? usable_size(memory) : SIZE_MAX - (uintptr_t)memory);
}

EXPORTED void free(void *memory)
{
    free_function *real = atomic_load_explicit(&next_free, memory_order_acquire);
    if (!real) {
        if (looking_up)
            return;
        look_up();
        real = atomic_load_explicit(&next_free, memory_order_acquire);
    }
    if (memory && GUARD_BUSY())
        release(memory);
    real(memory);
}

EXPORTED void *realloc(void *memory, size_t bytes)
{
    realloc_function *real = atomic_load_explicit(&next_realloc, memory_order_acquire);
    if (!real) {
        if (looking_up)
            return NULL;   /* out of memory, to dlsym */
        look_up();
        real = atomic_load_explicit(&next_realloc, memory_order_acquire);
    }
    if (memory && GUARD_BUSY())
        release(memory);   /* it may move or shrink the block */
    return real(memory, bytes);
}

/* The C library's reallocarray reaches its realloc inside itself, past the one above. */
EXPORTED void *reallocarray(void *memory, size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(memory, bytes);
}
