/* SPDX-License-Identifier: BSD-3-Clause */
/* A buffer kept between calls (scratch.h). Each buffer carries its capacity in a header
 * of one maximal alignment unit, so what a caller gets is aligned as malloc's is. */
#include "scratch.h"

#include <stdlib.h>

typedef union scratch_header {
    size_t capacity;
    max_align_t align;
} scratch_header;

static scratch_header *header_of(void *buffer)
{
    return (scratch_header *)buffer - 1;
}

static void discard(void *buffer)
{
    if (buffer)
        free(header_of(buffer));
}

void *mpix_scratch_take(mpix_scratch *scratch, size_t bytes)
{
    void *kept = atomic_exchange_explicit(&scratch->kept, NULL, memory_order_acquire);
    if (kept && header_of(kept)->capacity >= bytes)
        return kept;
    if (bytes > MPIX_SCRATCH_KEEP_MAX)
        mpix_scratch_give(scratch, kept);   /* the new one will not be kept: this one stays */
    else
        discard(kept);   /* too small: the larger one replaces it when given back */
    scratch_header *header = malloc(sizeof *header + (bytes > 0 ? bytes : 1));
    if (!header)
        return NULL;
    header->capacity = bytes;
    return header + 1;
}

void mpix_scratch_give(mpix_scratch *scratch, void *buffer)
{
    if (!buffer)
        return;
    if (header_of(buffer)->capacity > MPIX_SCRATCH_KEEP_MAX) {
        discard(buffer);
        return;
    }
    /* The larger of the two stays: a process that alternates between a small and a
     * large message then packs both into the large one. */
    void *kept = atomic_load_explicit(&scratch->kept, memory_order_acquire);
    for (;;) {
        if (kept && header_of(kept)->capacity >= header_of(buffer)->capacity) {
            discard(buffer);
            return;
        }
        if (atomic_compare_exchange_weak_explicit(&scratch->kept, &kept, buffer, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            discard(kept);
            return;
        }
    }
}

void mpix_scratch_release(mpix_scratch *scratch)
{
    discard(atomic_exchange_explicit(&scratch->kept, NULL, memory_order_acquire));
}
