! SPDX-License-Identifier: BSD-3-Clause
! The MPI binding a test program is built for, included (by the preprocessor) after its
! PROGRAM statement: -DMPIF_H includes mpif.h, -DF08 uses mpi_f08, otherwise it uses mpi.
! HANDLE(MPI_Win) declares a handle, STATUS a status, ADDRESS a BASEPTR argument, and
! AS_C_POINTER(address) makes that a TYPE(C_PTR) for c_f_pointer, in every binding;
! `call f(a IERR)` passes IERROR where the binding requires it (not mpi_f08).
#if defined(F08)
    use mpi_f08
#elif !defined(MPIF_H)
    use mpi
#endif
    use, intrinsic :: iso_c_binding
    implicit none
#if defined(MPIF_H)
    include 'mpif.h'
#endif
#if defined(F08)
#define HANDLE(kind) type(kind)
#define STATUS type(MPI_Status)
#define ADDRESS type(c_ptr)
#define AS_C_POINTER(address) address
#define IERR
#else
#define HANDLE(kind) integer
#define STATUS integer, dimension(MPI_STATUS_SIZE)
#define ADDRESS integer(kind=MPI_ADDRESS_KIND)
#define AS_C_POINTER(address) transfer(address, c_null_ptr)
#define IERR , ierr
#endif
