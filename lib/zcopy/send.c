/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Send_zcopy: choose the path for this message and peer, send the one MPI message
 * that carries the user's envelope, and for a zero-copy message wait until the receiver
 * has read the data. */
#include "zcopy.h"
#include "common/arguments.h"
#include "common/api.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/relax.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The receiver's request: copy type-map bytes [split, bytes) of @buf into its layout,
 * then say so in the slot, where the receiver waits for it. A failed write (a kernel
 * that lets the receiver attach to this process but not the other way) hands the part
 * back to the receiver, and this peer gets no more offers. */
static void help_receiver(mpix_zcopy_comm *zc, int dest, const void *buf, const mpix_layout *mine,
                          mpix_zcopy_slot *slot, MPI_Count bytes, const char *call)
{
    mpix_layout scratch, *theirs;
    int32_t outcome = MPIX_ZCOPY_ABANDONED;
    pid_t pid = slot->receiver_pid;
    mpix_zcopy_comm_enter(zc);
    if (mpix_zcopy_peer_layout(zc, dest, pid, &slot->receiver, &scratch, &theirs, call) == MPI_SUCCESS) {
        int error = zc->process->attach == MPIX_ZCOPY_ATTACH_REFUSE_PUSH
                        ? EPERM
                        : mpix_zcopy_push(pid, slot->receiver.base, theirs, buf, mine, slot->split,
                                          bytes - slot->split);
        mpix_zcopy_peer_layout_release(&scratch, &slot->receiver);
        if (!error) {
            outcome = MPIX_ZCOPY_DONE;
            zc->stats.pushed++;
        } else {
            zc->stats.push_refused++;
            int world = mpix_zcopy_world_rank(zc, dest);
            if (world != MPI_UNDEFINED)
                zc->process->access[world] = MPIX_ZCOPY_ACCESS_REFUSED;
        }
    }
    mpix_zcopy_comm_leave(zc);
    /* Release: the receiver that reads DONE then reads the bytes this process wrote. */
    atomic_store_explicit(&slot->finished, outcome, memory_order_release);
}

/* Takes the receiver's request for help, unless the receiver took it back. */
static int take_request(mpix_zcopy_slot *slot)
{
    int32_t asked = MPIX_ZCOPY_HELP;
    return atomic_compare_exchange_strong_explicit(&slot->state, &asked, MPIX_ZCOPY_HELPING, memory_order_acq_rel,
                                                   memory_order_acquire);
}

/* Slot @index of this process's mailbox, readied for one message that @header names it
 * in. */
static mpix_zcopy_slot *open_slot(mpix_zcopy_comm *zc, int index, mpix_zcopy_header *header)
{
    mpix_zcopy_slot *slot = &zc->process->mailbox[index];
    atomic_store_explicit(&slot->state, MPIX_ZCOPY_PENDING, memory_order_relaxed);
    atomic_store_explicit(&slot->finished, MPIX_ZCOPY_PENDING, memory_order_relaxed);
    header->slot = index;
    return slot;
}

/* @padded, a header padded to travel alone, with its padding cleared: no bytes of this
 * process's memory but the header's go to the receiver. */
static const void *alone(unsigned char *padded)
{
    memset(padded + sizeof(mpix_zcopy_header), 0, MPIX_ZCOPY_LONE_HEADER_BYTES - sizeof(mpix_zcopy_header));
    return padded;
}

/* @count of @datatype at @buf packed into a buffer kept by the process (*@packed: give it
 * back to its packing scratch), its pack timed in @send->pack_seconds for the learner. */
static int pack_timed(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype, char **packed,
                      int *length)
{
    double start = PMPI_Wtime();
    int rc = mpix_zcopy_pack(buf, count, datatype, send->comm, &send->zc->packing, packed, length);
    send->pack_seconds = PMPI_Wtime() - start;
    return rc;
}

