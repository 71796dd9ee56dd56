/* Folding reused message buffers into transparent huge pages.
 *
 * Why: a cross-memory copy pins every page it touches, and on 4 KiB pages the pinning,
 * not the copy, bounds it: process_vm_readv of 1 MiB runs at 25 GB/s from 4 KiB pages
 * and at 44 GB/s from the same memory folded into 2 MiB pages (measured on the
 * development VM). Programs send from and receive into the same buffers again and
 * again (halos, pipelines), so a buffer seen a second time is folded with
 * madvise(MADV_COLLAPSE) (Linux 6.1): its contents stay, its 4 KiB pages become one huge
 * page per aligned 2 MiB unit. Only units wholly inside the message's extent are
 * folded, so no memory outside what the program handed to the call is touched.
 *
 * What is remembered: for a small table of 2 MiB units, the unit and how often it was
 * seen; a unit is folded at its second sight and again every REFOLD_SIGHTS sights (the
 * address may meanwhile have been unmapped and mapped anew with 4 KiB pages; folding an
 * already folded unit costs about a microsecond). The table lives on the process state,
 * shared by threads: entries are single 64-bit words read and written atomically, and a
 * lost update only folds a unit once more or once less.
 *
 * Folding is best effort, and the kernel says why it refused (madvise(2)): EAGAIN or
 * EBUSY when a page was briefly in use or the memory cgroup was at its limit, which the
 * next sight may not meet, so the unit is due again then; ENOMEM when no huge page
 * could be had (fragmented or short memory) and EINVAL for memory it never folds
 * (MADV_NOHUGEPAGE, a file mapping): retrying at every sight would stall each call in
 * the kernel's compaction, so such a unit waits for its refold sight like a folded one.
 * Units are folded one madvise each, so each is counted for what happened to it (a call
 * on a folded unit costs 1.3 us here against 2.2 us for 16 in one call: noise beside the
 * 2 MiB copy it speeds up). */
#include "zcopy.h"
#include "common/pages.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25   /* Linux 6.1; older C libraries lack the name */
#endif

enum { REFOLD_SIGHTS = 8 };
/* Units one call folds at most: a first fold copies the unit (0.25-0.8 ms per 2 MiB
 * measured here), so a buffer of gigabytes is folded over several calls, not in one
 * stall. */
enum { FOLDS_PER_CALL = 16 };
enum { SIGHT_BITS = 8 };            /* an entry: unit number << SIGHT_BITS | sights */

static uint64_t *entry_of(mpix_zcopy_process *process, uintptr_t unit)
{
    return &process->collapse_sights[(unit ^ unit >> 7) % MPIX_ZCOPY_COLLAPSE_UNITS];
}

static void set_sights(uint64_t *entry, uintptr_t unit, uint64_t sights)
{
    __atomic_store_n(entry, (uint64_t)unit << SIGHT_BITS | sights, __ATOMIC_RELAXED);
}

/* Counts a sight of @unit; 1 when it is due for folding. Past this call's budget
 * (@budget_left 0) a due unit is counted as seen once, so it is due again next time. */
static int sighted(uint64_t *entry, uintptr_t unit, int budget_left)
{
    uint64_t seen = __atomic_load_n(entry, __ATOMIC_RELAXED);
    uint64_t sights = seen >> SIGHT_BITS == unit ? (seen & ((1u << SIGHT_BITS) - 1)) + 1 : 1;
    if (sights > REFOLD_SIGHTS || (sights == 2 && !budget_left))
        sights = 1;
    set_sights(entry, unit, sights);
    return sights == 2;
}

void mpix_zcopy_collapse(mpix_zcopy_comm *zc, const void *buf, const mpix_layout *layout)
{
    if (!zc->process->collapse || layout->nblocks == 0)
        return;
    uintptr_t low = (uintptr_t)buf + layout->lowest, high = (uintptr_t)buf + layout->highest;
    uintptr_t first = (low + MPIX_HUGE_PAGE_BYTES - 1) / MPIX_HUGE_PAGE_BYTES, end = high / MPIX_HUGE_PAGE_BYTES;
    /* An extent wider than the table remembers (a struct at MPI_BOTTOM spanning heap and
     * stack: millions of units) would evict its own sights while the walk cost every
     * call milliseconds: such a message folds nothing. */
    if (end > first && end - first > MPIX_ZCOPY_COLLAPSE_UNITS)
        return;
    int budget = FOLDS_PER_CALL;
    for (uintptr_t unit = first; unit < end; unit++) {
        uint64_t *entry = entry_of(zc->process, unit);
        if (!sighted(entry, unit, budget > 0))
            continue;
        budget--;
        if (madvise((void *)(unit * MPIX_HUGE_PAGE_BYTES), MPIX_HUGE_PAGE_BYTES, MADV_COLLAPSE) == 0) {
            zc->stats.collapsed_units++;
        } else if (errno == EAGAIN || errno == EBUSY) {
            zc->stats.collapse_deferred++;
            set_sights(entry, unit, 1);
        } else {
            zc->stats.collapse_refused++;
        }
    }
}
