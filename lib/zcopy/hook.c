/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Irecv_zcopy and MPIX_Isend_zcopy completed inside MPI's own progress.
 *
 * A generalized request has no progress callback: without one, a thread of the process
 * has to finish the receive (request.c), and where every core runs a rank that thread
 * waits for a core at each step. MPI does run one kind of function of ours while it makes
 * progress: the delete callback of a datatype attribute, when the datatype's last
 * reference goes. A receive posted on a datatype that carries a hook attribute, whose
 * request (MPI_Request_free) and datatype (MPI_Type_free) are both freed at once, holds
 * that last reference until it completes; the MPI then destroys the datatype in whatever
 * call made the progress (MPI_Wait, MPI_Test, any other), and the callback finishes the
 * receive there and completes the generalized request the caller holds. The first
 * nonblocking call of a process checks this with a message to itself; where the MPI runs
 * the callback at MPI_Type_free instead, the progress thread is used.
 *
 * A receive is posted at once (MPI matches it in posting order, wildcards included) with
 * a header and the caller's data in one datatype. Its callback finds:
 * - the data inline (the sender's MPI path): in place, done; after a short header
 *   (MPIX_ZCOPY_SHORT) it starts inside the header's room, and is moved into place;
 * - a zero-copy header, from a blocking sender: it copies from the sender's memory and
 *   ends the message in the sender's mailbox;
 * - a header whose data is the next message (a sender below MPI_THREAD_MULTIPLE): it
 *   posts that receive, hooked the same way. Meanwhile a later receive whose envelope
 *   could match the same messages waits unposted, so nothing takes the data apart from
 *   its header.
 * Nonblocking sends' requests are MPI's own. Inline, through MPI, that is the data's
 * send. A zero-copy message (below MPI_THREAD_MULTIPLE) ends when its receiver has read
 * the sender's memory, which no MPI call of the sender would notice by itself: the header
 * is sent twice, the second time synchronously, and the receiver receives that copy only
 * once it has copied the data, so the synchronous send's request, which the caller holds,
 * completes in the sender's own MPI progress.
 *
 * The callbacks call MPI to post the next receive and to complete the request, which
 * Open MPI 4.1 allows inside its progress; MPICH 4.0 does not (mpix_zcopy_hooks_get). */
#include "zcopy.h"
#include "common/empty_request.h"
#include "common/error.h"
#include "common/hint.h"
#include "common/keyval.h"
#include "common/progress.h"
#include "common/self_state.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { HOOK_RECEIVE = 1, HOOK_SEND, HOOK_PROBE };

/* Where a receive is: listed but not posted (an earlier one could take its message),
 * posted for the header and data, posted for the data that follows its header, posted
 * for the copy of its zero-copy header that ends the sender's request. */
enum { STEP_QUEUED, STEP_HEADER, STEP_DATA, STEP_TAIL };

typedef struct hooked_receive {
    int what;                     /* HOOK_RECEIVE: the attribute's records share this field */
    _Atomic int armed;            /* an inner receive is posted and its datatype freed */
    MPI_Request request;          /* the generalized request the caller holds */
    _Atomic int references;       /* MPI's (free_receive) and the hooks' (complete):
                                     mpix_zcopy_release_last */
    mpix_zcopy_comm *zc;
    MPI_Comm comm;
    void *buf;
    int count, source, tag;
    MPI_Datatype datatype;        /* the caller's: its handle if named, else a reference of our
                                     own (the caller may free its handle) */
    int owns_datatype;
    MPI_Datatype prepared;        /* header and data, until posted (a queued receive keeps it) */
    MPI_Count capacity;           /* bytes count elements hold */
    mpix_zcopy_header header;     /* MPI writes the header here */
    int step;                     /* STEP_*, under the hooks' lock */
    uint64_t cancel_nonce;        /* the self-sent header that ends it, 0: none */
    MPI_Count follows;            /* bytes of the data that follows its header */
    mpix_zcopy_header tail;       /* STEP_TAIL: MPI writes the header's copy here */
    int copied;                   /* STEP_TAIL: what the copy gave */
    int cancelled, error;
    MPI_Count bytes;
    struct hooked_receive *next;  /* the process's receives not through, in posting order */
    struct hooked_receive *to_post;   /* through(): those it lets go */
} hooked_receive;

typedef struct hooked_send {
    int what;                     /* HOOK_SEND */
    _Atomic int references;       /* the call's, and one per datatype it hangs on */
    mpix_zcopy_send send;         /* the header MPI sends lives here */
} hooked_send;

typedef struct hook_probe {
    int what;                     /* HOOK_PROBE */
    _Atomic int fired;
} hook_probe;

/* A small send whose caller's request completed at once (mpix_zcopy_hooked_isend_small):
 * MPI's request for its message and the buffer that message is sent from. */
typedef struct parked_send {
    MPI_Request request;
    char *packed;
} parked_send;

struct mpix_zcopy_hooks {
    pthread_mutex_t send_lock;    /* around a header and its data: no other send between */
    pthread_mutex_t lock;         /* the list, the steps, a queued receive's cancel; never
                                     held across an MPI call */
    hooked_receive *first, *last;
    pthread_mutex_t parked_lock;  /* parked, parked_capacity (held across MPI_Test) */
    parked_send *parked;
    _Atomic int parked_count;
    int parked_capacity;
};

static int fired(MPI_Datatype type, int keyval, void *value, void *extra);
static mpix_keyval hook_keyval = MPIX_TYPE_KEYVAL_INIT(fired);

int mpix_zcopy_hook_set(MPI_Datatype type, void *record)
{
    hooked_send *send = record;
    if (send->what == HOOK_SEND)
        atomic_fetch_add_explicit(&send->references, 1, memory_order_relaxed);
    int rc = mpix_type_attr_set(type, &hook_keyval, record);
    if (rc != MPI_SUCCESS && send->what == HOOK_SEND)
        atomic_fetch_sub_explicit(&send->references, 1, memory_order_relaxed);
    return rc;
}

/* Drops a reference to @send; the last ends it. */
static void send_release(hooked_send *send)
{
    if (mpix_zcopy_release_last(&send->references)) {
        mpix_zcopy_send_end(&send->send, MPI_SUCCESS);
        free(send);
    }
}

static uint64_t next_cancel_nonce(void)
{
    static _Atomic uint64_t counter;
    return atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed) + 1;
}