/* A message through MPI (@kind EAGER up to the eager limit, MPI above it), sent as the
 * program asked, without a header, unless the header has something to tell the
 * receiver. A question (whether the receiver can attach to this process) goes first, in
 * a header of its own that any receive answers and then receives on (MPIX_ZCOPY_LEARN).
 * A slot (a send timed against the other ways: the receiver ends the message there once
 * it has the data, and the send waits for it, as MPI_Send returns once MPI has the
 * data, which for a pipelined datatype send is before the receiver has unpacked it, so
 * that all ways are timed to the same point), or data this process packed (@way,
 * pack.c), go with a header alone and the data as the next message on the same tag:
 * only while one thread calls MPI at a time (start, ways_of), so that no other message
 * of this process to the receiver comes between. The receiver receives into its buffer
 * whatever comes and reads a header there (recv.c). A nonblocking send leaves its MPI
 * requests in @send->inner and @send->data. Data of up to MPIX_ZCOPY_RAW_MAX bytes
 * never comes here: it goes without header. Nonblocking sends never pack (ways_of). */
static int send_inline(mpix_zcopy_send *send, int kind, int way, const void *buf, int count, MPI_Datatype datatype,
                       int tag, int blocking)
{
    mpix_zcopy_comm *zc = send->zc;
    mpix_zcopy_header *header = &send->header;
    int rc = MPI_SUCCESS, packing = way == MPIX_ZCOPY_WAY_PACKED || way == MPIX_ZCOPY_WAY_UNPACKED;
    if (header->learn_address) {
        int world = mpix_zcopy_world_rank(zc, send->dest);
        if (world != MPI_UNDEFINED)   /* two threads may both pass the limit once: one question more */
            atomic_fetch_add_explicit(&zc->process->learn_asks[world], 1, memory_order_relaxed);
        send->asking = *header;
        send->asking.kind = MPIX_ZCOPY_LEARN;
        header->learn_address = 0;
        zc->stats.sent_questions++;
        rc = blocking ? PMPI_Send(alone(send->asking_alone), MPIX_ZCOPY_LONE_HEADER_BYTES, MPI_BYTE, send->dest, tag,
                                  send->comm)
                      : PMPI_Isend(alone(send->asking_alone), MPIX_ZCOPY_LONE_HEADER_BYTES, MPI_BYTE, send->dest, tag,
                                   send->comm, &send->inner);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (send->slot_index < 0 && !packing) {
        zc->stats.sent_without_header++;
        return blocking ? mpix_zcopy_blocking_send(zc->process, buf, count, datatype, send->dest, tag, send->comm)
                        : PMPI_Isend(buf, count, datatype, send->dest, tag, send->comm, &send->data);
    }
    if (send->slot_index >= 0)
        send->slot = open_slot(zc, send->slot_index, header);
    header->kind = kind;
    header->data_follows = way == MPIX_ZCOPY_WAY_UNPACKED ? MPIX_ZCOPY_FOLLOWS_TO_UNPACK : MPIX_ZCOPY_FOLLOWS_DATA;
    zc->stats.sent_data_apart++;
    char *packed = NULL;
    int length = 0;
    if (packing && (rc = pack_timed(send, buf, count, datatype, &packed, &length)) != MPI_SUCCESS)
        return rc;
    rc = PMPI_Send(alone(send->header_alone), MPIX_ZCOPY_LONE_HEADER_BYTES, MPI_BYTE, send->dest, tag, send->comm);
    if (rc == MPI_SUCCESS)
        rc = packing ? mpix_zcopy_blocking_send(zc->process, packed, length, MPI_PACKED, send->dest, tag, send->comm)
                     : mpix_zcopy_blocking_send(zc->process, buf, count, datatype, send->dest, tag, send->comm);
    mpix_scratch_give(&zc->packing, packed);
    if (packing)
        way == MPIX_ZCOPY_WAY_UNPACKED ? zc->stats.sent_unpacked++ : zc->stats.sent_packed++;
    return rc;
}

static uint64_t next_nonce(void)
{
    static _Atomic uint64_t counter;
    /* The pid in the high half: a nonce does not repeat among the node's processes. */
    return ((uint64_t)getpid() << 32) | (atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed) + 1);
}

