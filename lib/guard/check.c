/* SPDX-License-Identifier: BSD-3-Clause */
/* The testing check (MPIX_GUARD_CHECK): every page guard ever gave a protection must have,
 * whenever the program runs, exactly the protection the transfers in flight need there
 * (pages.c). A page left more open loses the blocking semantics silently; one left
 * closed with no transfer to justify it kills the program with a SIGSEGV nobody handles.
 * The kernel's word on the protection is /proc/self/maps, read with plain system calls
 * into guard's own memory: the heap may hold guarded pages. */
#include "guard.h"
#include "common/hint.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MAPS_BYTES = 4 << 20 };

void mpix_guard_check_note(mpix_guard_state *state, uintptr_t lo, uintptr_t hi)
{
    if (!state->checked)
        return;
    for (int i = 0; i < state->checked_count; i++) {
        mpix_guard_range *known = &state->checked[i];
        if (lo <= known->hi && known->lo <= hi) {   /* touching or overlapping: widen */
            known->lo = lo < known->lo ? lo : known->lo;
            known->hi = hi > known->hi ? hi : known->hi;
            return;
        }
    }
    if (state->checked_count < MPIX_GUARD_CHECKED_RANGES)
        state->checked[state->checked_count++] = (mpix_guard_range){ lo, hi };
}

/* One line of /proc/self/maps: "lo-hi perms offset device inode [name]". */
typedef struct mapping {
    uintptr_t lo, hi;
    int protection;
} mapping;

static const char *parse_mapping(const char *line, const char *end, mapping *m)
{
    char *after;
    m->lo = (uintptr_t)strtoull(line, &after, 16);
    m->hi = (uintptr_t)strtoull(after + 1, &after, 16);
    m->protection = (after[1] == 'r' ? PROT_READ : 0) | (after[2] == 'w' ? PROT_WRITE : 0);
    const char *newline = memchr(after, '\n', (size_t)(end - after));
    return newline ? newline + 1 : end;
}

static size_t read_maps(char *buffer, size_t capacity)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    size_t length = 0;
    if (fd < 0)
        return 0;
    for (ssize_t got; length < capacity && (got = read(fd, buffer + length, capacity - length)) > 0;)
        length += (size_t)got;
    close(fd);
    return length;
}

static void report(const mpix_guard_state *state, const char *where, uintptr_t page, int need, int have)
{
    char line[256];
    int n = snprintf(line, sizeof line, "mpix guard check (%s): page %#lx has protection %d, the transfers need %d\n",
                     where, (unsigned long)page, have, need);
    (void)!write(2, line, (size_t)n);
    for (const mpix_guard_transfer *t = state->transfers; t; t = t->next) {
        n = snprintf(line, sizeof line, "  transfer kind %d pages %#lx-%#lx bytes %#lx-%#lx done %d must_complete %d\n",
                     (int)t->kind, (unsigned long)t->page_lo, (unsigned long)t->page_hi, (unsigned long)t->byte_lo,
                     (unsigned long)t->byte_hi, t->done, t->must_complete);
        (void)!write(2, line, (size_t)n);
    }
    abort();
}

/* More open than needed is allowed only where MPI (or this check) touched the page and
 * every transfer there is marked to finish before the program runs on. */
static int opened_on_purpose(const mpix_guard_state *state, uintptr_t page, int need, int have)
{
    if ((have & need) != need)
        return 0;
    for (const mpix_guard_transfer *t = state->transfers; t; t = t->next)
        if (mpix_guard_covers(t, page) && !t->must_complete)
            return 0;
    return 1;
}

void mpix_guard_check(mpix_guard_state *state, const char *where)
{
    if (!state->checked || state->checked_count == 0)
        return;
    /* Faults while checking (the check's own frame on a guarded stack page) only open
     * that page and mark its transfers, which the settle below finishes. */
    state->depth++;
    size_t length = read_maps(state->maps_text, MAPS_BYTES);
    const char *end = state->maps_text + length;
    for (int i = 0; i < state->checked_count; i++) {
        const mpix_guard_range *range = &state->checked[i];
        const char *line = state->maps_text;
        mapping m = { 0 };
        for (uintptr_t page = range->lo; page < range->hi; page += state->page_size) {
            while (line < end && m.hi <= page)
                line = parse_mapping(line, end, &m);
            if (m.hi <= page)
                break;
            if (page < m.lo)
                continue;   /* unmapped since (memory freed): nothing to hold */
            int need = mpix_guard_needed_at(state, page);
            if (need != m.protection && !(opened_on_purpose(state, page, need, m.protection)))
                report(state, where, page, need, m.protection);
        }
    }
    state->depth--;
    if (state->depth == 0)
        mpix_guard_settle(state);
}

int mpix_guard_check_start(mpix_guard_state *state)
{
    int wanted = 0;
    int rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_GUARD_CHECK, &wanted);
    if (rc != MPI_SUCCESS || !wanted)
        return rc;
    void *ranges = mmap(NULL, sizeof(mpix_guard_range) * MPIX_GUARD_CHECKED_RANGES, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *text = mmap(NULL, MAPS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ranges == MAP_FAILED || text == MAP_FAILED) {
        if (ranges != MAP_FAILED)
            munmap(ranges, sizeof(mpix_guard_range) * MPIX_GUARD_CHECKED_RANGES);
        if (text != MAP_FAILED)
            munmap(text, MAPS_BYTES);
        return MPI_SUCCESS;   /* a testing aid: without memory for it, run unchecked */
    }
    state->checked = ranges;
    state->maps_text = text;
    return MPI_SUCCESS;
}

void mpix_guard_check_stop(mpix_guard_state *state)
{
    if (!state->checked)
        return;
    munmap(state->checked, sizeof(mpix_guard_range) * MPIX_GUARD_CHECKED_RANGES);
    munmap(state->maps_text, MAPS_BYTES);
    state->checked = NULL;
}
