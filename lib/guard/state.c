/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-process guard state: knobs, the fault handler's lifetime, and the mmap'd
 * records and shadow buffers. It hangs on MPI_COMM_SELF, whose attributes MPI_Finalize
 * deletes first, so finalizing completes every guarded transfer while MPI still works. */
#include "guard.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/self_state.h"
#include "common/verbose.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SHADOWS_KEPT = 64 };

/* The fault handler has no argument to find the state through; this pointer lives
 * exactly as long as the state it points to. */
static _Atomic(mpix_guard_state *) current_state;

mpix_guard_state *mpix_guard_state_current(void) { return atomic_load_explicit(&current_state, memory_order_acquire); }

static void *map_private(size_t bytes)
{
    void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return memory == MAP_FAILED ? NULL : memory;
}

/* Threads an OpenMP runtime in the process may run a parallel region on (1 without one).
 * Hybrid programs commonly call MPI_Init, not MPI_Init_thread, and read a received array
 * in a parallel loop: MPI_THREAD_SINGLE, yet threads other than the one that made the
 * call touch the buffer, and the fault handler cannot finish a transfer from them (they
 * may not call MPI), so they would read the bytes from before the message. threads.c
 * sees the runtime's threads start too, but only those started after libmpix was loaded,
 * and only once the first parallel region starts them; this asks the runtime itself. */
typedef int omp_get_max_threads_function(void);
static int openmp_threads(void)
{
    omp_get_max_threads_function *max_threads =
        (omp_get_max_threads_function *)dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    return max_threads ? max_threads() : 1;
}

static int read_knobs(mpix_guard_state *state)
{
    int enabled = 1, provided = MPI_THREAD_SINGLE;
    int rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_GUARD, &enabled);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_integer(MPI_INFO_NULL, MPIX_HINT_GUARD_COPY_BYTES, &state->copy_bytes);
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_bool(MPI_INFO_NULL, MPIX_HINT_GUARD_CHAIN, &state->chain_enabled);
    mpix_hint_value poll_ns;
    if (rc == MPI_SUCCESS)
        rc = mpix_hint_get(MPI_INFO_NULL, MPIX_HINT_GUARD_POLL_NS, &poll_ns);
    state->poll_ns = rc == MPI_SUCCESS && poll_ns.has_value ? poll_ns.integer : -1; /* -1: from the measured cost */
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Query_thread(&provided)) != MPI_SUCCESS)
        return rc;
    state->verbose = mpix_verbose_enabled(MPI_INFO_NULL);
    mpix_hint_report(MPI_INFO_NULL, "guard");
    int single = enabled && provided == MPI_THREAD_SINGLE;
    int threads = single ? openmp_threads() : 1;
    state->active = single && threads <= 1;
    if (state->verbose) {
        char why[96] = "";
        if (provided != MPI_THREAD_SINGLE)
            snprintf(why, sizeof why, ": only MPI_THREAD_SINGLE is guarded");
        else if (threads > 1)
            snprintf(why, sizeof why, ": OpenMP runs up to %d threads, which may touch buffers", threads);
        mpix_verbose_print("guard", "%s (MPIX_GUARD=%s, thread level %d%s), copy sends up to %lld bytes, chains %s",
                           state->active ? "guarded transfers on" : "plain blocking calls", enabled ? "on" : "off",
                           provided, why, state->copy_bytes, state->chain_enabled ? "on" : "off");
    }
    return MPI_SUCCESS;
}

/* /proc/self/mem reads pages whatever their protection (the kernel reads them for the
 * process as a debugger would), so a send can copy bytes from a page a receive keeps
 * inaccessible without two mprotect calls. Tried once on a protected scratch page;
 * some kernels restrict it. */
static int open_self_memory(uintptr_t page_size)
{
    int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    char *page = map_private(page_size), copy[8] = { 0 };
    int works = 0;
    if (fd >= 0 && page) {
        memcpy(page, "mpixmem", 8);
        if (mprotect(page, page_size, PROT_NONE) == 0)
            works = pread(fd, copy, sizeof copy, (off_t)(uintptr_t)page) == (ssize_t)sizeof copy &&
                    memcmp(copy, "mpixmem", 8) == 0;
    }
    if (page)
        munmap(page, page_size);
    if (!works && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* What protecting and releasing one page costs here, to start the running estimate that
 * pages.c keeps of guard's own calls. Measured in this process (MPI's threads running,
 * so the TLB shootdowns are the ones guard will pay): several us on the paravirtualized
 * development VM. The median of a few pairs. */
static double measure_protect_cost(uintptr_t page_size)
{
    enum { PAIRS = 9 };
    double samples[PAIRS];
    char *page = map_private(page_size);
    if (!page)
        return 0;
    page[0] = 1;
    for (int i = 0; i < PAIRS; i++) {
        double start = PMPI_Wtime();
        mprotect(page, page_size, PROT_NONE);
        mprotect(page, page_size, PROT_READ | PROT_WRITE);
        samples[i] = PMPI_Wtime() - start;
    }
    munmap(page, page_size);
    for (int i = 1; i < PAIRS; i++)
        for (int j = i; j > 0 && samples[j] < samples[j - 1]; j--) {
            double swap = samples[j];
            samples[j] = samples[j - 1];
            samples[j - 1] = swap;
        }
    return samples[PAIRS / 2];
}

static int state_create(void **result)
{
    mpix_guard_state *state = map_private(sizeof *state);
    if (!state)
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "guard: cannot map %zu bytes of state", sizeof *state);
    state->page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    int rc = read_knobs(state);
    state->self_memory = state->active ? open_self_memory(state->page_size) : -1;
    if (rc == MPI_SUCCESS && state->active)
        state->mprotect_ns = measure_protect_cost(state->page_size) * 1e9 / 2;
    state->owner = gettid();
    if (rc == MPI_SUCCESS && state->active)
        rc = mpix_guard_check_start(state);
    if (rc == MPI_SUCCESS && state->active)
        rc = mpix_guard_install_handler(state);
    if (rc != MPI_SUCCESS) {
        if (state->self_memory >= 0)
            close(state->self_memory);
        mpix_guard_check_stop(state);
        munmap(state, sizeof *state);
        return rc;
    }
    if (state->verbose && state->active)
        mpix_verbose_print("guard", "a receive is polled before its pages are protected for %s%s (mprotect: %.0f ns)",
                           state->poll_ns < 0 ? "what protecting and releasing them costs" : "MPIX_GUARD_POLL_NS",
                           state->self_memory >= 0 ? "; /proc/self/mem reads protected pages" : "",
                           state->mprotect_ns);
    atomic_store_explicit(&current_state, state, memory_order_release);
    *result = state;
    return MPI_SUCCESS;
}