/* The header names a slot of this process's mailbox; the receiver copies, perhaps asks
 * for help (only a blocking sender offers it: a nonblocking one may not be in a call when
 * asked), and ends the message there. */
static int send_rts(mpix_zcopy_send *send, const void *buf, int count, int tag, int blocking)
{
    mpix_zcopy_comm *zc = send->zc;
    mpix_zcopy_header *header = &send->header;
    send->slot = open_slot(zc, send->slot_index, header);
    int world = mpix_zcopy_world_rank(zc, send->dest);
    header->kind = MPIX_ZCOPY_RTS;
    header->piped = 0;
    /* Piped only while the sender is in the call to fill the pipe: a blocking send of
     * the program's own explicit calls (an interposed one may stage its data and
     * return). */
    if (blocking && !send->interposed && mpix_zcopy_pipe_of(zc->process->mailbox, send->slot_index) &&
        mpix_zcopy_pipes_pay(zc, send->view.layout))
        mpix_zcopy_pipe_open(send);
    header->help_offered = blocking && !header->piped && zc->settings.split_bytes > 0 &&
                           header->bytes >= zc->settings.split_bytes &&
                           zc->process->access[world] != MPIX_ZCOPY_ACCESS_REFUSED;
    mpix_zcopy_layout_ref_set(&header->data, buf, count, &send->view, send->comm);
    if (!header->piped)
        mpix_zcopy_collapse(zc, buf, send->view.layout);   /* before the receiver pins its pages */
    /* A nonblocking send's header goes nonblocking too: MPI may hold a send until it is
     * matched (MPICH 4.0 does a send of the lone header to the process itself, whose
     * receive is posted only when its request makes progress). */
    if (!send->interposed)
        return blocking ? PMPI_Send(alone(send->header_alone), MPIX_ZCOPY_LONE_HEADER_BYTES, MPI_BYTE, send->dest, tag,
                                    send->comm)
                        : PMPI_Isend(alone(send->header_alone), MPIX_ZCOPY_LONE_HEADER_BYTES, MPI_BYTE, send->dest, tag,
                                     send->comm, &send->inner);
    /* Before the header leaves: a receiver checks the slot's nonce against it. */
    header->nonce = next_nonce();
    atomic_store_explicit(&send->slot->nonce, header->nonce, memory_order_release);
    return blocking ? PMPI_Send(header, sizeof *header, MPI_BYTE, send->dest, tag, send->comm)
                    : PMPI_Isend(header, sizeof *header, MPI_BYTE, send->dest, tag, send->comm, &send->inner);
}

/* The program's own send, as it asked (an interposed send MPI takes), or packed (@way;
 * blocking only), which its receive's datatype matches. */
static int send_plain(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype, int tag, int blocking,
                      int way)
{
    if (way == MPIX_ZCOPY_WAY_PACKED && blocking) {
        char *packed;
        int length, rc = pack_timed(send, buf, count, datatype, &packed, &length);
        if (rc != MPI_SUCCESS)
            return rc;
        rc = mpix_zcopy_blocking_send(send->zc->process, packed, length, MPI_PACKED, send->dest, tag, send->comm);
        mpix_scratch_give(&send->zc->packing, packed);
        send->zc->stats.sent_packed++;
        return rc;
    }
    return blocking ? mpix_zcopy_blocking_send(send->zc->process, buf, count, datatype, send->dest, tag, send->comm)
                    : PMPI_Isend(buf, count, datatype, send->dest, tag, send->comm, &send->inner);
}

/* The ways this send can take. Packing only for a blocking send (a nonblocking one's
 * packed copy would have to outlive the call) of at most INT_MAX bytes; the packed data
 * follows the header as a message of its own (send_inline), so only while one thread
 * calls MPI at a time. A program's own MPI_Send (interposed) has no header: packed, its
 * bytes are its message, but its receiver cannot be asked to unpack them. */
