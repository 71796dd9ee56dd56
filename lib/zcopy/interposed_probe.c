/* SPDX-License-Identifier: BSD-3-Clause */
/* Probes under zcopy interposition (interposed.c). A probe that finds a message of a
 * header's length from a zero-copy peer cannot tell from the envelope what it is, and the
 * program sizes its receive by what the probe reports: so the message is received here
 * and kept (the stash), a live header as the message it announces, with its real length,
 * anything else as the packed bytes MPI delivered. The program's next receive that
 * matches takes it from the stash before MPI's queue (a stashed message is older than
 * any of the same sender still queued with its tag). A matched probe (MPI_Mprobe) hands
 * the program a message handle of MPI's own: the data goes to this process on a private
 * communicator (mprobe.c), and MPI_Mrecv on that handle reports the original envelope. */
#include "interposed.h"
#include "common/api.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static int matches(const mpix_interposed_stashed *stashed, int source, int tag, MPI_Comm comm)
{
    return stashed->comm == comm && (source == MPI_ANY_SOURCE || source == stashed->status.MPI_SOURCE) &&
           (tag == MPI_ANY_TAG || tag == stashed->status.MPI_TAG);
}

static mpix_interposed_stashed *stash_find(mpix_zcopy_interposed *state, int source, int tag, MPI_Comm comm)
{
    for (mpix_interposed_stashed *stashed = state->stash; stashed; stashed = stashed->next)
        if (matches(stashed, source, tag, comm))
            return stashed;
    return NULL;
}

mpix_interposed_stashed *mpix_interposed_stash_take(mpix_zcopy_interposed *state, int source, int tag, MPI_Comm comm)
{
    mpix_interposed_stashed **link = &state->stash, *previous = NULL;
    for (; *link; previous = *link, link = &(*link)->next)
        if (matches(*link, source, tag, comm)) {
            mpix_interposed_stashed *taken = *link;
            *link = taken->next;
            if (state->stash_tail == taken)
                state->stash_tail = previous;
            atomic_fetch_sub_explicit(&state->stashed, 1, memory_order_release);
            return taken;
        }
    return NULL;
}

int mpix_interposed_stash_deliver(mpix_interposed_stashed *stashed, void *buf, int count, MPI_Datatype datatype,
                                  MPI_Status *status, const char *call)
{
    MPI_Status delivered = stashed->status;
    MPI_Count type_size, bytes = 0;
    int rc = PMPI_Type_size_x(datatype, &type_size);
    if (rc == MPI_SUCCESS && stashed->is_header) {
        mpix_zcopy_comm *zc;
        if ((rc = mpix_zcopy_comm_get(stashed->comm, &zc)) == MPI_SUCCESS)
            rc = mpix_zcopy_receive_header(zc, buf, count, datatype, delivered.MPI_SOURCE, &stashed->header,
                                           stashed->comm, 1, call);
        bytes = stashed->header.bytes;
    } else if (rc == MPI_SUCCESS) {
        bytes = stashed->packed_bytes;
        rc = bytes > type_size * count ? MPI_ERR_TRUNCATE
                                       : mpix_zcopy_unpack_received(stashed->packed, stashed->packed_bytes, buf, count,
                                                                    datatype, stashed->comm);
    }
    if (rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE) {
        int set_rc = mpix_interposed_status_set(&delivered, bytes, count, datatype, rc);
        if (rc == MPI_SUCCESS)
            rc = set_rc;
    }
    if (status != MPI_STATUS_IGNORE)
        *status = delivered;
    free(stashed->packed);
    free(stashed);
    return rc;
}

/* Whether the message @found names may be a zero-copy header. */
static int may_be_header(const MPI_Status *found, MPI_Comm comm)
{
    int length;
    mpix_zcopy_comm *zc;
    if (PMPI_Get_count(found, MPI_BYTE, &length) != MPI_SUCCESS || length != (int)sizeof(mpix_zcopy_header) ||
        mpix_zcopy_comm_get(comm, &zc) != MPI_SUCCESS)
        return 0;
    return mpix_zcopy_peer_attachable(zc, found->MPI_SOURCE);
}

