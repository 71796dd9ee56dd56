/* SPDX-License-Identifier: BSD-3-Clause */
/* guard internals: the transfers in flight, the pages they keep protected, the fault
 * handler that waits for them, and the per-process state that holds it all. */
#ifndef MPIX_GUARD_INTERNAL_H
#define MPIX_GUARD_INTERNAL_H

#include <mpi.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

enum mpix_guard_kind {
    MPIX_GUARD_SEND_COPY,     /* sent from a packed copy: the user's pages stay as they are */
    MPIX_GUARD_SEND_INPLACE,  /* sent from the user's buffer: its pages are read-only */
    MPIX_GUARD_RECV           /* lands packed in a shadow: the user's pages are inaccessible */
};

typedef struct mpix_guard_transfer {
    struct mpix_guard_transfer *next;   /* in issue order */
    MPI_Request request;
    enum mpix_guard_kind kind;
    int done;                  /* the request completed; retirement pending */
    int must_complete;         /* MPI touched its pages: finish before the program runs on */
    unsigned long chain;
    MPI_Comm comm;             /* for the error handler, should completion fail */
    /* The user's buffer as the datatype spans it, and the pages that hold those bytes
     * (page_lo == page_hi: nothing protected, for copies and empty spans). */
    uintptr_t byte_lo, byte_hi;
    uintptr_t page_lo, page_hi;
    void *user;                /* receives: where to unpack */
    int count;
    MPI_Datatype datatype;     /* receives: dup of the user's, kept until the unpack */
    char *shadow;              /* packed send copy or receive landing area */
    size_t shadow_capacity;
    int packed_bytes;
} mpix_guard_transfer;

/* What guard did, for tests, `mpix-bench guard` and MPIX_VERBOSE. */
typedef struct mpix_guard_stats {
    unsigned long sends_copied, sends_in_place, receives;
    unsigned long mprotect_calls;
    unsigned long faults;              /* the program touched guarded memory */
    unsigned long faults_in_mpi;       /* MPI touched a page shared with guarded memory */
    unsigned long conflict_waits;      /* transfers finished early because a new one overlapped */
    unsigned long chains;
    unsigned long chains_completed_at_last_call;
    unsigned long hidden_reads;        /* send copies read through /proc/self/mem */
    unsigned long receives_polled;     /* finished while polled, never protected */
    unsigned long neighbour_steps;     /* accesses to other data on a guarded page, let through one instruction */
    unsigned long exposed;             /* transfers on memory other processes reach, finished in their call */
    unsigned long retired;
} mpix_guard_stats;

typedef struct mpix_guard_range { uintptr_t lo, hi; } mpix_guard_range;

/* A free shadow buffer; the header lives in the buffer's own first bytes. */
typedef struct mpix_guard_shadow {
    struct mpix_guard_shadow *next;
    size_t capacity;
} mpix_guard_shadow;

enum {
    MPIX_GUARD_RECORDS_PER_SLAB = 256,
    MPIX_GUARD_MAX_SLABS = 64,
    MPIX_GUARD_CHAIN_KEYS = 16,
    MPIX_GUARD_FOREIGN_PAGES = 16,
    MPIX_GUARD_CHECKED_RANGES = 4096
};

