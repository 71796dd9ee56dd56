/* SPDX-License-Identifier: BSD-3-Clause */
/* Header and data of a zcopy call as one MPI message on the caller's communicator and
 * tag, so that no other receive (another thread's wildcard receive included) can take
 * the data apart from its header: packed for small data, else as one struct datatype
 * (nonblocking sends, and large ones under MPI_THREAD_MULTIPLE; send.c sends the other
 * large ones as two messages). */
#include "zcopy.h"

#include <stdlib.h>
#include <string.h>

int mpix_zcopy_message_type(const mpix_zcopy_header *header, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Datatype *message)
{
    int lengths[2] = { (int)sizeof *header, count };
    MPI_Aint at[2];
    MPI_Datatype types[2] = { MPI_BYTE, datatype };
    int rc = PMPI_Get_address(header, &at[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Get_address(buf, &at[1]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_struct(2, lengths, at, types, message);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(message)) != MPI_SUCCESS)
        (void)PMPI_Type_free(message); /* the commit's error is the one to report */
    return rc;
}

/* Up to this many bytes (header included) a message is packed in a buffer on the stack;
 * larger ones that are packed take one from the heap. */
enum { STACK_BYTES = 4096 };

int mpix_zcopy_header_read(mpix_zcopy_header *header, const char *data, MPI_Count length, int native, MPI_Comm comm)
{
    int whole = (int)sizeof *header, position = 0;
    if (!native) { /* no short headers: the whole one, unpacked by MPI */
        if (length >= whole && PMPI_Unpack(data, (int)length, &position, header, whole, MPI_BYTE, comm) == MPI_SUCCESS &&
            header->magic == MPIX_ZCOPY_MAGIC)
            return whole;
    } else if (length >= MPIX_ZCOPY_SHORT_HEADER_BYTES) {
        memcpy(header, data, MPIX_ZCOPY_SHORT_HEADER_BYTES);
        if (header->magic == MPIX_ZCOPY_MAGIC && (header->kind & MPIX_ZCOPY_SHORT)) {
            *header = (mpix_zcopy_header){ .magic = header->magic, .kind = header->kind & ~MPIX_ZCOPY_SHORT,
                                           .bytes = header->bytes, .source_rank = header->source_rank,
                                           .tag = header->tag, .mailbox_fd = -1, .slot = -1 };
            return MPIX_ZCOPY_SHORT_HEADER_BYTES;
        }
        if (length >= whole && header->magic == MPIX_ZCOPY_MAGIC) {
            memcpy(header, data, (size_t)whole);
            return whole;
        }
    }
    *header = (mpix_zcopy_header){ 0 };
    return 0;
}

int mpix_zcopy_unpack_message(const char *packed, int length, mpix_zcopy_header *header, void *buf, int count,
                              MPI_Datatype datatype, MPI_Count type_size, int native, MPI_Comm comm)
{
    int position = mpix_zcopy_header_read(header, packed, length, native, comm), rc = MPI_SUCCESS;
    if (!position || header->kind == MPIX_ZCOPY_RTS || header->data_follows)
        return MPI_SUCCESS;
    MPI_Count capacity = type_size * count, bytes = header->bytes < capacity ? header->bytes : capacity;
    if (bytes > length - position)
        bytes = length - position;
    if (bytes <= 0)
        return MPI_SUCCESS;
    MPI_Aint run = -1;
    if (bytes % type_size != 0 || buf == MPI_BOTTOM)
        return mpix_zcopy_unpack_bytes(packed + position, bytes, buf, count, datatype, comm);
    if (native && (rc = mpix_zcopy_one_run(datatype, count, type_size, &run)) != MPI_SUCCESS)
        return rc;
    return mpix_zcopy_unpack_from(packed, length, &position, buf, (int)(bytes / type_size), datatype, bytes, run,
                                  comm);
}

int mpix_zcopy_receive_packed(MPI_Message *message, int length, mpix_zcopy_header *header, void *buf, int count,
                              MPI_Datatype datatype, MPI_Count type_size, int native, MPI_Comm comm)
{
    char stack[STACK_BYTES], *packed = length <= STACK_BYTES ? stack : malloc(length);
    if (!packed)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Mrecv(packed, length, MPI_PACKED, message, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = mpix_zcopy_unpack_message(packed, length, header, buf, count, datatype, type_size, native, comm);
    if (packed != stack)
        free(packed);
    return rc;
}