static unsigned ways_of(const mpix_zcopy_comm *zc, int blocking, int interposed, MPI_Count bytes)
{
    unsigned ways = MPIX_ZCOPY_WAYS_ALL;
    if (!blocking || bytes > INT_MAX || (!interposed && !zc->settings.one_caller))
        ways &= ~MPIX_ZCOPY_WAYS_PACKING;
    else if (interposed)
        ways &= ~(1u << MPIX_ZCOPY_WAY_UNPACKED);
    return ways;
}

/* A layout too fragmented for kernel copies, its shape's entry in @send->shape (@by_shape:
 * told by the shape, not by its flattened layout): one of MPI's ways, learnt on that
 * entry. */
static int send_fragmented(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype, int tag,
                           int blocking, unsigned ways, int by_shape)
{
    mpix_zcopy_comm *zc = send->zc;
    zc->stats.sent_fragmented++;
    zc->stats.sent_by_shape += by_shape;
    zc->stats.sent[MPIX_ZCOPY_MPI]++;
    send->kind = MPIX_ZCOPY_MPI;
    int decided, deferred;
    send->way = mpix_zcopy_shape_way(zc->process, &send->shape, send->interposed, ways & MPIX_ZCOPY_WAYS_MPI,
                                     &send->timed, &decided, &deferred);
    send->timed = send->timed && blocking;
    /* An interposed send is timed until MPI_Send returns: no slot; so is one of several
     * threads, whose header and data may not go as two messages (send_inline). */
    if (send->timed && !send->interposed && zc->settings.one_caller &&
        (send->slot_index = mpix_zcopy_slot_take(zc->process)) < 0)
        send->timed = 0;   /* every slot taken: untimed */
    send->start = PMPI_Wtime();
    if (send->interposed)
        return send_plain(send, buf, count, datatype, tag, blocking, send->way);
    return send_inline(send, MPIX_ZCOPY_MPI, send->way, buf, count, datatype, tag, blocking);
}

/* The header of a message of @bytes to @dest with @tag, in *@header; *@zero_copy: it may
 * go zero-copy (zcopy on, a mailbox, the peer in MPI_COMM_WORLD);
 * *@attachable: the peer proved it can read this process. Until it has, a message with
 * a header (@learns: not an interposed one) tells it where to say so. */
static void header_for(mpix_zcopy_comm *zc, int dest, int tag, MPI_Count bytes, int learns,
                       mpix_zcopy_header *header, int *zero_copy, int *attachable)
{
    mpix_zcopy_process *process = zc->process;
    int world = mpix_zcopy_world_rank(zc, dest);
    mpix_zcopy_directory_entry *entry = world != MPI_UNDEFINED ? &process->directory[world] : NULL;
    *zero_copy = zc->settings.enabled && entry && process->mailbox;
    *attachable = *zero_copy && atomic_load_explicit(&entry->can_read_me, memory_order_relaxed);
    *header = (mpix_zcopy_header){ .magic = MPIX_ZCOPY_MAGIC, .bytes = bytes, .node_key = process->node_key,
                                   .pid = process->pid, .slot = -1, .mailbox_fd = process->mailbox_fd,
                                   .mailbox_address = (uintptr_t)process->mailbox, .source_rank = zc->rank,
                                   .tag = tag };
    if (*zero_copy && !*attachable && learns &&
        atomic_load_explicit(&process->learn_asks[world], memory_order_relaxed) < MPIX_ZCOPY_LEARN_ASKS)
        header->learn_address = (uintptr_t)entry;
}

