/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Mprobe_zcopy, MPIX_Improbe_zcopy, MPIX_Mrecv_zcopy and MPIX_Imrecv_zcopy: matched
 * probes of zcopy messages. A message without header (with MPICH, data of up to 16 KiB)
 * is MPI's, and so is the handle the program gets. Any other is taken by the probe as
 * MPIX_Probe_zcopy keeps it (probe.c), but off the communicator's stash at once, so no
 * other receive or probe can match it; its data is read then (a zero-copy sender is
 * released at the probe), sent to this process on a private communicator and matched
 * there: the program holds a message handle of MPI's own, which MPI_Mrecv would also
 * accept. MPIX_Mrecv_zcopy receives it with the caller's datatype, so MPI judges the
 * count, the type and truncation, and reports the envelope the probe matched. The
 * program's own matched probes under libmpix-pmpi.so hand their messages over the same
 * way (interposed_probe.c). */
#include "zcopy.h"
#include "common/self_state.h"
#include "common/api.h"
#include "common/arguments.h"
#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>

/* A message handle given out by a matched probe, and what its receive reports. */
typedef struct handed {
    MPI_Message message;
    MPI_Comm comm;                /* the program's: errors of the receive are raised there */
    MPI_Status status;            /* the envelope the probe reported */
    MPI_Request handover;         /* the send on the private communicator */
    char *data;
    struct handed *next;
} handed;

struct mpix_zcopy_handover {
    pthread_mutex_t lock;         /* the list; held from a hand-over's send to its probe */
    MPI_Comm comm;                /* a duplicate of this process's own (mpix_self_comm) returning errors */
    handed *first;
};

static int handover_get(mpix_zcopy_process *process, struct mpix_zcopy_handover **out)
{
    struct mpix_zcopy_handover *handover = atomic_load_explicit(&process->handover, memory_order_acquire);
    if (handover) {
        *out = handover;
        return MPI_SUCCESS;
    }
    if (!(handover = calloc(1, sizeof *handover)))
        return MPI_ERR_NO_MEM;
    MPI_Comm self;
    int rc = mpix_self_comm(&self);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_dup(self, &handover->comm);
    if (rc == MPI_SUCCESS && (rc = PMPI_Comm_set_errhandler(handover->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        (void)PMPI_Comm_free(&handover->comm);
    if (rc != MPI_SUCCESS) {
        free(handover);
        return rc;
    }
    pthread_mutex_init(&handover->lock, NULL);
    struct mpix_zcopy_handover *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&process->handover, &expected, handover, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        (void)PMPI_Comm_free(&handover->comm);   /* another thread's came first */
        pthread_mutex_destroy(&handover->lock);
        free(handover);
        handover = expected;
    }
    *out = handover;
    return MPI_SUCCESS;
}

void mpix_zcopy_handover_destroy(mpix_zcopy_process *process)
{
    struct mpix_zcopy_handover *handover = atomic_load_explicit(&process->handover, memory_order_acquire);
    if (!handover)
        return;
    /* Handles never received: their data goes with them (MPI frees its messages itself). */
    for (handed *entry = handover->first, *next; entry; entry = next) {
        next = entry->next;
        free(entry->data);
        free(entry);
    }
    (void)PMPI_Comm_free(&handover->comm);
    pthread_mutex_destroy(&handover->lock);
    free(handover);
    process->handover = NULL;
}

int mpix_zcopy_handover_give(mpix_zcopy_process *process, char *data, MPI_Count bytes, const MPI_Status *envelope,
                             MPI_Comm comm, MPI_Message *message)
{
    struct mpix_zcopy_handover *handover = NULL;
    int rc = bytes > INT32_MAX ? mpix_error(MPIX_ERRKIND_ARGUMENT, "a matched message of %lld bytes", (long long)bytes)
                               : handover_get(process, &handover);
    handed *entry = rc == MPI_SUCCESS ? calloc(1, sizeof *entry) : NULL;
    if (rc == MPI_SUCCESS && !entry)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&handover->lock);
        rc = PMPI_Isend(data, (int)bytes, MPI_BYTE, 0, 0, handover->comm, &entry->handover);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Mprobe(0, 0, handover->comm, &entry->message, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) {
            *entry = (handed){ .message = entry->message, .comm = comm, .status = *envelope,
                               .handover = entry->handover, .data = data, .next = handover->first };
            handover->first = entry;
            *message = entry->message;
        }
        pthread_mutex_unlock(&handover->lock);
    }
    if (rc != MPI_SUCCESS) {
        free(entry);
        free(data);
    }
    return rc;
}

