/* SPDX-License-Identifier: BSD-3-Clause */
/* The SIGSEGV handler: a touch of a page a guarded transfer keeps protected waits for the
 * transfers that need it (the whole chain, with chains on), then the access runs again.
 * One touch cannot wait so: the heap's own, from inside malloc or free (in the program or
 * in MPI), of a chunk header that shares a page with a buffer; malloc holds its lock
 * there, and MPI, called to finish the transfer, would wait for that lock forever. Such a
 * touch of other data than the transfers' is let through for one instruction: the page
 * opens, the processor's trap flag stops the thread after that instruction and SIGTRAP
 * closes the page again (x86-64; elsewhere the transfers finish, as for a touch of
 * anything else). Inside guard's own MPI calls the page opens for good instead and its
 * transfers finish before the call returns: MPI may hand the memory it just took to
 * the kernel, which fails with EFAULT on a closed page. Any other fault goes to the
 * handler installed before ours, so real crashes still die with SIGSEGV and MPI's own
 * crash reports still print.
 *
 * Calling MPI from a signal handler is safe here only because the signal is synchronous:
 * it comes from the program's own load or store of its buffer, at MPI_THREAD_SINGLE,
 * outside MPI (a fault raised while guard itself is inside MPI takes the other branch,
 * which calls no MPI). */
#include "guard.h"

#include "common/api.h"
#include "common/interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__)
#define TRAP_FLAG 0x100   /* EFLAGS.TF: a debug trap after the next instruction */
#endif

/* The C library's own sigaction: the definitions that interpose it (signal_action.c)
 * keep guard's handler installed, and guard itself must install and remove it. Asked of
 * the C library by name, as this library may come after it in the lookup order (loaded
 * for a preloaded library), where RTLD_NEXT would find nothing. Looked up when guard
 * installs its handler, before any signal handler needs it. */
static int real_sigaction(int signo, const struct sigaction *action, struct sigaction *old_action)
{
    static _Atomic(mpix_sigaction_function *) next;
    mpix_sigaction_function *function = atomic_load_explicit(&next, memory_order_acquire);
    if (!function) {
        void *c_library = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
        function = c_library ? (mpix_sigaction_function *)dlsym(c_library, "sigaction") : NULL;
        if (!function) {
            errno = ENOSYS;
            return -1;
        }
        atomic_store_explicit(&next, function, memory_order_release);
    }
    return function(signo, action, old_action);
}

/* The default action for @signo, which the signal raised again (or the faulting access
 * run again) then takes. */
static void restore_default(int signo)
{
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    real_sigaction(signo, &default_action, NULL);
}

enum { SIGNAL_STACK_BYTES = 256 * 1024, MAX_CHAINS = 16, FOREIGN_RETRIES = 1000, LIST_STEPS = 1 << 16 };

typedef struct fault_selection {
    uintptr_t page_lo, page_hi;
    unsigned long chains[MAX_CHAINS];
    int chain_count;
} fault_selection;

static int select_fault(const mpix_guard_transfer *t, const void *context)
{
    const fault_selection *selection = context;
    if (mpix_guard_ranges_meet(t->page_lo, t->page_hi, selection->page_lo, selection->page_hi))
        return 1;
    for (int i = 0; i < selection->chain_count; i++)
        if (t->chain == selection->chains[i])
            return 1;
    return 0;
}

/* Runs the handler installed before guard's, if it is a function; 1 when it ran. */
static int call_previous(const struct sigaction *previous, int signo, siginfo_t *info, void *context)
{
    if (previous && (previous->sa_flags & SA_SIGINFO) && previous->sa_sigaction) {
        previous->sa_sigaction(signo, info, context);
        return 1;
    }
    if (previous && previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(signo);
        return 1;
    }
    return 0;
}

/* Not guard's fault. For a real crash, give every guarded page back first, with no MPI
 * call, so that the crash handlers that run next (MPI's backtrace, UCX's) never fault on
 * guarded memory, and leave everything else to them. */
