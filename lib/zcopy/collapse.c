/* SPDX-License-Identifier: BSD-3-Clause */
/* Folding reused message buffers into transparent huge pages.
 *
 * Why: a cross-memory copy pins every page it touches, and on 4 KiB pages the pinning,
 * not the copy, bounds it: process_vm_readv of 1 MiB runs at 25 GB/s from 4 KiB pages
 * and at 44 GB/s from the same memory folded into 2 MiB pages (measured on the
 * development VM). Programs send from and receive into the same buffers again and
 * again (halos, pipelines), so a buffer seen often enough is folded with
 * madvise(MADV_COLLAPSE) (Linux 6.1): its contents stay, its 4 KiB pages become one huge
 * page per aligned 2 MiB unit. Only units wholly inside the message's extent are
 * folded, so no memory outside what the program handed to the call is touched, and of
 * a sparse layout only the units its blocks touch.
 *
 * When: a first fold copies the unit and takes a huge page from the kernel: 0.43-0.46 ms
 * here where that memory is backed, 5 ms where the virtual machine must back it first
 * (measured: 16 units at a time, fresh and reused memory), while each copy out of or into
 * an unfolded unit pays at most about SIGHT_SAVING_NS more (1 MiB read at 25 GB/s from
 * 4 KiB pages against 44 GB/s from the same memory folded). So a unit is folded once its
 * sights have cost what a fold costs (the ski-rental rule: never more than twice the
 * better of folding at once and never folding): at the sight
 * fold_ns / (SIGHT_SAVING_NS * density), where fold_ns is a running mean of this
 * process's first folds, timed, and density the share of the units' pages the message
 * touches, since pinning is paid per page: a NAS MG y-face of 1 KiB rows 135 KB apart
 * touches 4% of its units' pages and is never folded (within SIGHT_MAX sights), where
 * folding its 16 units at their third sight (sights inherited from buffers freed before
 * at the same addresses) had stalled two round trips 5-7 ms each. Folding at the second
 * sight made the third round trip of a ping-pong stall 14-117 ms (NAS MG y-face, MILC,
 * FFT transpose buffers of 17-25 MiB), more than its first 20 round trips take through
 * MPI. A folded unit is folded again every REFOLD_SIGHTS sights (the address may
 * meanwhile have been unmapped and mapped anew with 4 KiB pages). Refolds are rare because
 * they are not free: a madvise on a folded unit costs 1.3 us here, and a sparse layout's
 * message holds less than a unit's worth of bytes per unit (MILC's 1.5 MiB over 11
 * units), so refolding every 8th sight cost its messages 4 of their 30 us one way (26 us
 * at every 64th). The table lives on the process state, shared by threads: entries are
 * single 64-bit words read and written atomically, and a lost update only folds a unit
 * once more or once less; buffers a multiple of 2 GiB apart share entries, and used in
 * turn keep each other's units from folding.
 *
 * Who folds: the folding thread (folder.c) by default, so that a slow fold stalls no
 * call; with MPIX_ZCOPY_FOLD_THREAD=false the call that finds the unit due, within the
 * budget below.
 *
 * Folding is best effort, and the kernel says why it refused (madvise(2)): EAGAIN or
 * EBUSY when a page was briefly in use or the memory cgroup was at its limit, which the
 * next sight may not meet, so the unit is due again then; ENOMEM when no huge page
 * could be had (fragmented or short memory) and EINVAL for memory it never folds
 * (MADV_NOHUGEPAGE, a file mapping): retrying at every sight would stall each call in
 * the kernel's compaction, so such a unit waits for its refold sight like a folded one.
 * Units are folded one madvise each, so each is counted for what happened to it (one
 * call on a folded unit costs 1.3 us against 2.2 us for 16 in one call). */
#include "zcopy.h"
#include "common/pages.h"
#include "common/clock.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25   /* Linux 6.1; older C libraries lack the name */
#endif

enum { REFOLD_SIGHTS = 64 };
/* Units one call folds at most: a first fold copies the unit, so a buffer of gigabytes is
 * folded over several calls, not in one stall. After its first fold a call goes on only
 * for MPIX_ZCOPY_FOLD_CALL_US (1 ms): where the memory the kernel takes must first be
 * backed by the virtual machine, one fold takes 4-6 ms, and the 8 units of a 3D FFT
 * transpose's fresh buffers, due at their first sight because buffers freed before had
 * been seen at the same addresses, stalled its first round trip 35 ms. Units left due are
 * folded by the next calls. */