/* ---- posting ------------------------------------------------------------------------- */

/* @count of @datatype at @buf as one datatype at MPI_BOTTOM. */
static int data_type(void *buf, int count, MPI_Datatype datatype, MPI_Datatype *type)
{
    MPI_Aint at;
    int rc = PMPI_Get_address(buf, &at);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_struct(1, &count, &at, &datatype, type);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(type)) != MPI_SUCCESS)
        (void)PMPI_Type_free(type); /* the commit's error is the one to report */
    return rc;
}

/* @receive's buffer as one datatype at MPI_BOTTOM: the header and @datatype's data
 * (@header_too), or the data alone. */
static int wrap(hooked_receive *receive, MPI_Datatype datatype, int header_too, MPI_Datatype *type)
{
    if (header_too) {
        receive->header = (mpix_zcopy_header){ 0 };   /* a message without one leaves no magic */
        return mpix_zcopy_message_type(&receive->header, receive->buf, receive->count, datatype, type);
    }
    return data_type(receive->buf, receive->count, datatype, type);
}

/* Posts @type (made by wrap, consumed) for @receive from @source with @tag. The
 * callback may run before this returns (a message already in completes the receive
 * inside MPI_Type_free). */
static int post_inner(hooked_receive *receive, MPI_Datatype type, int source, int tag)
{
    MPI_Request inner;
    if (type == receive->prepared)
        receive->prepared = MPI_DATATYPE_NULL;
    int rc = mpix_zcopy_hook_set(type, receive);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Irecv(MPI_BOTTOM, 1, type, source, tag, receive->comm, &inner);
    if (rc == MPI_SUCCESS) {
        atomic_store_explicit(&receive->armed, 1, memory_order_release);
        rc = PMPI_Request_free(&inner);
    }
    int free_rc = PMPI_Type_free(&type);   /* a callback unarmed (no receive posted) does nothing */
    return rc != MPI_SUCCESS ? rc : free_rc;
}

/* A reference of @receive's own to the caller's derived datatype, taken out of @wrapped
 * (made by wrap) while it is alive. Open MPI 4.1's MPI_Type_get_contents hands back a
 * duplicate of it, as MPI_Type_dup would (about 8% of a small nonblocking exchange's
 * time in a profile); it is the one MPI the hooks run on. */