static int start(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, int blocking, int interposed)
{
    mpix_zcopy_comm *zc;
    MPI_Count type_size;
    memset(send, 0, offsetof(mpix_zcopy_send, header));   /* the headers are set before they are read */
    send->buf = buf, send->dest = dest, send->comm = comm, send->slot_index = -1, send->inner = MPI_REQUEST_NULL;
    send->data = MPI_REQUEST_NULL, send->interposed = interposed, send->way = MPIX_ZCOPY_WAY_DATATYPE;
    send->shape.entry = -1;
    send->call = interposed ? (blocking ? "MPI_Send" : "MPI_Isend") : (blocking ? "MPIX_Send_zcopy" : "MPIX_Isend_zcopy");
    int rc = mpix_zcopy_comm_get(comm, &zc);
    if (rc != MPI_SUCCESS)
        return rc;
    send->zc = zc;
    /* count and dest were checked by the caller (mpix_check_transfer). */
    if ((rc = PMPI_Type_size_x(datatype, &type_size)) != MPI_SUCCESS)
        return rc;

    if (!interposed && mpix_zcopy_sends_raw(type_size * count)) {
        send->kind = MPIX_ZCOPY_PLAIN;
        return mpix_zcopy_send_raw(zc, buf, count, datatype, dest, tag, comm, blocking ? NULL : &send->inner);
    }
    if (interposed && type_size * count <= zc->settings.eager_bytes) {   /* as below, without a header to make */
        zc->stats.sent[MPIX_ZCOPY_PLAIN]++;
        return send_plain(send, buf, count, datatype, tag, blocking, MPIX_ZCOPY_WAY_DATATYPE);
    }
    mpix_zcopy_process *process = zc->process;
    int zero_copy, attachable;
    header_for(zc, dest, tag, type_size * count, !interposed, &send->header, &zero_copy, &attachable);
    if (interposed) {
        MPI_Aint run = 0;   /* one run of bytes: MPI moves those with one copy */
        if (attachable && send->header.bytes > zc->settings.eager_bytes &&
            (rc = mpix_zcopy_one_run(datatype, count, type_size, &run)) != MPI_SUCCESS)
            return rc;
        if (!attachable || send->header.bytes <= zc->settings.eager_bytes || run >= 0) {
            zc->stats.sent[MPIX_ZCOPY_PLAIN]++;
            return send_plain(send, buf, count, datatype, tag, blocking, MPIX_ZCOPY_WAY_DATATYPE);
        }
    }

    if (send->header.bytes <= zc->settings.eager_bytes || !attachable) {
        int kind = send->header.bytes <= zc->settings.eager_bytes ? MPIX_ZCOPY_EAGER : MPIX_ZCOPY_MPI;
        zc->stats.sent[kind]++;
        return send_inline(send, kind, MPIX_ZCOPY_WAY_DATATYPE, buf, count, datatype, tag, blocking);
    }
    unsigned ways = ways_of(zc, blocking, interposed, send->header.bytes);
    mpix_type_shape shape;
    int by_shape = zc->settings.method == MPIX_ZCOPY_METHOD_AUTO, found = 0, fragmented = 0;
    if (by_shape && (rc = mpix_type_shape_of(datatype, count, &shape)) != MPI_SUCCESS)
        return rc;
    by_shape = by_shape && shape.combiner != MPI_COMBINER_NAMED;   /* a named type's layout is one block */
    if (by_shape) {
        found = mpix_zcopy_shape_find(process, &shape, &send->shape, &fragmented);
        int evident = 0, cached = 1;
        /* A new handle of a new shape: its envelopes may tell before its key is built. */
        if (!found && (rc = mpix_layout_cached(datatype, &cached)) == MPI_SUCCESS && !cached &&
            (rc = mpix_type_evidently_fragmented(datatype, &evident)) == MPI_SUCCESS && evident) {
            found = fragmented = 1;
            mpix_zcopy_shape_remember(process, &shape, 1, NULL, &send->shape);
        }
        if (rc != MPI_SUCCESS)
            return rc;
        if (fragmented)   /* through MPI without the content key */
            return send_fragmented(send, buf, count, datatype, tag, blocking, ways, 1);
    }
    int way = MPIX_ZCOPY_WAY_DATATYPE, decided = 0;
    if (!found) {
        if ((rc = mpix_layout_view_get(zc, datatype, count, &send->view)) != MPI_SUCCESS)
            return rc;
        send->has_view = 1;
        if (by_shape && mpix_zcopy_too_fragmented(zc, send->view.layout)) {
            mpix_zcopy_shape_remember(process, &shape, 1, NULL, &send->shape);
            return send_fragmented(send, buf, count, datatype, tag, blocking, ways, 0);
        }
        if (by_shape) {   /* priced: a nonblocking send's first way, a blocking one's first duel (shape.c) */
            mpix_layout *layout = send->view.layout;
            mpix_zcopy_prices prices = { mpix_zcopy_kernel_ns_per_byte(zc, layout),
                                         mpix_zcopy_unhelped_copy_loses(process, layout),
                                         mpix_zcopy_packing_cannot_pay(layout), mpix_zcopy_pipes_pay(zc, layout) };
            mpix_zcopy_shape_remember(process, &shape, 0, &prices, &send->shape);
        } else
            way = mpix_zcopy_choose_path(zc, &send->view, ways, &send->timed);
    }
    /* A shape whose sends go through MPI needs no layout (and no content key): only a
     * zero-copy send reads it. */
    if (by_shape) {
        int deferred, priced = 0;
        if (blocking)   /* packing only once zero-copy lost the shape (shape.c) */
            way = mpix_zcopy_shape_way(process, &send->shape, interposed, ways, &send->timed, &decided, &deferred);
        else
            way = mpix_zcopy_shape_peek(process, &send->shape, interposed, ways & ~MPIX_ZCOPY_WAYS_PACKING,
                                        &deferred, &priced);
        if (way == MPIX_ZCOPY_WAY_ZERO_COPY && !send->has_view) {
            if ((rc = mpix_layout_view_get(zc, datatype, count, &send->view)) != MPI_SUCCESS)
                return rc;
            send->has_view = 1;
        }
        if (deferred)
            zc->stats.sent_deferred++;
        else if (priced)
            zc->stats.sent_priced++;
        else if (decided && way != MPIX_ZCOPY_WAY_ZERO_COPY)
            zc->stats.sent_slower++;
    }
    int kind = way == MPIX_ZCOPY_WAY_ZERO_COPY ? MPIX_ZCOPY_RTS : MPIX_ZCOPY_MPI;
    send->timed = send->timed && blocking;   /* a nonblocking send's time is the program's */
    /* An interposed send through MPI is timed until MPI_Send returns: its receiver
     * cannot be asked to end it in a slot. */
    int slot_timed = send->timed && !interposed && zc->settings.one_caller;   /* as in send_fragmented */
    send->slot_index = kind == MPIX_ZCOPY_RTS || slot_timed ? mpix_zcopy_slot_take(process) : -1;
    /* Every slot taken (as many threads sending at once): this one goes through MPI,
     * untimed. */
    if (send->slot_index < 0 && (kind == MPIX_ZCOPY_RTS || slot_timed)) {
        if (kind == MPIX_ZCOPY_RTS)
            way = MPIX_ZCOPY_WAY_DATATYPE;
        kind = MPIX_ZCOPY_MPI, send->timed = 0;
    }
    send->kind = kind;
    send->way = way;
    send->start = PMPI_Wtime();
    zc->stats.sent[kind]++;
    if (kind == MPIX_ZCOPY_RTS)
        return send_rts(send, buf, count, tag, blocking);
    if (interposed)
        return send_plain(send, buf, count, datatype, tag, blocking, way);
    return send_inline(send, MPIX_ZCOPY_MPI, way, buf, count, datatype, tag, blocking);
}

