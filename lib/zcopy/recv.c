/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Recv_zcopy: receive the sender's message into the caller's buffer with MPI's own
 * receive (so wildcards, ordering and truncation are MPI's): data sent without header
 * lands in place; a lone header, found there, says where to read the sender's memory or
 * that the data is the sender's next message. */
#include "zcopy.h"
#include "common/arguments.h"
#include "common/api.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/relax.h"
#include "common/status.h"
#include "common/verbose.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A sender that does not yet know whether this process can attach to it asks; on the
 * same node the answer is a write into its directory, which succeeds exactly when this
 * process may read it too. Its mailbox is mapped first: zero-copy messages end there. */
void mpix_zcopy_receive_learn(mpix_zcopy_comm *zc, int source, const mpix_zcopy_header *header)
{
    mpix_zcopy_process *process = zc->process;
    int world = mpix_zcopy_world_rank(zc, source);
    if (!zc->settings.enabled || !header->learn_address || header->node_key != process->node_key || world == MPI_UNDEFINED ||
        process->access[world] == MPIX_ZCOPY_ACCESS_REFUSED)
        return;
    mpix_zcopy_directory_entry mine = { process->pid, 1 };
    /* MPIX_ZCOPY_ATTACH=refuse answers as a kernel that forbids the attach would. */
    int error = process->attach == MPIX_ZCOPY_ATTACH_REFUSE                               ? EPERM
                : !mpix_zcopy_peer_mailbox(process, header->pid, header->mailbox_fd) ? EACCES
                : mpix_zcopy_write_remote(header->pid, header->learn_address, &mine, sizeof mine);
    int access = error ? MPIX_ZCOPY_ACCESS_REFUSED : MPIX_ZCOPY_ACCESS_OK;
    if (zc->settings.verbose && process->access[world] != access)
        mpix_verbose_print("zcopy", "messages from rank %d (pid %d): %s", source, (int)header->pid,
                           error ? "plain MPI, the kernel refuses cross-memory attach" : "zero-copy from now on");
    process->access[world] = access;
}

/* The error of @call's read of @bytes from rank @source (process @pid) that failed with
 * @error: the sender exited in the middle of the message (ESRCH: killed), or the kernel
 * refused the read. */
static int read_failed(const char *call, MPI_Count bytes, int source, pid_t pid, int error)
{
    if (error == ESRCH)
        return mpix_zcopy_peer_exit_error(call, source, pid);
    return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "%s: reading %lld bytes from rank %d failed: %s", call,
                      (long long)bytes, source, strerror(error));
}

/* The sender's answer to a help request, polled after this process's own part, which
 * the split sized to take as long as the sender's; MPIX_ZCOPY_PENDING where the sender
 * did not take the request within MPIX_ZCOPY_STALL_SECONDS and this process took it
 * back (the slot's state again @before): then it copies the part itself.
 * SENDER_EXITED where the sender, process @sender, exited before it answered (killed
 * while it copied). */