enum { FOLDS_PER_CALL = 16 };
/* An entry: unit number << ENTRY_UNIT_SHIFT | folded << SIGHT_BITS | sights since the
 * unit was first seen or last folded. */
enum { SIGHT_BITS = 8, SIGHT_MAX = (1 << SIGHT_BITS) - 1, ENTRY_UNIT_SHIFT = SIGHT_BITS + 1 };
static const double SIGHT_SAVING_NS = 36000.0;
/* Blocks per unit of the extent up to which the blocks are walked for the units they
 * touch (a few ns a block), instead of taking every unit of the extent. */
enum { TOUCH_WALK_BLOCKS_PER_UNIT = 4 };

/* Direct-mapped: a message's units are consecutive and at most the table's size
 * (mpix_zcopy_collapse), so they never take each other's entries. An index that mixes
 * in higher bits can give two units of one message one entry (units on either side of an
 * address like 0x7f4000000000), and each then resets the other's sights: neither is ever
 * due. */
static _Atomic uint64_t *entry_of(mpix_zcopy_process *process, uintptr_t unit)
{
    return &process->collapse_sights[unit % MPIX_ZCOPY_COLLAPSE_UNITS];
}

static void set_entry(_Atomic uint64_t *entry, uintptr_t unit, int folded, uint64_t sights)
{
    uint64_t value = (uint64_t)unit << ENTRY_UNIT_SHIFT | (uint64_t)folded << SIGHT_BITS | sights;
    atomic_store_explicit(entry, value, memory_order_relaxed);
}

/* The sight at which a unit never folded is folded, for a message that has bytes on
 * @density of the pages of the units it is counted in (0..1]: a sight saves pinning only
 * for the pages the copy touches. */
static uint64_t first_fold_sight(mpix_zcopy_process *process, double density)
{
    if (process->fold_sight > 0)
        return (uint64_t)process->fold_sight;
    double sights = atomic_load_explicit(&process->fold_ns, memory_order_relaxed) / (SIGHT_SAVING_NS * density);
    return sights < 2 ? 2 : sights >= SIGHT_MAX ? SIGHT_MAX : (uint64_t)sights + 1;
}

/* The share of @bytes bytes of memory whose pages a message of @layout touches: its
 * bytes' pages plus one per block for the page a block shares with a gap. */
static double density_of(const mpix_layout *layout, double bytes)
{
    double page_bytes = (double)sysconf(_SC_PAGESIZE);   /* from the auxiliary vector: no system call */
    double touched = (double)layout->bytes / page_bytes + (double)layout->nblocks, pages = bytes / page_bytes;
    return touched >= pages ? 1.0 : touched / pages;
}

/* What one call may still fold: units, and time once it has folded one. */
typedef struct fold_budget {
    int units;
    double deadline;   /* 0 until the call's first fold */
} fold_budget;

static int budget_left(const mpix_zcopy_process *process, const fold_budget *budget)
{
    return budget->units > 0 &&
           (budget->deadline == 0 || process->fold_call_seconds == 0 || PMPI_Wtime() < budget->deadline);
}

void mpix_zcopy_fold_unit(mpix_zcopy_comm *zc, uintptr_t unit, int folded, uint64_t due)
{
    mpix_zcopy_process *process = zc->process;
    _Atomic uint64_t *entry = entry_of(process, unit);
    double start = mpix_clock_seconds();
    if (madvise((void *)(unit * MPIX_HUGE_PAGE_BYTES), MPIX_HUGE_PAGE_BYTES, MADV_COLLAPSE) == 0) {
        zc->stats.collapsed_units++;
        if (!folded) {   /* a refold finds the unit folded, mostly, and says nothing of the cost */
            uint64_t took = (uint64_t)((mpix_clock_seconds() - start) * 1e9);
            uint64_t mean = atomic_load_explicit(&process->fold_ns, memory_order_relaxed);
            atomic_store_explicit(&process->fold_ns, (3 * mean + took) / 4, memory_order_relaxed);
        }
        set_entry(entry, unit, 1, 0);
    } else if (errno == EAGAIN || errno == EBUSY) {
        zc->stats.collapse_deferred++;
        set_entry(entry, unit, folded, due - 1);
    } else {
        zc->stats.collapse_refused++;
        set_entry(entry, unit, 1, 0);
    }
}

/* Counts a sight of @unit; folds it when this sight makes it due and @budget has a fold
 * left, or hands it to the folding thread. A due unit past the budget (or a full queue)
 * stays due for its next sight. */
