/* MPIX_Recv_zcopy: match the sender's one message with MPI's own matching (so wildcards
 * and ordering are MPI's), then take the data the way the header says: scatter the
 * packed bytes, receive the MPI message that follows, or read the sender's memory. */
#include "zcopy.h"
#include "common/api.h"
#include "common/error.h"
#include "common/relax.h"
#include "common/verbose.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { STACK_WIRE = 4096 };

/* A sender that does not yet know whether this process can attach to it asks; on the
 * same node the answer is a write into its directory, which succeeds exactly when this
 * process may read it too. Its mailbox is mapped first: zero-copy messages end there. */
static void answer_learn_request(mpix_zcopy_comm *zc, int source, const mpix_zcopy_header *header)
{
    mpix_zcopy_process *process = zc->process;
    int world = zc->world_rank[source];
    if (!zc->enabled || !header->learn_address || header->node_key != process->node_key || world == MPI_UNDEFINED ||
        process->access[world] == MPIX_ZCOPY_ACCESS_REFUSED)
        return;
    mpix_zcopy_directory_entry mine = { process->pid, 1 };
    /* MPIX_ZCOPY_ATTACH=refuse answers as a kernel that forbids the attach would. */
    int error = process->attach == MPIX_ZCOPY_ATTACH_REFUSE                               ? EPERM
                : !mpix_zcopy_peer_mailbox(process, header->pid, header->mailbox_fd) ? EACCES
                : mpix_zcopy_write_remote(header->pid, header->learn_address, &mine, sizeof mine);
    int access = error ? MPIX_ZCOPY_ACCESS_REFUSED : MPIX_ZCOPY_ACCESS_OK;
    if (zc->verbose && process->access[world] != access)
        mpix_verbose_print("zcopy", "messages from rank %d (pid %d): %s", source, (int)header->pid,
                           error ? "plain MPI, the kernel refuses cross-memory attach" : "zero-copy from now on");
    process->access[world] = access;
}

/* Bytes in type-map order into this process's layout, up to @bytes. */
static void scatter(const char *from, MPI_Count bytes, char *buf, const mpix_layout *layout)
{
    for (MPI_Aint b = 0; b < layout->nblocks && bytes > 0; b++) {
        MPI_Aint length = layout->blocks[b].length < bytes ? layout->blocks[b].length : bytes;
        memcpy(buf + layout->blocks[b].offset, from, length);
        from += length;
        bytes -= length;
    }
}

/* The sender's answer to a help request, polled after this process's own part, which
 * the split sized to take as long as the sender's. */
static int32_t wait_for_sender(const mpix_zcopy_slot *slot)
{
    int32_t finished;
    for (unsigned long poll = 0; (finished = __atomic_load_n(&slot->finished, __ATOMIC_ACQUIRE)) == MPIX_ZCOPY_PENDING;
         poll++)
        mpix_backoff(poll);
    return finished;
}

/* Asks the sender to copy type-map bytes [split, ...) itself: the request first, then
 * the state that makes the sender read it. */
static void ask_for_help(mpix_zcopy_comm *zc, mpix_zcopy_slot *slot, void *buf, int count,
                         const mpix_layout_view *local, MPI_Count split, MPI_Comm comm)
{
    slot->receiver_pid = zc->process->pid;
    slot->split = split;
    mpix_zcopy_layout_ref_set(&slot->receiver, buf, count, local, comm);
    __atomic_store_n(&slot->state, MPIX_ZCOPY_HELP, __ATOMIC_RELEASE);
}