enum { SENDER_EXITED = -1 };   /* no state of a slot */
static int32_t wait_for_sender(mpix_zcopy_slot *slot, int32_t before, pid_t sender)
{
    int32_t finished;
    double since = PMPI_Wtime();
    mpix_zcopy_peer_watch watch = { 0 };
    for (unsigned long poll = 0; (finished = atomic_load_explicit(&slot->finished, memory_order_acquire)) == MPIX_ZCOPY_PENDING;
         poll++) {
        int32_t asked = MPIX_ZCOPY_HELP;
        if (poll % 64 == 63 && PMPI_Wtime() - since > MPIX_ZCOPY_STALL_SECONDS) {
            if (atomic_compare_exchange_strong_explicit(&slot->state, &asked, before, memory_order_acq_rel,
                                                        memory_order_acquire))
                return MPIX_ZCOPY_PENDING;
            if (mpix_zcopy_peer_exit_check(&watch, sender))
                return SENDER_EXITED;
        }
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    return finished;
}

/* Asks the sender to copy type-map bytes [split, ...) itself: the request first, then
 * the state that makes the sender read it. Returns the state before (PENDING, or
 * CLAIMED for an interposed message), to which a request taken back returns. */
static int32_t ask_for_help(mpix_zcopy_comm *zc, mpix_zcopy_slot *slot, void *buf, int count,
                         const mpix_layout_view *local, MPI_Count split, MPI_Comm comm)
{
    slot->receiver_pid = zc->process->pid;
    slot->split = split;
    mpix_zcopy_layout_ref_set(&slot->receiver, buf, count, local, comm);
    return atomic_exchange_explicit(&slot->state, MPIX_ZCOPY_HELP, memory_order_acq_rel);
}

/* Ends the message for the sender, which waits for this whatever happened here. */
static void end_message(mpix_zcopy_slot *slot, const mpix_zcopy_header *header, int32_t outcome)
{
    if (slot)
        atomic_store_explicit(&slot->state, outcome, memory_order_release);
    else /* the mailbox could not be mapped (it was, when this sender was answered) */
        mpix_zcopy_write_remote(header->pid,
                                header->mailbox_address + header->slot * sizeof(mpix_zcopy_slot) +
                                    offsetof(mpix_zcopy_slot, state),
                                &outcome, sizeof outcome);
}

/* The message's slot in the sender's mailbox; NULL if it cannot be mapped. */
static mpix_zcopy_slot *peer_slot(mpix_zcopy_comm *zc, const mpix_zcopy_header *header)
{
    mpix_zcopy_slot *mailbox = mpix_zcopy_peer_mailbox(zc->process, header->pid, header->mailbox_fd);
    return mailbox && header->slot >= 0 && header->slot < MPIX_ZCOPY_SLOTS ? &mailbox[header->slot] : NULL;
}

static int receive_interposed(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, MPI_Count capacity,
                              int source, const mpix_zcopy_header *header, MPI_Comm comm, mpix_zcopy_slot *slot,
                              const char *call);

/* @call: the program's, for errors. */
static int receive_rts(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, MPI_Count capacity,
                       int source, const mpix_zcopy_header *header, MPI_Comm comm, const char *call)
{
    int32_t outcome = MPIX_ZCOPY_ABANDONED;
    int rc = MPI_ERR_TRUNCATE;
    mpix_layout_view local;
    mpix_zcopy_slot *slot = peer_slot(zc, header);
    if (slot && header->nonce)
        return receive_interposed(zc, buf, count, datatype, capacity, source, header, comm, slot, call);
    if (!slot)
        rc = mpix_error(MPIX_ERRKIND_UNSUPPORTED, "%s: the mailbox of rank %d (pid %d, fd %d) cannot be mapped", call,
                        source, (int)header->pid, (int)header->mailbox_fd);
    else if (header->piped && !mpix_zcopy_pipe_of(slot - header->slot, header->slot))
        rc = mpix_error(MPIX_ERRKIND_UNSUPPORTED, "%s: rank %d piped a message through slot %d, which has no pipe", call,
                        source, (int)header->slot);
    else if (header->piped && header->bytes <= capacity &&
             (rc = mpix_layout_view_get(zc, datatype, count, &local)) == MPI_SUCCESS) {
        MPI_Count from = mpix_zcopy_pipe_drain(slot - header->slot, header->slot, buf, local.layout, header->bytes,
                                               mpix_zcopy_kernel_bytes_per_ns(zc->process), header->pid);
        zc->stats.pulled_piped++;
        if (from < 0)
            rc = mpix_zcopy_peer_exit_error(call, source, header->pid);
        else if (from < header->bytes) {   /* the sender stalled: the rest as a zero-copy receive reads it */
            mpix_layout scratch = { 0 }, *remote = NULL;
            int error = 0;
            zc->stats.pipes_taken_over++;
            mpix_zcopy_comm_enter(zc);
            rc = mpix_zcopy_peer_layout(zc, source, header->pid, &header->data, &scratch, &remote, call);
            if (rc == MPI_SUCCESS) {
                error = mpix_zcopy_pull(zc, header->pid, header->data.base, remote, buf, local.layout, from,
                                        header->bytes - from);
                mpix_zcopy_peer_layout_release(&scratch, &header->data);
            }
            mpix_zcopy_comm_leave(zc);
            if (rc == MPI_SUCCESS && error)
                rc = read_failed(call, header->bytes - from, source, header->pid, error);
        }
        if (rc == MPI_SUCCESS)
            outcome = MPIX_ZCOPY_DONE;
        mpix_layout_view_release(&local);
    } else if (!header->piped && header->bytes <= capacity &&
               (rc = mpix_layout_view_get(zc, datatype, count, &local)) == MPI_SUCCESS) {
        mpix_layout scratch = { 0 };
        mpix_layout *remote = NULL;
        MPI_Count bytes = header->bytes, split = bytes;
        int32_t before_help = MPIX_ZCOPY_PENDING;
        mpix_zcopy_comm_enter(zc);
        int error = 0, known = mpix_zcopy_peer_layout_find(zc, source, &header->data, &scratch, &remote);
        mpix_zcopy_collapse(zc, buf, local.layout);   /* before the sender pins its pages */
        /* Split by the sender's layout, or by this one's while the sender's is not read. */
        if (header->help_offered &&
            (split = mpix_zcopy_split(zc, known ? remote : local.layout, local.layout, bytes)) < bytes)
            before_help = ask_for_help(zc, slot, buf, count, &local, split, comm);
        if (known)
            error = mpix_zcopy_pull(zc, header->pid, header->data.base, remote, buf, local.layout, 0, split);
        else {
            mpix_zcopy_copy_along head = { buf, local.layout, split, &error };
            rc = mpix_zcopy_peer_layout_read(zc, source, header->pid, &header->data, &scratch, &remote, &head, call);
        }
        if (split < bytes) {
            /* The sender writes into buf until it answers, whatever happened here. */
            int32_t answer = wait_for_sender(slot, before_help, header->pid);
            zc->stats.helps_taken_back += answer == MPIX_ZCOPY_PENDING;
            if (answer == MPIX_ZCOPY_DONE)
                zc->stats.pulled_shared++;
            else if (answer == SENDER_EXITED && rc == MPI_SUCCESS)
                rc = mpix_zcopy_peer_exit_error(call, source, header->pid);
            else if (rc == MPI_SUCCESS && !error)
                error = mpix_zcopy_pull(zc, header->pid, header->data.base, remote, buf, local.layout, split,
                                        bytes - split);
        }
        if (rc == MPI_SUCCESS && error)
            rc = read_failed(call, header->bytes, source, header->pid, error);
        if (rc == MPI_SUCCESS)
            outcome = MPIX_ZCOPY_DONE;
        mpix_zcopy_peer_layout_release(&scratch, &header->data);
        mpix_zcopy_comm_leave(zc);
        mpix_layout_view_release(&local);
    }
    end_message(slot, header, outcome);
    return rc;
}

/* The state of @slot once its sender, process @sender, is through copying the data it
 * stages; SENDER_EXITED where it exited first (killed in the middle: the slot never
 * changes again). */
static int32_t staged_state(mpix_zcopy_slot *slot, pid_t sender)
{
    mpix_zcopy_peer_watch watch = { 0 };
    int32_t state;
    for (unsigned long poll = 0; (state = atomic_load_explicit(&slot->state, memory_order_acquire)) == MPIX_ZCOPY_STAGING;
         poll++) {
        if (poll % 64 == 63 && mpix_zcopy_peer_exit_check(&watch, sender))
            return SENDER_EXITED;
        mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    return state;
}

/* An interposed message: claimed before it is copied, unless its sender staged it, and
 * then read from the sender's copy. */
static int receive_interposed(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, MPI_Count capacity,
                              int source, const mpix_zcopy_header *header, MPI_Comm comm, mpix_zcopy_slot *slot,
                              const char *call)
{
    int32_t state = MPIX_ZCOPY_PENDING;
    if (header->bytes > capacity) {
        /* Unclaimed, the sender may be staging: the slot ends once it is staged. */
        if (!atomic_compare_exchange_strong_explicit(&slot->state, &state, MPIX_ZCOPY_CLAIMED, memory_order_acq_rel,
                                                     memory_order_acquire) &&
            staged_state(slot, header->pid) == SENDER_EXITED)
            return mpix_zcopy_peer_exit_error(call, source, header->pid);
        end_message(slot, header, MPIX_ZCOPY_ABANDONED);
        return MPI_ERR_TRUNCATE;
    }
    if (atomic_compare_exchange_strong_explicit(&slot->state, &state, MPIX_ZCOPY_CLAIMED, memory_order_acq_rel,
                                                memory_order_acquire)) {
        mpix_zcopy_header claimed = *header;
        claimed.nonce = 0;   /* claimed: the ordinary hand-shake from here */
        return receive_rts(zc, buf, count, datatype, capacity, source, &claimed, comm, call);
    }
    if ((state = staged_state(slot, header->pid)) == SENDER_EXITED)
        return mpix_zcopy_peer_exit_error(call, source, header->pid);
    if (state != MPIX_ZCOPY_STAGED)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: the zero-copy message from rank %d was ended (state %d)", call,
                          source, (int)state);
    mpix_layout_view local;
    int rc = mpix_layout_view_get(zc, datatype, count, &local);
    if (rc != MPI_SUCCESS) {
        end_message(slot, header, MPIX_ZCOPY_ABANDONED);
        return rc;
    }
    mpix_block run = { 0, header->bytes };
    mpix_layout staged = { .blocks = &run, .nblocks = 1, .capacity = 1, .bytes = header->bytes, .lowest = 0,
                           .highest = header->bytes, .costed_gap_limit = -1 };
    int error = mpix_zcopy_pull(zc, header->pid, slot->staged_address, &staged, buf, local.layout, 0, header->bytes);
    mpix_layout_view_release(&local);
    end_message(slot, header, error ? MPIX_ZCOPY_ABANDONED : MPIX_ZCOPY_DONE);
    return error ? read_failed(call, header->bytes, source, header->pid, error) : MPI_SUCCESS;
}

void mpix_zcopy_receive_end_inline(mpix_zcopy_comm *zc, const mpix_zcopy_header *header, int rc)
{
    if (header->slot >= 0) /* a timed trial send: it waits until the data is in place */
        end_message(peer_slot(zc, header), header, rc == MPI_SUCCESS ? MPIX_ZCOPY_DONE : MPIX_ZCOPY_ABANDONED);
}

int mpix_zcopy_receive_header(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, int source,
                              const mpix_zcopy_header *header, MPI_Comm comm, int may_ask_help, const char *call)
{
    MPI_Count type_size;
    int rc = PMPI_Type_size_x(datatype, &type_size);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_zcopy_header offered = *header;
    offered.help_offered = header->help_offered && may_ask_help;
    return receive_rts(zc, buf, count, datatype, type_size * count, source, &offered, comm, call);
}

int mpix_zcopy_header_is_live(mpix_zcopy_comm *zc, int source, const mpix_zcopy_header *header)
{
    mpix_zcopy_process *process = zc->process;
    if (header->magic != MPIX_ZCOPY_MAGIC || header->kind != MPIX_ZCOPY_RTS || !header->nonce ||
        header->node_key != process->node_key || !mpix_zcopy_peer_attachable(zc, source))
        return 0;
    mpix_zcopy_slot *slot = peer_slot(zc, header);
    return slot && atomic_load_explicit(&slot->nonce, memory_order_acquire) == header->nonce;
}

/* Whether the message MPI just received into @buf (@count of @datatype, @type_size
 * bytes each; its status @matched) is a lone header: its length, and its first type-map
 * bytes, read into *@header, naming the sender and tag MPI matched
 * (mpix_zcopy_header_sent). A buffer of small elements is packed as far as the elements
 * that hold them; one of larger elements is read through its layout, which a zero-copy
 * message reads anyway: packing a whole 6 MiB element to read 1 KiB would cost more
 * than the message. */
static int lone_header_in(mpix_zcopy_comm *zc, const void *buf, int count, MPI_Datatype datatype, MPI_Count type_size,
                          const MPI_Status *matched, MPI_Comm comm, mpix_zcopy_header *header, int *is_header)
{
    int length, rc = PMPI_Get_count(matched, MPI_BYTE, &length);
    *is_header = 0;
    if (rc != MPI_SUCCESS || length != MPIX_ZCOPY_LONE_HEADER_BYTES)
        return rc;
    if (type_size <= MPIX_ZCOPY_RAW_MAX)
        rc = mpix_zcopy_pack_head(header, sizeof *header, buf, count, datatype, comm);
    else {
        mpix_layout_view view;
        if ((rc = mpix_layout_view_get(zc, datatype, count, &view)) != MPI_SUCCESS)
            return rc;
        mpix_layout_cursor cursor;
        mpix_layout_cursor_at(&cursor, view.layout, 0);
        mpix_layout_gather(&cursor, buf, (char *)header, sizeof *header);
        mpix_layout_view_release(&view);
    }
    *is_header = rc == MPI_SUCCESS && mpix_zcopy_header_sent(header, matched);
    return rc;
}

/* MPI's receive into @buf from @source with @tag, its status in *@received; a question
 * that comes first (MPIX_ZCOPY_LEARN) is answered and the receive made again.
 * *@is_header: what came at last is a lone header, in *@header, not data. */
static int receive_past_questions(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype,
                                  MPI_Count type_size, int source, int tag, MPI_Comm comm, MPI_Status *received,
                                  mpix_zcopy_header *header, int *is_header)
{
    int rc;
    *is_header = 0;
    do {
        rc = PMPI_Recv(buf, count, datatype, source, tag, comm, received);
        if (rc == MPI_SUCCESS)
            rc = lone_header_in(zc, buf, count, datatype, type_size, received, comm, header, is_header);
        if (rc == MPI_SUCCESS && *is_header && header->kind == MPIX_ZCOPY_LEARN)
            mpix_zcopy_receive_learn(zc, received->MPI_SOURCE, header);
    } while (rc == MPI_SUCCESS && *is_header && header->kind == MPIX_ZCOPY_LEARN);
    return rc;
}

/* The data a lone header announced, the sender's next message to this process on the
 * tag, received into @buf as MPI_Recv receives it, its length in receiving->data_bytes.
 * Below MPI_THREAD_MULTIPLE nothing comes between; above, another thread of the sender
 * may send on the same tag in between (MPI orders no two threads' sends), and that
 * message is the one received: data, or a header acted on in place of the one before,
 * whose own data a later receive then takes (*@another: act on receiving->header again). */
static int receive_data(mpix_zcopy_comm *zc, mpix_zcopy_receiving *receiving, void *buf, int count,
                        MPI_Datatype datatype, MPI_Comm comm, int *another)
{
    MPI_Status data;
    mpix_zcopy_header next;
    *another = 0;
    int is_header, rc = receive_past_questions(zc, buf, count, datatype, receiving->type_size,
                                               receiving->matched.MPI_SOURCE, receiving->matched.MPI_TAG, comm,
                                               &data, &next, &is_header);
    if (rc == MPI_SUCCESS && is_header) {
        mpix_zcopy_receive_end_inline(zc, &receiving->header, MPI_SUCCESS);
        receiving->header = next;
        receiving->fits = next.bytes <= receiving->type_size * count;
        receiving->data_bytes = -1;
        *another = 1;
        return MPI_SUCCESS;
    }
    int elements_rc = PMPI_Get_elements_x(&data, MPI_BYTE, &receiving->data_bytes);
    return rc == MPI_SUCCESS ? elements_rc : rc;
}

/* What a receive does once its message is in (header filled, data where the message
 * put it; @rc the receive's code, from MPI's calls): check it is zcopy's, act on its kind,
 * set @status, and say in receiving->raised whether MPI raised the error returned. */
static int receive_finish(mpix_zcopy_comm *zc, mpix_zcopy_receiving *receiving, int rc, void *buf, int count,
                          MPI_Datatype datatype, MPI_Comm comm, MPI_Status *status)
{
    receiving->raised = rc != MPI_SUCCESS;
    const MPI_Status *matched = &receiving->matched;
    mpix_zcopy_header *header = &receiving->header;
    MPI_Count type_size = receiving->type_size, capacity = type_size * count;
    int length = receiving->length;
    if (rc == MPI_SUCCESS && (length != MPIX_ZCOPY_LONE_HEADER_BYTES || header->magic != MPIX_ZCOPY_MAGIC))
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT,
                        "%s: the message from rank %d with tag %d (%d bytes) was not sent by MPIX_Send_zcopy",
                        receiving->call, matched->MPI_SOURCE, matched->MPI_TAG, length);
    for (int again = rc == MPI_SUCCESS; again;) {
        again = 0;
        mpix_zcopy_receive_learn(zc, matched->MPI_SOURCE, header);
        switch (header->kind) {
        case MPIX_ZCOPY_EAGER:
        case MPIX_ZCOPY_MPI:
            /* Unpacked here only in whole elements; a part of one, or more than fits, the
             * datatype receives: MPI judges its length, and a packed message matches the
             * datatype. */
            if (header->data_follows == MPIX_ZCOPY_FOLLOWS_TO_UNPACK && header->bytes <= capacity && type_size > 0 &&
                header->bytes % type_size == 0 && !receiving->data_posted)
                rc = mpix_zcopy_receive_unpacked(buf, (int)(header->bytes / type_size), datatype, matched->MPI_SOURCE,
                                                 matched->MPI_TAG, comm, &zc->unpacking);
            else if (header->data_follows && !receiving->data_posted) {
                if ((rc = receive_data(zc, receiving, buf, count, datatype, comm, &again)) == MPI_SUCCESS && again)
                    continue;
            } else if (!receiving->fits)
                rc = MPI_ERR_TRUNCATE;
            receiving->raised = rc != MPI_SUCCESS && header->data_follows;
            mpix_zcopy_receive_end_inline(zc, header, rc);
            break;
        case MPIX_ZCOPY_RTS:
            rc = receive_rts(zc, buf, count, datatype, capacity, matched->MPI_SOURCE, header, comm, receiving->call);
            break;
        default:
            rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: message kind %u from rank %d is unknown", receiving->call,
                            header->kind, matched->MPI_SOURCE);
        }
    }
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS && PMPI_Error_class(rc, &error_class) != MPI_SUCCESS)
        return rc;
    if (status != MPI_STATUS_IGNORE && (rc == MPI_SUCCESS || error_class == MPI_ERR_TRUNCATE)) {
        status->MPI_SOURCE = matched->MPI_SOURCE;
        status->MPI_TAG = matched->MPI_TAG;
        status->MPI_ERROR = rc;
        int status_rc = PMPI_Status_set_cancelled(status, 0);
        MPI_Count bytes = receiving->data_bytes >= 0 ? receiving->data_bytes
                          : header->bytes < capacity ? header->bytes
                                                     : capacity;
        if (status_rc == MPI_SUCCESS)
            status_rc = PMPI_Status_set_elements_x(status, MPI_BYTE, bytes);
        if (rc == MPI_SUCCESS)
            rc = status_rc;
    }
    return rc;
}

