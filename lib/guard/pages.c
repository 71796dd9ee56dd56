/* SPDX-License-Identifier: BSD-3-Clause */
/* Page protection as a function of the transfers in flight: a page is inaccessible while
 * a receive covers it (its bytes are not there yet), read-only while an in-place send
 * covers it (MPI still reads it), read-write otherwise. Nothing else is remembered, so
 * protection can never drift from the transfers that justify it. */
#include "guard.h"

#include <sys/mman.h>

int mpix_guard_needed_at(const mpix_guard_state *state, uintptr_t page)
{
    int protection = PROT_READ | PROT_WRITE;
    for (const mpix_guard_transfer *t = state->transfers; t; t = t->next) {
        if (!mpix_guard_covers(t, page))
            continue;
        if (t->kind == MPIX_GUARD_RECV)
            return PROT_NONE;
        protection = PROT_READ;
    }
    return protection;
}

/* The next page after @page where some transfer's page range starts or ends. */
static uintptr_t next_boundary(const mpix_guard_state *state, uintptr_t page, uintptr_t limit)
{
    uintptr_t next = limit;
    for (const mpix_guard_transfer *t = state->transfers; t; t = t->next) {
        if (t->page_lo == t->page_hi)
            continue;
        if (t->page_lo > page && t->page_lo < next)
            next = t->page_lo;
        if (t->page_hi > page && t->page_hi < next)
            next = t->page_hi;
    }
    return next;
}

/* Each call is timed: what protection really costs on this machine and these buffers
 * (VMA splits, TLB shootdowns) decides how long a receive is worth polling for. */
static int set_protection(mpix_guard_state *state, uintptr_t lo, uintptr_t hi, int protection)
{
    if (lo >= hi)
        return 0;
    mpix_guard_check_note(state, lo, hi);
    double start = PMPI_Wtime();
    int failed = mprotect((void *)lo, hi - lo, protection) != 0;
    if (!failed)
        state->stats.mprotect_calls++;
    double elapsed_ns = (PMPI_Wtime() - start) * 1e9;
    state->mprotect_ns = state->mprotect_ns > 0 ? 0.9 * state->mprotect_ns + 0.1 * elapsed_ns : elapsed_ns;
    return failed;
}

/* Walk [lo, hi) in runs of equal protection: the transfers' need, raised to at least
 * @floor. A run is left alone when it needs no change: with a floor, when the need
 * already grants it; without, when @known_writable and it is to be read-write. */
static int apply(mpix_guard_state *state, uintptr_t lo, uintptr_t hi, int floor, int known_writable)
{
    int failed = 0;
    const int writable = PROT_READ | PROT_WRITE;
    uintptr_t run_start = lo;
    int run_protection = -1, run_skipped = 0;
    for (uintptr_t page = lo; page <= hi;) {
        int protection = -1, skipped = 0;
        if (page < hi) {
            int needed = mpix_guard_needed_at(state, page);
            protection = needed | floor;
            skipped = floor ? protection == needed : known_writable && protection == writable;
        }
        if (protection != run_protection || skipped != run_skipped) {
            if (run_protection >= 0 && !run_skipped)
                failed |= set_protection(state, run_start, page, run_protection);
            run_start = page;
            run_protection = protection;
            run_skipped = skipped;
        }
        if (page == hi)
            break;
        page = next_boundary(state, page, hi);
    }
    return failed;
}

int mpix_guard_protect(mpix_guard_state *state, uintptr_t lo, uintptr_t hi, int known_writable)
{
    return apply(state, lo, hi, 0, known_writable);
}

/* Only raises: pages that are already accessible enough keep their protection, so guard's
 * own stack frame, which may share a page with the range, is never made read-only. */
void mpix_guard_open(mpix_guard_state *state, uintptr_t lo, uintptr_t hi, int writable)
{
    apply(state, lo, hi, writable ? PROT_READ | PROT_WRITE : PROT_READ, 0);
}

int mpix_guard_pages_hidden(const mpix_guard_state *state, uintptr_t lo, uintptr_t hi)
{
    for (const mpix_guard_transfer *t = state->transfers; t; t = t->next)
        if (t->kind == MPIX_GUARD_RECV && mpix_guard_ranges_meet(t->page_lo, t->page_hi, lo, hi))
            return 1;
    return 0;
}