static void pass_on(mpix_guard_state *state, int signo, siginfo_t *info, void *context)
{
    struct sigaction *previous = state ? &state->previous_action : NULL;
    /* An access fault elsewhere may belong to another protection scheme (another copy
     * of guard, a garbage collector) that the next handler resolves: only a fault on an
     * unmapped address is surely a crash. */
    if (state && info->si_code != SEGV_ACCERR) {
        state->crashed = 1;
        for (mpix_guard_transfer *t = state->transfers; t; t = t->next)
            if (t->page_lo < t->page_hi)
                mprotect((void *)t->page_lo, t->page_hi - t->page_lo, PROT_READ | PROT_WRITE);
    }
    if (call_previous(previous, signo, info, context))
        return;
    /* Default action: returning re-executes the access, which now kills the process with
     * the same signal (a SIGSEGV from a fault cannot be ignored). */
    restore_default(signo);
}

/* Consecutive faults of this thread on pages no transfer covers. */
static _Thread_local unsigned foreign_retries;

/* Another thread touched a guarded page: an MPI or runtime thread whose heap object
 * shares a page with the program's buffer (at MPI_THREAD_SINGLE the program has no other
 * thread that may touch its buffers). It may hold MPI's locks, and the transfers belong
 * to the program's thread: open the page, call no MPI, and leave the page for the
 * program's thread, which finishes the transfers on it at its next guarded call or fault
 * (mpix_guard_take_foreign). The list is read while that thread may change it: records
 * stay mapped while the state lives, so the walk is safe, only possibly stale. */
static void foreign_fault(mpix_guard_state *state, uintptr_t page, int signo, siginfo_t *info, void *context)
{
    int covered = 0, steps = 0;
    for (const mpix_guard_transfer *t = state->transfers; t && steps < LIST_STEPS; t = t->next, steps++)
        covered |= mpix_guard_covers(t, page);
    if (!covered) {
        /* Either the program's thread is retiring the transfer there right now (it
         * unlinks it, then gives the page back), or this is a real crash. */
        if (++foreign_retries <= FOREIGN_RETRIES) {
            sched_yield();
            return;
        }
        foreign_retries = 0;
        pass_on(state, signo, info, context);
        return;
    }
    foreign_retries = 0;
    mprotect((void *)page, state->page_size, PROT_READ | PROT_WRITE);
    int stored = 0;
    for (int i = 0; i < MPIX_GUARD_FOREIGN_PAGES && !stored; i++) {
        uintptr_t empty = 0;
        stored = atomic_compare_exchange_strong_explicit(&state->foreign_pages[i], &empty, page,
                                                         memory_order_acq_rel, memory_order_relaxed);
    }
    atomic_fetch_or_explicit(&state->foreign_pending, stored ? 1 : 2, memory_order_release);
    atomic_fetch_add_explicit(&state->foreign_faults, 1, memory_order_relaxed);
}

void mpix_guard_take_foreign(mpix_guard_state *state)
{
    int pending = atomic_exchange_explicit(&state->foreign_pending, 0, memory_order_acq_rel);
    if (!pending)
        return;
    for (int i = 0; i < MPIX_GUARD_FOREIGN_PAGES; i++) {
        uintptr_t page = atomic_exchange_explicit(&state->foreign_pages[i], 0, memory_order_acq_rel);
        for (mpix_guard_transfer *t = state->transfers; page && t; t = t->next)
            if (mpix_guard_covers(t, page))
                t->must_complete = 1;
    }
    if (pending & 2)
        for (mpix_guard_transfer *t = state->transfers; t; t = t->next)
            if (t->page_lo < t->page_hi)
                t->must_complete = 1;
}

/* Opens @page for the one instruction that faulted, when that instruction is the
 * allocator's; on_trap closes it. 0 otherwise, and where the processor has no trap flag
 * that this code knows: the caller then finishes the transfers instead. */