/* Receives the matched @message into a new stash entry (not yet on the stash). */
static int receive_to_stash(MPI_Message *message, const MPI_Status *found, MPI_Comm comm,
                            mpix_interposed_stashed **entry)
{
    int length, rc = PMPI_Get_count(found, MPI_PACKED, &length);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_interposed_stashed *stashed = calloc(1, sizeof *stashed);
    char *packed = malloc(length > 0 ? length : 1);
    if (!stashed || !packed) {
        free(stashed);
        free(packed);
        return MPI_ERR_NO_MEM;
    }
    *stashed = (mpix_interposed_stashed){ .comm = comm, .status = *found, .packed = packed, .packed_bytes = length };
    if ((rc = PMPI_Mrecv(packed, length, MPI_PACKED, message, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        free(packed);
        free(stashed);
        return rc;
    }
    mpix_zcopy_comm *zc;
    int position = 0;
    if (length == (int)sizeof stashed->header && mpix_zcopy_comm_get(comm, &zc) == MPI_SUCCESS &&
        PMPI_Unpack(packed, length, &position, &stashed->header, sizeof stashed->header, MPI_BYTE, comm) == MPI_SUCCESS &&
        mpix_zcopy_header_is_live(zc, found->MPI_SOURCE, &stashed->header)) {
        stashed->is_header = 1;
        free(stashed->packed);
        stashed->packed = NULL;
        stashed->packed_bytes = 0;
        rc = PMPI_Status_set_elements_x(&stashed->status, MPI_BYTE, stashed->header.bytes);
    }
    *entry = stashed;
    return rc;
}

static void stash_append(mpix_zcopy_interposed *state, mpix_interposed_stashed *stashed)
{
    stashed->next = NULL;
    if (state->stash_tail)
        state->stash_tail->next = stashed;
    else
        state->stash = stashed;
    state->stash_tail = stashed;
    atomic_fetch_add_explicit(&state->stashed, 1, memory_order_release);
}

/* MPI_Probe (@blocking) or MPI_Iprobe. */
static int probe(int source, int tag, MPI_Comm comm, int blocking, int *flag, MPI_Status *status)
{
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    if (!state)
        return blocking ? PMPI_Probe(source, tag, comm, status) : PMPI_Iprobe(source, tag, comm, flag, status);
    pthread_mutex_lock(&state->lock);
    mpix_interposed_stashed *stashed = stash_find(state, source, tag, comm);
    if (stashed && status != MPI_STATUS_IGNORE)
        *status = stashed->status;
    pthread_mutex_unlock(&state->lock);
    if (stashed) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    MPI_Status found;
    int rc = blocking ? PMPI_Probe(source, tag, comm, &found) : PMPI_Iprobe(source, tag, comm, flag, &found);
    if (rc != MPI_SUCCESS || !*flag)
        return rc;
    if (may_be_header(&found, comm)) {
        /* The oldest message of that sender with that tag: the one found. */
        MPI_Message message;
        if ((rc = PMPI_Mprobe(found.MPI_SOURCE, found.MPI_TAG, comm, &message, &found)) != MPI_SUCCESS ||
            (rc = receive_to_stash(&message, &found, comm, &stashed)) != MPI_SUCCESS)
            return mpix_raise_comm(comm, rc);
        found = stashed->status;
        pthread_mutex_lock(&state->lock);
        stash_append(state, stashed);
        pthread_mutex_unlock(&state->lock);
    }
    if (status != MPI_STATUS_IGNORE)
        *status = found;
    return MPI_SUCCESS;
}

MPIX_API int mpix_interpose_zcopy_probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 1;
    return probe(source, tag, comm, 1, &flag, status);
}

MPIX_API int mpix_interpose_zcopy_iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe(source, tag, comm, 0, flag, status);
}

