/* MPIX_Recv_zcopy: match the sender's one message with MPI's own matching (so wildcards
 * and ordering are MPI's), then take the data the way the header says: scatter the
 * packed bytes, receive the MPI message that follows, or read the sender's memory. */
#include "zcopy.h"
#include "common/api.h"
#include "common/error.h"
#include "common/verbose.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>

enum { STACK_WIRE = 4096 };

/* A sender that does not yet know whether this process can attach to it asks; on the
 * same node the answer is a write into its directory, which succeeds exactly when this
 * process may read it too. */
static void answer_learn_request(mpix_zcopy_comm *zc, int source, const mpix_zcopy_header *header)
{
    mpix_zcopy_process *process = zc->process;
    int world = zc->world_rank[source];
    if (!zc->enabled || !header->learn_address || header->node_key != process->node_key || world == MPI_UNDEFINED ||
        process->access[world] == MPIX_ZCOPY_ACCESS_REFUSED)
        return;
    mpix_zcopy_directory_entry mine = { process->pid, 1 };
    /* MPIX_ZCOPY_ATTACH=refuse answers as a kernel that forbids the attach would. */
    int error = process->refuse_attach ? EPERM
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

/* The sender's layout: inline in the header, known by its global id, remembered from an
 * earlier message, or read from the sender's memory (and then remembered). */
static int sender_layout(mpix_zcopy_comm *zc, int source, const mpix_zcopy_header *header, mpix_layout *inline_layout,
                         mpix_layout **layout)
{
    if (header->nblocks <= MPIX_ZCOPY_INLINE_BLOCKS) {
        *inline_layout = (mpix_layout){ .blocks = (mpix_block *)header->inline_blocks, .nblocks = header->nblocks,
                                        .capacity = header->nblocks, .bytes = header->bytes, .costed_gap_limit = -1 };
        *layout = inline_layout;
        return MPI_SUCCESS;
    }
    if (header->global_id && (*layout = mpix_zcopy_global_find(zc, header->global_id, (int)header->count))) {
        zc->stats.layouts_global++;
        return MPI_SUCCESS;
    }
    if (header->layout_id && (*layout = mpix_zcopy_received_find(zc, source, header->layout_id)))
        return MPI_SUCCESS;
    mpix_layout read = { .blocks = malloc(header->nblocks * sizeof(mpix_block)), .nblocks = header->nblocks,
                         .capacity = header->nblocks, .bytes = header->bytes, .costed_gap_limit = -1 };
    if (!read.blocks)
        return MPI_ERR_NO_MEM;
    int error = mpix_zcopy_read_remote(header->pid, header->layout_address, read.blocks,
                                       header->nblocks * sizeof(mpix_block));
    zc->stats.layouts_read++;
    if (error) {
        mpix_layout_free(&read);
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "MPIX_Recv_zcopy: reading the layout of rank %d failed: %s", source,
                          strerror(error));
    }
    if (header->layout_id && (*layout = mpix_zcopy_received_add(zc, source, header->layout_id, &read)))
        return MPI_SUCCESS;
    /* Not memoizable (a predefined type's layout, or no memory): use it once. */
    *inline_layout = read;
    *layout = inline_layout;
    return MPI_SUCCESS;
}

static int receive_rts(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, MPI_Count capacity,
                       int source, const mpix_zcopy_header *header)
{
    int32_t outcome = MPIX_ZCOPY_ABANDONED;
    int rc = MPI_ERR_TRUNCATE;
    if (header->bytes <= capacity) {
        mpix_layout inline_layout = { 0 };
        mpix_layout *remote = NULL;
        mpix_layout_view local;
        rc = sender_layout(zc, source, header, &inline_layout, &remote);
        if (rc == MPI_SUCCESS && (rc = mpix_layout_view_get(datatype, count, &local)) == MPI_SUCCESS) {
            int error = mpix_zcopy_pull(zc, header->pid, header->base, remote, buf, local.layout, header->bytes);
            if (error)
                rc = mpix_error(MPIX_ERRKIND_UNSUPPORTED, "MPIX_Recv_zcopy: reading %lld bytes from rank %d failed: %s",
                                (long long)header->bytes, source, strerror(error));
            else
                outcome = MPIX_ZCOPY_DONE;
            mpix_layout_view_release(&local);
        }
        if (remote == &inline_layout && inline_layout.blocks != header->inline_blocks)
            mpix_layout_free(&inline_layout);
    }
    /* The sender waits for this word whatever happened here. */
    mpix_zcopy_write_remote(header->pid, header->done_address, &outcome, sizeof outcome);
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
            break;
        case MPIX_ZCOPY_RTS:
            rc = receive_rts(zc, buf, count, datatype, capacity, matched.MPI_SOURCE, &header);
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
