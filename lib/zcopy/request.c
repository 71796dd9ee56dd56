/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Isend_zcopy and MPIX_Irecv_zcopy: generalized requests (MPI_Grequest_start) that
 * a pass over the process's pending calls completes, so that MPI_Wait, MPI_Waitall and
 * MPI_Test finish them like any request. MPI runs the pass where it lets a library in
 * (MPICH's poll functions, Open MPI's progress engine: polled below), else a progress
 * thread of the process does (MPIX_ZCOPY_PROGRESS=thread).
 *
 * Why that: MPI-3 generalized requests have no progress callback, so MPI_Wait on one
 * returns only once someone calls MPI_Grequest_complete, and a zero-copy receive needs
 * this process to read the sender's memory after the sender's header has arrived, which
 * may be while the program sits in MPI_Waitall. A request whose status counted only the
 * bytes MPI moved (the header of a zero-copy message) would report a wrong count, so the
 * data cannot ride on a plain MPI request either. The thread calls MPI, hence
 * MPI_THREAD_MULTIPLE.
 *
 * The send goes out in the caller's thread (so sends to one peer and tag keep their
 * order); the pass then waits for the receiver's end of a zero-copy message, or tests
 * the MPI requests of one sent through MPI. A receive is posted with MPI_Irecv into the
 * caller's buffer, as MPI_Irecv would be, once no receive posted before it that could
 * take the same message is pending; the pass tests it and acts on a header it finds
 * there as MPIX_Recv_zcopy does (recv.c). Matching with MPI_Improbe in the pass instead
 * left every message to MPI's unexpected queue: with Open MPI a 128 KiB non-contiguous
 * exchange ran 0.86-0.96x of MPI's even without a header. Where the MPI refuses a header
 * into the buffer (MPICH), the pass matches it with MPI_Improbe first (recv.c). */
#include "zcopy.h"
#include "common/arguments.h"
#include "common/api.h"
#include "common/datatype.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/progress.h"
#include "common/relax.h"
#include "common/self_state.h"
#include "common/thread.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

typedef struct mpix_zcopy_request {
    MPI_Request request;          /* the generalized request the caller holds */
    /* Two owners: MPI, until it calls free_request, and the pending list, until the
     * request is finished (mpix_zcopy_release_last): a send freed at once, as programs
     * free sends they never wait for, is still on the list. */
    _Atomic int references;
    mpix_zcopy_comm *zc;
    MPI_Comm comm;
    int receiving;
    _Atomic int done;             /* the progress thread is through with it */
    int error;                    /* what MPI_Wait reports */
    _Atomic int cancel_requested; /* MPI_Cancel: a receive not yet matched ends cancelled */
    int cancelled;
    /* a receive */
    void *buf;
    int count, source, tag;
    MPI_Datatype datatype;        /* the caller's if named, else a duplicate: it may free its own */
    int owns_datatype;            /* the duplicate, freed once the receive is done */
    MPI_Status status;
    MPI_Count bytes;              /* received, for the status */
    int posted;                   /* its MPI_Irecv is (inbound.pending) */
    int matched;                  /* that receive completed: no longer cancellable */
    int cancel_sent;              /* MPI_Cancel called on it */
    mpix_zcopy_receiving inbound;  /* its receive in steps (recv.c) */
    /* a send */
    mpix_zcopy_send send;
} mpix_zcopy_request;

struct mpix_zcopy_progress {
    int polled;                   /* no thread: MPI runs the passes (MPICH's poll functions, polled_by_mpi) */
    _Atomic int outstanding;      /* requests pending: an idle pass is one load */
    pthread_t thread;
    pthread_mutex_t lock;         /* guards pending, count, capacity, stop */
    pthread_mutex_t passing;      /* one progress_pass at a time; it owns snapshot */
    pthread_cond_t wake;
    mpix_zcopy_request **pending; /* in posting order */
    int count, capacity;
    mpix_zcopy_request **snapshot;
    int snapshot_capacity;
    int stop;
};

static int received(mpix_zcopy_request *request, int rc);

/* One look at @request; 1 when it is done. A receive waits while a receive posted
 * before it (@earlier) on the same communicator could take the same message. */
