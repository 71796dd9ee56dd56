/* SPDX-License-Identifier: BSD-3-Clause */
/* The checks MPI makes on a point-to-point call's arguments, for mpix calls that take
 * the same arguments but may not reach MPI with them (zero-copy, guarded transfers). */
#ifndef MPIX_COMMON_ARGUMENTS_H
#define MPIX_COMMON_ARGUMENTS_H

#include <mpi.h>

enum { MPIX_SENDING = 0, MPIX_RECEIVING = 1 };

/* Whether @peer names a process of a group of @peers for a transfer in @direction: a
 * rank, MPI_PROC_NULL, or for a receive MPI_ANY_SOURCE. */
static inline int mpix_peer_known(int peer, int peers, int direction)
{
    return (peer >= 0 && peer < peers) || peer == MPI_PROC_NULL ||
           (direction == MPIX_RECEIVING && peer == MPI_ANY_SOURCE);
}

/* MPI_SUCCESS, or the error MPI gives for these arguments, raised by MPI itself with
 * MPI's class (a null communicator, a negative count, a null or uncommitted datatype, a
 * bad tag, a rank out of range): calls that move no data, one to MPI_PROC_NULL with the
 * arguments and, for a rank out of range, one MPI refuses for that rank (a zero-byte
 * send, or a probe). Where the MPI does not check its arguments, an MPIX_ERRKIND_ARGUMENT
 * code naming @call and the value, raised here on @comm (MPI_COMM_WORLD for
 * MPI_COMM_NULL). @direction is MPIX_SENDING (peer: a rank or MPI_PROC_NULL) or
 * MPIX_RECEIVING (also MPI_ANY_SOURCE, MPI_ANY_TAG). Every error returned has been
 * raised, once: the caller returns it as it is, or a handler of the program's runs
 * twice. */
int mpix_check_transfer(const char *call, const void *buf, int count, MPI_Datatype datatype, int peer, int tag,
                        MPI_Comm comm, int direction);

/* MPI_SUCCESS if MPI accepts @datatype for a transfer (not null, committed), else the
 * error MPI gives, raised by MPI on @comm. */
int mpix_check_datatype(MPI_Datatype datatype, MPI_Comm comm);

/* Raise @code on @comm, or on MPI_COMM_WORLD where @comm is MPI_COMM_NULL. */
int mpix_raise_comm_or_world(MPI_Comm comm, int code);

#endif