int mpix_zcopy_send_raw(mpix_zcopy_comm *zc, const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Request *request)
{
    zc->stats.sent[MPIX_ZCOPY_PLAIN]++;
    return request ? PMPI_Isend(buf, count, datatype, dest, tag, comm, request)
                   : mpix_zcopy_blocking_send(zc->process, buf, count, datatype, dest, tag, comm);
}

int mpix_zcopy_send_start(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, int blocking)
{
    return start(send, buf, count, datatype, dest, tag, comm, blocking, 0);
}

int mpix_zcopy_send_start_interposed(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype,
                                     int dest, int tag, MPI_Comm comm, int blocking)
{
    return start(send, buf, count, datatype, dest, tag, comm, blocking, 1);
}

/* A look at @send's slot, which its receiver has not ended: every 64th asks (at most
 * every MPIX_ZCOPY_EXIT_CHECK_SECONDS) whether the receiver still runs, since the slot of
 * a receiver killed in the middle of the message never changes again. Then an error that
 * names it. */
static int receiver_gone(mpix_zcopy_send *send)
{
    if (++send->waits % 64 != 0)
        return MPI_SUCCESS;
    int world = mpix_zcopy_world_rank(send->zc, send->dest);
    pid_t pid = world != MPI_UNDEFINED ? send->zc->process->directory[world].pid : 0;
    if (pid <= 0 || !mpix_zcopy_peer_exit_check(&send->receiver_watch, pid))
        return MPI_SUCCESS;
    return mpix_zcopy_peer_exit_error(send->call, send->dest, pid);
}