static int advance(mpix_zcopy_request *request, mpix_zcopy_request *const *earlier, int earlier_count)
{
    if (!request->receiving) {
        int done, rc = mpix_zcopy_send_test(&request->send, &done);
        if (rc != MPI_SUCCESS || done)
            request->error = mpix_zcopy_send_end(&request->send, rc);
        return rc != MPI_SUCCESS || done;
    }
    int rc, flag = 0;
    MPI_Status completed;
    if (!request->posted) {
        if (atomic_load_explicit(&request->cancel_requested, memory_order_acquire)) {
            request->cancelled = 1;
            return 1;
        }
        /* Posted once the receives posted before it that could take the same message are
         * through: one of them may still post the receive of its data, which MPI would
         * match to this one first. */
        for (int i = 0; i < earlier_count; i++)
            if (earlier[i]->receiving && !earlier[i]->done && earlier[i]->zc == request->zc &&
                mpix_zcopy_envelopes_overlap(earlier[i]->source, earlier[i]->tag, request->source, request->tag))
                return 0;
        if (!request->zc->settings.receives_in_place) { /* matched first (mpix_zcopy_receive_matched) */
            MPI_Message message;
            rc = PMPI_Improbe(request->source, request->tag, request->comm, &flag, &message, &completed);
            if (rc == MPI_SUCCESS && !flag)
                return 0;
            request->inbound.unmatched = 0;
            if (rc == MPI_SUCCESS)
                rc = mpix_zcopy_receive_matched(request->zc, &request->inbound, &message, &completed, request->buf,
                                                request->count, request->datatype, request->comm, 1,
                                                &request->status);
            if (rc == MPI_SUCCESS && request->inbound.unmatched)
                return 0; /* a question, answered: matched again by a later pass */
            request->posted = request->matched = 1;
            if (rc == MPI_SUCCESS && request->inbound.pending != MPI_REQUEST_NULL)
                return 0;
            return received(request, rc);
        }
        if ((rc = PMPI_Irecv(request->buf, request->count, request->datatype, request->source, request->tag,
                             request->comm, &request->inbound.pending)) != MPI_SUCCESS)
            return received(request, rc);
        request->posted = 1;
    }
    if (!request->matched && !request->cancel_sent &&
        atomic_load_explicit(&request->cancel_requested, memory_order_acquire)) {
        /* Cancelled if MPI had not matched it; else received as any. */
        if ((rc = PMPI_Cancel(&request->inbound.pending)) != MPI_SUCCESS)
            return received(request, rc);
        request->cancel_sent = 1;
    }
    rc = PMPI_Test(&request->inbound.pending, &flag, &completed);
    if (rc == MPI_SUCCESS && !flag)
        return 0;
    if (!request->matched && request->cancel_sent && rc == MPI_SUCCESS &&
        ((rc = PMPI_Test_cancelled(&completed, &request->cancelled)) != MPI_SUCCESS || request->cancelled))
        return rc == MPI_SUCCESS ? 1 : received(request, rc);
    rc = mpix_zcopy_receive_landed(request->zc, &request->inbound, rc, &completed, request->buf, request->count,
                                   request->datatype, request->comm, &request->status);
    /* Received again after a question: still cancellable. */
    request->matched = request->matched || request->inbound.data_posted || request->inbound.pending == MPI_REQUEST_NULL;
    if (!request->matched)
        request->cancel_sent = 0;
    if (rc == MPI_SUCCESS && request->inbound.pending != MPI_REQUEST_NULL)
        return 0; /* its data on the way: later passes test it, no pass waits in MPI */
    return received(request, rc);
}

/* A receive is through (@rc): its byte count for the status, its code for MPI_Wait. */
static int received(mpix_zcopy_request *request, int rc)
{
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        (void)PMPI_Error_class(rc, &error_class); /* a code of MPI's or mpix's own: it has a class */
    if (rc == MPI_SUCCESS || error_class == MPI_ERR_TRUNCATE) {
        int count_rc = PMPI_Get_elements_x(&request->status, MPI_BYTE, &request->bytes);
        if (rc == MPI_SUCCESS)
            rc = count_rc;
    }
    request->error = rc;
    return 1;
}

void mpix_zcopy_request_done(mpix_zcopy_comm *zc, MPI_Request request, MPI_Datatype *owned, int *error)
{
    if (*owned != MPI_DATATYPE_NULL && PMPI_Type_free(owned) != MPI_SUCCESS && *error == MPI_SUCCESS)
        *error = MPI_ERR_TYPE;
    atomic_fetch_sub_explicit(&zc->requests_pending, 1, memory_order_release);
    /* Only fails for a request that is not generalized, which this one is. */
    (void)PMPI_Grequest_complete(request);
}

