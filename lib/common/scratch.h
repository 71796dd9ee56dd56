/* SPDX-License-Identifier: BSD-3-Clause */
/* A buffer kept between calls that each need one for the length of the call (a packed
 * copy of a message). Memory new to a process costs a page fault per page at first
 * touch, and malloc gives a large buffer fresh pages every time it maps one: on a
 * virtual machine whose faults cost about 10 us a page, packing a 135 KB message into a
 * buffer of its own took 345 us where packing into a reused one took 16. Keeping one
 * buffer, the largest given back, pays those faults once. Lock-free (an atomic exchange
 * or compare-and-swap a call), so threads may share one; a second taker while the
 * buffer is out gets one of its own. */
#ifndef MPIX_COMMON_SCRATCH_H
#define MPIX_COMMON_SCRATCH_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct mpix_scratch {
    void *_Atomic kept;   /* the largest buffer given back and not taken since, or NULL */
} mpix_scratch;

/* Buffers above this are freed when given back: a process keeps no more than this much
 * memory for a message it sent once. */
enum { MPIX_SCRATCH_KEEP_MAX = 64 << 20 };

/* A buffer of at least @bytes (the kept one when it is large enough); NULL when memory
 * runs out. Give it back with mpix_scratch_give. */
void *mpix_scratch_take(mpix_scratch *scratch, size_t bytes);
/* @buffer, from mpix_scratch_take on @scratch, kept for the next take unless the kept
 * one is as large (NULL: nothing). */
void mpix_scratch_give(mpix_scratch *scratch, void *buffer);
/* Frees the kept buffer; @scratch may be used again. */
void mpix_scratch_release(mpix_scratch *scratch);

#endif