int mpix_zcopy_send_test(mpix_zcopy_send *send, int *done)
{
    *done = 0;
    MPI_Request *requests[] = { &send->inner, &send->data };
    for (int i = 0; i < 2; i++) {
        if (*requests[i] == MPI_REQUEST_NULL)
            continue;
        int flag, rc = PMPI_Test(requests[i], &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || !flag)
            return rc;
    }
    if (send->slot) {
        int32_t state = atomic_load_explicit(&send->slot->state, memory_order_acquire);
        if (send->piping == 1 && state == MPIX_ZCOPY_PENDING && send->piped < send->header.bytes) {
            MPI_Count piped = send->piped;
            mpix_zcopy_pipe_fill(send);
            return send->piped == piped ? receiver_gone(send) : MPI_SUCCESS;
        }
        if (state == MPIX_ZCOPY_HELP && !send->helped && take_request(send->slot)) {
            help_receiver(send->zc, send->dest, send->buf, send->view.layout, send->slot, send->header.bytes,
                          send->call);
            send->helped = 1;
            return MPI_SUCCESS;
        }
        if (state == MPIX_ZCOPY_PENDING || state == MPIX_ZCOPY_HELP || state == MPIX_ZCOPY_HELPING)
            return receiver_gone(send);
    }
    *done = 1;
    return MPI_SUCCESS;
}

/* The data in type-map order, in a buffer of this process that outlives the call: the
 * receiver reads it there whenever it comes. */
static int stage(mpix_zcopy_send *send)
{
    const mpix_layout *layout = send->view.layout;
    char *staged = malloc(layout->bytes > 0 ? layout->bytes : 1);
    if (!staged)
        return 0;
    mpix_layout_cursor cursor;
    mpix_layout_cursor_at(&cursor, layout, 0);
    mpix_layout_gather(&cursor, send->buf, staged, layout->bytes);
    send->slot->staged_address = (uintptr_t)staged;
    send->staged = staged;
    atomic_store_explicit(&send->slot->state, MPIX_ZCOPY_STAGED, memory_order_release);
    return 1;
}

int mpix_zcopy_send_test_interposed(mpix_zcopy_send *send, double stage_after, int *done)
{
    *done = 1;
    if (!send->slot || send->kind != MPIX_ZCOPY_RTS)
        return MPI_SUCCESS;
    int32_t state = atomic_load_explicit(&send->slot->state, memory_order_acquire);
    if (state == MPIX_ZCOPY_HELP && !send->helped && take_request(send->slot)) {
        help_receiver(send->zc, send->dest, send->buf, send->view.layout, send->slot, send->header.bytes, send->call);
        send->helped = 1;
        state = atomic_load_explicit(&send->slot->state, memory_order_acquire);
    }
    if (state == MPIX_ZCOPY_PENDING && PMPI_Wtime() - send->start >= stage_after) {
        int32_t expected = MPIX_ZCOPY_PENDING;
        if (atomic_compare_exchange_strong_explicit(&send->slot->state, &expected, MPIX_ZCOPY_STAGING,
                                                    memory_order_acq_rel, memory_order_acquire)) {
            if (stage(send))
                return MPI_SUCCESS;
            /* No memory to stage: wait for the receiver after all. */
            atomic_store_explicit(&send->slot->state, MPIX_ZCOPY_PENDING, memory_order_release);
            send->start = PMPI_Wtime();
            send->timed = 0;
        }
        state = atomic_load_explicit(&send->slot->state, memory_order_acquire);
    }
    *done = state == MPIX_ZCOPY_DONE || state == MPIX_ZCOPY_ABANDONED;
    return *done ? MPI_SUCCESS : receiver_gone(send);
}

