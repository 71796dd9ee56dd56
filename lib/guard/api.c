/* SPDX-License-Identifier: BSD-3-Clause */
/* The public guard calls. Each runs with state->depth raised, so that a fault MPI takes
 * meanwhile is let through (fault.c) and settled before the call returns. */
#include "guard.h"
#include "common/arguments.h"
#include "common/api.h"
#include "common/error.h"
#include "common/interpose.h"
#include "common/verbose.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#define HANDLE(x) ((uint64_t)(uintptr_t)(x))

/* Open a guarded call: a call right after another, with no guarded memory touched in
 * between, continues the chain; transfers of older chains that have finished are
 * retired now rather than at a fault. 1 if this call ends a learned chain (chain.c). */
static int call_begin(mpix_guard_state *state, const uint64_t *key_words, int key_count)
{
    state->depth++;
    int last = mpix_guard_chain_call(state, mpix_guard_call_key(key_words, key_count));
    mpix_guard_progress(state);
    return last;
}

/* The last call of a learned chain completes it before the program runs again. */
static int call_end(mpix_guard_state *state, int rc, int last)
{
    if (last)
        mpix_guard_chain_complete(state);
    if (--state->depth == 0) {
        mpix_guard_settle(state);
        mpix_guard_check(state, "call");
    }
    return rc;
}

/* Finish the selected transfers for a caller that returns no error (free, a thread
 * starting, the switch to plain calls): an error found stays for the next guarded call.
 * errno is left as it was. */
static void complete_quietly(mpix_guard_state *state, mpix_guard_select *select, const void *context)
{
    int saved_errno = errno;
    state->depth++;
    mpix_guard_chain_end(state);
    mpix_guard_complete_where(state, select, context);
    call_end(state, MPI_SUCCESS, 0);
    errno = saved_errno;
}

/* Finish every transfer before the program's own threads may read their buffers, where
 * that is allowed: on the program's thread, outside guard's own calls, guard not stood
 * aside after a crash. */
static void complete_for_threads(mpix_guard_state *state)
{
    if (state->transfers && state->depth == 0 && !state->crashed && gettid() == state->owner)
        complete_quietly(state, mpix_guard_select_all, NULL);
}

/* The state, or NULL when the blocking call must be made instead (MPI_THREAD_SINGLE
 * not given, MPIX_GUARD=off, threads of the program's running). */
static int active_state(mpix_guard_state **state)
{
    int rc = mpix_guard_state_get(state);
    if (rc != MPI_SUCCESS || !(*state)->active) {
        *state = NULL;
        return rc;
    }
    mpix_guard_state *known = *state;
    int threads = mpix_guard_program_threads();
    if ((threads > 0) != known->paused) {
        known->paused = threads > 0;
        if (known->verbose && known->paused)
            mpix_verbose_print("guard", "plain blocking calls while the program runs %d thread%s of its own", threads,
                               threads == 1 ? "" : "s");
        else if (known->verbose)
            mpix_verbose_print("guard", "guarded transfers on again: the program's own threads have ended");
    }
    if (known->paused) {
        complete_for_threads(known);   /* left by a thread started from another (threads.c) */
        *state = NULL;
    }
    return rc;
}

/* With a status the envelope is final before return: probe, then receive the matched
 * message in the background, or at once if it is too long (MPI_ERR_TRUNCATE, as
 * MPI_Recv would report it). */
static int recv_with_status(mpix_guard_state *state, void *buf, int count, MPI_Datatype datatype, int source,
                            int tag, MPI_Comm comm, MPI_Status *status, int protect)
{
    MPI_Message message;
    int type_size = 0;
    MPI_Count bytes = 0;
    int rc = PMPI_Mprobe(source, tag, comm, &message, status);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_size(datatype, &type_size);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes > (MPI_Count)type_size * count) {
        uintptr_t byte_lo, byte_hi, page_lo, page_hi;
        rc = mpix_guard_span(state, buf, count, datatype, &byte_lo, &byte_hi, &page_lo, &page_hi);
        if (rc == MPI_SUCCESS) {
            mpix_guard_range range = { page_lo, page_hi };
            mpix_guard_complete_where(state, mpix_guard_select_pages, &range);
            rc = PMPI_Mrecv(buf, count, datatype, &message, status);
        }
        return rc;
    }
    return mpix_guard_start_recv(state, buf, count, datatype, source, tag, comm, &message, protect);
}

static int recv_part(mpix_guard_state *state, void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Status *status, int protect)
{
    if (source == MPI_PROC_NULL)
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    if (status != MPI_STATUS_IGNORE)
        return recv_with_status(state, buf, count, datatype, source, tag, comm, status, protect);
    return mpix_guard_start_recv(state, buf, count, datatype, source, tag, comm, NULL, protect);
}

MPIX_API int MPIX_Send_guarded(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    mpix_guard_state *state;
    int rc = active_state(&state);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm_or_world(comm, rc);
    if (!state || dest == MPI_PROC_NULL)
        return PMPI_Send(buf, count, datatype, dest, tag, comm);
    if ((rc = mpix_check_transfer("MPIX_Send_guarded", buf, count, datatype, dest, tag, comm, MPIX_SENDING)) !=
        MPI_SUCCESS)
        return rc;
    const uint64_t key[] = { 1, HANDLE(buf), (uint64_t)count, HANDLE(datatype), (uint64_t)dest, (uint64_t)tag,
                             HANDLE(comm) };
    int last = call_begin(state, key, 7);
    rc = mpix_guard_start_send(state, buf, count, datatype, dest, tag, comm, 0, 0, !last);
    return mpix_raise_comm(comm, call_end(state, rc, last));
}