/* Lets go of one of @request's owners' hold (references). */
static void release(mpix_zcopy_request *request)
{
    if (mpix_zcopy_release_last(&request->references))
        free(request);
}

/* Hands a finished request to MPI, and lets go of the pending list's hold on it: after
 * this the caller's MPI_Wait may free it. */
static void finish(mpix_zcopy_request *request)
{
    MPI_Datatype owned = request->owns_datatype ? request->datatype : MPI_DATATYPE_NULL;
    request->owns_datatype = 0;
    mpix_zcopy_request_done(request->zc, request->request, &owned, &request->error);
    release(request);
}

/* One look at every pending request, finishing those done: the progress thread's loop
 * body, and what MPICH's poll and wait functions of the requests run in the caller's
 * MPI_Wait or MPI_Test (progress->polled). One pass at a time: a second caller returns.
 * Returns the number finished. */
static int progress_pass(mpix_zcopy_progress *progress)
{
    if (atomic_load_explicit(&progress->outstanding, memory_order_acquire) == 0 ||
        pthread_mutex_trylock(&progress->passing) != 0)
        return 0;
    pthread_mutex_lock(&progress->lock);
    int count = progress->count;
    if (count > progress->snapshot_capacity) {
        mpix_zcopy_request **grown = realloc(progress->snapshot, count * sizeof *grown);
        if (grown) {
            progress->snapshot = grown;
            progress->snapshot_capacity = count;
        } else
            count = progress->snapshot_capacity; /* the others on a later pass */
    }
    if (count > 0)
        memcpy(progress->snapshot, progress->pending, count * sizeof *progress->snapshot);
    pthread_mutex_unlock(&progress->lock);
    if (count == 0) {
        pthread_mutex_unlock(&progress->passing);
        return 0;
    }
    mpix_zcopy_request **snapshot = progress->snapshot;
    int finished = 0;
    for (int i = 0; i < count; i++) {
        int done = advance(snapshot[i], snapshot, i);
        atomic_store(&snapshot[i]->done, done);
        finished += done;
    }
    if (finished) {
        pthread_mutex_lock(&progress->lock);
        int kept = 0;
        for (int i = 0; i < progress->count; i++)
            if (!progress->pending[i]->done)
                progress->pending[kept++] = progress->pending[i];
        progress->count = kept;
        atomic_store_explicit(&progress->outstanding, kept, memory_order_release);
        pthread_mutex_unlock(&progress->lock);
        for (int i = 0; i < count; i++)
            if (snapshot[i]->done)
                finish(snapshot[i]);
    }
    pthread_mutex_unlock(&progress->passing);
    return finished;
}

