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

/* Polls that spin before a wait starts yielding, where the caller has no better figure. */
enum { MPIX_BACKOFF_SPINS = 64 };

/* The one backoff of every polling wait in mpix: the pause before look @poll (0, 1, ...)
 * at a word another process writes. @spins looks spin (the writer runs on another core
 * and answers within a cache-line transfer), the next @yields yield (ranks may outnumber
 * cores and the writer may need this one), then 20 us naps, so a long wait does not
 * burn a core. Waits that can sleep on a futex stop polling before the naps. */
static inline void mpix_backoff_phases(unsigned long poll, unsigned long spins, unsigned long yields)
{
    if (poll < spins)
        mpix_cpu_relax();
    else if (poll < spins + yields)
        sched_yield();
    else
        nanosleep(&(struct timespec){ 0, 20000 }, NULL);
}

/* A process's own waits: 20000 yields between the spins and the naps. */
static inline void mpix_backoff(unsigned long poll, unsigned long spins)
{
    mpix_backoff_phases(poll, spins, 20000);
}

/* A wait whose every look is an MPI test (progress): yield one look in eight. The MPI's
 * progress may yield by itself (Open MPI where ranks outnumber cores) or never (MPICH
 * 4.0): yielding at every look yields twice with the one, and spinning alone holds the
 * core the peer needs with the other. Measured with 4 ranks on 2 cores, a loop of a
 * node step and an 8-byte message step: Open MPI 2.9-3.0 us yielding one look in 8, as
 * with MPI_Waitall (6.7-8.4 at every look); MPICH 2.2-2.5 us (8.5-107 us spinning, 3.4-4.6
 * at every look). */
static inline void mpix_backoff_progress(unsigned long poll)
{
    if (poll % 8 == 7)
        sched_yield();
}

#endif