static void fold_if_due(mpix_zcopy_comm *zc, uintptr_t unit, double density, fold_budget *budget)
{
    mpix_zcopy_process *process = zc->process;
    _Atomic uint64_t *entry = entry_of(process, unit);
    uint64_t seen = atomic_load_explicit(entry, memory_order_relaxed);
    int known = seen >> ENTRY_UNIT_SHIFT == unit, folded = known && (seen >> SIGHT_BITS & 1);
    uint64_t sights = known ? (seen & SIGHT_MAX) + 1 : 1;
    uint64_t due = folded ? REFOLD_SIGHTS : first_fold_sight(process, density);
    if (sights > SIGHT_MAX)
        sights = SIGHT_MAX;
    if (sights >= due && process->folder) {
        /* Counted as folded until the thread says otherwise (set first: the thread may
         * answer at once): its next sights count towards the refold, not a second post. */
        set_entry(entry, unit, 1, 0);
        int posted = mpix_zcopy_folder_post(process->folder, zc, unit, folded, due);
        if (posted > 0)
            return;
        set_entry(entry, unit, folded, due - 1);
        if (posted == 0)
            return;   /* a full queue: due again at the next sight */
        /* no thread: folded by the calls, as below */
    }
    if (sights < due || !budget_left(process, budget)) {
        set_entry(entry, unit, folded, sights < due ? sights : due - 1);
        return;
    }
    budget->units--;
    if (budget->deadline == 0)
        budget->deadline = PMPI_Wtime() + process->fold_call_seconds;
    mpix_zcopy_fold_unit(zc, unit, folded, due);
}

/* Marks in @touched (a bit per unit from @first) the units of [first, end) that hold
 * bytes of the message; returns how many. */
static uintptr_t mark_touched(const void *buf, const mpix_layout *layout, uintptr_t first, uintptr_t end,
                              uint64_t *touched)
{
    uintptr_t count = 0;
    for (MPI_Aint b = 0; b < layout->nblocks; b++) {
        uintptr_t start = (uintptr_t)buf + layout->blocks[b].offset;
        uintptr_t unit = start / MPIX_HUGE_PAGE_BYTES, last = (start + layout->blocks[b].length - 1) / MPIX_HUGE_PAGE_BYTES;
        if (unit < first)
            unit = first;
        if (last >= end)
            last = end - 1;
        for (; unit <= last; unit++) {
            uint64_t bit = 1ull << (unit - first) % 64;
            count += !(touched[(unit - first) / 64] & bit);
            touched[(unit - first) / 64] |= bit;
        }
    }
    return count;
}

void mpix_zcopy_collapse(mpix_zcopy_comm *zc, const void *buf, const mpix_layout *layout)
{
    if (!zc->process->collapse || layout->nblocks == 0)
        return;
    uintptr_t low = (uintptr_t)buf + layout->lowest, high = (uintptr_t)buf + layout->highest;
    uintptr_t first = (low + MPIX_HUGE_PAGE_BYTES - 1) / MPIX_HUGE_PAGE_BYTES, end = high / MPIX_HUGE_PAGE_BYTES;
    if (end <= first)
        return;
    /* An extent wider than the table remembers (a struct at MPI_BOTTOM spanning heap and
     * stack: millions of units) would evict its own sights while the walk cost every
     * call milliseconds: such a message folds nothing. */
    uintptr_t units = end - first;
    if (units > MPIX_ZCOPY_COLLAPSE_UNITS)
        return;
    fold_budget budget = { FOLDS_PER_CALL, 0 };
    /* Where blocks are few beside the units (a halo plane or two of a large grid: a few
     * blocks megabytes apart), most units hold no message byte: folding those would copy
     * and populate memory the copy never pins, so only units a block touches are counted.
     * Where blocks are many, walking them would cost more than the copy saves, and nearly
     * every unit holds some. */
    if (layout->nblocks > TOUCH_WALK_BLOCKS_PER_UNIT * (MPI_Aint)units) {
        double density = density_of(layout, (double)(layout->highest - layout->lowest));
        for (uintptr_t unit = first; unit < end; unit++)
            fold_if_due(zc, unit, density, &budget);
        return;
    }
    uint64_t touched[MPIX_ZCOPY_COLLAPSE_UNITS / 64] = { 0 };
    uintptr_t touched_units = mark_touched(buf, layout, first, end, touched);
    double density = density_of(layout, (double)touched_units * MPIX_HUGE_PAGE_BYTES);
    for (uintptr_t unit = first; unit < end; unit++)
        if (touched[(unit - first) / 64] >> (unit - first) % 64 & 1)
            fold_if_due(zc, unit, density, &budget);
}
