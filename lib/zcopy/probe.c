/* SPDX-License-Identifier: BSD-3-Clause */
/* MPIX_Probe_zcopy and MPIX_Iprobe_zcopy: a probe whose status counts the data of a
 * zcopy message, where MPI_Probe counts the header too (and, for a zero-copy message,
 * only the header). A message that carries no header (with MPICH, data of up to 16 KiB)
 * is reported as MPI found it and left to MPI. Any other is received at once, as
 * MPI_PACKED, into a buffer of the library's, and kept on its communicator's state (the
 * stash) until a receive takes it: its header says the data's length, and a zero-copy
 * sender, whose data is read only when the receive comes, stays waiting until then, as
 * MPI's rendezvous sender would. Every receive looks at the stash before MPI's queue: a
 * message stashed is older than any MPI still holds from its sender with its tag. */
#include "zcopy.h"
#include "common/arguments.h"
#include "common/api.h"
#include "common/error.h"
#include "common/progress.h"
#include "common/status.h"

#include <stdlib.h>
#include <string.h>

typedef struct mpix_zcopy_probed {
    MPI_Status matched;           /* MPI's: the envelope, and the message's length */
    MPI_Status reported;          /* the probe's: the data's length */
    int length;
    int raw;                      /* data without header (a lone header's length) */
    int question;                 /* a LEARN header: answered, nothing to receive */
    struct mpix_zcopy_probed *next;
    char packed[];                /* the message, received as MPI_PACKED */
} mpix_zcopy_probed;

/* The oldest stashed message @source and @tag match (@take: unlinked); under zc->lock. */
static mpix_zcopy_probed *stash_find(mpix_zcopy_comm *zc, int source, int tag, int take)
{
    mpix_zcopy_probed *previous = NULL;
    for (mpix_zcopy_probed **link = &zc->probed; *link; previous = *link, link = &(*link)->next)
        if (mpix_zcopy_envelopes_overlap((*link)->matched.MPI_SOURCE, (*link)->matched.MPI_TAG, source, tag)) {
            mpix_zcopy_probed *found = *link;
            if (take) {
                *link = found->next;
                if (zc->probed_last == found)
                    zc->probed_last = previous;
                atomic_fetch_sub_explicit(&zc->probed_count, 1, memory_order_release);
            }
            return found;
        }
    return NULL;
}

static void stash_append(mpix_zcopy_comm *zc, mpix_zcopy_probed *probed)
{
    pthread_mutex_lock(&zc->lock);
    if (zc->probed_last)
        zc->probed_last->next = probed;
    else
        zc->probed = probed;
    zc->probed_last = probed;
    atomic_fetch_add_explicit(&zc->probed_count, 1, memory_order_release);
    pthread_mutex_unlock(&zc->lock);
}

void mpix_zcopy_probed_free(mpix_zcopy_comm *zc)
{
    for (mpix_zcopy_probed *probed = zc->probed, *next; probed; probed = next) {
        next = probed->next;
        free(probed);
    }
    zc->probed = zc->probed_last = NULL;
    atomic_store_explicit(&zc->probed_count, 0, memory_order_relaxed);
}

int mpix_zcopy_probed_receive(mpix_zcopy_comm *zc, int source, int tag, void *buf, int count, MPI_Datatype datatype,
                              MPI_Comm comm, MPI_Status *status, int *taken, int *raised, const char *call)
{
    pthread_mutex_lock(&zc->lock);
    mpix_zcopy_probed *probed = stash_find(zc, source, tag, 1);
    pthread_mutex_unlock(&zc->lock);
    *taken = probed != NULL;
    *raised = 0;
    if (!probed)
        return MPI_SUCCESS;
    return mpix_zcopy_probed_deliver(zc, probed, buf, count, datatype, comm, status, raised, call);
}

int mpix_zcopy_probed_deliver(mpix_zcopy_comm *zc, mpix_zcopy_probed *probed, void *buf, int count,
                              MPI_Datatype datatype, MPI_Comm comm, MPI_Status *status, int *raised,
                              const char *call)
{
    int rc = mpix_zcopy_receive_stashed(zc, &probed->matched, probed->packed, probed->length, probed->raw, buf, count,
                                        datatype, comm, status, raised, call);
    free(probed);
    return rc;
}

/* Reads the header of the stashed message @probed: how many bytes of data it brings
 * (*@bytes); a message of a lone header's length that holds none is data (raw). */
static int read_header(mpix_zcopy_comm *zc, mpix_zcopy_probed *probed, MPI_Comm comm, MPI_Count *bytes)
{
    mpix_zcopy_header header;
    *bytes = probed->length;
    probed->raw = probed->length != MPIX_ZCOPY_LONE_HEADER_BYTES ||
                  !mpix_zcopy_header_read(&header, probed->packed, probed->length, zc->settings.packs_natively, comm) ||
                  !mpix_zcopy_header_sent(&header, &probed->matched);
    if (!probed->raw)
        *bytes = header.bytes;
    if (!probed->raw && header.kind == MPIX_ZCOPY_LEARN) { /* answered; the caller probes again */
        mpix_zcopy_receive_learn(zc, probed->matched.MPI_SOURCE, &header);
        probed->question = 1;
    }
    return MPI_SUCCESS;
}

/* Receives the message MPI matched (@message, @matched) into a new stash entry,
 * *@probed. */
