/* SPDX-License-Identifier: BSD-3-Clause */
/* Completing the program's requests under zcopy interposition (interposed.c). A tracked
 * receive is complete once MPI completed it and a header found in it was read; a tracked
 * send once its receiver ended the message or it staged its data. Both are looked at
 * with MPI_Request_get_status, which leaves the handle alive: the program's handle is
 * freed only by the call that tells the program it completed, so a handle value MPI
 * reuses never meets a stale entry. Waits poll all of their requests, reading the
 * process's other tracked receives meanwhile (a sender may wait for one of them). */
#include "interposed.h"
#include "common/api.h"
#include "common/error.h"
#include "common/relax.h"
#include "common/status.h"

#include <stdlib.h>

static mpix_interposed_receive *find_receive(mpix_zcopy_interposed *state, MPI_Request request)
{
    mpix_interposed_receive *entry = NULL;
    HASH_FIND(hh, state->receives, &request, sizeof request, entry);
    return entry;
}

static mpix_interposed_send *find_send(mpix_zcopy_interposed *state, MPI_Request request)
{
    mpix_interposed_send *entry = NULL;
    HASH_FIND(hh, state->sends, &request, sizeof request, entry);
    return entry;
}

/* Reads @entry's message once MPI has completed it. Called with the state locked: where
 * other threads may be in MPI (the process's one_caller setting clear) it never asks the
 * sender to help, since waiting for the sender here would hold the lock its peer's
 * sending thread may be waiting for in the same way. */
static void inspect_receive(mpix_interposed_receive *entry, int may_ask_help)
{
    if (entry->inspected || !entry->active)
        return;
    int flag = 0;
    MPI_Status status;
    /* MPICH answers a truncated receive's completion with MPI_ERR_TRUNCATE: it is read
     * as it is (a header is never truncated), and the error shows when the program
     * completes the request. */
    int get_rc = PMPI_Request_get_status(entry->request, &flag, &status);
    if (!flag)
        return;
    mpix_zcopy_process *process = NULL;
    if (may_ask_help && (!mpix_interposed_state(&process) || !process->settings.one_caller))
        may_ask_help = 0;
    entry->inspected = 1;
    entry->bytes = -1;
    int rc;
    MPI_Count bytes;
    if (entry->packed) {
        mpix_interposed_unpack_arrived(entry->packed, entry->capacity, &status, get_rc, entry->buf, entry->count,
                                       entry->datatype, entry->comm, may_ask_help, entry->call, &rc, &bytes);
        entry->rc = rc;
        entry->bytes = bytes;   /* -1 where MPI's status tells the length (an error) */
    } else if (get_rc == MPI_SUCCESS && mpix_interposed_inspect(entry->buf, entry->count, entry->datatype, entry->comm,
                                                                &status, may_ask_help, entry->call, &rc, &bytes)) {
        entry->rc = rc;
        entry->bytes = bytes;
    }
}

void mpix_interposed_progress_locked(mpix_zcopy_interposed *state, int may_ask_help)
{
    mpix_interposed_receive *entry, *next;
    HASH_ITER(hh, state->receives, entry, next)
        inspect_receive(entry, may_ask_help);
}

