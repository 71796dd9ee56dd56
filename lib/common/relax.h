/* The pause a polling loop takes between looks at a word another core writes: it saves
 * power and, on SMT cores, the sibling's issue slots. */
#ifndef MPIX_COMMON_RELAX_H
#define MPIX_COMMON_RELAX_H

static inline void mpix_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

#endif
