/* SPDX-License-Identifier: BSD-3-Clause */
/* guard's performance variables (MPIX_Pvar_read): its states and counters, per process. */
#include "guard.h"
#include "common/pvar.h"

#include <string.h>

static const mpix_pvar_counter counters[] = {
    { "sends_copied", offsetof(mpix_guard_stats, sends_copied) },
    { "sends_in_place", offsetof(mpix_guard_stats, sends_in_place) },
    { "receives", offsetof(mpix_guard_stats, receives) },
    { "receives_polled", offsetof(mpix_guard_stats, receives_polled) },
    { "mprotect_calls", offsetof(mpix_guard_stats, mprotect_calls) },
    { "faults", offsetof(mpix_guard_stats, faults) },
    { "faults_in_mpi", offsetof(mpix_guard_stats, faults_in_mpi) },
    { "conflict_waits", offsetof(mpix_guard_stats, conflict_waits) },
    { "chains", offsetof(mpix_guard_stats, chains) },
    { "chains_completed_at_last_call", offsetof(mpix_guard_stats, chains_completed_at_last_call) },
    { "hidden_reads", offsetof(mpix_guard_stats, hidden_reads) },
    { "retired", offsetof(mpix_guard_stats, retired) },
    { "neighbour_steps", offsetof(mpix_guard_stats, neighbour_steps) },
    { "exposed", offsetof(mpix_guard_stats, exposed) },
};

int mpix_guard_pvar_read(const char *name, MPI_Count *value)
{
    const mpix_guard_state *state = mpix_guard_state_current();
    const mpix_pvar_counter *counter = mpix_pvar_counter_find(counters, sizeof counters / sizeof counters[0], name);
    if (counter)
        *value = state ? mpix_pvar_counter_value(counter, &state->stats) : 0;
    else if (strcmp(name, "foreign_faults") == 0)
        *value = state ? (MPI_Count)atomic_load_explicit(&state->foreign_faults, memory_order_relaxed) : 0;
    else if (strcmp(name, "active") == 0)
        *value = state ? state->active && mpix_guard_program_threads() == 0 : 0;
    else if (strcmp(name, "chain") == 0)
        *value = state ? state->chain_enabled : 0;
    else if (strcmp(name, "copy_bytes") == 0)
        *value = state ? state->copy_bytes : 0;
    else if (strcmp(name, "poll_ns") == 0)
        *value = state ? state->poll_ns : 0;
    else if (strcmp(name, "self_memory") == 0)
        *value = state ? state->self_memory >= 0 : 0;
    else
        return 0;
    return 1;
}