/* Whether @request is complete, without freeing it. */
static int check(mpix_zcopy_interposed *state, MPI_Request request, int *flag)
{
    *flag = 1;
    if (request == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    mpix_interposed_receive *receive = find_receive(state, request);
    if (receive) {
        inspect_receive(receive, 1);
        *flag = receive->inspected || !receive->active;
        return MPI_SUCCESS;
    }
    mpix_interposed_send *send = find_send(state, request);
    if (send) {
        int rc = mpix_zcopy_send_test_interposed(&send->send, state->stage_after, flag);
        /* The header went first: it is delivered, or about to be. */
        if (rc == MPI_SUCCESS && *flag && send->send.inner != MPI_REQUEST_NULL)
            rc = PMPI_Test(&send->send.inner, flag, MPI_STATUS_IGNORE);
        return rc;
    }
    return PMPI_Request_get_status(request, flag, MPI_STATUS_IGNORE);
}

/* Completes @request, which check() found complete: MPI frees (or, persistent,
 * deactivates) it, and a zero-copy receive's status tells its real length. */
static int complete(mpix_zcopy_interposed *state, MPI_Request *request, MPI_Status *status)
{
    MPI_Request handle = *request;
    mpix_interposed_receive *receive = handle != MPI_REQUEST_NULL ? find_receive(state, handle) : NULL;
    mpix_interposed_send *send = receive || handle == MPI_REQUEST_NULL ? NULL : find_send(state, handle);
    int rc = MPI_SUCCESS;
    if (send && send->send.inner != MPI_REQUEST_NULL)
        rc = PMPI_Wait(&send->send.inner, MPI_STATUS_IGNORE);
    int *generalized_completed = send                           ? &send->generalized_completed
                                 : receive && receive->from_stash ? &receive->generalized_completed
                                                                  : NULL;
    if (generalized_completed && !*generalized_completed) {
        int complete_rc = PMPI_Grequest_complete(handle);
        *generalized_completed = 1;
        if (rc == MPI_SUCCESS)
            rc = complete_rc;
    }
    int wait_rc = PMPI_Wait(request, status);
    if (rc == MPI_SUCCESS)
        rc = wait_rc;
    if (receive) {
        if (receive->from_stash && status != MPI_STATUS_IGNORE)
            *status = receive->stash_status;
        else if (receive->bytes >= 0 && status != MPI_STATUS_IGNORE) {
            int set_rc = mpix_interposed_status_set(status, receive->bytes, receive->count, receive->datatype,
                                                    receive->rc);
            if (rc == MPI_SUCCESS)
                rc = set_rc;
        }
        if (rc == MPI_SUCCESS && (receive->bytes >= 0 || receive->from_stash))
            rc = receive->rc;
        if (rc != MPI_SUCCESS)
            rc = mpix_raise_comm(receive->comm, rc);
        if (receive->persistent) {
            receive->active = 0;
            receive->inspected = 0;
            receive->bytes = -1;
        } else {
            HASH_DEL(state->receives, receive);
            atomic_fetch_sub_explicit(&state->tracked, 1, memory_order_relaxed);
            if (receive->owns_datatype)
                (void)PMPI_Type_free(&receive->datatype);   /* the receive's result is what counts */
            free(receive->packed);
            free(receive);
        }
    } else if (send) {
        rc = mpix_zcopy_send_end(&send->send, rc);
        HASH_DEL(state->sends, send);
        atomic_fetch_sub_explicit(&state->tracked, 1, memory_order_relaxed);
        free(send);
    }
    return rc;
}

static int any_tracked(mpix_zcopy_interposed *state, int count, const MPI_Request requests[])
{
    for (int i = 0; i < count; i++)
        if (requests[i] != MPI_REQUEST_NULL && (find_receive(state, requests[i]) || find_send(state, requests[i])))
            return 1;
    return 0;
}

/* A wait's pause between looks, without the lock, so other threads' calls go on. */
static void pause_unlocked(mpix_zcopy_interposed *state, unsigned long poll)
{
    pthread_mutex_unlock(&state->lock);
    mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    pthread_mutex_lock(&state->lock);
}

/* The state when it tracks anything: else the program's requests are all MPI's. */
static mpix_zcopy_interposed *tracking(void)
{
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    return state && (atomic_load_explicit(&state->tracked, memory_order_relaxed) ||
                     atomic_load_explicit(&state->staged_pending, memory_order_relaxed))
               ? state
               : NULL;
}

MPIX_API int mpix_interpose_zcopy_wait(MPI_Request *request, MPI_Status *status)
{
    mpix_zcopy_interposed *state = tracking();
    if (!state)
        return PMPI_Wait(request, status);
    pthread_mutex_lock(&state->lock);
    int flag = 0, rc = MPI_SUCCESS;
    if (!any_tracked(state, 1, request)) {
        pthread_mutex_unlock(&state->lock);
        return PMPI_Wait(request, status);
    }
    for (unsigned long poll = 0; (rc = check(state, *request, &flag)) == MPI_SUCCESS && !flag; poll++) {
        mpix_interposed_progress_locked(state, 1);
        pause_unlocked(state, poll);
    }
    if (rc == MPI_SUCCESS)
        rc = complete(state, request, status);
    pthread_mutex_unlock(&state->lock);
    return rc;
}

MPIX_API int mpix_interpose_zcopy_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    mpix_zcopy_interposed *state = tracking();
    if (!state)
        return PMPI_Test(request, flag, status);
    pthread_mutex_lock(&state->lock);
    if (!any_tracked(state, 1, request)) {
        pthread_mutex_unlock(&state->lock);
        return PMPI_Test(request, flag, status);
    }
    mpix_interposed_progress_locked(state, 1);
    int rc = check(state, *request, flag);
    if (rc == MPI_SUCCESS && *flag)
        rc = complete(state, request, status);
    pthread_mutex_unlock(&state->lock);
    return rc;
}