/* Ends the message for the sender, which waits for this whatever happened here. */
static void end_message(mpix_zcopy_slot *slot, const mpix_zcopy_header *header, int32_t outcome)
{
    if (slot)
        __atomic_store_n(&slot->state, outcome, __ATOMIC_RELEASE);
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

static int receive_rts(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, MPI_Count capacity,
                       int source, const mpix_zcopy_header *header, MPI_Comm comm)
{
    int32_t outcome = MPIX_ZCOPY_ABANDONED;
    int rc = MPI_ERR_TRUNCATE;
    mpix_layout_view local;
    mpix_zcopy_slot *slot = peer_slot(zc, header);
    if (!slot)
        rc = mpix_error(MPIX_ERRKIND_UNSUPPORTED, "MPIX_Recv_zcopy: the mailbox of rank %d (pid %d, fd %d) cannot be mapped",
                        source, (int)header->pid, (int)header->mailbox_fd);
    else if (header->bytes <= capacity && (rc = mpix_layout_view_get(datatype, count, &local)) == MPI_SUCCESS) {
        mpix_layout scratch = { 0 };
        mpix_layout *remote = NULL;
        MPI_Count bytes = header->bytes, split = bytes;
        int error = 0, known = mpix_zcopy_peer_layout_find(zc, source, &header->data, &scratch, &remote);
        mpix_zcopy_collapse(zc, buf, local.layout);   /* before the sender pins its pages */
        /* Split by the sender's layout, or by this one's while the sender's is not read. */
        if (header->help_offered &&
            (split = mpix_zcopy_split(zc, known ? remote : local.layout, local.layout, bytes)) < bytes)
            ask_for_help(zc, slot, buf, count, &local, split, comm);
        if (known)
            error = mpix_zcopy_pull(zc, header->pid, header->data.base, remote, buf, local.layout, 0, split);
        else {
            mpix_zcopy_copy_along head = { buf, local.layout, split, &error };
            rc = mpix_zcopy_peer_layout_read(zc, source, header->pid, &header->data, &scratch, &remote, &head);
        }
        if (split < bytes) {
            /* The sender writes into buf until it answers, whatever happened here. */
            if (wait_for_sender(slot) == MPIX_ZCOPY_DONE)
                zc->stats.pulled_shared++;
            else if (rc == MPI_SUCCESS && !error)
                error = mpix_zcopy_pull(zc, header->pid, header->data.base, remote, buf, local.layout, split,
                                        bytes - split);
        }
        if (rc == MPI_SUCCESS && error)
            rc = mpix_error(MPIX_ERRKIND_UNSUPPORTED, "MPIX_Recv_zcopy: reading %lld bytes from rank %d failed: %s",
                            (long long)header->bytes, source, strerror(error));
        if (rc == MPI_SUCCESS)
            outcome = MPIX_ZCOPY_DONE;
        mpix_zcopy_peer_layout_release(&scratch, &header->data);
        mpix_layout_view_release(&local);
    }
    end_message(slot, header, outcome);
    return rc;
}

static int receive_checked(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                           MPI_Status *status)
{
    mpix_zcopy_comm *zc;
    MPI_Message message;
    MPI_Status matched;
    MPI_Count type_size, capacity;
    mpix_zcopy_header header;
    char stack[STACK_WIRE], *wire = stack;
    int rc = mpix_zcopy_comm_get(comm, &zc), length;
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Recv_zcopy: count %d is negative", count);
    if ((rc = MPI_Type_size_x(datatype, &type_size)) != MPI_SUCCESS)
        return rc;
    capacity = type_size * count;
    if ((rc = MPI_Mprobe(source, tag, comm, &message, &matched)) != MPI_SUCCESS)
        return rc;
    MPI_Get_count(&matched, MPI_BYTE, &length);
    if (length > STACK_WIRE && !(wire = malloc(length)))
        return MPI_ERR_NO_MEM;
    rc = MPI_Mrecv(wire, length, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && (length < (int)sizeof header || (memcpy(&header, wire, sizeof header), 0) ||
                              header.magic != MPIX_ZCOPY_MAGIC))
        rc = mpix_error(MPIX_ERRKIND_ARGUMENT,
                        "MPIX_Recv_zcopy: the message from rank %d with tag %d (%d bytes) was not sent by "
                        "MPIX_Send_zcopy",
                        matched.MPI_SOURCE, matched.MPI_TAG, length);
    if (rc == MPI_SUCCESS) {
        answer_learn_request(zc, matched.MPI_SOURCE, &header);
        switch (header.kind) {
        case MPIX_ZCOPY_EAGER: {
            mpix_layout_view local;
            if (header.bytes > capacity)
                rc = MPI_ERR_TRUNCATE;
            else if ((rc = mpix_layout_view_get(datatype, count, &local)) == MPI_SUCCESS) {
                scatter(wire + sizeof header, header.bytes, buf, local.layout);
                mpix_layout_view_release(&local);
            }
            break;
        }
        case MPIX_ZCOPY_MPI:
            rc = MPI_Recv(buf, count, datatype, matched.MPI_SOURCE, matched.MPI_TAG, comm, MPI_STATUS_IGNORE);
            if (header.slot >= 0) /* a timed trial send: it waits until the data is in place */
                end_message(peer_slot(zc, &header), &header, rc == MPI_SUCCESS ? MPIX_ZCOPY_DONE : MPIX_ZCOPY_ABANDONED);
            break;
        case MPIX_ZCOPY_RTS:
            rc = receive_rts(zc, buf, count, datatype, capacity, matched.MPI_SOURCE, &header, comm);
            break;
        default:
            rc = mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Recv_zcopy: message kind %u from rank %d is unknown",
                            header.kind, matched.MPI_SOURCE);
        }
    }
    if (wire != stack)
        free(wire);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    if (status != MPI_STATUS_IGNORE && (rc == MPI_SUCCESS || error_class == MPI_ERR_TRUNCATE)) {
        status->MPI_SOURCE = matched.MPI_SOURCE;
        status->MPI_TAG = matched.MPI_TAG;
        status->MPI_ERROR = rc;
        MPI_Status_set_cancelled(status, 0);
        MPI_Status_set_elements_x(status, MPI_BYTE, header.bytes < capacity ? header.bytes : capacity);
    }
    return rc;
}

MPIX_API int MPIX_Recv_zcopy(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                             MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_SOURCE = MPI_PROC_NULL;
            status->MPI_TAG = MPI_ANY_TAG;
            MPI_Status_set_cancelled(status, 0);
            MPI_Status_set_elements_x(status, MPI_BYTE, 0);
        }
        return MPI_SUCCESS;
    }
    return mpix_raise_comm(comm, receive_checked(buf, count, datatype, source, tag, comm, status));
}