/* Data sent without header, @length bytes at @data (its envelope in @matched), unpacked
 * into @buf as far as it fits, as MPI_Recv fills a buffer before it reports truncation. */
static int unpack_raw(const char *data, int length, const MPI_Status *matched, void *buf, int count,
                      MPI_Datatype datatype, MPI_Count type_size, MPI_Comm comm, MPI_Status *status, int *raised)
{
    MPI_Count capacity = type_size * count, bytes = length < capacity ? length : capacity;
    int rc = mpix_zcopy_unpack_received(data, (int)bytes, buf, count, datatype, comm);
    *raised = rc != MPI_SUCCESS;   /* MPI_Pack/MPI_Unpack raised it on @comm (an uncommitted datatype) */
    if (rc == MPI_SUCCESS && bytes < length)
        rc = MPI_ERR_TRUNCATE;
    if (status != MPI_STATUS_IGNORE) {
        *status = *matched;
        status->MPI_ERROR = rc;
        int status_rc = PMPI_Status_set_elements_x(status, MPI_BYTE, bytes);
        if (rc == MPI_SUCCESS)
            rc = status_rc;
    }
    return rc;
}

int mpix_zcopy_receive_stashed(mpix_zcopy_comm *zc, const MPI_Status *matched, const char *packed, int length,
                               int raw, void *buf, int count, MPI_Datatype datatype, MPI_Comm comm,
                               MPI_Status *status, int *raised, const char *call)
{
    mpix_zcopy_receiving receiving = { .matched = *matched, .pending = MPI_REQUEST_NULL, .length = length,
                                       .data_bytes = -1, .call = call };
    *raised = 0;
    int rc = PMPI_Type_size_x(datatype, &receiving.type_size);
    if (rc != MPI_SUCCESS)
        return rc;
    if (raw)
        return unpack_raw(packed, length, matched, buf, count, datatype, receiving.type_size, comm, status, raised);
    (void)mpix_zcopy_header_read(&receiving.header, packed, length, zc->settings.packs_natively, comm);
    receiving.fits = receiving.header.bytes <= receiving.type_size * count;
    rc = receive_finish(zc, &receiving, rc, buf, count, datatype, comm, status);
    *raised = receiving.raised;
    return rc;
}