/* Gives the program a handle of MPI's own for @stashed (consumed): its data, read, is
 * handed over to this process (mpix_zcopy_handover_give). */
static int hand_over(const char *call, mpix_interposed_stashed *stashed, MPI_Message *message, MPI_Status *status)
{
    MPI_Comm comm = stashed->comm;
    MPI_Count bytes = stashed->is_header ? stashed->header.bytes : stashed->packed_bytes;
    mpix_zcopy_process *process;
    int rc = mpix_zcopy_process_get(&process);
    char *data = rc == MPI_SUCCESS && bytes > 0 && bytes <= 0x7fffffff ? malloc(bytes) : NULL;
    if (rc == MPI_SUCCESS && bytes > 0 && !data)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(stashed->packed);
        free(stashed);
        return rc;
    }
    MPI_Status read;
    if ((rc = mpix_interposed_stash_deliver(stashed, data, (int)bytes, MPI_BYTE, &read, call)) != MPI_SUCCESS) {
        free(data);
        return rc;
    }
    if ((rc = mpix_zcopy_handover_give(process, data, bytes, &read, comm, message)) == MPI_SUCCESS &&
        status != MPI_STATUS_IGNORE)
        *status = read;
    return rc;
}

/* MPI_Mprobe (@blocking) or MPI_Improbe. */
static int matched_probe(int source, int tag, MPI_Comm comm, int blocking, int *flag, MPI_Message *message,
                         MPI_Status *status)
{
    mpix_zcopy_interposed *state = mpix_interposed_state(NULL);
    if (!state)
        return blocking ? PMPI_Mprobe(source, tag, comm, message, status)
                        : PMPI_Improbe(source, tag, comm, flag, message, status);
    pthread_mutex_lock(&state->lock);
    mpix_interposed_stashed *stashed = mpix_interposed_stash_take(state, source, tag, comm);
    pthread_mutex_unlock(&state->lock);
    int rc = MPI_SUCCESS;
    if (!stashed) {
        MPI_Status found;
        rc = blocking ? PMPI_Mprobe(source, tag, comm, message, &found)
                      : PMPI_Improbe(source, tag, comm, flag, message, &found);
        if (rc != MPI_SUCCESS || !*flag || !may_be_header(&found, comm)) {
            if (rc == MPI_SUCCESS && *flag && status != MPI_STATUS_IGNORE)
                *status = found;
            return rc;
        }
        if ((rc = receive_to_stash(message, &found, comm, &stashed)) != MPI_SUCCESS)
            return mpix_raise_comm(comm, rc);
    }
    *flag = 1;
    return mpix_raise_comm(comm, hand_over(blocking ? "MPI_Mprobe" : "MPI_Improbe", stashed, message, status));
}

MPIX_API int mpix_interpose_zcopy_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag = 1;
    return matched_probe(source, tag, comm, 1, &flag, message, status);
}

MPIX_API int mpix_interpose_zcopy_improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                                          MPI_Status *status)
{
    return matched_probe(source, tag, comm, 0, flag, message, status);
}

MPIX_API int mpix_interpose_zcopy_mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                                        MPI_Status *status)
{
    MPI_Status received;
    MPI_Comm comm;
    int rc;
    if (!mpix_zcopy_handover_receive(message, buf, count, datatype, &received, &comm, &rc))
        return PMPI_Mrecv(buf, count, datatype, message, status);
    if (status != MPI_STATUS_IGNORE)
        *status = received;
    return mpix_raise_comm(comm, rc);
}

/* The handed-over data is in this process already: received at once, behind a request
 * that completes at once with the original envelope. */
MPIX_API int mpix_interpose_zcopy_imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                                         MPI_Request *request)
{
    MPI_Status received;
    MPI_Comm comm;
    int rc;
    if (!mpix_zcopy_handover_receive(message, buf, count, datatype, &received, &comm, &rc))
        return PMPI_Imrecv(buf, count, datatype, message, request);
    return mpix_interposed_receive_done(buf, count, datatype, &received, rc, comm, request);
}
