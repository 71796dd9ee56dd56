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
 * lost update only folds a unit once more or once less. */
#include "zcopy.h"
#include "common/pages.h"

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

/* Counts a sight of @unit; 1 when it is due for folding. Past this call's budget
 * (@budget_left 0) a due unit is counted as seen once, so it is due again next time. */
static int sighted(mpix_zcopy_process *process, uintptr_t unit, int budget_left)
{
    uint64_t *entry = &process->collapse_sights[(unit ^ unit >> 7) % MPIX_ZCOPY_COLLAPSE_UNITS];
    uint64_t seen = __atomic_load_n(entry, __ATOMIC_RELAXED);
    uint64_t sights = seen >> SIGHT_BITS == unit ? (seen & ((1u << SIGHT_BITS) - 1)) + 1 : 1;
    if (sights > REFOLD_SIGHTS || (sights == 2 && !budget_left))
        sights = 1;
    __atomic_store_n(entry, (uint64_t)unit << SIGHT_BITS | sights, __ATOMIC_RELAXED);
    return sights == 2;
}

static void fold(mpix_zcopy_comm *zc, uintptr_t first_unit, uintptr_t units)
{
    if (madvise((void *)(first_unit * MPIX_HUGE_PAGE_BYTES), units * MPIX_HUGE_PAGE_BYTES, MADV_COLLAPSE) == 0)
        zc->stats.collapsed_units += units;
    else /* an old kernel, a file or shared mapping it will not fold, no free huge page */
        zc->stats.collapse_failed++;
}

void mpix_zcopy_collapse(mpix_zcopy_comm *zc, const void *buf, const mpix_layout *layout)
{
    if (!zc->process->collapse || layout->nblocks == 0)
        return;
    uintptr_t low = (uintptr_t)buf + layout->lowest, high = (uintptr_t)buf + layout->highest;
    uintptr_t first = (low + MPIX_HUGE_PAGE_BYTES - 1) / MPIX_HUGE_PAGE_BYTES, end = high / MPIX_HUGE_PAGE_BYTES;
    uintptr_t due = 0, folding = 0;   /* due: a run of due units, [first of it, unit) */
    for (uintptr_t unit = first; unit < end; unit++) {
        if (sighted(zc->process, unit, folding < FOLDS_PER_CALL)) {
            due++;
            folding++;
            continue;
        }
        if (due)
            fold(zc, unit - due, due);
        due = 0;
    }
    if (due)
        fold(zc, end - due, due);
}
