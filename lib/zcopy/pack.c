/* SPDX-License-Identifier: BSD-3-Clause */
/* The packed ways of an MPI send: the sender packs the data with MPI_Pack and sends it
 * as MPI_PACKED; the receiver either receives that with its own datatype (MPI allows a
 * packed message to match any datatype of the same type signature) or receives it as
 * MPI_PACKED and unpacks it. MPI's engines differ most here: on the development VM a
 * round trip of NAS MG's x-face (16,900 doubles at stride 130) took 449-575 us with the
 * datatype on both sides under MPICH 4.0, 289 us packed and 88 us packed and unpacked,
 * where Open MPI 4.1 took 125-127, 129-136 and 155-168 us; its y-face (130 rows of
 * 1 KiB) 50-53 us with the datatype and 22-27 us packed on Open MPI. Hence learnt per
 * layout or shape (path.c). */
#include "zcopy.h"
#include "common/self_state.h"
#include "common/error.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* MPICH 4.0 refuses MPI_Pack and MPI_Unpack at MPI_BOTTOM (a null buffer, checked as a
 * null argument): a type of absolute addresses is handled from a real address, @anchor,
 * as a struct that shifts it back by that address. *@shifted is @datatype (and
 * *@shifted_count @count) unless @buf is MPI_BOTTOM; free it then. */
static int off_bottom(const void *buf, int count, MPI_Datatype datatype, const void *anchor, MPI_Datatype *shifted,
                      int *shifted_count)
{
    *shifted = datatype;
    *shifted_count = count;
    if (buf != MPI_BOTTOM || count == 0)
        return MPI_SUCCESS;
    MPI_Aint at;
    int rc = PMPI_Get_address(anchor, &at);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint displacement = -at;
    if ((rc = PMPI_Type_create_struct(1, &count, &displacement, &datatype, shifted)) != MPI_SUCCESS)
        return rc;
    *shifted_count = 1;
    if ((rc = PMPI_Type_commit(shifted)) != MPI_SUCCESS)
        (void)PMPI_Type_free(shifted);   /* the commit's error is the one to report */
    return rc;
}

static int free_shifted(MPI_Datatype datatype, MPI_Datatype *shifted, int rc)
{
    if (*shifted == datatype)
        return rc;
    int free_rc = PMPI_Type_free(shifted);
    return rc == MPI_SUCCESS ? free_rc : rc;
}

int mpix_zcopy_pack(const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, mpix_scratch *scratch,
                    char **packed, int *length)
{
    MPI_Count bytes;
    int size, rc = PMPI_Type_size_x(datatype, &bytes);
    *packed = NULL;
    *length = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes * count > INT_MAX)
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "zcopy: packing %lld bytes (more than INT_MAX)",
                          (long long)(bytes * count));
    if ((rc = PMPI_Pack_size(count, datatype, comm, &size)) != MPI_SUCCESS)
        return rc;
    char *out = mpix_scratch_take(scratch, (size_t)size);
    if (!out)
        return MPI_ERR_NO_MEM;
    MPI_Datatype shifted;
    int shifted_count, position = 0;
    if ((rc = off_bottom(buf, count, datatype, out, &shifted, &shifted_count)) == MPI_SUCCESS) {
        const void *from = shifted == datatype ? buf : out;
        rc = free_shifted(datatype, &shifted, PMPI_Pack(from, shifted_count, shifted, out, size, &position, comm));
    }
    if (rc != MPI_SUCCESS) {
        mpix_scratch_give(scratch, out);
        return rc;
    }
    *packed = out;
    *length = position;
    return MPI_SUCCESS;
}

/* The whole elements of @count of @datatype at @buf that hold its first @bytes
 * type-map bytes, ready to go through MPI_Pack or MPI_Unpack: @at and @shifted (off
 * MPI_BOTTOM, off_bottom) and a buffer of their packed size. */
typedef struct head {
    char *packed;
    int size;
    MPI_Count type_size;
    void *at;
    MPI_Datatype datatype, shifted;
    int shifted_count;
} head;

static int head_begin(const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, MPI_Count bytes, head *h)
{
    *h = (head){ .datatype = datatype, .shifted = datatype };
    int rc = PMPI_Type_size_x(datatype, &h->type_size);
    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes <= 0 || h->type_size <= 0 || bytes > INT_MAX || bytes > h->type_size * count)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "zcopy: the first %lld bytes of %d elements of %lld bytes",
                          (long long)bytes, count, (long long)h->type_size);
    int elements = (int)((bytes + h->type_size - 1) / h->type_size);
    if ((rc = PMPI_Pack_size(elements, datatype, comm, &h->size)) != MPI_SUCCESS)
        return rc;
    if (!(h->packed = malloc(h->size > 0 ? h->size : 1)))
        return MPI_ERR_NO_MEM;
    if ((rc = off_bottom(buf, elements, datatype, h->packed, &h->shifted, &h->shifted_count)) != MPI_SUCCESS) {
        free(h->packed);
        h->packed = NULL;
        return rc;
    }
    h->at = h->shifted == datatype ? (void *)buf : h->packed;
    return MPI_SUCCESS;
}

static int head_end(head *h, int rc)
{
    free(h->packed);
    return free_shifted(h->datatype, &h->shifted, rc);
}

