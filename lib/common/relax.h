/* SPDX-License-Identifier: BSD-3-Clause */
/* The pause a polling loop takes between looks at a word another core writes: it saves
 * power and, on SMT cores, the sibling's issue slots. */
#ifndef MPIX_COMMON_RELAX_H
#define MPIX_COMMON_RELAX_H

#include <sched.h>
#include <time.h>

static inline void mpix_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The pause before look @poll (0, 1, ...) at a word another process writes, for waits
 * with no futex to sleep on: a short spin while the writer runs on another core, then
 * yields (ranks may outnumber cores and the writer may need this one), then 20 us naps
 * so a long wait does not burn a core. */
static inline void mpix_backoff(unsigned long poll)
{
    if (poll < 64)
        mpix_cpu_relax();
    else if (poll < 20000)
        sched_yield();
    else
        nanosleep(&(struct timespec){ 0, 20000 }, NULL);
}

#endif