typedef struct mpix_guard_state {
    int active;                 /* MPIX_GUARD on and MPI_THREAD_SINGLE */
    int paused;                 /* the program runs threads of its own: plain calls (threads.c) */
    int verbose;
    int chain_enabled;          /* MPIX_GUARD_CHAIN */
    long long copy_bytes;       /* MPIX_GUARD_COPY_BYTES */
    long long poll_ns;          /* MPIX_GUARD_POLL_NS; -1: twice mprotect_ns */
    double mprotect_ns;         /* moving average of guard's own mprotect calls */
    uintptr_t page_size;
    mpix_guard_transfer *transfers, *last;
    mpix_guard_transfer *free_records;
    mpix_guard_transfer *slabs[MPIX_GUARD_MAX_SLABS];   /* record memory, for teardown */
    int slab_count;
    mpix_guard_shadow *free_shadows;
    int free_shadow_count;
    unsigned long chain;
    int chain_open;             /* no guarded memory touched since the last guarded call */
    /* The calls of the open chain, the chain before it, and the chain learned (seen
     * twice in a row), by key (chain.c). */
    uint32_t chain_keys[MPIX_GUARD_CHAIN_KEYS], previous_keys[MPIX_GUARD_CHAIN_KEYS];
    uint32_t learned_keys[MPIX_GUARD_CHAIN_KEYS];
    int chain_length, previous_length, learned_length;
    int self_memory;            /* /proc/self/mem, to read protected pages; -1: unusable */
    int depth;                  /* > 0 while guard runs MPI on the program's behalf */
    int pending_error;          /* from a completion nobody could return it to */
    int crashed;                /* a fault not ours was passed on: guard stands aside */
    struct sigaction previous_action;
    struct sigaction previous_trap_action;
    uintptr_t stepped_page;     /* opened for one instruction of the owner thread (fault.c) */
    uintptr_t allocator_lo, allocator_hi;   /* the code of the library that defines malloc */
    stack_t signal_stack, previous_signal_stack;
    /* The program's thread (MPI_THREAD_SINGLE: the only one that calls MPI). A fault
     * another thread takes on a guarded page (an MPI or runtime thread whose heap object
     * shares the page) opens the page and leaves it here for the program's thread, which
     * finishes the transfers there at its next guarded call or fault (fault.c). */
    pid_t owner;
    _Atomic uintptr_t foreign_pages[MPIX_GUARD_FOREIGN_PAGES];
    _Atomic int foreign_pending;       /* 1: pages above; 2: more than fit, finish everything */
    _Atomic unsigned long foreign_faults;
    /* MPIX_GUARD_CHECK (check.c): the ranges guard has protected, and room to read maps. */
    mpix_guard_range *checked;
    int checked_count;
    char *maps_text;
    mpix_guard_stats stats;
} mpix_guard_state;

/* Whether [lo1, hi1) and [lo2, hi2) share a byte. */
static inline int mpix_guard_ranges_meet(uintptr_t lo1, uintptr_t hi1, uintptr_t lo2, uintptr_t hi2)
{
    return lo1 < hi2 && lo2 < hi1;
}

/* Whether @page is one of the pages @transfer keeps protected. */
static inline int mpix_guard_covers(const mpix_guard_transfer *transfer, uintptr_t page)
{
    return transfer->page_lo <= page && page < transfer->page_hi;
}

/* ---- state.c ---------------------------------------------------------------------- */

/* The process's guard state, made (knobs read, handler installed) on first use. */
int mpix_guard_state_get(mpix_guard_state **state);
/* The state the fault handler finds: set while the state lives (between the first
 * guarded call and MPI_Finalize), NULL otherwise. */
mpix_guard_state *mpix_guard_state_current(void);
/* Whether the process's guard state has transfers in flight (free and realloc ask it). */
static inline int mpix_guard_busy(void)
{
    const mpix_guard_state *state = mpix_guard_state_current();
    return state && state->transfers;
}

/* Records and shadows come from mmap'd memory that never shares a page with the
 * program's buffers, so protecting those never hides guard's own bookkeeping. */
mpix_guard_transfer *mpix_guard_record_new(mpix_guard_state *state);
void mpix_guard_record_free(mpix_guard_state *state, mpix_guard_transfer *transfer);
int mpix_guard_shadow_get(mpix_guard_state *state, size_t bytes, char **memory, size_t *capacity);
void mpix_guard_shadow_put(mpix_guard_state *state, char *memory, size_t capacity);

/* ---- threads.c, api.c --------------------------------------------------------------- */

/* Threads the program started (not MPI) that are still running. */
int mpix_guard_program_threads(void);
/* A thread of the program's is about to start: on the program's thread, outside guard's
 * own calls, finish every guarded transfer, as the new thread may read their buffers. */
void mpix_guard_before_program_thread(void);

/* ---- pages.c ---------------------------------------------------------------------- */

/* Give every page of [lo, hi) the protection the transfers in flight need there: none
 * under a receive, read-only under an in-place send, else read-write. Runs of equal
 * protection go in one mprotect call; with @known_writable, read-write runs are taken to
 * be so already and skipped. Nonzero if an mprotect call failed (e.g. ENOMEM: the
 * process ran out of memory maps). */
int mpix_guard_protect(mpix_guard_state *state, uintptr_t lo, uintptr_t hi, int known_writable);

/* Make [lo, hi) readable (@writable: and writable) for guard's own copy, whatever the
 * transfers need, touching only pages that lack it; mpix_guard_protect puts it back. */