/* The status MPI gives for a null or inactive request: empty. */
static void set_empty(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_ERROR = MPI_SUCCESS;
    (void)mpix_status_nothing(status, MPI_ANY_SOURCE, MPI_ANY_TAG);   /* a status of the caller's: cannot fail */
}

/* Completes every request of @requests that is complete (@all: only if all are), into
 * @statuses; *@completed: how many, their indices in @indices (unless NULL). */
static int complete_ready(mpix_zcopy_interposed *state, int count, MPI_Request requests[], MPI_Status statuses[],
                          int all, int *completed, int indices[], int *ready_all)
{
    int rc = MPI_SUCCESS, error_in_status = 0;
    *completed = 0;
    *ready_all = 1;
    mpix_interposed_progress_locked(state, 1);
    char *ready = calloc(count > 0 ? count : 1, 1);
    if (!ready)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        int flag;
        rc = check(state, requests[i], &flag);
        ready[i] = flag && requests[i] != MPI_REQUEST_NULL;
        *ready_all = *ready_all && flag;
    }
    for (int i = 0; rc == MPI_SUCCESS && i < count && (!all || *ready_all); i++) {
        if (!ready[i]) {   /* with @all, a null handle's status is empty, as MPI_Wait's */
            if (all && requests[i] == MPI_REQUEST_NULL && statuses != MPI_STATUSES_IGNORE)
                set_empty(&statuses[i]);
            continue;
        }
        MPI_Status *status = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[all ? i : *completed];
        int one_rc = complete(state, &requests[i], status);
        if (one_rc != MPI_SUCCESS) {
            error_in_status = 1;
            if (status != MPI_STATUS_IGNORE)
                status->MPI_ERROR = one_rc;
            else
                rc = one_rc;
        } else if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = MPI_SUCCESS;
        if (indices)
            indices[*completed] = i;
        (*completed)++;
    }
    free(ready);
    return rc == MPI_SUCCESS && error_in_status ? MPI_ERR_IN_STATUS : rc;
}

MPIX_API int mpix_interpose_zcopy_waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    mpix_zcopy_interposed *state = tracking();
    if (!state)
        return PMPI_Waitall(count, requests, statuses);
    pthread_mutex_lock(&state->lock);
    if (!any_tracked(state, count, requests)) {
        pthread_mutex_unlock(&state->lock);
        return PMPI_Waitall(count, requests, statuses);
    }
    int rc, completed, ready_all;
    for (unsigned long poll = 0;; poll++) {
        rc = complete_ready(state, count, requests, statuses, 1, &completed, NULL, &ready_all);
        if (rc != MPI_SUCCESS || ready_all)
            break;
        pause_unlocked(state, poll);
    }
    pthread_mutex_unlock(&state->lock);
    return rc;
}

MPIX_API int mpix_interpose_zcopy_testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    mpix_zcopy_interposed *state = tracking();
    if (!state)
        return PMPI_Testall(count, requests, flag, statuses);
    pthread_mutex_lock(&state->lock);
    int completed, rc = complete_ready(state, count, requests, statuses, 1, &completed, NULL, flag);
    pthread_mutex_unlock(&state->lock);
    return rc;
}

/* Waitany, Testany, Waitsome, Testsome: @some: every complete one, else the first.
 * Null handles and inactive persistent requests are left alone; if every request is
 * one, *@outcount is MPI_UNDEFINED at once (and, for Waitany/Testany, the status empty). */