static int keep_datatype(hooked_receive *receive, MPI_Datatype wrapped)
{
    if (mpix_type_is_named(receive->datatype))
        return MPI_SUCCESS;
    int integers, addresses, datatypes, combiner;
    int rc = PMPI_Type_get_envelope(wrapped, &integers, &addresses, &datatypes, &combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    if (combiner != MPI_COMBINER_STRUCT || datatypes != 2 || integers != 3 || addresses != 2)
        return mpix_error(MPIX_ERRKIND_DATATYPE,
                          "MPIX_Irecv_zcopy: its header and data datatype has combiner %d and %d datatypes", combiner,
                          datatypes);
    int ints[3];
    MPI_Aint aints[2];
    MPI_Datatype types[2];
    if ((rc = PMPI_Type_get_contents(wrapped, integers, addresses, datatypes, ints, aints, types)) != MPI_SUCCESS)
        return rc;
    receive->datatype = types[1];
    receive->owns_datatype = 1;
    return MPI_SUCCESS;
}

/* Takes @receive off the list (@hooks->lock held) and returns, chained by to_post, the
 * queued receives that no earlier receive could now take a message from, marked posted. */
static hooked_receive *unlist(mpix_zcopy_hooks *hooks, hooked_receive *receive)
{
    hooked_receive **link = &hooks->first, *previous = NULL;
    while (*link && *link != receive)
        previous = *link, link = &(*link)->next;
    if (*link) {
        *link = receive->next;
        if (hooks->last == receive)
            hooks->last = previous;
    }
    hooked_receive *to_post = NULL, **tail = &to_post;
    for (hooked_receive *queued = hooks->first; queued; queued = queued->next) {
        if (queued->step != STEP_QUEUED || queued->cancelled)
            continue;
        int blocked = 0;
        for (hooked_receive *earlier = hooks->first; earlier != queued && !blocked; earlier = earlier->next)
            blocked = earlier->zc == queued->zc &&
                      mpix_zcopy_envelopes_overlap(earlier->source, earlier->tag, queued->source, queued->tag);
        if (!blocked) {
            queued->step = STEP_HEADER;
            queued->to_post = NULL;
            *tail = queued;
            tail = &queued->to_post;
        }
    }
    return to_post;
}

static void complete(hooked_receive *receive, int rc);

/* Lets go of one of @receive's owners' hold (references). */
static void release_receive(hooked_receive *receive)
{
    if (mpix_zcopy_release_last(&receive->references))
        free(receive);
}

/* @receive is through (@rc): the receives it held back are posted, its request completed. */
static void through(hooked_receive *receive, int rc)
{
    mpix_zcopy_hooks *hooks = receive->zc->process->hooks;
    pthread_mutex_lock(&hooks->lock);
    hooked_receive *to_post = unlist(hooks, receive);
    pthread_mutex_unlock(&hooks->lock);
    complete(receive, rc);
    while (to_post) {
        hooked_receive *next = to_post->to_post;
        int post_rc = post_inner(to_post, to_post->prepared, to_post->source, to_post->tag);
        if (post_rc != MPI_SUCCESS)
            through(to_post, post_rc);
        to_post = next;
    }
}

static void complete(hooked_receive *receive, int rc)
{
    receive->error = rc;
    if (receive->prepared != MPI_DATATYPE_NULL && PMPI_Type_free(&receive->prepared) != MPI_SUCCESS &&
        receive->error == MPI_SUCCESS)
        receive->error = MPI_ERR_TYPE;
    MPI_Datatype owned = receive->owns_datatype ? receive->datatype : MPI_DATATYPE_NULL;
    receive->owns_datatype = 0;
    mpix_zcopy_request_done(receive->zc, receive->request, &owned, &receive->error);
    release_receive(receive);
}

/* ---- the callback -------------------------------------------------------------------- */

/* @receive is through (@rc) with what fits of the @sent bytes. */
static void received(hooked_receive *receive, MPI_Count sent, int rc)
{
    receive->bytes = sent < receive->capacity ? sent : receive->capacity;
    through(receive, rc);
}

/* A message with a short header (MPIX_ZCOPY_SHORT) landed in @receive's header room
 * and buffer as one run of bytes: its data starts inside the header room, and its rest,
 * if any, at the start of the buffer. Moves what fits the buffer into place, as a
 * receive of that many bytes sets them, and completes the header. */
static int place_short(hooked_receive *receive)
{
    enum { ROOM = (int)sizeof(mpix_zcopy_header) - MPIX_ZCOPY_SHORT_HEADER_BYTES };
    char landed[sizeof(mpix_zcopy_header)], data[ROOM + MPIX_ZCOPY_PACKED_BYTES];
    memcpy(landed, &receive->header, sizeof landed);
    (void)mpix_zcopy_header_read(&receive->header, landed, (MPI_Count)sizeof landed, 1, receive->comm);
    MPI_Count bytes = receive->header.bytes < receive->capacity ? receive->header.bytes : receive->capacity;
    if (bytes <= 0)
        return MPI_SUCCESS;
    if (bytes > ROOM + MPIX_ZCOPY_PACKED_BYTES)   /* zcopy sends no more data short */
        return mpix_error(MPIX_ERRKIND_ARGUMENT,
                          "MPIX_Irecv_zcopy: a message from rank %d with tag %d says %lld bytes follow a short "
                          "header (not sent by MPIX_Send_zcopy)",
                          receive->header.source_rank, receive->header.tag, (long long)bytes);
    memcpy(data, landed + MPIX_ZCOPY_SHORT_HEADER_BYTES, ROOM);
    int rc = bytes > ROOM ? mpix_zcopy_pack_head(data + ROOM, bytes - ROOM, receive->buf, receive->count,
                                                 receive->datatype, receive->comm)
                          : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? mpix_zcopy_unpack_bytes(data, bytes, receive->buf, receive->count, receive->datatype,
                                                       receive->comm)
                             : rc;
}

/* The inner receive of @receive completed (its datatype is being destroyed). */
static void arrived(hooked_receive *receive)
{
    const mpix_zcopy_header *header = &receive->header;
    if (receive->step == STEP_TAIL) {
        received(receive, header->bytes, receive->copied);
        return;
    }
    if (receive->step == STEP_DATA) {
        int rc = receive->follows > receive->capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
        mpix_zcopy_receive_end_inline(receive->zc, header, rc);
        received(receive, receive->follows, rc);
        return;
    }
    if (header->magic == MPIX_ZCOPY_MAGIC && (header->kind & MPIX_ZCOPY_SHORT)) {
        int rc = place_short(receive);   /* small data inline: nothing to learn, nothing follows */
        if (rc == MPI_SUCCESS && header->bytes > receive->capacity)
            rc = MPI_ERR_TRUNCATE;
        received(receive, header->bytes, rc);
        return;
    }
    if (header->magic != MPIX_ZCOPY_MAGIC) {
        through(receive, mpix_error(MPIX_ERRKIND_ARGUMENT,
                                    "MPIX_Irecv_zcopy: a message from rank %d with tag %d was not sent by "
                                    "MPIX_Send_zcopy or MPIX_Isend_zcopy (no zcopy header)",
                                    receive->source, receive->tag));
        return;
    }
    MPI_Datatype datatype = receive->datatype, next;
    int rc = MPI_SUCCESS, source = header->source_rank;
    int again = header->kind == MPIX_ZCOPY_CANCEL && !(receive->cancel_nonce && header->nonce == receive->cancel_nonce);
    int follows = (header->kind == MPIX_ZCOPY_EAGER || header->kind == MPIX_ZCOPY_MPI) && header->data_follows;
    if (header->kind == MPIX_ZCOPY_CANCEL) {
        if (!again)
            receive->cancelled = 1;
        else if ((rc = wrap(receive, datatype, 1, &next)) == MPI_SUCCESS) {
            /* meant for a receive that took another message: this one waits on */
            rc = post_inner(receive, next, receive->source, receive->tag);
            again = rc == MPI_SUCCESS;
        }
    } else {
        mpix_zcopy_comm *zc = receive->zc;
        mpix_zcopy_receive_learn(zc, source, header);
        switch (header->kind) {
        case MPIX_ZCOPY_EAGER:
        case MPIX_ZCOPY_MPI:
            if (follows) {
                receive->follows = header->bytes;
                pthread_mutex_lock(&zc->process->hooks->lock);   /* MPI_Cancel reads it */
                receive->step = STEP_DATA;
                pthread_mutex_unlock(&zc->process->hooks->lock);
                if ((rc = wrap(receive, datatype, 0, &next)) == MPI_SUCCESS) {
                    rc = post_inner(receive, next, source, header->tag);
                    again = rc == MPI_SUCCESS;
                }
                break;
            }
            if (header->bytes > receive->capacity)
                rc = MPI_ERR_TRUNCATE;
            mpix_zcopy_receive_end_inline(zc, header, rc);
            break;
        case MPIX_ZCOPY_RTS:
            /* No help asked: the sender may itself wait in a call that runs this. */
            rc = mpix_zcopy_receive_header(zc, receive->buf, receive->count, datatype, source, header, receive->comm,
                                           0);
            if (header->tail_follows) {   /* the sender's request ends when this is received */
                receive->copied = rc;
                pthread_mutex_lock(&zc->process->hooks->lock);   /* MPI_Cancel reads it */
                receive->step = STEP_TAIL;
                pthread_mutex_unlock(&zc->process->hooks->lock);
                if ((rc = data_type(&receive->tail, (int)sizeof receive->tail, MPI_BYTE, &next)) == MPI_SUCCESS) {
                    rc = post_inner(receive, next, source, header->tag);
                    again = rc == MPI_SUCCESS;
                }
            }
            break;
        default:
            rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Irecv_zcopy: message kind %u from rank %d is unknown",
                            header->kind, source);
        }
    }
    if (again)   /* a receive is posted again: its callback goes on (and may have already) */
        return;
    received(receive, header->bytes, rc);
}