MPIX_API int MPIX_Recv_guarded(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                               MPI_Status *status)
{
    mpix_guard_state *state;
    int rc = active_state(&state);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm_or_world(comm, rc);
    if (!state)
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    if ((rc = mpix_check_transfer("MPIX_Recv_guarded", buf, count, datatype, source, tag, comm, MPIX_RECEIVING)) !=
        MPI_SUCCESS)
        return rc;
    const uint64_t key[] = { 2, HANDLE(buf), (uint64_t)count, HANDLE(datatype), (uint64_t)source, (uint64_t)tag,
                             HANDLE(comm) };
    int last = call_begin(state, key, 7);
    rc = recv_part(state, buf, count, datatype, source, tag, comm, status, !last);
    return mpix_raise_comm(comm, call_end(state, rc, last));
}

MPIX_API int MPIX_Sendrecv_guarded(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                   MPI_Comm comm, MPI_Status *status)
{
    mpix_guard_state *state;
    int rc = active_state(&state);
    if (rc != MPI_SUCCESS)
        return mpix_raise_comm_or_world(comm, rc);
    if (state && ((rc = mpix_check_transfer("MPIX_Sendrecv_guarded", sendbuf, sendcount, sendtype, dest, sendtag,
                                            comm, MPIX_SENDING)) != MPI_SUCCESS ||
                  (rc = mpix_check_transfer("MPIX_Sendrecv_guarded", recvbuf, recvcount, recvtype, source, recvtag,
                                            comm, MPIX_RECEIVING)) != MPI_SUCCESS))
        return rc;
    if (!state)
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                             recvtag, comm, status);
    const uint64_t key[] = { 3, HANDLE(sendbuf), (uint64_t)sendcount, HANDLE(sendtype), (uint64_t)dest,
                             (uint64_t)sendtag, HANDLE(recvbuf), (uint64_t)recvcount, HANDLE(recvtype),
                             (uint64_t)source, (uint64_t)recvtag, HANDLE(comm) };
    int last = call_begin(state, key, 12);
    /* The send must not be read in place from pages this call's receive is about to
     * hide: the receive would then wait for the send, which may wait for the peer's
     * receive, which waits the same way: a deadlock MPI_Sendrecv does not have. */
    uintptr_t byte_lo = 0, byte_hi = 0, avoid_lo = 0, avoid_hi = 0;
    if (source != MPI_PROC_NULL)
        rc = mpix_guard_span(state, recvbuf, recvcount, recvtype, &byte_lo, &byte_hi, &avoid_lo, &avoid_hi);
    if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL)
        rc = mpix_guard_start_send(state, sendbuf, sendcount, sendtype, dest, sendtag, comm, avoid_lo, avoid_hi,
                                   !last);
    if (rc == MPI_SUCCESS)
        rc = recv_part(state, recvbuf, recvcount, recvtype, source, recvtag, comm, status, !last);
    return mpix_raise_comm(comm, call_end(state, rc, last));
}

MPIX_API int MPIX_Guard_complete(const void *buf, MPI_Aint len)
{
    if (len < 0)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Guard_complete: negative length %ld", (long)len));
    mpix_guard_state *state = mpix_guard_state_current();
    if (!state || len == 0)
        return MPI_SUCCESS;
    uintptr_t lo = (uintptr_t)buf & ~(state->page_size - 1);
    uintptr_t hi = ((uintptr_t)buf + (uintptr_t)len + state->page_size - 1) & ~(state->page_size - 1);
    mpix_guard_range range = { lo, hi };
    state->depth++;
    mpix_guard_chain_end(state);
    mpix_guard_complete_where(state, mpix_guard_select_pages, &range);
    call_end(state, MPI_SUCCESS, 0);
    return mpix_guard_take_error(state);   /* MPI gave it to the transfer's handler already */
}

/* A guarded transfer that still needs bytes of [lo, hi): a send MPI reads in place, or a
 * receive that copies in (a copied send needs only its copy). */
static int select_needs_bytes(const mpix_guard_transfer *t, const void *context)
{
    const mpix_guard_range *range = context;
    return t->kind != MPIX_GUARD_SEND_COPY && mpix_guard_ranges_meet(t->byte_lo, t->byte_hi, range->lo, range->hi);
}

MPIX_API int mpix_interpose_guard_busy(void) { return mpix_guard_busy(); }

MPIX_API void mpix_interpose_guard_release(const void *memory, size_t bytes)
{
    mpix_guard_state *state = mpix_guard_state_current();
    /* Inside guard's own MPI calls (depth) memory given back is MPI's, and another
     * thread's is its own: neither holds a transfer's bytes. */
    if (!state || !state->transfers || !memory || bytes == 0 || state->depth > 0 || state->crashed ||
        gettid() != state->owner)
        return;
    mpix_guard_range range = { (uintptr_t)memory, (uintptr_t)memory + bytes };
    int needed = 0;
    for (const mpix_guard_transfer *t = state->transfers; t && !needed; t = t->next)
        needed = select_needs_bytes(t, &range);
    if (needed)
        complete_quietly(state, select_needs_bytes, &range);
}

void mpix_guard_before_program_thread(void)
{
    mpix_guard_state *state = mpix_guard_state_current();
    if (state)
        complete_for_threads(state);
}

MPIX_API int MPIX_Guard_complete_all(void)
{
    mpix_guard_state *state = mpix_guard_state_current();
    if (!state || (!state->transfers && state->pending_error == MPI_SUCCESS))
        return MPI_SUCCESS;
    state->depth++;
    mpix_guard_chain_end(state);
    mpix_guard_complete_where(state, mpix_guard_select_all, NULL);
    call_end(state, MPI_SUCCESS, 0);
    return mpix_guard_take_error(state);   /* MPI gave it to the transfer's handler already */
}