/* Reads the kept message @probed (consumed) and hands it over. */
static int hand_over(const char *call, mpix_zcopy_comm *zc, struct mpix_zcopy_probed *probed, MPI_Comm comm,
                     MPI_Message *message, MPI_Status *status)
{
    MPI_Count bytes = mpix_zcopy_probed_bytes(probed);
    char *data = bytes > 0 && bytes <= INT32_MAX ? malloc((size_t)bytes) : NULL;
    if (bytes > 0 && !data) {
        free(probed);   /* its sender waits no more for a message nobody can receive */
        return bytes > INT32_MAX
                   ? mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: a message of %lld bytes", call, (long long)bytes)
                   : MPI_ERR_NO_MEM;
    }
    int raised;
    MPI_Status read;
    int rc = mpix_zcopy_probed_deliver(zc, probed, data, (int)bytes, MPI_BYTE, comm, &read, &raised, call);
    if (rc != MPI_SUCCESS) {
        free(data);
        return rc;
    }
    if ((rc = mpix_zcopy_handover_give(zc->process, data, bytes, &read, comm, message)) == MPI_SUCCESS &&
        status != MPI_STATUS_IGNORE)
        *status = read;
    return rc;
}

/* MPIX_Mprobe_zcopy (@blocking) or MPIX_Improbe_zcopy. */
static int matched_probe(const char *call, int source, int tag, MPI_Comm comm, int blocking, int *flag,
                         MPI_Message *message, MPI_Status *status)
{
    if (!message)
        return mpix_raise_comm_or_world(comm, mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: message is NULL", call));
    struct mpix_zcopy_probed *taken;
    MPI_Status found;
    int rc = mpix_zcopy_probe(call, source, tag, comm, blocking, flag, &found, &taken, message);
    if (rc != MPI_SUCCESS || !*flag || !taken) {
        if (rc == MPI_SUCCESS && *flag && status != MPI_STATUS_IGNORE)
            *status = found;
        return rc;
    }
    mpix_zcopy_comm *zc;
    if ((rc = mpix_zcopy_comm_get(comm, &zc)) == MPI_SUCCESS)
        rc = hand_over(call, zc, taken, comm, message, status);
    else
        free(taken);
    return mpix_raise_comm(comm, rc);
}

MPIX_API int MPIX_Mprobe_zcopy(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag = 1;
    return matched_probe("MPIX_Mprobe_zcopy", source, tag, comm, 1, &flag, message, status);
}

MPIX_API int MPIX_Improbe_zcopy(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                                MPI_Status *status)
{
    return matched_probe("MPIX_Improbe_zcopy", source, tag, comm, 0, flag, message, status);
}

/* The hand-over @message names, taken off the list; NULL for a handle of MPI's. */
static handed *take_handed(MPI_Message message)
{
    mpix_zcopy_process *process;
    if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC || mpix_zcopy_process_get(&process) != MPI_SUCCESS)
        return NULL;
    struct mpix_zcopy_handover *handover = atomic_load_explicit(&process->handover, memory_order_acquire);
    if (!handover)
        return NULL;
    handed *found = NULL;
    pthread_mutex_lock(&handover->lock);
    for (handed **link = &handover->first; *link; link = &(*link)->next)
        if ((*link)->message == message) {
            found = *link;
            *link = found->next;
            break;
        }
    pthread_mutex_unlock(&handover->lock);
    return found;
}

int mpix_zcopy_handover_receive(MPI_Message *message, void *buf, int count, MPI_Datatype datatype, MPI_Status *status,
                                MPI_Comm *comm, int *rc)
{
    handed *entry = take_handed(*message);
    if (!entry)
        return 0;
    MPI_Status received;
    *rc = PMPI_Mrecv(buf, count, datatype, message, &received);
    int handover_rc = PMPI_Wait(&entry->handover, MPI_STATUS_IGNORE);
    if (*rc == MPI_SUCCESS)
        *rc = handover_rc;
    *status = received;
    status->MPI_SOURCE = entry->status.MPI_SOURCE;
    status->MPI_TAG = entry->status.MPI_TAG;
    status->MPI_ERROR = *rc;
    *comm = entry->comm;
    free(entry->data);
    free(entry);
    return 1;
}

MPIX_API int MPIX_Mrecv_zcopy(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    if (!message)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Mrecv_zcopy: message is NULL"));
    MPI_Status received;
    MPI_Comm comm;
    int rc;
    if (!mpix_zcopy_handover_receive(message, buf, count, datatype, &received, &comm, &rc))
        return PMPI_Mrecv(buf, count, datatype, message, status);   /* MPI's: it raises its errors */
    if (status != MPI_STATUS_IGNORE)
        *status = received;
    return mpix_raise_comm(comm, rc);
}

MPIX_API int MPIX_Imrecv_zcopy(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                               MPI_Request *request)
{
    if (!message || !request)
        return mpix_raise(mpix_error(MPIX_ERRKIND_ARGUMENT, "MPIX_Imrecv_zcopy: %s is NULL",
                                     message ? "request" : "message"));
    /* The data is in this process already: received now, behind a request complete at
     * once whose status and error MPI_Wait reports, as an MPI_Imrecv's would. */
    MPI_Status received;
    MPI_Comm comm;
    int received_rc;
    if (!mpix_zcopy_handover_receive(message, buf, count, datatype, &received, &comm, &received_rc))
        return PMPI_Imrecv(buf, count, datatype, message, request);
    return mpix_raise_comm(comm, mpix_zcopy_irecv_complete(request, &received, received_rc));
}