static int complete_some(int count, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[],
                         int wait, int some)
{
    mpix_zcopy_interposed *state = tracking();
    int active = 0;
    for (int i = 0; i < count; i++)
        active += requests[i] != MPI_REQUEST_NULL;
    *outcount = active ? 0 : MPI_UNDEFINED;
    if (!active) {
        if (!some)
            set_empty(statuses);
        return MPI_SUCCESS;
    }
    if (!state)
        return some ? (wait ? PMPI_Waitsome : PMPI_Testsome)(count, requests, outcount, indices, statuses)
                    : wait ? PMPI_Waitany(count, requests, indices, statuses)
                           : PMPI_Testany(count, requests, indices, outcount, statuses);
    pthread_mutex_lock(&state->lock);
    int rc = MPI_SUCCESS;
    for (unsigned long poll = 0;; poll++) {
        mpix_interposed_progress_locked(state, 1);
        int error_in_status = 0;
        active = 0;
        for (int i = 0; i < count && rc == MPI_SUCCESS && (some || *outcount == 0); i++) {
            if (requests[i] == MPI_REQUEST_NULL)
                continue;
            MPI_Status *status = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[*outcount];
            mpix_interposed_receive *receive = find_receive(state, requests[i]);
            int one_rc, flag;
            if (receive && !receive->active)
                continue;   /* an inactive persistent request counts as a null handle */
            if (receive || find_send(state, requests[i])) {
                active++;
                if ((rc = check(state, requests[i], &flag)) != MPI_SUCCESS || !flag)
                    continue;
                one_rc = complete(state, &requests[i], status);
            } else {
                /* MPI's own request: MPI_Testany tells an inactive persistent one (flag
                 * set, index MPI_UNDEFINED) from one still running (flag clear, index
                 * MPI_UNDEFINED too), and completes a finished one. */
                int index;
                one_rc = PMPI_Testany(1, &requests[i], &index, &flag, status);
                if (one_rc == MPI_SUCCESS && flag && index == MPI_UNDEFINED)
                    continue;
                active++;
                if (one_rc == MPI_SUCCESS && !flag)
                    continue;
            }
            if (one_rc != MPI_SUCCESS && some && status != MPI_STATUS_IGNORE) {
                status->MPI_ERROR = one_rc;
                error_in_status = 1;
            } else if (one_rc != MPI_SUCCESS)
                rc = one_rc;
            indices[*outcount] = i;
            (*outcount)++;
        }
        if (rc == MPI_SUCCESS && error_in_status)
            rc = MPI_ERR_IN_STATUS;
        if (rc == MPI_SUCCESS && active == 0 && *outcount == 0) {
            *outcount = MPI_UNDEFINED;   /* no active request: at once, as MPI */
            if (!some)
                set_empty(statuses);
            break;
        }
        if (rc != MPI_SUCCESS || *outcount > 0 || !wait)
            break;
        pause_unlocked(state, poll);
    }
    pthread_mutex_unlock(&state->lock);
    return rc;
}

MPIX_API int mpix_interpose_zcopy_waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int outcount, rc = complete_some(count, requests, &outcount, index, status, 1, 0);
    if (outcount == MPI_UNDEFINED)
        *index = MPI_UNDEFINED;
    return rc;
}

MPIX_API int mpix_interpose_zcopy_testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    int outcount, rc = complete_some(count, requests, &outcount, index, status, 0, 0);
    *flag = outcount != 0;
    if (outcount == MPI_UNDEFINED || outcount == 0)
        *index = MPI_UNDEFINED;
    return rc;
}

MPIX_API int mpix_interpose_zcopy_waitsome(int count, MPI_Request requests[], int *outcount, int indices[],
                                           MPI_Status statuses[])
{
    return complete_some(count, requests, outcount, indices, statuses, 1, 1);
}

MPIX_API int mpix_interpose_zcopy_testsome(int count, MPI_Request requests[], int *outcount, int indices[],
                                           MPI_Status statuses[])
{
    return complete_some(count, requests, outcount, indices, statuses, 0, 1);
}

/* A freed request still has to be read (a receive) or ended (a send): it is completed
 * here, by waiting, as MPI would complete it in the background. */
