/* SPDX-License-Identifier: BSD-3-Clause */
/* A zcopy header read out of a message received as MPI_PACKED (a probe's, probe.c). */
#include "zcopy.h"

#include <string.h>

int mpix_zcopy_header_read(mpix_zcopy_header *header, const char *data, MPI_Count length, int native, MPI_Comm comm)
{
    int whole = (int)sizeof *header, position = 0;
    if (length >= whole) {
        if (native)
            memcpy(header, data, (size_t)whole);
        if ((native || PMPI_Unpack(data, (int)length, &position, header, whole, MPI_BYTE, comm) == MPI_SUCCESS) &&
            header->magic == MPIX_ZCOPY_MAGIC)
            return whole;
    }
    *header = (mpix_zcopy_header){ 0 };
    return 0;
}