static int receive_to_stash(mpix_zcopy_comm *zc, MPI_Message *message, const MPI_Status *matched, MPI_Comm comm,
                            mpix_zcopy_probed **out)
{
    *out = NULL;
    int length, rc = PMPI_Get_count(matched, MPI_PACKED, &length);
    if (rc != MPI_SUCCESS)
        return rc;
    mpix_zcopy_probed *probed = malloc(sizeof *probed + (length > 0 ? length : 1));
    if (!probed)
        return MPI_ERR_NO_MEM;
    *probed = (mpix_zcopy_probed){ .matched = *matched, .length = length };
    rc = PMPI_Mrecv(probed->packed, length, MPI_PACKED, message, MPI_STATUS_IGNORE);
    MPI_Count bytes;
    if (rc == MPI_SUCCESS)
        rc = read_header(zc, probed, comm, &bytes);
    if (rc == MPI_SUCCESS) {
        probed->reported = probed->matched;
        probed->reported.MPI_ERROR = MPI_SUCCESS;
        rc = PMPI_Status_set_elements_x(&probed->reported, MPI_BYTE, bytes);
    }
    if (rc != MPI_SUCCESS) {
        free(probed);
        return rc;
    }
    *out = probed;
    return MPI_SUCCESS;
}

int mpix_zcopy_probe(const char *call, int source, int tag, MPI_Comm comm, int blocking, int *flag,
                     MPI_Status *status, mpix_zcopy_probed **taken, MPI_Message *message)
{
    /* A communicator with zcopy state and a rank of it or MPI_ANY_SOURCE: MPI's own probe
     * judges the tag (and raises its error once); anything else is checked first. */
    mpix_zcopy_comm *zc;
    int rc;
    if (taken) {
        *taken = NULL;
        *message = MPI_MESSAGE_NULL;
    }
    if (!flag || comm == MPI_COMM_NULL || mpix_zcopy_comm_get(comm, &zc) != MPI_SUCCESS ||
        source == MPI_PROC_NULL || !mpix_peer_known(source, zc->peers, MPIX_RECEIVING)) {
        if ((rc = mpix_check_transfer(call, NULL, 0, MPI_BYTE, source, tag, comm, MPIX_RECEIVING)) != MPI_SUCCESS)
            return rc;
        if (!flag)
            return mpix_raise_comm(comm, mpix_error(MPIX_ERRKIND_ARGUMENT, "%s: flag is NULL", call));
        *flag = 1;
        if (source == MPI_PROC_NULL) { /* as MPI_Probe: at once, empty */
            if (taken)
                *message = MPI_MESSAGE_NO_PROC;
            if (status != MPI_STATUS_IGNORE) {
                status->MPI_ERROR = MPI_SUCCESS;
                rc = mpix_status_nothing(status, MPI_PROC_NULL, MPI_ANY_TAG);
            }
            return mpix_raise_comm(comm, rc);
        }
        if ((rc = mpix_zcopy_comm_get(comm, &zc)) != MPI_SUCCESS)
            return mpix_raise_comm(comm, rc);
    }
    *flag = 1;
    MPI_Status found;
    /* A nonblocking receive posted before takes its message first, as MPI's would. */
    if (blocking)
        mpix_zcopy_wait_earlier_receives(zc, source, tag);
    else if (mpix_zcopy_requests_overlap(zc, source, tag)) {
        (void)mpix_mpi_progress();   /* only to make progress: its next call may find it */
        mpix_zcopy_progress_poke(zc->process);
        *flag = 0;
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&zc->lock);
    mpix_zcopy_probed *probed = stash_find(zc, source, tag, taken != NULL);
    if (probed)
        found = probed->reported;
    pthread_mutex_unlock(&zc->lock);
    if (probed) {
        if (taken)
            *taken = probed;
    } else {
        /* MPI's errors are raised by MPI. A matched probe matches the message it finds. */
        MPI_Message matched;
        if (taken)
            rc = blocking ? PMPI_Mprobe(source, tag, comm, &matched, &found)
                          : PMPI_Improbe(source, tag, comm, flag, &matched, &found);
        else
            rc = blocking ? PMPI_Probe(source, tag, comm, &found) : PMPI_Iprobe(source, tag, comm, flag, &found);
        if (rc != MPI_SUCCESS || !*flag)
            return rc;
        int length;
        if ((rc = PMPI_Get_count(&found, MPI_BYTE, &length)) != MPI_SUCCESS)
            return mpix_raise_comm(comm, rc);
        if (mpix_zcopy_length_raw(length)) {   /* data without header: MPI's status is the data's */
            if (taken)
                *message = matched;
        } else {
            /* The oldest message of that sender with that tag: the one found. */
            if (!taken && (rc = PMPI_Mprobe(found.MPI_SOURCE, found.MPI_TAG, comm, &matched, &found)) != MPI_SUCCESS)
                return rc;
            if ((rc = receive_to_stash(zc, &matched, &found, comm, &probed)) != MPI_SUCCESS)
                return mpix_raise_comm(comm, rc);
            if (probed->question) { /* a question, not a message: the probe goes on */
                free(probed);
                return mpix_zcopy_probe(call, source, tag, comm, blocking, flag, status, taken, message);
            }
            found = probed->reported;
            if (taken)
                *taken = probed;
            else
                stash_append(zc, probed);
        }
    }
    if (status != MPI_STATUS_IGNORE)
        *status = found;
    return MPI_SUCCESS;
}

MPIX_API int MPIX_Probe_zcopy(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag;
    return mpix_zcopy_probe("MPIX_Probe_zcopy", source, tag, comm, 1, &flag, status, NULL, NULL);
}

MPIX_API int MPIX_Iprobe_zcopy(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return mpix_zcopy_probe("MPIX_Iprobe_zcopy", source, tag, comm, 0, flag, status, NULL, NULL);
}

MPI_Count mpix_zcopy_probed_bytes(const mpix_zcopy_probed *probed)
{
    MPI_Count bytes = 0;
    (void)PMPI_Get_elements_x(&probed->reported, MPI_BYTE, &bytes);   /* set by receive_to_stash */
    return bytes;
}
