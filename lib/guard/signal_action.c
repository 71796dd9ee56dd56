/* SPDX-License-Identifier: BSD-3-Clause */
/* sigaction and signal, interposed for guard: a SIGSEGV or SIGTRAP handler the program
 * installs while guard's is in place is chained behind guard's instead of replacing it
 * (fault.c, mpix_interpose_guard_sigaction); every other call is the C library's. The
 * real functions are the next definitions after this object's (dlsym RTLD_NEXT). Built
 * into libmpix and into libmpix-guard.so and libmpix-pmpi.so, as thread_create.c is. */
#include "libc_wrapper.h"

#include <signal.h>
#include <string.h>

typedef void signal_handler(int);
typedef signal_handler *signal_function(int, signal_handler *);

EXPORTED int sigaction(int signo, const struct sigaction *action, struct sigaction *old_action)
{
    static _Atomic(void *) next;
    return mpix_interpose_guard_sigaction((mpix_sigaction_function *)mpix_next_definition("sigaction", &next),
                                          signo, action, old_action);
}

/* signal() is the C library's own for every other signal; for these two it is sigaction
 * with the C library's semantics (the signal blocked in its handler, calls restarted). */
EXPORTED signal_handler *signal(int signo, signal_handler *handler)
{
    static _Atomic(void *) next;
    if (signo != SIGSEGV && signo != SIGTRAP) {
        signal_function *next_signal = (signal_function *)mpix_next_definition("signal", &next);
        return next_signal ? next_signal(signo, handler) : SIG_ERR;
    }
    struct sigaction action, old_action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, signo);
    action.sa_flags = SA_RESTART;
    return sigaction(signo, &action, &old_action) == 0 ? old_action.sa_handler : SIG_ERR;
}