void mpix_guard_open(mpix_guard_state *state, uintptr_t lo, uintptr_t hi, int writable);

/* 1 if some transfer in flight keeps a page of [lo, hi) inaccessible. */
int mpix_guard_pages_hidden(const mpix_guard_state *state, uintptr_t lo, uintptr_t hi);

/* The protection the transfers in flight need at @page. */
int mpix_guard_needed_at(const mpix_guard_state *state, uintptr_t page);

/* ---- transfer.c ------------------------------------------------------------------- */

/* Start a guarded send/receive (not to MPI_PROC_NULL). @avoid_lo/@avoid_hi: pages a
 * receive of the same call will protect (MPIX_Sendrecv_guarded), which an in-place send
 * must not share. @message: a matched message (receive with status), or NULL.
 * @protect 0: the caller completes the transfer before the program runs again, so its
 * pages are left as they are. */
int mpix_guard_start_send(mpix_guard_state *state, const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, uintptr_t avoid_lo, uintptr_t avoid_hi, int protect);
int mpix_guard_start_recv(mpix_guard_state *state, void *buf, int count, MPI_Datatype datatype, int source,
                          int tag, MPI_Comm comm, MPI_Message *message, int protect);

/* The bytes and pages @count elements of @datatype at @buf span. */
int mpix_guard_span(const mpix_guard_state *state, const void *buf, int count, MPI_Datatype datatype,
                    uintptr_t *byte_lo, uintptr_t *byte_hi, uintptr_t *page_lo, uintptr_t *page_hi);

/* Finish the transfers selected by @select, with one MPI_Waitall, then retire them:
 * unpack receives, give pages back. An error is kept in state->pending_error (MPI has
 * already called the communicator's handler) for the next MPIX_Guard_complete* or
 * fenced call, which returns it without raising it again. */
typedef int mpix_guard_select(const mpix_guard_transfer *transfer, const void *context);
void mpix_guard_complete_where(mpix_guard_state *state, mpix_guard_select *select, const void *context);

/* The first error kept since the last call, and forget it. */
int mpix_guard_take_error(mpix_guard_state *state);

/* Retire, without waiting, transfers that have completed, but not the protected
 * transfers of the open chain, which retire together. */
void mpix_guard_progress(mpix_guard_state *state);

/* Finish the transfers MPI was found touching (must_complete). */
void mpix_guard_settle(mpix_guard_state *state);

/* Selectors. */
int mpix_guard_select_all(const mpix_guard_transfer *transfer, const void *context);
int mpix_guard_select_pages(const mpix_guard_transfer *transfer, const void *range);

/* ---- chain.c ---------------------------------------------------------------------- */

/* A key for one call, from its arguments. Two calls with one key are taken for the same
 * call; a collision only makes a chain complete early, which is always safe. */
uint32_t mpix_guard_call_key(const uint64_t *words, int count);
/* Count a call into the open chain (opening one if needed); 1 if it is the last call of
 * the learned chain, which must then complete the chain before returning. */
int mpix_guard_chain_call(mpix_guard_state *state, uint32_t key);
/* The program touched guarded memory (or asked for completion): close the chain and
 * learn from it. */
void mpix_guard_chain_end(mpix_guard_state *state);
/* Complete every transfer of the open chain and close it. */
void mpix_guard_chain_complete(mpix_guard_state *state);

/* ---- fault.c ---------------------------------------------------------------------- */

int mpix_guard_install_handler(mpix_guard_state *state);
void mpix_guard_remove_handler(mpix_guard_state *state);
/* Mark for completion the transfers on pages other threads opened (the program's thread
 * only; the next mpix_guard_settle finishes them). */
void mpix_guard_take_foreign(mpix_guard_state *state);

/* ---- check.c (testing: MPIX_GUARD_CHECK) -------------------------------------------- */

int mpix_guard_check_start(mpix_guard_state *state);
void mpix_guard_check_stop(mpix_guard_state *state);
/* Remember that guard gave [lo, hi) a protection. */
void mpix_guard_check_note(mpix_guard_state *state, uintptr_t lo, uintptr_t hi);
/* Abort, naming the page, if a remembered page's protection differs from the need. */
void mpix_guard_check(mpix_guard_state *state, const char *where);

#endif