static int step_over(mpix_guard_state *state, uintptr_t page, void *context)
{
#if defined(TRAP_FLAG)
    uintptr_t instruction = (uintptr_t)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
    if (instruction < state->allocator_lo || instruction >= state->allocator_hi || state->stepped_page ||
        mprotect((void *)page, state->page_size, PROT_READ | PROT_WRITE) != 0)
        return 0;
    state->stepped_page = page;
    state->stats.mprotect_calls++;
    state->stats.neighbour_steps++;
    ((ucontext_t *)context)->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
    return 1;
#else
    (void)state, (void)page, (void)context;
    return 0;
#endif
}

static void on_trap(int signo, siginfo_t *info, void *context)
{
    mpix_guard_state *state = mpix_guard_state_current();
#if defined(TRAP_FLAG)
    if (state && state->stepped_page && gettid() == state->owner) {
        int saved_errno = errno;
        uintptr_t page = state->stepped_page;
        state->stepped_page = 0;
        ((ucontext_t *)context)->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TRAP_FLAG;
        if (mprotect((void *)page, state->page_size, mpix_guard_needed_at(state, page)) == 0)
            state->stats.mprotect_calls++;
        errno = saved_errno;
        return;
    }
#endif
    /* Not ours: a breakpoint or a debugger's trap, for the handler before ours. */
    struct sigaction *previous = state ? &state->previous_trap_action : NULL;
    if (call_previous(previous, signo, info, context) || (previous && previous->sa_handler == SIG_IGN))
        return;
    restore_default(signo);
    raise(signo);
}

static void on_fault(int signo, siginfo_t *info, void *context)
{
    mpix_guard_state *state = mpix_guard_state_current();
    int saved_errno = errno;
    if (!state || state->crashed || info->si_code != SEGV_ACCERR) {
        pass_on(state, signo, info, context);
        return;
    }
    uintptr_t page = (uintptr_t)info->si_addr & ~(state->page_size - 1);
    if (gettid() != state->owner) {
        foreign_fault(state, page, signo, info, context);
        errno = saved_errno;
        return;
    }
    /* Whether a transfer keeps this page, and whether the access is to its own bytes. */
    uintptr_t address = (uintptr_t)info->si_addr;
    int guarded = 0, touches_transfer = 0;
    for (const mpix_guard_transfer *t = state->transfers; t; t = t->next)
        if (mpix_guard_covers(t, page)) {
            guarded = 1;
            touches_transfer |= address >= t->byte_lo && address < t->byte_hi;
        }
    if (!guarded) {
        pass_on(state, signo, info, context);
        return;
    }
    /* Inside MPI an allocator's touch is MPI taking memory on this page, which it may
     * hand to the kernel next (a TCP readv into a fresh fragment): a system call on a
     * closed page fails with EFAULT and raises no signal, so the page must stay open.
     * It does, on the branch for faults inside MPI below. */
    if (!touches_transfer && state->depth == 0 && step_over(state, page, context)) {
        errno = saved_errno;
        return;
    }
    fault_selection selection = { page, page + state->page_size, { 0 }, 0 };
    for (mpix_guard_transfer *t = state->transfers; t; t = t->next) {
        if (!mpix_guard_covers(t, page))
            continue;
        if (state->depth > 0)
            t->must_complete = 1;
        else if (state->chain_enabled && selection.chain_count < MAX_CHAINS)
            selection.chains[selection.chain_count++] = t->chain;
    }
    if (state->depth > 0) {
        /* MPI (inside a guarded call or this handler) reached a page shared with guarded
         * memory, e.g. its own heap object next to the user's buffer. Let it through and
         * finish the transfers on that page before the program runs again. */
        mprotect((void *)page, state->page_size, PROT_READ | PROT_WRITE);
        state->stats.faults_in_mpi++;
        state->stats.mprotect_calls++;
    } else {
        state->depth++;
        state->stats.faults++;
        mpix_guard_chain_end(state);
        mpix_guard_complete_where(state, select_fault, &selection);
        state->depth--;
        mpix_guard_settle(state);
        mpix_guard_check(state, "fault");
    }
    errno = saved_errno;
}

/* dl_iterate_phdr callback: the executable segment of the object holding the address in
 * the state's allocator_lo. */