/* Acts on the lone header @next that came for @receiving (its envelope in ->matched):
 * where its data follows as a message of its own, ->pending is that message's receive
 * (mpix_zcopy_receive_landed completes it); else the receive is finished. */
static int act_on_header(mpix_zcopy_comm *zc, mpix_zcopy_receiving *receiving, const mpix_zcopy_header *next,
                         void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, MPI_Status *status)
{
    int rc;
    if (next->kind == MPIX_ZCOPY_LEARN) { /* answered; the receive goes on as it was */
        const MPI_Status *from = &receiving->matched;
        mpix_zcopy_receive_learn(zc, from->MPI_SOURCE, next);
        if (receiving->data_posted)
            return PMPI_Irecv(buf, count, datatype, from->MPI_SOURCE, from->MPI_TAG, comm, &receiving->pending);
        if (receiving->in_place)
            return PMPI_Irecv(buf, count, datatype, receiving->source, receiving->tag, comm, &receiving->pending);
        receiving->unmatched = 1;
        return MPI_SUCCESS;
    }
    receiving->header = *next;
    receiving->length = MPIX_ZCOPY_LONE_HEADER_BYTES;
    receiving->fits = next->bytes <= receiving->type_size * count;
    receiving->data_bytes = -1;
    receiving->data_posted = 0;
    if ((next->kind == MPIX_ZCOPY_EAGER || next->kind == MPIX_ZCOPY_MPI) && next->data_follows) {
        /* The data, the sender's next message on this tag, by a request of its own: a
         * receive inside MPI's progress must not wait in MPI (Open MPI's waits under
         * MPI_THREAD_MULTIPLE sleep there until another thread progresses, and none
         * does). */
        const MPI_Status *from = &receiving->matched;
        mpix_zcopy_receive_learn(zc, from->MPI_SOURCE, next);
        receiving->data_posted = 1;
        if (next->data_follows == MPIX_ZCOPY_FOLLOWS_DATA)
            return PMPI_Irecv(buf, count, datatype, from->MPI_SOURCE, from->MPI_TAG, comm, &receiving->pending);
        int size;
        if ((rc = PMPI_Pack_size(count, datatype, comm, &size)) != MPI_SUCCESS)
            return rc;
        if (!(receiving->packed = mpix_scratch_take(&zc->unpacking, (size_t)size)))
            return MPI_ERR_NO_MEM;
        return PMPI_Irecv(receiving->packed, size, MPI_PACKED, from->MPI_SOURCE, from->MPI_TAG, comm,
                          &receiving->pending);
    }
    return receive_finish(zc, receiving, MPI_SUCCESS, buf, count, datatype, comm, status);
}