static void *progress_main(void *argument)
{
    mpix_zcopy_progress *progress = argument;
    unsigned long poll = 0;
    /* Between looks this thread naps, never yields: it shares its core with the program's
     * threads (a rank bound to one core, or more ranks than cores), and a program thread
     * spinning in MPI_Waitall gives the core up only when the scheduler takes it. A
     * yielding thread got it back a time slice later for each step it owed the exchange
     * (a 2-rank halo of a vector of 16 KiB blocks on 2 cores, Open MPI: 7.7 ms an
     * exchange; napping: 0.46-0.89 ms); a waking one preempts the spinner. The naps are
     * short, so the kernel's default 50 us slack on them would set the pace. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    pthread_mutex_lock(&progress->lock);
    while (!progress->stop) {
        if (progress->count == 0) {
            pthread_cond_wait(&progress->wake, &progress->lock);
            poll = 0;
            continue;
        }
        pthread_mutex_unlock(&progress->lock);
        if (progress_pass(progress) > 0)
            poll = 0;
        else
            mpix_backoff_phases(poll++, MPIX_BACKOFF_SPINS, 0);
        pthread_mutex_lock(&progress->lock);
    }
    pthread_mutex_unlock(&progress->lock);
    return NULL;
}

#if defined(MPICH_NUMVERSION)
/* MPICH's extended generalized requests: MPI_Test and MPI_Wait* run these in the
 * caller's thread, so no progress thread is needed. */
static int poll_request(void *extra_state, MPI_Status *status)
{
    (void)status;
    mpix_zcopy_request *request = extra_state;
    progress_pass(request->zc->process->progress);
    return MPI_SUCCESS;
}

static int wait_requests(int count, void **extra_states, double timeout, MPI_Status *status)
{
    (void)timeout, (void)status;
    for (int i = 0; i < count; i++) {
        mpix_zcopy_request *request = extra_states[i];
        for (unsigned long poll = 0; !atomic_load_explicit(&request->done, memory_order_acquire); poll++) {
            if (progress_pass(request->zc->process->progress) > 0)
                continue;
            /* While MPICH runs this it drives nothing else, and a pass may call no MPI at
             * all (a zero-copy send waits for its receiver in shared memory), yet the
             * caller's other requests may need this process (a send of MPI's own whose
             * receiver is the one this send waits for): MPI's progress now and then,
             * as in a blocking send's wait. A failure shows in their own calls. */
            if (poll >= 64 && poll % 64 == 0)
                (void)mpix_mpi_progress();
            mpix_backoff(poll, MPIX_BACKOFF_SPINS);
        }
    }
    return MPI_SUCCESS;
}
#elif defined(OPEN_MPI)
/* Open MPI's progress engine (opal_progress, which MPI_Wait, MPI_Test and every other
 * call that waits run) calls the functions registered with it at each turn. It calls
 * them without argument, so the process's requests are found here, set while the
 * registration lasts (from the first nonblocking call to MPI_Finalize). A pass calls MPI,
 * and so the engine again: that inner turn finds the pass running and returns. */
typedef int (*opal_progress_callback)(void);
static mpix_zcopy_progress *_Atomic opal_polled;
static int (*opal_unregister)(opal_progress_callback);

static int opal_turn(void)
{
    mpix_zcopy_progress *progress = atomic_load_explicit(&opal_polled, memory_order_acquire);
    return progress ? progress_pass(progress) : 0;
}

/* @name in Open MPI's runtime library: in the process's global scope, or in the library
 * itself where a program loaded MPI with RTLD_LOCAL (Open MPI 4: .so.40, 5: .so.80). */
static void *opal_symbol(const char *name)
{
    void *symbol = dlsym(RTLD_DEFAULT, name);
    static const char *const libraries[] = { "libopen-pal.so.40", "libopen-pal.so.80" };
    for (size_t i = 0; !symbol && i < sizeof libraries / sizeof *libraries; i++) {
        void *library = dlopen(libraries[i], RTLD_LAZY | RTLD_NOLOAD);
        if (library) {
            symbol = dlsym(library, name);
            dlclose(library); /* loaded by MPI, which keeps it */
        }
    }
    return symbol;
}

/* 1 when Open MPI's engine now drives @progress, 0 where this Open MPI offers no way. */
static int polled_by_mpi(mpix_zcopy_progress *progress)
{
    int (*do_register)(opal_progress_callback) = (int (*)(opal_progress_callback))opal_symbol("opal_progress_register");
    opal_unregister = (int (*)(opal_progress_callback))opal_symbol("opal_progress_unregister");
    if (!do_register || !opal_unregister)
        return 0;
    atomic_store_explicit(&opal_polled, progress, memory_order_release);
    if (do_register(opal_turn) != 0) {
        atomic_store_explicit(&opal_polled, NULL, memory_order_release);
        return 0;
    }
    return 1;
}
#endif

void mpix_zcopy_progress_destroy(mpix_zcopy_progress *progress)
{
    if (!progress)
        return;
#if defined(OPEN_MPI)
    if (progress->polled) {
        (void)opal_unregister(opal_turn);
        atomic_store_explicit(&opal_polled, NULL, memory_order_release);
    }
#endif
    if (!progress->polled) {
        pthread_mutex_lock(&progress->lock);
        progress->stop = 1;
        pthread_cond_signal(&progress->wake);
        pthread_mutex_unlock(&progress->lock);
        pthread_join(progress->thread, NULL);
    }
    /* Requests still pending at MPI_Finalize (an erroneous program) end with an error. */
    for (int i = 0; i < progress->count; i++) {
        mpix_zcopy_request *request = progress->pending[i];
        if (!request->receiving)
            mpix_zcopy_send_end(&request->send, MPI_ERR_PENDING);
        request->error = MPI_ERR_PENDING;
        finish(request);
    }
    free(progress->pending);
    free(progress->snapshot);
    pthread_cond_destroy(&progress->wake);
    pthread_mutex_destroy(&progress->passing);
    pthread_mutex_destroy(&progress->lock);
    free(progress);
}

void mpix_zcopy_progress_poke(mpix_zcopy_process *process)
{
    mpix_zcopy_progress *progress = process->progress;
    if (progress && progress->polled)
        progress_pass(progress);
}

int mpix_zcopy_blocking_send(mpix_zcopy_process *process, const void *buf, int count, MPI_Datatype datatype, int dest,
                             int tag, MPI_Comm comm)
{
    mpix_zcopy_progress *progress = process->progress;
    if (!progress || !progress->polled || atomic_load_explicit(&progress->outstanding, memory_order_acquire) == 0)
        return PMPI_Send(buf, count, datatype, dest, tag, comm);
    MPI_Request request;
    int rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, &request);
    for (unsigned long poll = 0; rc == MPI_SUCCESS; poll++) {
        int done = 0;
        if ((rc = PMPI_Test(&request, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS || done)
            break;
        progress_pass(progress);
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    return rc;
}

/* The process's pending requests, made by its first nonblocking call, with their
 * progress thread unless MPICH's poll and wait functions drive them. */
static int progress_get(mpix_zcopy_process *process, mpix_zcopy_progress **out)
{
    if ((*out = process->progress))   /* set once (atomic), never unset before MPI_Finalize */
        return MPI_SUCCESS;
    int mode = 0, rc = mpix_hint_keyword(MPI_INFO_NULL, MPIX_HINT_ZCOPY_PROGRESS, &mode);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_lock();
    if (!process->progress) {
        mpix_zcopy_progress *progress = calloc(1, sizeof *progress);
        if (!progress)
            rc = MPI_ERR_NO_MEM;
        else {
#if defined(MPICH_NUMVERSION)
            progress->polled = mode == 0;   /* MPIX_ZCOPY_PROGRESS=auto */
#elif defined(OPEN_MPI)
            progress->polled = mode == 0 && polled_by_mpi(progress);
#endif
            pthread_mutex_init(&progress->lock, NULL);
            pthread_mutex_init(&progress->passing, NULL);
            pthread_cond_init(&progress->wake, NULL);
            int error = progress->polled ? 0 : mpix_thread_create(&progress->thread, progress_main, progress);
            if (error) {
                rc = mpix_error(MPIX_ERRKIND_UNSUPPORTED, "zcopy: cannot start the progress thread: %s",
                                strerror(error));
                pthread_cond_destroy(&progress->wake);
                pthread_mutex_destroy(&progress->passing);
                pthread_mutex_destroy(&progress->lock);
                free(progress);
            } else
                process->progress = progress;
        }
    }
    *out = process->progress;
    mpix_unlock();
    return rc;
}

int mpix_zcopy_requests_overlap(mpix_zcopy_comm *zc, int source, int tag)
{
    if (atomic_load_explicit(&zc->requests_pending, memory_order_acquire) == 0)
        return 0;
    mpix_zcopy_progress *progress = zc->process->progress;
    if (!progress)
        return 0;
    int overlap = 0;
    pthread_mutex_lock(&progress->lock);
    for (int i = 0; i < progress->count && !overlap; i++) {
        const mpix_zcopy_request *request = progress->pending[i];
        overlap = request->receiving && !request->done && request->zc == zc &&
                  mpix_zcopy_envelopes_overlap(request->source, request->tag, source, tag);
    }
    pthread_mutex_unlock(&progress->lock);
    return overlap;
}

void mpix_zcopy_wait_earlier_receives(mpix_zcopy_comm *zc, int source, int tag)
{
    /* The earlier receives' pass runs in MPI's progress, or is poked here. */
    for (unsigned long poll = 0; mpix_zcopy_requests_overlap(zc, source, tag); poll++) {
        if (poll >= 64 && poll % 64 == 0) { /* only to make progress: a failure shows later */
            (void)mpix_mpi_progress();
            mpix_zcopy_progress_poke(zc->process);
        }
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
}

/* ---- the generalized request's callbacks ---------------------------------------------- */

/* The callbacks call no MPI function but the two that set a status: MPICH runs them
 * inside its own critical section. */
static int query_request(void *extra_state, MPI_Status *status)
{
    mpix_zcopy_request *request = extra_state;
    int rc = PMPI_Status_set_elements_x(status, MPI_BYTE, request->cancelled ? 0 : request->bytes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Status_set_cancelled(status, request->cancelled);
    status->MPI_SOURCE = request->receiving && !request->cancelled ? request->status.MPI_SOURCE : MPI_ANY_SOURCE;
    status->MPI_TAG = request->receiving && !request->cancelled ? request->status.MPI_TAG : MPI_ANY_TAG;
    status->MPI_ERROR = request->error;
    return request->error != MPI_SUCCESS ? request->error : rc;
}

static int free_request(void *extra_state)
{
    release(extra_state); /* its duplicate datatype goes when it finishes (finish) */
    return MPI_SUCCESS;
}

static int cancel_request(void *extra_state, int complete)
{
    mpix_zcopy_request *request = extra_state;
    /* A send, once its envelope is out, is matched: MPI may refuse to cancel it. */
    if (!complete && request->receiving)
        atomic_store_explicit(&request->cancel_requested, 1, memory_order_release);
    return MPI_SUCCESS;
}

/* ---- posting ---------------------------------------------------------------------------- */

/* The process's progress (@out), where @call can be completed by it: else the error
 * @call returns, for every nonblocking call alike (a thread level below
 * MPI_THREAD_MULTIPLE for a progress thread, MPICH before 4.1's). */
static int progress_usable(const char *call, mpix_zcopy_comm *zc, mpix_zcopy_progress **out)
{
    mpix_zcopy_progress *progress;
    int provided, rc;
    if ((rc = progress_get(zc->process, &progress)) != MPI_SUCCESS)
        return rc;
    *out = progress;
    if (progress->polled) /* MPICH's poll functions: any thread level */
        return MPI_SUCCESS;
    if ((rc = PMPI_Query_thread(&provided)) != MPI_SUCCESS)
        return rc;
    if (provided != MPI_THREAD_MULTIPLE)
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED,
                          "%s: needs MPI_THREAD_MULTIPLE (MPI provides thread level %d): a progress thread "
                          "completes its requests",
                          call, provided);
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    /* Measured with MPICH 4.0.2 (ch4:ucx): a second thread in MPI_Test while the first
     * serves a rendezvous aborts in UCX (ucp_worker_progress: "worker->inprogress++ == 0"),
     * in 5 of 10 runs of the 4-rank halo test. */
    return mpix_error(MPIX_ERRKIND_UNSUPPORTED,
                      "%s: MPICH before 4.1 aborts when a second thread makes MPI progress during a "
                      "rendezvous (MPICH_NUMVERSION %d)",
                      call, (int)MPICH_NUMVERSION);
#else
    return MPI_SUCCESS;
#endif
}

/* A request for @comm with its generalized request started, or an error (the progress
 * unusable, no memory). */
static int request_new(const char *call, mpix_zcopy_comm *zc, MPI_Comm comm, int receiving, mpix_zcopy_request **out)
{
    mpix_zcopy_progress *progress;
    int rc = progress_usable(call, zc, &progress);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_zcopy_request *request = calloc(1, sizeof *request);
    if (!request)
        return MPI_ERR_NO_MEM;
    atomic_init(&request->references, 2);
    request->zc = zc;
    request->comm = comm;
    request->receiving = receiving;
    request->datatype = MPI_DATATYPE_NULL;
#if defined(MPICH_NUMVERSION)
    if (progress->polled)
        rc = PMPIX_Grequest_start(query_request, free_request, cancel_request, poll_request, wait_requests, request,
                                  &request->request);
    else
#endif
        rc = PMPI_Grequest_start(query_request, free_request, cancel_request, request, &request->request);
    if (rc != MPI_SUCCESS) {
        free(request);
        return rc;
    }
    *out = request;
    return MPI_SUCCESS;
}

/* Gives the request to the progress thread and its handle to the caller. */
static void request_post(mpix_zcopy_request *request, MPI_Request *handle)
{
    mpix_zcopy_progress *progress = request->zc->process->progress;
    atomic_fetch_add_explicit(&request->zc->requests_pending, 1, memory_order_acq_rel);
    *handle = request->request;
    pthread_mutex_lock(&progress->lock);
    if (progress->count == progress->capacity) {
        int capacity = progress->capacity ? 2 * progress->capacity : 16;
        mpix_zcopy_request **grown = realloc(progress->pending, capacity * sizeof *grown);
        while (!grown) { /* the send is already out: the request has to be watched */
            pthread_mutex_unlock(&progress->lock);
            mpix_backoff(MPIX_BACKOFF_SPINS + 20000, MPIX_BACKOFF_SPINS);
            pthread_mutex_lock(&progress->lock);
            grown = realloc(progress->pending, capacity * sizeof *grown);
        }
        progress->pending = grown;
        progress->capacity = capacity;
    }
    progress->pending[progress->count++] = request;
    atomic_store_explicit(&progress->outstanding, progress->count, memory_order_release);
    pthread_cond_signal(&progress->wake);
    pthread_mutex_unlock(&progress->lock);
}

/* A request that never reached the progress thread: completed and freed here. */
static void request_discard(mpix_zcopy_request *request)
{
    MPI_Request handle = request->request;
    release(request);   /* the list's hold, never taken up: MPI's goes below */
    /* Both only fail for a handle that is not a generalized request. */
    (void)PMPI_Grequest_complete(handle);
    (void)PMPI_Request_free(&handle);   /* calls free_request */
}

static int isend_checked(mpix_zcopy_comm *zc, const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *handle)
{
    mpix_zcopy_progress *progress;
    int raw, rc = mpix_zcopy_sends_raw_count(count, datatype, &raw);
    if (rc != MPI_SUCCESS)
        return rc;
    /* No header: MPI's own request is the send's (refused where the others are, so that
     * a program finds the nonblocking calls working or not whatever its sizes). */
    if (raw) {
        if ((rc = progress_usable("MPIX_Isend_zcopy", zc, &progress)) != MPI_SUCCESS)
            return rc;
        return mpix_zcopy_send_raw(zc, buf, count, datatype, dest, tag, comm, handle);
    }
    mpix_zcopy_request *request = NULL;
    rc = request_new("MPIX_Isend_zcopy", zc, comm, 0, &request);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = mpix_zcopy_send_start(&request->send, buf, count, datatype, dest, tag, comm, 0)) != MPI_SUCCESS) {
        if (request->send.zc)
            mpix_zcopy_send_end(&request->send, rc);
        request_discard(request);
        return rc;
    }
    request_post(request, handle);
    return MPI_SUCCESS;
}

static int irecv_checked(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, int source, int tag,
                         MPI_Comm comm, MPI_Request *handle)
{
    mpix_zcopy_progress *progress;
    int raw, rc = mpix_zcopy_receives_raw(count, datatype, &raw);
    if (rc != MPI_SUCCESS)
        return rc;
    /* What fits can only come without header: MPI's own receive, unless a receive of
     * this process posted before could take the same message (its progress matches them
     * in posting order). */
    if (raw && !mpix_zcopy_requests_overlap(zc, source, tag)) {
        if ((rc = progress_usable("MPIX_Irecv_zcopy", zc, &progress)) != MPI_SUCCESS)
            return rc;
        return PMPI_Irecv(buf, count, datatype, source, tag, comm, handle);
    }
    mpix_zcopy_request *request = NULL;
    rc = request_new("MPIX_Irecv_zcopy", zc, comm, 1, &request);
    if (rc != MPI_SUCCESS)
        return rc;
    request->buf = buf;
    request->count = count;
    request->source = source;
    request->tag = tag;
    request->inbound.pending = MPI_REQUEST_NULL;
    request->inbound.data_bytes = -1;
    request->inbound.call = "MPIX_Irecv_zcopy";
    request->inbound.source = source;
    request->inbound.tag = tag;
    request->inbound.in_place = zc->settings.receives_in_place;
    if ((rc = PMPI_Type_size_x(datatype, &request->inbound.type_size)) != MPI_SUCCESS) {
        request_discard(request);
        return rc;
    }
    if (mpix_type_is_named(datatype))
        request->datatype = datatype;
    else if ((rc = PMPI_Type_dup(datatype, &request->datatype)) != MPI_SUCCESS) {
        request_discard(request);
        return rc;
    } else
        request->owns_datatype = 1;
    /* Posted now, unless it has to wait for receives posted before it (advance). */
    if (zc->settings.receives_in_place && !mpix_zcopy_requests_overlap(zc, source, tag)) {
        if ((rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &request->inbound.pending)) != MPI_SUCCESS) {
            if (request->owns_datatype)
                (void)PMPI_Type_free(&request->datatype);   /* the receive's error is the one to report */
            request_discard(request);
            return rc;
        }
        request->posted = 1;
    }
    request_post(request, handle);
    return MPI_SUCCESS;
}

int mpix_zcopy_irecv_complete(MPI_Request *handle, const MPI_Status *status, int error)
{
    mpix_zcopy_request *request = calloc(1, sizeof *request);
    if (!request)
        return MPI_ERR_NO_MEM;
    atomic_init(&request->references, 1);   /* MPI's alone: it is never pending */
    request->receiving = 1;
    request->status = *status;
    request->error = error;
    int rc = PMPI_Get_elements_x(status, MPI_BYTE, &request->bytes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Grequest_start(query_request, free_request, cancel_request, request, handle);
    if (rc != MPI_SUCCESS) {
        free(request);
        return rc;
    }
    return PMPI_Grequest_complete(*handle);
}

/* Whether MPI's own waits and tests drive this process's requests: then a nonblocking call
 * that is MPI's own (mpix_zcopy_direct) needs nothing of its progress, which the first
 * nonblocking call sets up (progress_usable). */
static int polled(const mpix_zcopy_comm *zc)
{
    const mpix_zcopy_progress *progress = zc->process->progress;
    return progress && progress->polled;
}

MPIX_API int MPIX_Isend_zcopy(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                              MPI_Request *request)
{
    mpix_zcopy_comm *zc;
    MPI_Count type_size;
    if (request && mpix_zcopy_direct(comm, count, datatype, dest, MPIX_SENDING, &zc, &type_size) &&
        mpix_zcopy_sends_raw(type_size * count) && polled(zc))
        return mpix_zcopy_send_raw(zc, buf, count, datatype, dest, tag, comm, request);
    int rc = mpix_check_transfer("MPIX_Isend_zcopy", buf, count, datatype, dest, tag, comm, MPIX_SENDING);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return mpix_raise_comm(comm, mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Isend_zcopy: request is NULL"));
    if (dest == MPI_PROC_NULL) /* complete at once, with MPI's own status */
        return mpix_raise_comm(comm, PMPI_Isend(buf, count, datatype, MPI_PROC_NULL, tag, comm, request));
    if ((rc = mpix_zcopy_comm_get(comm, &zc)) != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);
    return mpix_raise_comm(comm, isend_checked(zc, buf, count, datatype, dest, tag, comm, request));
}

MPIX_API int MPIX_Irecv_zcopy(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                              MPI_Request *request)
{
    mpix_zcopy_comm *zc;
    MPI_Count type_size;
    /* irecv_checked's raw case; MPI_PROC_NULL below, for MPI_Recv's status */
    if (request && source != MPI_PROC_NULL && mpix_zcopy_direct(comm, count, datatype, source, MPIX_RECEIVING, &zc, &type_size) &&
        mpix_zcopy_takes_only_raw(type_size * count) && polled(zc) &&
        !mpix_zcopy_requests_overlap(zc, source, tag) && !mpix_zcopy_probed_waiting(zc))
        return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    int rc = mpix_check_transfer("MPIX_Irecv_zcopy", buf, count, datatype, source, tag, comm, MPIX_RECEIVING);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return mpix_raise_comm(comm, mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Irecv_zcopy: request is NULL"));
    MPI_Status received = { .MPI_SOURCE = MPI_PROC_NULL, .MPI_TAG = MPI_ANY_TAG };
    if (source == MPI_PROC_NULL) /* MPI_Recv's status (some MPIs' MPI_Irecv give another) */
        return mpix_raise_comm(comm, mpix_zcopy_irecv_complete(request, &received, MPI_SUCCESS));
    if ((rc = mpix_zcopy_comm_get(comm, &zc)) != MPI_SUCCESS)
        return mpix_raise_comm(comm, rc);
    if (mpix_zcopy_probed_waiting(zc)) {
        /* A message a probe received: taken now, its error (a truncation) MPI_Wait's. */
        int taken, raised, received_rc = mpix_zcopy_probed_receive(zc, source, tag, buf, count, datatype, comm,
                                                                    &received, &taken, &raised, "MPIX_Irecv_zcopy");
        if (taken)
            return mpix_raise_comm(comm, mpix_zcopy_irecv_complete(request, &received, received_rc));
    }
    return mpix_raise_comm(comm, irecv_checked(zc, buf, count, datatype, source, tag, comm, request));
}