static int find_allocator(struct dl_phdr_info *object, size_t size, void *data)
{
    (void)size;
    mpix_guard_state *state = data;
    for (int i = 0; i < object->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &object->dlpi_phdr[i];
        uintptr_t lo = object->dlpi_addr + segment->p_vaddr, hi = lo + segment->p_memsz;
        if (segment->p_type == PT_LOAD && (segment->p_flags & PF_X) && state->allocator_lo >= lo &&
            state->allocator_lo < hi) {
            state->allocator_lo = lo;
            state->allocator_hi = hi;
            return 1;
        }
    }
    return 0;
}

int mpix_guard_install_handler(mpix_guard_state *state)
{
    /* Found once, here: the handler itself must not ask the dynamic loader. */
    state->allocator_lo = (uintptr_t)&malloc;
    if (!dl_iterate_phdr(find_allocator, state))
        state->allocator_lo = state->allocator_hi = 0;

    stack_t current;
    /* The handler must run even when the fault is a push onto a protected stack page (a
     * receive into a local array shares pages with the stack frame). */
    if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
        void *memory = mmap(NULL, SIGNAL_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory != MAP_FAILED) {
            state->signal_stack = (stack_t){ .ss_sp = memory, .ss_size = SIGNAL_STACK_BYTES, .ss_flags = 0 };
            if (sigaltstack(&state->signal_stack, &state->previous_signal_stack) != 0) {
                munmap(memory, SIGNAL_STACK_BYTES);
                state->signal_stack.ss_sp = NULL;
            }
        }
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (real_sigaction(SIGSEGV, &action, &state->previous_action) != 0)
        return MPI_ERR_OTHER;
    action.sa_sigaction = on_trap;
    if (real_sigaction(SIGTRAP, &action, &state->previous_trap_action) != 0)
        return MPI_ERR_OTHER;
    return MPI_SUCCESS;
}

void mpix_guard_remove_handler(mpix_guard_state *state)
{
    struct sigaction current;
    if (real_sigaction(SIGSEGV, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == on_fault)
        real_sigaction(SIGSEGV, &state->previous_action, NULL);
    if (real_sigaction(SIGTRAP, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == on_trap)
        real_sigaction(SIGTRAP, &state->previous_trap_action, NULL);
    if (state->signal_stack.ss_sp) {
        stack_t current_stack;
        if (sigaltstack(NULL, &current_stack) == 0 && !(current_stack.ss_flags & SS_ONSTACK) &&
            current_stack.ss_sp == state->signal_stack.ss_sp) {
            sigaltstack(&state->previous_signal_stack, NULL);
            munmap(state->signal_stack.ss_sp, state->signal_stack.ss_size);
        }
        state->signal_stack.ss_sp = NULL;
    }
}

/* A program that installs its own SIGSEGV (or SIGTRAP) handler once guard's is in place,
 * as crash reporters and libraries that start late do, would otherwise take guard's
 * faults for crashes. Its handler takes the place of the one guard passes the faults
 * that are not its own to, and the program is told of the one before, as if guard's were
 * not there; when guard removes its handler, the program's is installed. */
MPIX_API int mpix_interpose_guard_sigaction(mpix_sigaction_function *next, int signo, const struct sigaction *action,
                                            struct sigaction *old_action)
{
    mpix_guard_state *state = mpix_guard_state_current();
    struct sigaction *kept = NULL, current;
    if (state && (signo == SIGSEGV || signo == SIGTRAP) && real_sigaction(signo, NULL, &current) == 0 &&
        (current.sa_flags & SA_SIGINFO)) {
        if (signo == SIGSEGV && current.sa_sigaction == on_fault)
            kept = &state->previous_action;
        else if (signo == SIGTRAP && current.sa_sigaction == on_trap)
            kept = &state->previous_trap_action;
    }
    if (!kept) {
        if (!next) {
            errno = ENOSYS;
            return -1;
        }
        return next(signo, action, old_action);
    }
    struct sigaction before = *kept;
    if (action)
        *kept = *action;
    if (old_action)
        *old_action = before;
    return 0;
}
