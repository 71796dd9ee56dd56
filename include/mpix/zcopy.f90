! SPDX-License-Identifier: BSD-3-Clause
!> @file
!! The zcopy calls for Fortran: `use mpix_zcopy` beside `use mpi` or `use mpi_f08`.
!!
!! Each call takes the arguments of the MPI call it stands for, in the binding the
!! program uses: integer handles and an integer IERROR with `use mpi` (and with
!! mpif.h, whose programs may call the same names without the module), handles of
!! mpi_f08's types and an optional IERROR with `use mpi_f08`. What they do, their
!! errors and hints are those of the C calls in mpix/zcopy.h.
!!
!! Buffers are passed as the address of their first element (`TYPE(*), DIMENSION(*)`,
!! with gfortran's NO_ARG_CHECK so that any type, kind and rank is taken), as by
!! `use mpi` where MPI_SUBARRAYS_SUPPORTED is false: pass whole arrays or array
!! elements with a datatype that describes the layout, not array sections, which the
!! compiler may copy into a temporary that is gone before a nonblocking call
!! completes. MPI_BOTTOM and MPI_STATUS_IGNORE are the binding's own.
!!
!! The module is built by the MPI's own Fortran wrapper and installed beside the
!! headers; link with -lmpix.
module mpix_zcopy
    use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status, MPI_STATUS_SIZE
    implicit none
    private
    public :: MPIX_Send_zcopy, MPIX_Recv_zcopy, MPIX_Isend_zcopy, MPIX_Irecv_zcopy, MPIX_Probe_zcopy, &
              MPIX_Iprobe_zcopy, MPIX_Mprobe_zcopy, MPIX_Improbe_zcopy, MPIX_Mrecv_zcopy, MPIX_Imrecv_zcopy, &
              MPIX_Type_commit_comm, MPIX_Type_free_comm

    !> MPIX_Send_zcopy(buf, count, datatype, dest, tag, comm, ierror): MPI_Send's arguments.
    interface MPIX_Send_zcopy
        subroutine mpix_send_zcopy(buf, count, datatype, dest, tag, comm, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in) :: buf
            integer, intent(in) :: count, datatype, dest, tag, comm
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_send_zcopy_f08(buf, count, datatype, dest, tag, comm, ierror)
            import :: MPI_Comm, MPI_Datatype
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in) :: buf
            integer, intent(in) :: count, dest, tag
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Comm), intent(in) :: comm
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Recv_zcopy(buf, count, datatype, source, tag, comm, status, ierror): MPI_Recv's.
    interface MPIX_Recv_zcopy
        subroutine mpix_recv_zcopy(buf, count, datatype, source, tag, comm, status, ierror)
            import :: MPI_STATUS_SIZE
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*) :: buf
            integer, intent(in) :: count, datatype, source, tag, comm
            integer, intent(out) :: status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_recv_zcopy_f08(buf, count, datatype, source, tag, comm, status, ierror)
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

    !> MPIX_Isend_zcopy(buf, count, datatype, dest, tag, comm, request, ierror): MPI_Isend's;
    !! MPI_Wait, MPI_Waitall, MPI_Test and their kin complete the request.
    interface MPIX_Isend_zcopy
        subroutine mpix_isend_zcopy(buf, count, datatype, dest, tag, comm, request, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in), asynchronous :: buf
            integer, intent(in) :: count, datatype, dest, tag, comm
            integer, intent(out) :: request, ierror
        end subroutine
        subroutine mpix_isend_zcopy_f08(buf, count, datatype, dest, tag, comm, request, ierror)
            import :: MPI_Comm, MPI_Datatype, MPI_Request
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in), asynchronous :: buf
            integer, intent(in) :: count, dest, tag
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Comm), intent(in) :: comm
            type(MPI_Request), intent(out) :: request
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Irecv_zcopy(buf, count, datatype, source, tag, comm, request, ierror): MPI_Irecv's.
    interface MPIX_Irecv_zcopy
        subroutine mpix_irecv_zcopy(buf, count, datatype, source, tag, comm, request, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), asynchronous :: buf
            integer, intent(in) :: count, datatype, source, tag, comm
            integer, intent(out) :: request, ierror
        end subroutine
        subroutine mpix_irecv_zcopy_f08(buf, count, datatype, source, tag, comm, request, ierror)
            import :: MPI_Comm, MPI_Datatype, MPI_Request
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), asynchronous :: buf
            integer, intent(in) :: count, source, tag
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Comm), intent(in) :: comm
            type(MPI_Request), intent(out) :: request
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Probe_zcopy(source, tag, comm, status, ierror): MPI_Probe's; the status counts
    !! the data a zcopy receive of the message will get.
    interface MPIX_Probe_zcopy
        subroutine mpix_probe_zcopy(source, tag, comm, status, ierror)
            import :: MPI_STATUS_SIZE
            integer, intent(in) :: source, tag, comm
            integer, intent(out) :: status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_probe_zcopy_f08(source, tag, comm, status, ierror)
            import :: MPI_Comm, MPI_Status
            integer, intent(in) :: source, tag
            type(MPI_Comm), intent(in) :: comm
            type(MPI_Status) :: status
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Iprobe_zcopy(source, tag, comm, flag, status, ierror): MPI_Iprobe's.
    interface MPIX_Iprobe_zcopy
        subroutine mpix_iprobe_zcopy(source, tag, comm, flag, status, ierror)
            import :: MPI_STATUS_SIZE
            integer, intent(in) :: source, tag, comm
            logical, intent(out) :: flag
            integer, intent(out) :: status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_iprobe_zcopy_f08(source, tag, comm, flag, status, ierror)
            import :: MPI_Comm, MPI_Status
            integer, intent(in) :: source, tag
            type(MPI_Comm), intent(in) :: comm
            logical, intent(out) :: flag
            type(MPI_Status) :: status
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Mprobe_zcopy(source, tag, comm, message, status, ierror): MPI_Mprobe's.
    interface MPIX_Mprobe_zcopy
        subroutine mpix_mprobe_zcopy(source, tag, comm, message, status, ierror)
            import :: MPI_STATUS_SIZE
            integer, intent(in) :: source, tag, comm
            integer, intent(out) :: message, status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_mprobe_zcopy_f08(source, tag, comm, message, status, ierror)
            import :: MPI_Comm, MPI_Message, MPI_Status
            integer, intent(in) :: source, tag
            type(MPI_Comm), intent(in) :: comm
            type(MPI_Message), intent(out) :: message
            type(MPI_Status) :: status
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Improbe_zcopy(source, tag, comm, flag, message, status, ierror): MPI_Improbe's.
    interface MPIX_Improbe_zcopy
        subroutine mpix_improbe_zcopy(source, tag, comm, flag, message, status, ierror)
            import :: MPI_STATUS_SIZE
            integer, intent(in) :: source, tag, comm
            logical, intent(out) :: flag
            integer, intent(out) :: message, status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_improbe_zcopy_f08(source, tag, comm, flag, message, status, ierror)
            import :: MPI_Comm, MPI_Message, MPI_Status
            integer, intent(in) :: source, tag
            type(MPI_Comm), intent(in) :: comm
            logical, intent(out) :: flag
            type(MPI_Message), intent(out) :: message
            type(MPI_Status) :: status
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Mrecv_zcopy(buf, count, datatype, message, status, ierror): MPI_Mrecv's.
    interface MPIX_Mrecv_zcopy
        subroutine mpix_mrecv_zcopy(buf, count, datatype, message, status, ierror)
            import :: MPI_STATUS_SIZE
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*) :: buf
            integer, intent(in) :: count, datatype
            integer, intent(inout) :: message
            integer, intent(out) :: status(MPI_STATUS_SIZE), ierror
        end subroutine
        subroutine mpix_mrecv_zcopy_f08(buf, count, datatype, message, status, ierror)
            import :: MPI_Datatype, MPI_Message, MPI_Status
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*) :: buf
            integer, intent(in) :: count
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Message), intent(inout) :: message
            type(MPI_Status) :: status
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Imrecv_zcopy(buf, count, datatype, message, request, ierror): MPI_Imrecv's.
    interface MPIX_Imrecv_zcopy
        subroutine mpix_imrecv_zcopy(buf, count, datatype, message, request, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), asynchronous :: buf
            integer, intent(in) :: count, datatype
            integer, intent(inout) :: message
            integer, intent(out) :: request, ierror
        end subroutine
        subroutine mpix_imrecv_zcopy_f08(buf, count, datatype, message, request, ierror)
            import :: MPI_Datatype, MPI_Message, MPI_Request
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), asynchronous :: buf
            integer, intent(in) :: count
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Message), intent(inout) :: message
            type(MPI_Request), intent(out) :: request
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Type_commit_comm(datatype, comm, ierror): MPI_Type_commit, with the layout
    !! read for zcopy on comm at once.
    interface MPIX_Type_commit_comm
        subroutine mpix_type_commit_comm(datatype, comm, ierror)
            integer, intent(inout) :: datatype
            integer, intent(in) :: comm
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_type_commit_comm_f08(datatype, comm, ierror)
            import :: MPI_Comm, MPI_Datatype
            type(MPI_Datatype), intent(inout) :: datatype
            type(MPI_Comm), intent(in) :: comm
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Type_free_comm(datatype, comm, ierror): MPI_Type_free, telling comm's peers.
    interface MPIX_Type_free_comm
        subroutine mpix_type_free_comm(datatype, comm, ierror)
            integer, intent(inout) :: datatype
            integer, intent(in) :: comm
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_type_free_comm_f08(datatype, comm, ierror)
            import :: MPI_Comm, MPI_Datatype
            type(MPI_Datatype), intent(inout) :: datatype
            type(MPI_Comm), intent(in) :: comm
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface
end module mpix_zcopy