int mpix_zcopy_receive_landed(mpix_zcopy_comm *zc, mpix_zcopy_receiving *receiving, int received,
                              const MPI_Status *completed, void *buf, int count, MPI_Datatype datatype,
                              MPI_Comm comm, MPI_Status *status)
{
    mpix_zcopy_header next;
    int is_header = 0, rc = received;
    receiving->pending = MPI_REQUEST_NULL;
    if (receiving->packed) { /* data the sender packed, received as it was sent */
        int length = 0;
        if (rc == MPI_SUCCESS && (rc = PMPI_Get_count(completed, MPI_PACKED, &length)) == MPI_SUCCESS)
            rc = mpix_zcopy_unpack_received(receiving->packed, length, buf, count, datatype, comm);
        receiving->data_bytes = length;
        mpix_scratch_give(&zc->unpacking, receiving->packed);
        receiving->packed = NULL;
        return receive_finish(zc, receiving, rc, buf, count, datatype, comm, status);
    }
    if (rc == MPI_SUCCESS)
        rc = lone_header_in(zc, buf, count, datatype, receiving->type_size, completed, comm, &next, &is_header);
    if (!is_header) {
        if (!receiving->data_posted) { /* data without header: MPI's receive and status alone */
            if (status != MPI_STATUS_IGNORE)
                *status = *completed;
            receiving->raised = rc != MPI_SUCCESS;
            return rc;
        }
        int elements_rc = PMPI_Get_elements_x(completed, MPI_BYTE, &receiving->data_bytes);
        return receive_finish(zc, receiving, rc == MPI_SUCCESS ? elements_rc : rc, buf, count, datatype, comm, status);
    }
    if (!receiving->data_posted)
        receiving->matched = *completed;
    else if (next.kind != MPIX_ZCOPY_LEARN) /* another thread's message came between (receive_data) */
        mpix_zcopy_receive_end_inline(zc, &receiving->header, MPI_SUCCESS);
    return act_on_header(zc, receiving, &next, buf, count, datatype, comm, status);
}

