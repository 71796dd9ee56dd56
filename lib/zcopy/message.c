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

int mpix_zcopy_send_packed(const mpix_zcopy_header *header, const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm, int native, int *copied)
{
    int header_size = (int)sizeof *header, data_size, position = 0, rc;
    MPI_Count type_size;
    MPI_Aint run = -1;
    if ((rc = PMPI_Type_size_x(datatype, &type_size)) != MPI_SUCCESS)
        return rc;
    data_size = (int)(type_size * count);   /* small: at most MPIX_ZCOPY_PACKED_BYTES */
    if (native)
        rc = mpix_zcopy_one_run(datatype, count, type_size, &run);
    else if ((rc = PMPI_Pack_size(header_size, MPI_BYTE, comm, &header_size)) == MPI_SUCCESS)
        rc = PMPI_Pack_size(count, datatype, comm, &data_size);
    if (rc != MPI_SUCCESS)
        return rc;
    int size = header_size + data_size;
    char stack[STACK_BYTES], *packed = size <= STACK_BYTES ? stack : malloc(size);
    if (!packed)
        return MPI_ERR_NO_MEM;
    rc = mpix_zcopy_pack_into(header, (int)sizeof *header, MPI_BYTE, (MPI_Count)sizeof *header, native ? 0 : -1,
                              packed, size, &position, comm);
    if (rc == MPI_SUCCESS)
        rc = mpix_zcopy_pack_into(buf, count, datatype, type_size * count, run, packed, size, &position, comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Send(packed, position, MPI_PACKED, dest, tag, comm);
    *copied = run >= 0;
    if (packed != stack)
        free(packed);
    return rc;
}

/* The header, and after a zcopy header with data inline @count of @datatype. */
static int unpack_message(const char *packed, int length, mpix_zcopy_header *header, void *buf, int count,
                          MPI_Datatype datatype, MPI_Count type_size, int native, MPI_Comm comm)
{
    int position = 0, rc = MPI_SUCCESS;
    MPI_Aint run = -1;
    if (length < (int)sizeof *header)
        return MPI_SUCCESS;
    rc = mpix_zcopy_unpack_from(packed, length, &position, header, (int)sizeof *header, MPI_BYTE,
                                (MPI_Count)sizeof *header, native ? 0 : -1, comm);
    if (rc != MPI_SUCCESS || header->magic != MPIX_ZCOPY_MAGIC || header->kind == MPIX_ZCOPY_RTS || count <= 0)
        return rc;
    if (native && (rc = mpix_zcopy_one_run(datatype, count, type_size, &run)) != MPI_SUCCESS)
        return rc;
    return mpix_zcopy_unpack_from(packed, length, &position, buf, count, datatype, type_size * count, run, comm);
}

int mpix_zcopy_receive_packed(MPI_Message *message, int length, mpix_zcopy_header *header, void *buf, int count,
                              MPI_Datatype datatype, MPI_Count type_size, int native, MPI_Comm comm)
{
    char stack[STACK_BYTES], *packed = length <= STACK_BYTES ? stack : malloc(length);
    if (!packed)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Mrecv(packed, length, MPI_PACKED, message, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = unpack_message(packed, length, header, buf, count, datatype, type_size, native, comm);
    if (packed != stack)
        free(packed);
    return rc;
}