static int fired(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)type, (void)keyval, (void)extra;
    switch (*(int *)value) {
    case HOOK_PROBE:
        atomic_store_explicit(&((hook_probe *)value)->fired, 1, memory_order_release);
        break;
    case HOOK_SEND:
        send_release(value);
        break;
    case HOOK_RECEIVE: {
        hooked_receive *receive = value;
        if (atomic_exchange_explicit(&receive->armed, 0, memory_order_acq_rel))
            arrived(receive);
        break;
    }
    }
    return MPI_SUCCESS;
}

/* ---- the generalized request's callbacks ---------------------------------------------- */

static int query_receive(void *extra_state, MPI_Status *status)
{
    hooked_receive *receive = extra_state;
    int rc = PMPI_Status_set_elements_x(status, MPI_BYTE, receive->cancelled ? 0 : receive->bytes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Status_set_cancelled(status, receive->cancelled);
    status->MPI_SOURCE = receive->cancelled ? MPI_ANY_SOURCE : receive->header.source_rank;
    status->MPI_TAG = receive->cancelled ? MPI_ANY_TAG : receive->header.tag;
    status->MPI_ERROR = receive->error;
    return receive->error != MPI_SUCCESS ? receive->error : rc;
}

static int free_receive(void *extra_state)
{
    release_receive(extra_state);
    return MPI_SUCCESS;
}

/* A receive not yet posted ends at once; one posted from MPI_ANY_SOURCE or from this
 * process is sent a header that ends it (a message that comes first wins, as with
 * MPI_Cancel); one whose header arrived is matched and cannot be cancelled. One posted
 * from another rank cannot be reached: MPI_Cancel fails. */
static int cancel_receive(void *extra_state, int complete_already)
{
    hooked_receive *receive = extra_state;
    if (complete_already)
        return MPI_SUCCESS;
    mpix_zcopy_hooks *hooks = receive->zc->process->hooks;
    pthread_mutex_lock(&hooks->lock);
    int step = receive->step, reachable = receive->source == MPI_ANY_SOURCE || receive->source == receive->zc->rank;
    int send_header = step == STEP_HEADER && reachable && !receive->cancel_nonce;
    if (send_header)
        receive->cancel_nonce = next_cancel_nonce();
    if (step == STEP_QUEUED)
        receive->cancelled = 1;   /* under the lock: no callback posts it now (unlist) */
    pthread_mutex_unlock(&hooks->lock);
    if (step == STEP_QUEUED)
        through(receive, MPI_SUCCESS);
    else if (send_header) {
        mpix_zcopy_header header = { .magic = MPIX_ZCOPY_MAGIC, .kind = MPIX_ZCOPY_CANCEL,
                                     .nonce = receive->cancel_nonce, .source_rank = receive->zc->rank,
                                     .tag = receive->tag == MPI_ANY_TAG ? 0 : receive->tag };
        /* Small, to this process: sent eagerly. A failure leaves the receive waiting for
         * a message, as if the cancel came too late. */
        (void)PMPI_Send(&header, sizeof header, MPI_BYTE, receive->zc->rank, header.tag, receive->comm);
    } else if (step == STEP_HEADER && !reachable)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    return MPI_SUCCESS;
}

/* ---- the calls --------------------------------------------------------------------- */

int mpix_zcopy_hooked_irecv(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, int source, int tag,
                            MPI_Comm comm, MPI_Request *request)
{
    mpix_zcopy_hooks *hooks = zc->process->hooks;
    hooked_receive *receive = calloc(1, sizeof *receive);
    if (!receive)
        return MPI_ERR_NO_MEM;
    *receive = (hooked_receive){ .what = HOOK_RECEIVE, .references = 2, .zc = zc, .comm = comm, .buf = buf,
                                 .count = count, .source = source, .tag = tag, .datatype = datatype };
    MPI_Count type_size;
    int rc = PMPI_Type_size_x(datatype, &type_size);
    receive->capacity = type_size * count;
    receive->prepared = MPI_DATATYPE_NULL;
    if (rc == MPI_SUCCESS)
        rc = wrap(receive, datatype, 1, &receive->prepared);
    if (rc == MPI_SUCCESS)
        rc = keep_datatype(receive, receive->prepared);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Grequest_start(query_receive, free_receive, cancel_receive, receive, &receive->request);
    if (rc != MPI_SUCCESS) { /* cleanup: rc is the error to report */
        if (receive->prepared != MPI_DATATYPE_NULL)
            (void)PMPI_Type_free(&receive->prepared);
        if (receive->owns_datatype)
            (void)PMPI_Type_free(&receive->datatype);
        free(receive);
        return rc;
    }
    atomic_fetch_add_explicit(&zc->requests_pending, 1, memory_order_acq_rel);
    *request = receive->request;
    pthread_mutex_lock(&hooks->lock);
    int queued = 0;
    for (hooked_receive *earlier = hooks->first; earlier && !queued; earlier = earlier->next)
        queued = earlier->zc == zc && mpix_zcopy_envelopes_overlap(earlier->source, earlier->tag, source, tag);
    receive->step = queued ? STEP_QUEUED : STEP_HEADER;
    if (hooks->last)
        hooks->last->next = receive;
    else
        hooks->first = receive;
    hooks->last = receive;
    pthread_mutex_unlock(&hooks->lock);
    if (!queued && (rc = post_inner(receive, receive->prepared, source, tag)) != MPI_SUCCESS) {
        /* Nothing was posted: the request goes, and the error is the call's. */
        through(receive, rc);
        MPI_Request handle = *request;
        (void)PMPI_Wait(&handle, MPI_STATUS_IGNORE); /* complete: frees it */
        *request = MPI_REQUEST_NULL;
        return rc;
    }
    return MPI_SUCCESS;
}

int mpix_zcopy_hooked_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            MPI_Request *request)
{
    hooked_send *send = calloc(1, sizeof *send);
    if (!send)
        return MPI_ERR_NO_MEM;
    send->what = HOOK_SEND;
    send->references = 1;
    int rc = mpix_zcopy_send_start_inline(&send->send, buf, count, datatype, dest, tag, comm, send);
    if (rc == MPI_SUCCESS)
        *request = send->send.inner;
    if (!send->send.zc) { /* failed before it had a communicator: nothing to end */
        free(send);
        return rc;
    }
    send_release(send);
    return rc;
}

