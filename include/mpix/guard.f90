! SPDX-License-Identifier: BSD-3-Clause
!> @file
!! The guard calls for Fortran: `use mpix_guard` beside `use mpi` or `use mpi_f08`.
!!
!! Each call takes the arguments of the MPI call it stands for, in the binding the
!! program uses: integer handles and an integer IERROR with `use mpi` (and with mpif.h,
!! whose programs may call the same names without the module), handles of mpi_f08's
!! types and an optional IERROR with `use mpi_f08`. What they do, their errors and knobs
!! are those of the C calls in mpix/guard.h: when a call returns, the program reads and
!! writes its arrays as after MPI_Send, MPI_Recv or MPI_Sendrecv; the first touch of a
!! page still in transfer waits for it.
!!
!! Buffers are passed as the address of their first element (`TYPE(*), DIMENSION(*)`,
!! with gfortran's NO_ARG_CHECK so that any type, kind and rank is taken): pass whole
!! arrays or array elements with a datatype that describes the layout, not array
!! sections (the compiler's temporary copy would make the call wait at once). Complete
!! an array with MPIX_Guard_complete before a READ or WRITE statement may hand it to the
!! system. MPI_BOTTOM and MPI_STATUS_IGNORE are the binding's own.
!!
!! The module is built by the MPI's own Fortran wrapper and installed beside the
!! headers; link with -lmpix.
module mpix_guard
    use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Status, MPI_STATUS_SIZE, MPI_ADDRESS_KIND
    implicit none
    private
    public :: MPIX_Send_guarded, MPIX_Recv_guarded, MPIX_Sendrecv_guarded, MPIX_Guard_complete, &
              MPIX_Guard_complete_all

    !> MPIX_Send_guarded(buf, count, datatype, dest, tag, comm, ierror): MPI_Send's
    !! arguments; returns at once.
    interface MPIX_Send_guarded
        subroutine mpix_send_guarded(buf, count, datatype, dest, tag, comm, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in) :: buf
            integer, intent(in) :: count, datatype, dest, tag, comm
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_send_guarded_f08(buf, count, datatype, dest, tag, comm, ierror)
            import :: MPI_Comm, MPI_Datatype
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in) :: buf
            integer, intent(in) :: count, dest, tag
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Comm), intent(in) :: comm
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Recv_guarded(buf, count, datatype, source, tag, comm, status, ierror): MPI_Recv's
    !! arguments; returns once posted (with a status: once the envelope is known).
    interface MPIX_Recv_guarded
        subroutine mpix_recv_guarded(buf, count, datatype, source, tag, comm, status, ierror)
            import :: MPI_STATUS_SIZE
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*) :: buf
            integer, intent(in) :: count, datatype, source, tag, comm
            integer, intent(out) :: status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_recv_guarded_f08(buf, count, datatype, source, tag, comm, status, ierror)
            import :: MPI_Comm, MPI_Datatype, MPI_Status
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*) :: buf
            integer, intent(in) :: count, source, tag
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Comm), intent(in) :: comm
            type(MPI_Status) :: status
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Sendrecv_guarded(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
    !! recvcount, recvtype, source, recvtag, comm, status, ierror): MPI_Sendrecv's.
    interface MPIX_Sendrecv_guarded
        subroutine mpix_sendrecv_guarded(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, &
                                         source, recvtag, comm, status, ierror)
            import :: MPI_STATUS_SIZE
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
            type(*), dimension(*), intent(in) :: sendbuf
            type(*), dimension(*) :: recvbuf
            integer, intent(in) :: sendcount, sendtype, dest, sendtag, recvcount, recvtype, source, recvtag, comm
            integer, intent(out) :: status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_sendrecv_guarded_f08(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, &
                                             recvtype, source, recvtag, comm, status, ierror)
            import :: MPI_Comm, MPI_Datatype, MPI_Status
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
            type(*), dimension(*), intent(in) :: sendbuf
            type(*), dimension(*) :: recvbuf
            integer, intent(in) :: sendcount, dest, sendtag, recvcount, source, recvtag
            type(MPI_Datatype), intent(in) :: sendtype, recvtype
            type(MPI_Comm), intent(in) :: comm
            type(MPI_Status) :: status
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Guard_complete(buf, len, ierror): finish the guarded transfers whose pages touch
    !! the len bytes at buf. One procedure serves both bindings (no handle tells them
    !! apart): IERROR is optional in each.
    interface MPIX_Guard_complete
        subroutine mpix_guard_complete(buf, len, ierror)
            import :: MPI_ADDRESS_KIND
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in) :: buf
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: len
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Guard_complete_all(ierror): finish every guarded transfer of this process.
    interface MPIX_Guard_complete_all
        subroutine mpix_guard_complete_all(ierror)
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface
end module mpix_guard