int mpix_zcopy_send_end(mpix_zcopy_send *send, int rc)
{
    if (send->staged) { /* the slot and the copy stay until the receiver read it */
        mpix_zcopy_staged_keep(send->zc->process, send->slot_index, send->staged);
        send->slot_index = -1;
        send->staged = NULL;
        send->timed = 0;
    }
    if (send->slot_index >= 0)
        mpix_zcopy_slot_release(send->zc->process, send->slot_index);
    if (send->timed && rc == MPI_SUCCESS)   /* only sends a shape's learner chose are timed */
        mpix_zcopy_shape_sample(send->zc->process, &send->shape, send->interposed, send->way,
                                PMPI_Wtime() - send->start, send->pack_seconds);
    if (send->has_view)
        mpix_layout_view_release(&send->view);
    send->slot_index = -1;
    send->has_view = 0;
    return rc;
}

/* The receiver ends the message in the slot. The sender polls (mpix_backoff), driving
 * MPI progress now and then for the program's other requests (the test asks whether the
 * receiver still runs). A receiver that asks for help gets it first. */
static int send_checked(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    mpix_zcopy_send send;
    int done = 0, rc = mpix_zcopy_send_start(&send, buf, count, datatype, dest, tag, comm, 1);
    if (!send.zc)
        return rc;
    for (unsigned long poll = 0; rc == MPI_SUCCESS && !done; poll++) {
        int helped = send.helped;
        MPI_Count piped = send.piped;
        if ((rc = mpix_zcopy_send_test(&send, &done)) != MPI_SUCCESS || done)
            break;
        if (send.helped != helped || send.piped != piped) {
            poll = 0; /* the help took a while, or the receiver makes room: it is about to answer */
            continue;
        }
        if (poll >= 64 && poll % 256 == 0) {
            /* Only to make MPI progress for the receiver, and for this process's own
             * nonblocking receives, which the receiver may wait for; a failure shows in
             * their own calls. */
            (void)mpix_mpi_progress();
            mpix_zcopy_progress_poke(send.zc->process);
        }
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    return mpix_zcopy_send_end(&send, rc);
}

int mpix_zcopy_direct(MPI_Comm comm, int count, MPI_Datatype datatype, int peer, int direction, mpix_zcopy_comm **zc,
                      MPI_Count *type_size)
{
    if (comm == MPI_COMM_NULL || datatype == MPI_DATATYPE_NULL || count < 0 ||
        mpix_zcopy_comm_get(comm, zc) != MPI_SUCCESS)
        return 0;
    return mpix_peer_known(peer, (*zc)->peers, direction) && PMPI_Type_size_x(datatype, type_size) == MPI_SUCCESS;
}

MPIX_API int MPIX_Send_zcopy(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    mpix_zcopy_comm *zc;
    MPI_Count type_size;
    if (mpix_zcopy_direct(comm, count, datatype, dest, MPIX_SENDING, &zc, &type_size)) {
        if (mpix_zcopy_sends_raw(type_size * count))
            return mpix_zcopy_send_raw(zc, buf, count, datatype, dest, tag, comm, NULL);
    }
    int rc = mpix_check_transfer("MPIX_Send_zcopy", buf, count, datatype, dest, tag, comm, MPIX_SENDING);
    if (rc != MPI_SUCCESS)
        return rc;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    return mpix_raise_comm(comm, send_checked(buf, count, datatype, dest, tag, comm));
}