int mpix_zcopy_receive_matched(mpix_zcopy_comm *zc, mpix_zcopy_receiving *receiving, MPI_Message *message,
                               const MPI_Status *matched, void *buf, int count, MPI_Datatype datatype, MPI_Comm comm,
                               int start_only, MPI_Status *status)
{
    int length, rc = PMPI_Get_count(matched, MPI_BYTE, &length);
    receiving->matched = *matched;
    receiving->raised = 1;   /* until receive_finish, an error returned is MPI's */
    if (rc != MPI_SUCCESS)
        return rc;
    if (length != MPIX_ZCOPY_LONE_HEADER_BYTES) { /* no header: MPI receives it as MPI_Recv would */
        if (start_only)
            return PMPI_Imrecv(buf, count, datatype, message, &receiving->pending);
        MPI_Status received;
        rc = PMPI_Mrecv(buf, count, datatype, message, &received);
        if (status != MPI_STATUS_IGNORE)
            *status = received;
        /* MPICH 4.0 runs no handler of the message's communicator for MPI_Mrecv's
         * errors (a truncation ran it 0 times): raised by the caller. */
        receiving->raised = 0;
        return rc;
    }
    /* A lone header's length, in: received whole. */
    if ((rc = PMPI_Mrecv(receiving->header_alone, MPIX_ZCOPY_LONE_HEADER_BYTES, MPI_BYTE, message,
                         MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return rc;
    if (!mpix_zcopy_header_sent(&receiving->header, matched)) /* data of that length */
        return unpack_raw((const char *)receiving->header_alone, MPIX_ZCOPY_LONE_HEADER_BYTES, matched, buf, count,
                          datatype, receiving->type_size, comm, status, &receiving->raised);
    mpix_zcopy_header next = receiving->header;
    if (!start_only && next.kind == MPIX_ZCOPY_LEARN) { /* answered; then the receive's own message */
        MPI_Status again;
        mpix_zcopy_receive_learn(zc, matched->MPI_SOURCE, &next);
        if ((rc = PMPI_Mprobe(receiving->source, receiving->tag, comm, message, &again)) != MPI_SUCCESS)
            return rc;
        return mpix_zcopy_receive_matched(zc, receiving, message, &again, buf, count, datatype, comm, 0, status);
    }
    if (!start_only) {
        receiving->length = MPIX_ZCOPY_LONE_HEADER_BYTES;
        receiving->fits = next.bytes <= receiving->type_size * count;
        return receive_finish(zc, receiving, MPI_SUCCESS, buf, count, datatype, comm, status);
    }
    return act_on_header(zc, receiving, &next, buf, count, datatype, comm, status);
}

int mpix_zcopy_receives_part_elements(int *accepts)
{
#if defined(OPEN_MPI)
    *accepts = 1;
#else
    *accepts = 0;
#endif
    return MPI_SUCCESS;
}

/* A blocking receive: MPI receives into @buf at once, with no probe before (which would
 * leave the message to MPI's unexpected queue, a datatype's pipeline to a late receive
 * and a second copy). A message of a lone header's length may be a header: its first
 * bytes, now in @buf, tell (lone_header_in), and it ends as any header does, the data
 * it announces overwriting it; a header of a message too long for @buf ends with
 * MPI_ERR_TRUNCATE, its sender released; its error is raised here, on @comm, where MPI
 * raised its own (*@raised). A buffer shorter than a lone header takes only data: MPI's
 * receive and status alone. Where the MPI refuses a header into the buffer
 * (settings.receives_in_place), a buffer for more than MPIX_ZCOPY_RAW_MAX bytes has
 * its message matched first; smaller ones take a header only for a message too long
 * for them, whose MPI_ERR_TRUNCATE MPI then reports. */
static int receive_direct(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, MPI_Count type_size,
                          int source, int tag, MPI_Comm comm, MPI_Status *status, int *raised)
{
    *raised = 1;
    if (mpix_zcopy_takes_only_raw(type_size * count))
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    int is_header;
    mpix_zcopy_receiving receiving = { .pending = MPI_REQUEST_NULL, .type_size = type_size, .data_bytes = -1,
                                       .source = source, .tag = tag, .call = "MPIX_Recv_zcopy" };
    if (!zc->settings.receives_in_place && type_size * count > MPIX_ZCOPY_RAW_MAX) {
        MPI_Message message;
        MPI_Status matched;
        /* First the checks MPI_Recv makes of the datatype (raised by MPI once), which
         * MPI_Mprobe does not make: a rejected call leaves the message to a later one. */
        int rc = PMPI_Recv(buf, count, datatype, MPI_PROC_NULL, tag, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Mprobe(source, tag, comm, &message, &matched);
        if (rc != MPI_SUCCESS) /* raised by MPI */
            return rc;
        rc = mpix_zcopy_receive_matched(zc, &receiving, &message, &matched, buf, count, datatype, comm, 0, status);
        *raised = receiving.raised;
        return rc;
    }
    int rc = receive_past_questions(zc, buf, count, datatype, type_size, source, tag, comm, &receiving.matched,
                                    &receiving.header, &is_header);
    if (rc == MPI_SUCCESS && is_header) {
        receiving.length = MPIX_ZCOPY_LONE_HEADER_BYTES;
        receiving.fits = receiving.header.bytes <= type_size * count;
        rc = receive_finish(zc, &receiving, MPI_SUCCESS, buf, count, datatype, comm, status);
        *raised = receiving.raised;
        return rc;
    }
    if (status != MPI_STATUS_IGNORE)
        *status = receiving.matched;
    return rc;
}

/* *@raised: whether MPI raised the error returned (receive_finish). */
static int receive_checked(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                           MPI_Status *status, int *raised)
{
    *raised = 0;
    mpix_zcopy_comm *zc;
    int rc = mpix_zcopy_comm_get(comm, &zc);
    if (rc != MPI_SUCCESS)
        return rc;
    /* count and source were checked by MPIX_Recv_zcopy (mpix_check_transfer). A receive
     * of MPIX_Irecv_zcopy posted before this one takes its message first; a message a
     * probe received before is older than any MPI still holds. */
    mpix_zcopy_wait_earlier_receives(zc, source, tag);
    if (mpix_zcopy_probed_waiting(zc)) {
        int taken;
        rc = mpix_zcopy_probed_receive(zc, source, tag, buf, count, datatype, comm, status, &taken, raised,
                                       "MPIX_Recv_zcopy");
        if (taken)
            return rc;
    }
    MPI_Count type_size;
    if ((rc = PMPI_Type_size_x(datatype, &type_size)) != MPI_SUCCESS)
        return rc;
    return receive_direct(zc, buf, count, datatype, type_size, source, tag, comm, status, raised);
}

MPIX_API int MPIX_Recv_zcopy(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                             MPI_Status *status)
{
    mpix_zcopy_comm *zc;
    MPI_Count type_size;
    int raised;
    /* unless a receive of this process posted before may take the same message */
    if (mpix_zcopy_direct(comm, count, datatype, source, MPIX_RECEIVING, &zc, &type_size) &&
        !mpix_zcopy_requests_overlap(zc, source, tag)) {
        int rc = MPI_SUCCESS;
        if (mpix_zcopy_probed_waiting(zc)) {
            /* A message a probe received: first the check MPI makes of this call (a
             * receive from MPI_PROC_NULL: the datatype committed, the tag; raised by MPI
             * once), so that a call MPI rejects leaves the message kept. */
            if (source != MPI_PROC_NULL &&
                (rc = PMPI_Recv(buf, count, datatype, MPI_PROC_NULL, tag, comm, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return rc;
            int taken;
            rc = mpix_zcopy_probed_receive(zc, source, tag, buf, count, datatype, comm, status, &taken, &raised,
                                           "MPIX_Recv_zcopy");
            if (taken)
                return raised ? rc : mpix_raise_comm(comm, rc);
        }
        rc = receive_direct(zc, buf, count, datatype, type_size, source, tag, comm, status, &raised);
        return raised ? rc : mpix_raise_comm(comm, rc);
    }
    int check_rc = mpix_check_transfer("MPIX_Recv_zcopy", buf, count, datatype, source, tag, comm, MPIX_RECEIVING);
    if (check_rc != MPI_SUCCESS)
        return check_rc;
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE)
            return mpix_raise_comm(comm, mpix_status_nothing(status, MPI_PROC_NULL, MPI_ANY_TAG));
        return MPI_SUCCESS;
    }
    int rc = receive_checked(buf, count, datatype, source, tag, comm, status, &raised);
    return raised ? rc : mpix_raise_comm(comm, rc);
}