static void state_destroy(void *value)
{
    mpix_guard_state *state = value;
    /* MPI_Finalize completes everything, as the blocking calls would have. */
    state->depth++;
    mpix_guard_complete_where(state, mpix_guard_select_all, NULL);
    state->depth--;
    if (state->verbose && state->active) {
        const mpix_guard_stats *s = &state->stats;
        mpix_verbose_print("guard", "%lu sends copied, %lu sends in place, %lu receives, %lu chains, "
                           "%lu completed at their learned last call, %lu mprotect calls, %lu faults, "
                           "%lu faults inside MPI, %lu conflict waits, %lu copies through /proc/self/mem, "
                           "%lu receives done while polled, %lu neighbour accesses stepped over, "
                           "%lu on memory other processes reach finished in their call",
                           s->sends_copied, s->sends_in_place, s->receives, s->chains,
                           s->chains_completed_at_last_call, s->mprotect_calls, s->faults, s->faults_in_mpi,
                           s->conflict_waits, s->hidden_reads, s->receives_polled, s->neighbour_steps, s->exposed);
    }
    if (state->active)
        mpix_guard_remove_handler(state);
    if (state->self_memory >= 0)
        close(state->self_memory);
    atomic_store_explicit(&current_state, NULL, memory_order_release);
    mpix_guard_check_stop(state);
    for (mpix_guard_shadow *shadow = state->free_shadows, *next; shadow; shadow = next) {
        next = shadow->next;
        munmap(shadow, shadow->capacity);
    }
    for (int i = 0; i < state->slab_count; i++)
        munmap(state->slabs[i], MPIX_GUARD_RECORDS_PER_SLAB * sizeof(mpix_guard_transfer));
    munmap(state, sizeof *state);
}

static mpix_self_slot guard_slot = MPIX_SELF_SLOT_INIT(state_create, state_destroy);

int mpix_guard_state_get(mpix_guard_state **state)
{
    mpix_guard_state *known = mpix_guard_state_current();
    if (known) {
        *state = known;
        return MPI_SUCCESS;
    }
    return mpix_self_state(&guard_slot, (void **)state);
}

mpix_guard_transfer *mpix_guard_record_new(mpix_guard_state *state)
{
    if (!state->free_records) {
        if (state->slab_count == MPIX_GUARD_MAX_SLABS)
            return NULL;
        mpix_guard_transfer *slab = map_private(MPIX_GUARD_RECORDS_PER_SLAB * sizeof *slab);
        if (!slab)
            return NULL;
        state->slabs[state->slab_count++] = slab;
        for (int i = MPIX_GUARD_RECORDS_PER_SLAB - 1; i >= 0; i--)
            mpix_guard_record_free(state, &slab[i]);
    }
    mpix_guard_transfer *transfer = state->free_records;
    state->free_records = transfer->next;
    memset(transfer, 0, sizeof *transfer);
    return transfer;
}

void mpix_guard_record_free(mpix_guard_state *state, mpix_guard_transfer *transfer)
{
    transfer->next = state->free_records;
    state->free_records = transfer;
}

/* Shadows are recycled: a halo exchange asks for the same sizes every iteration, and a
 * fresh mapping would cost two system calls and a page fault per page each time. A free
 * shadow carries its own list link in its first bytes. */
int mpix_guard_shadow_get(mpix_guard_state *state, size_t bytes, char **memory, size_t *capacity)
{
    for (mpix_guard_shadow **link = &state->free_shadows; *link; link = &(*link)->next) {
        mpix_guard_shadow *shadow = *link;
        if (shadow->capacity >= bytes && shadow->capacity / 2 <= bytes + state->page_size) {
            *link = shadow->next;
            *capacity = shadow->capacity;
            *memory = (char *)shadow;
            state->free_shadow_count--;
            return MPI_SUCCESS;
        }
    }
    size_t rounded = (bytes + state->page_size - 1) / state->page_size * state->page_size;
    if (rounded == 0)
        rounded = state->page_size;
    *memory = map_private(rounded);
    if (!*memory)
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "guard: cannot map a %zu-byte shadow buffer", rounded);
    *capacity = rounded;
    return MPI_SUCCESS;
}

void mpix_guard_shadow_put(mpix_guard_state *state, char *memory, size_t capacity)
{
    if (state->free_shadow_count == SHADOWS_KEPT) {
        munmap(memory, capacity);
        return;
    }
    mpix_guard_shadow *shadow = (mpix_guard_shadow *)memory;
    *shadow = (mpix_guard_shadow){ state->free_shadows, capacity };
    state->free_shadows = shadow;
    state->free_shadow_count++;
}