MPIX_API int mpix_interpose_zcopy_request_free(MPI_Request *request)
{
    mpix_zcopy_interposed *state = tracking();
    if (state) {
        pthread_mutex_lock(&state->lock);
        mpix_interposed_receive *receive = find_receive(state, *request);
        int tracked = receive ? receive->active : find_send(state, *request) != NULL;
        int persistent_idle = receive && receive->persistent && !receive->active;
        pthread_mutex_unlock(&state->lock);
        if (tracked)
            return mpix_interpose_zcopy_wait(request, MPI_STATUS_IGNORE);
        if (persistent_idle) {
            pthread_mutex_lock(&state->lock);
            HASH_DEL(state->receives, receive);
            atomic_fetch_sub_explicit(&state->tracked, 1, memory_order_relaxed);
            pthread_mutex_unlock(&state->lock);
            if (receive->owns_datatype)
                (void)PMPI_Type_free(&receive->datatype);   /* the free of the request is what counts */
            free(receive->packed);
            free(receive);
        }
    }
    return PMPI_Request_free(request);
}

/* A zero-copy send cannot be taken back once its header left: cancelling it fails, as
 * MPI lets a cancel fail for a message already on its way. */
MPIX_API int mpix_interpose_zcopy_cancel(MPI_Request *request)
{
    mpix_zcopy_interposed *state = tracking();
    if (state) {
        pthread_mutex_lock(&state->lock);
        int zero_copy_send = find_send(state, *request) != NULL;
        pthread_mutex_unlock(&state->lock);
        if (zero_copy_send)
            return MPI_SUCCESS;
    }
    return PMPI_Cancel(request);
}

static void activate(mpix_zcopy_interposed *state, MPI_Request request)
{
    mpix_interposed_receive *receive = find_receive(state, request);
    if (receive && receive->persistent) {
        receive->active = 1;
        receive->inspected = 0;
        receive->bytes = -1;
    }
}

MPIX_API int mpix_interpose_zcopy_start(MPI_Request *request)
{
    mpix_zcopy_interposed *state = tracking();
    int rc = PMPI_Start(request);
    if (state && rc == MPI_SUCCESS) {
        pthread_mutex_lock(&state->lock);
        activate(state, *request);
        pthread_mutex_unlock(&state->lock);
    }
    return rc;
}

MPIX_API int mpix_interpose_zcopy_startall(int count, MPI_Request requests[])
{
    mpix_zcopy_interposed *state = tracking();
    int rc = PMPI_Startall(count, requests);
    if (state && rc == MPI_SUCCESS) {
        pthread_mutex_lock(&state->lock);
        for (int i = 0; i < count; i++)
            activate(state, requests[i]);
        pthread_mutex_unlock(&state->lock);
    }
    return rc;
}

/* Not a completion call, but one that may be polled instead of one: a request this
 * library completes is made complete in MPI's eyes once it is, and a zero-copy receive's
 * status tells its real length. */
MPIX_API int mpix_interpose_zcopy_request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    mpix_zcopy_interposed *state = tracking();
    if (!state)
        return PMPI_Request_get_status(request, flag, status);
    pthread_mutex_lock(&state->lock);
    mpix_interposed_receive *receive = request != MPI_REQUEST_NULL ? find_receive(state, request) : NULL;
    mpix_interposed_send *send = receive || request == MPI_REQUEST_NULL ? NULL : find_send(state, request);
    if (!receive && !send) {
        pthread_mutex_unlock(&state->lock);
        return PMPI_Request_get_status(request, flag, status);
    }
    mpix_interposed_progress_locked(state, 1);
    int rc = check(state, request, flag);
    int *generalized_completed = send ? &send->generalized_completed
                                 : receive->from_stash ? &receive->generalized_completed : NULL;
    if (rc == MPI_SUCCESS && *flag && generalized_completed && !*generalized_completed) {
        rc = PMPI_Grequest_complete(request);
        *generalized_completed = 1;
    }
    /* Only once check() says so: MPI may complete the receive meanwhile, and its flag
     * would hand the program a header not yet read, and the header's length. */
    if (rc == MPI_SUCCESS && *flag)
        rc = PMPI_Request_get_status(request, flag, status);
    if (rc == MPI_SUCCESS && *flag && receive && status != MPI_STATUS_IGNORE) {
        if (receive->from_stash)
            *status = receive->stash_status;
        else if (receive->bytes >= 0)
            rc = mpix_interposed_status_set(status, receive->bytes, receive->count, receive->datatype, receive->rc);
    }
    pthread_mutex_unlock(&state->lock);
    return rc;
}