/* ---- small sends, complete at once ---------------------------------------------------- */

/* Frees the buffers of the parked sends whose messages MPI is through with. Another
 * thread reaping meanwhile does it for this one. */
static void reap(mpix_zcopy_hooks *hooks)
{
    if (atomic_load_explicit(&hooks->parked_count, memory_order_relaxed) == 0 ||
        pthread_mutex_trylock(&hooks->parked_lock) != 0)
        return;
    int count = atomic_load_explicit(&hooks->parked_count, memory_order_relaxed), kept = 0;
    for (int i = 0; i < count; i++) {
        parked_send *parked = &hooks->parked[i];
        int done = 0;
        /* A send that failed is through too: its error, as a freed request's, has no one
         * to go to (MPI raised it on the communicator). */
        if (PMPI_Test(&parked->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            done = parked->request == MPI_REQUEST_NULL;
        if (done)
            free(parked->packed);
        else
            hooks->parked[kept++] = *parked;
    }
    atomic_store_explicit(&hooks->parked_count, kept, memory_order_relaxed);
    pthread_mutex_unlock(&hooks->parked_lock);
}

static int park(mpix_zcopy_hooks *hooks, MPI_Request request, char *packed)
{
    pthread_mutex_lock(&hooks->parked_lock);
    int count = atomic_load_explicit(&hooks->parked_count, memory_order_relaxed);
    if (count == hooks->parked_capacity) {
        int capacity = count ? 2 * count : 16;
        parked_send *grown = realloc(hooks->parked, capacity * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&hooks->parked_lock);
            return MPI_ERR_NO_MEM;
        }
        hooks->parked = grown;
        hooks->parked_capacity = capacity;
    }
    hooks->parked[count] = (parked_send){ .request = request, .packed = packed };
    atomic_store_explicit(&hooks->parked_count, count + 1, memory_order_relaxed);
    pthread_mutex_unlock(&hooks->parked_lock);
    return MPI_SUCCESS;
}

int mpix_zcopy_hooked_isend_small(mpix_zcopy_comm *zc, const void *buf, int count, MPI_Datatype datatype,
                                  MPI_Count bytes, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    mpix_zcopy_hooks *hooks = zc->process->hooks;
    reap(hooks);
    char *packed;
    MPI_Request inner;
    int done = 0, rc = mpix_zcopy_isend_small(zc, buf, count, datatype, bytes, dest, tag, comm, &packed, &inner);
    if (rc != MPI_SUCCESS)
        return rc;
    /* MPI may have sent it already (Open MPI: up to a few hundred bytes between processes
     * of a node): its own request, complete, is the caller's. */
    if ((rc = PMPI_Request_get_status(inner, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && done) {
        free(packed);
        *request = inner;
        return MPI_SUCCESS;
    }
    /* Otherwise the caller's buffer is free already, as after a send MPI buffers: a
     * request complete at once is the caller's, MPI's stays with the buffer (reap). One
     * that cannot be kept is waited for: the message is small, MPI takes it eagerly. */
    if (rc != MPI_SUCCESS || park(hooks, inner, packed) != MPI_SUCCESS) {
        int wait_rc = PMPI_Wait(&inner, MPI_STATUS_IGNORE);
        free(packed);
        if (rc == MPI_SUCCESS)
            rc = wait_rc;
    }
    if (rc == MPI_SUCCESS && (rc = mpix_empty_request_start(request)) == MPI_SUCCESS)
        rc = PMPI_Grequest_complete(*request);
    return rc;
}

/* @send's header, then a second message on @tag: @count of @datatype at @buf, or with
 * MPI_DATATYPE_NULL the header again, synchronously; the second's request goes to
 * @send->inner. One hooked datatype for the header's messages ends the send once they
 * are done. */
static int send_header_then(mpix_zcopy_send *send, int tag, const void *buf, int count, MPI_Datatype datatype)
{
    mpix_zcopy_hooks *hooks = send->zc->process->hooks;
    MPI_Datatype header_type;
    MPI_Request header_request = MPI_REQUEST_NULL;
    int rc = PMPI_Type_contiguous(sizeof send->header, MPI_BYTE, &header_type);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Type_commit(&header_type)) == MPI_SUCCESS && (rc = mpix_zcopy_hook_set(header_type, send->hook)) == MPI_SUCCESS) {
        pthread_mutex_lock(&hooks->send_lock);
        rc = PMPI_Isend(&send->header, 1, header_type, send->dest, tag, send->comm, &header_request);
        if (rc == MPI_SUCCESS)
            rc = datatype != MPI_DATATYPE_NULL
                     ? PMPI_Isend(buf, count, datatype, send->dest, tag, send->comm, &send->inner)
                     : PMPI_Issend(&send->header, 1, header_type, send->dest, tag, send->comm, &send->inner);
        pthread_mutex_unlock(&hooks->send_lock);
        /* The header's request ends by itself; its datatype's hook keeps the header. */
        if (header_request != MPI_REQUEST_NULL && PMPI_Request_free(&header_request) != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = MPI_ERR_REQUEST;
    }
    int free_rc = PMPI_Type_free(&header_type);
    return rc != MPI_SUCCESS ? rc : free_rc;
}

int mpix_zcopy_hooked_send_pair(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype, int tag)
{
    return send_header_then(send, tag, buf, count, datatype);
}

int mpix_zcopy_hooked_send_rts(mpix_zcopy_send *send, int tag)
{
    send->header.tail_follows = 1;
    return send_header_then(send, tag, NULL, 0, MPI_DATATYPE_NULL);
}

int mpix_zcopy_hooked_overlap(mpix_zcopy_comm *zc, int source, int tag)
{
    mpix_zcopy_hooks *hooks = zc->process->hooks;
    if (!hooks)
        return 0;
    int overlap = 0;
    pthread_mutex_lock(&hooks->lock);
    for (hooked_receive *receive = hooks->first; receive && !overlap; receive = receive->next)
        overlap = receive->zc == zc && mpix_zcopy_envelopes_overlap(receive->source, receive->tag, source, tag);
    pthread_mutex_unlock(&hooks->lock);
    return overlap;
}

/* ---- whether this MPI runs the callback at completion ----------------------------------- */

/* A receive from this process on a private communicator, hooked, its request and
 * datatype freed: the callback must not run at MPI_Type_free, and must run once the
 * message is in (waited for up to a second of progress). */
static int completes_in_progress(int *deferred)
{
    *deferred = 0;
    MPI_Comm self;
    int rc = PMPI_Comm_dup(MPI_COMM_SELF, &self);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Kept where its callback never ran: the MPI may still run it. */
    hook_probe *probe = calloc(1, sizeof *probe);
    if (!probe) {
        (void)PMPI_Comm_free(&self); /* cleanup: no memory is the error */
        return MPI_ERR_NO_MEM;
    }
    probe->what = HOOK_PROBE;
    MPI_Datatype type;
    MPI_Request inner;
    char in = 0, out = 1;
    if ((rc = PMPI_Type_contiguous(1, MPI_BYTE, &type)) == MPI_SUCCESS && (rc = PMPI_Type_commit(&type)) == MPI_SUCCESS &&
        (rc = mpix_zcopy_hook_set(type, probe)) == MPI_SUCCESS &&
        (rc = PMPI_Irecv(&in, 1, type, 0, 0, self, &inner)) == MPI_SUCCESS &&
        (rc = PMPI_Request_free(&inner)) == MPI_SUCCESS && (rc = PMPI_Type_free(&type)) == MPI_SUCCESS) {
        int at_free = atomic_load_explicit(&probe->fired, memory_order_acquire);
        rc = PMPI_Send(&out, 1, MPI_BYTE, 0, 0, self);
        double until = PMPI_Wtime() + 1.0;
        while (rc == MPI_SUCCESS && !atomic_load_explicit(&probe->fired, memory_order_acquire) && PMPI_Wtime() < until)
            rc = mpix_mpi_progress();
        *deferred = rc == MPI_SUCCESS && !at_free && atomic_load_explicit(&probe->fired, memory_order_acquire);
    }
    if (atomic_load_explicit(&probe->fired, memory_order_acquire))
        free(probe);
    int free_rc = PMPI_Comm_free(&self);
    return rc != MPI_SUCCESS ? rc : free_rc;
}

int mpix_zcopy_hooks_get(mpix_zcopy_process *process, mpix_zcopy_hooks **out)
{
    if (atomic_load_explicit(&process->hooks_decided, memory_order_acquire)) {
        *out = process->hooks;
        return MPI_SUCCESS;
    }
    int mode = 0, deferred = 0, keyval;
    int rc = mpix_hint_keyword(MPI_INFO_NULL, MPIX_HINT_ZCOPY_PROGRESS, &mode);
    if (rc == MPI_SUCCESS)
        rc = mpix_keyval_get(&hook_keyval, &keyval);   /* outside the library's lock, which it takes */
#if defined(MPICH_NUMVERSION)
    /* MPICH 4.0 runs the callback inside UCX's progress, where an MPI call that makes
     * progress (MPI_Request_free of a receive posted there) aborts in UCX
     * (ucp_worker_progress: "worker->inprogress++ == 0"). */
    mode = 1;
#endif
    if (rc == MPI_SUCCESS && mode == 0)
        rc = completes_in_progress(&deferred);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_zcopy_hooks *hooks = NULL;
    if (deferred && !(hooks = calloc(1, sizeof *hooks)))
        return MPI_ERR_NO_MEM;
    if (hooks) {
        pthread_mutex_init(&hooks->lock, NULL);
        pthread_mutex_init(&hooks->send_lock, NULL);
        pthread_mutex_init(&hooks->parked_lock, NULL);
    }
    mpix_lock();
    if (!atomic_load_explicit(&process->hooks_decided, memory_order_acquire)) {
        process->hooks = hooks;
        hooks = NULL;
        atomic_store_explicit(&process->hooks_decided, 1, memory_order_release);
    }
    mpix_unlock();
    if (hooks) { /* another thread decided first */
        pthread_mutex_destroy(&hooks->parked_lock);
        pthread_mutex_destroy(&hooks->send_lock);
        pthread_mutex_destroy(&hooks->lock);
        free(hooks);
    }
    *out = process->hooks;
    return MPI_SUCCESS;
}

void mpix_zcopy_hooks_destroy(mpix_zcopy_process *process)
{
    mpix_zcopy_hooks *hooks = process->hooks;
    if (!hooks)
        return;
    /* Small sends MPI is not through with (their receives never posted: an erroneous
     * program) are left to MPI, their buffers with them: waiting could hang where the
     * program's own sends would not. */
    reap(hooks);
    int parked = atomic_load_explicit(&hooks->parked_count, memory_order_relaxed);
    for (int i = 0; i < parked; i++)
        (void)PMPI_Request_free(&hooks->parked[i].request);   /* at MPI_Finalize: nothing to report to */
    free(hooks->parked);
    hooks->parked = NULL;
    atomic_store_explicit(&hooks->parked_count, 0, memory_order_relaxed);
    /* Receives still listed at MPI_Finalize (an erroneous program) keep their records
     * and these: MPI may still run their callbacks while it shuts down. */
    if (hooks->first)
        return;
    pthread_mutex_destroy(&hooks->parked_lock);
    pthread_mutex_destroy(&hooks->send_lock);
    pthread_mutex_destroy(&hooks->lock);
    free(hooks);
    process->hooks = NULL;
}