int mpix_zcopy_unpack_bytes(const char *data, MPI_Count bytes, void *buf, int count, MPI_Datatype datatype,
                            MPI_Comm comm)
{
    head h;
    int position = 0, rc;
    if (bytes <= 0) /* nothing to set */
        return MPI_SUCCESS;
    if ((rc = head_begin(buf, count, datatype, comm, bytes, &h)) != MPI_SUCCESS)
        return rc;
    /* a part of the last element: the element as it is, then its first bytes replaced */
    if (bytes % h.type_size != 0)
        rc = PMPI_Pack(h.at, h.shifted_count, h.shifted, h.packed, h.size, &position, comm);
    if (rc == MPI_SUCCESS) {
        memcpy(h.packed, data, (size_t)bytes);
        position = 0;
        rc = PMPI_Unpack(h.packed, h.size, &position, h.at, h.shifted_count, h.shifted, comm);
    }
    return head_end(&h, rc);
}

int mpix_zcopy_pack_head(void *data, MPI_Count bytes, const void *buf, int count, MPI_Datatype datatype,
                         MPI_Comm comm)
{
    head h;
    int position = 0, rc = head_begin(buf, count, datatype, comm, bytes, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Pack(h.at, h.shifted_count, h.shifted, h.packed, h.size, &position, comm);
    if (rc == MPI_SUCCESS)
        memcpy(data, h.packed, (size_t)bytes);
    return head_end(&h, rc);
}

int mpix_zcopy_unpack_received(const char *packed, int length, void *buf, int count, MPI_Datatype datatype,
                               MPI_Comm comm)
{
    MPI_Count type_size;
    int rc = PMPI_Type_size_x(datatype, &type_size);
    if (rc != MPI_SUCCESS || length == 0 || type_size == 0)
        return rc;
    if (length > type_size * count)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "zcopy: %d packed bytes for %d elements of %lld bytes", length, count,
                          (long long)type_size);
    if (length % type_size != 0)   /* a part of the last element */
        return mpix_zcopy_unpack_bytes(packed, length, buf, count, datatype, comm);
    MPI_Datatype shifted;
    int shifted_count, position = 0, whole = (int)(length / type_size);
    if ((rc = off_bottom(buf, whole, datatype, packed, &shifted, &shifted_count)) != MPI_SUCCESS)
        return rc;
    void *to = shifted == datatype ? buf : (void *)packed;
    return free_shifted(datatype, &shifted, PMPI_Unpack(packed, length, &position, to, shifted_count, shifted, comm));
}

int mpix_zcopy_receive_unpacked(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                mpix_scratch *scratch)
{
    int size, length, rc = PMPI_Pack_size(count, datatype, comm, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    char *packed = mpix_scratch_take(scratch, (size_t)size);
    if (!packed)
        return MPI_ERR_NO_MEM;
    MPI_Status status;
    if ((rc = PMPI_Recv(packed, size, MPI_PACKED, source, tag, comm, &status)) == MPI_SUCCESS &&
        (rc = PMPI_Get_count(&status, MPI_PACKED, &length)) == MPI_SUCCESS)
        rc = mpix_zcopy_unpack_received(packed, length, buf, count, datatype, comm);
    mpix_scratch_give(scratch, packed);
    return rc;
}

/* ---- packing by copy ------------------------------------------------------------------ */

int mpix_zcopy_packs_natively(int *native)
{
    const double real = -1.5;
    const int integer = 0x01020304;
    const char bytes[3] = { 'z', 'c', 0 };
    char packed[64], expected[sizeof real + sizeof integer + sizeof bytes];
    int position = 0;
    MPI_Comm self;
    *native = 0;
    int rc = mpix_self_comm(&self);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Pack(&real, 1, MPI_DOUBLE, packed, (int)sizeof packed, &position, self);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Pack(&integer, 1, MPI_INT, packed, (int)sizeof packed, &position, self);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Pack(bytes, (int)sizeof bytes, MPI_BYTE, packed, (int)sizeof packed, &position, self);
    memcpy(expected, &real, sizeof real);
    memcpy(expected + sizeof real, &integer, sizeof integer);
    memcpy(expected + sizeof real + sizeof integer, bytes, sizeof bytes);
    *native = rc == MPI_SUCCESS && position == (int)sizeof expected && memcmp(packed, expected, sizeof expected) == 0;
    return rc;
}

int mpix_zcopy_one_run(MPI_Datatype datatype, int count, MPI_Count type_size, MPI_Aint *offset)
{
    MPI_Count lb, extent, true_lb, true_extent;
    *offset = -1;
    int rc = PMPI_Type_get_extent_x(datatype, &lb, &extent);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_true_extent_x(datatype, &true_lb, &true_extent);
    if (rc == MPI_SUCCESS && true_extent == type_size && (count <= 1 || extent == type_size))
        *offset = (MPI_Aint)true_lb;
    return rc;
}

int mpix_zcopy_unpack_from(const char *packed, int length, int *position, void *buf, int count,
                           MPI_Datatype datatype, MPI_Count bytes, MPI_Aint run, MPI_Comm comm)
{
    if (run < 0)
        return PMPI_Unpack(packed, length, position, buf, count, datatype, comm);
    if (bytes > length - *position)
        return mpix_error(MPIX_ERRKIND_ARGUMENT, "zcopy: unpacking %lld bytes from %d left", (long long)bytes,
                          length - *position);
    memcpy((char *)buf + run, packed + *position, (size_t)bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
