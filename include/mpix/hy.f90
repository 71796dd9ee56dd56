! SPDX-License-Identifier: BSD-3-Clause
!> @file
!! The hy calls for Fortran: `use mpix_hy` beside `use mpi` or `use mpi_f08`.
!!
!! Each call takes the arguments of the C call in mpix/hy.h, in the binding the program
!! uses: integer handles and an integer IERROR with `use mpi` (and with mpif.h, whose
!! programs may call the same names without the module), handles of mpi_f08's types and
!! an optional IERROR with `use mpi_f08`. What they do, their errors and hints are those
!! of the C calls.
!!
!! The node's shared buffers come back as TYPE(C_PTR) (`use, intrinsic ::
!! iso_c_binding`); `call c_f_pointer(result, array, [n])` makes them arrays. Without
!! the module (mpif.h) an INTEGER(KIND=MPI_ADDRESS_KIND) takes the address as well.
!! SENDBUF is the address of its first element (`TYPE(*), DIMENSION(*)`, with
!! gfortran's NO_ARG_CHECK, so any type, kind and rank is taken) or the binding's
!! MPI_IN_PLACE; pass whole arrays or array elements, not array sections.
!!
!! The module is built by the MPI's own Fortran wrapper and installed beside the
!! headers; link with -lmpix.
module mpix_hy
    use, intrinsic :: iso_c_binding, only: c_ptr
    use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Info, MPI_Op, MPI_Win
    implicit none
    private
    public :: MPIX_Hy_comm_create, MPIX_Hy_comm_query, MPIX_Hy_allgather_create, MPIX_Hy_allgather, &
              MPIX_Hy_bcast_create, MPIX_Hy_bcast, MPIX_Hy_allreduce_create, MPIX_Hy_allreduce, MPIX_Hy_free

    !> MPIX_Hy_comm_create(comm, info, hy_comm, ierror): a hybrid communicator of comm.
    interface MPIX_Hy_comm_create
        subroutine mpix_hy_comm_create(comm, info, hy_comm, ierror)
            integer, intent(in) :: comm, info
            integer, intent(out) :: hy_comm, ierror
        end subroutine
        subroutine mpix_hy_comm_create_f08(comm, info, hy_comm, ierror)
            import :: MPI_Comm, MPI_Info
            type(MPI_Comm), intent(in) :: comm
            type(MPI_Info), intent(in) :: info
            type(MPI_Comm), intent(out) :: hy_comm
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_comm_query(hy_comm, node_comm, bridge_comm, node, nodes, ierror): its two
    !! levels (do not free them), this process's node index (from 0) and the node count.
    interface MPIX_Hy_comm_query
        subroutine mpix_hy_comm_query(hy_comm, node_comm, bridge_comm, node, nodes, ierror)
            integer, intent(in) :: hy_comm
            integer, intent(out) :: node_comm, bridge_comm, node, nodes, ierror
        end subroutine
        subroutine mpix_hy_comm_query_f08(hy_comm, node_comm, bridge_comm, node, nodes, ierror)
            import :: MPI_Comm
            type(MPI_Comm), intent(in) :: hy_comm
            type(MPI_Comm), intent(out) :: node_comm, bridge_comm
            integer, intent(out) :: node, nodes
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_allgather_create(hy_comm, count, datatype, result, win, ierror): set up an
    !! allgather of count elements per process; result: the node's shared result.
    interface MPIX_Hy_allgather_create
        subroutine mpix_hy_allgather_create(hy_comm, count, datatype, result, win, ierror)
            import :: c_ptr
            integer, intent(in) :: hy_comm, count, datatype
            type(c_ptr), intent(out) :: result
            integer, intent(out) :: win, ierror
        end subroutine
        subroutine mpix_hy_allgather_create_f08(hy_comm, count, datatype, result, win, ierror)
            import :: c_ptr, MPI_Comm, MPI_Datatype, MPI_Win
            type(MPI_Comm), intent(in) :: hy_comm
            integer, intent(in) :: count
            type(MPI_Datatype), intent(in) :: datatype
            type(c_ptr), intent(out) :: result
            type(MPI_Win), intent(out) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_allgather(sendbuf, win, ierror): every process's sendbuf (or its slot
    !! written in place: MPI_IN_PLACE) lands at its rank's slot of the result.
    interface MPIX_Hy_allgather
        subroutine mpix_hy_allgather(sendbuf, win, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
            type(*), dimension(*), intent(in) :: sendbuf
            integer, intent(in) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_hy_allgather_f08(sendbuf, win, ierror)
            import :: MPI_Win
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
            type(*), dimension(*), intent(in) :: sendbuf
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_bcast_create(hy_comm, count, datatype, buffer, win, ierror): set up a
    !! broadcast of count elements; buffer: the node's shared buffer.
    interface MPIX_Hy_bcast_create
        subroutine mpix_hy_bcast_create(hy_comm, count, datatype, buffer, win, ierror)
            import :: c_ptr
            integer, intent(in) :: hy_comm, count, datatype
            type(c_ptr), intent(out) :: buffer
            integer, intent(out) :: win, ierror
        end subroutine
        subroutine mpix_hy_bcast_create_f08(hy_comm, count, datatype, buffer, win, ierror)
            import :: c_ptr, MPI_Comm, MPI_Datatype, MPI_Win
            type(MPI_Comm), intent(in) :: hy_comm
            integer, intent(in) :: count
            type(MPI_Datatype), intent(in) :: datatype
            type(c_ptr), intent(out) :: buffer
            type(MPI_Win), intent(out) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_bcast(sendbuf, root, win, ierror): root's sendbuf (or what it wrote into
    !! its node's buffer: MPI_IN_PLACE) in every node's buffer; sendbuf is read on root only.
    interface MPIX_Hy_bcast
        subroutine mpix_hy_bcast(sendbuf, root, win, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
            type(*), dimension(*), intent(in) :: sendbuf
            integer, intent(in) :: root, win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_hy_bcast_f08(sendbuf, root, win, ierror)
            import :: MPI_Win
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
            type(*), dimension(*), intent(in) :: sendbuf
            integer, intent(in) :: root
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_allreduce_create(hy_comm, count, datatype, op, slot, result, win, ierror):
    !! set up an allreduce of count elements with op; slot: this process's input slot
    !! (for MPI_IN_PLACE), result: where this process reads the result.
    interface MPIX_Hy_allreduce_create
        subroutine mpix_hy_allreduce_create(hy_comm, count, datatype, op, slot, result, win, ierror)
            import :: c_ptr
            integer, intent(in) :: hy_comm, count, datatype, op
            type(c_ptr), intent(out) :: slot, result
            integer, intent(out) :: win, ierror
        end subroutine
        subroutine mpix_hy_allreduce_create_f08(hy_comm, count, datatype, op, slot, result, win, ierror)
            import :: c_ptr, MPI_Comm, MPI_Datatype, MPI_Op, MPI_Win
            type(MPI_Comm), intent(in) :: hy_comm
            integer, intent(in) :: count
            type(MPI_Datatype), intent(in) :: datatype
            type(MPI_Op), intent(in) :: op
            type(c_ptr), intent(out) :: slot, result
            type(MPI_Win), intent(out) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_allreduce(sendbuf, win, ierror): the reduction of every process's sendbuf
    !! (or its slot written in place: MPI_IN_PLACE) at result.
    interface MPIX_Hy_allreduce
        subroutine mpix_hy_allreduce(sendbuf, win, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
            type(*), dimension(*), intent(in) :: sendbuf
            integer, intent(in) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_hy_allreduce_f08(sendbuf, win, ierror)
            import :: MPI_Win
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf
            type(*), dimension(*), intent(in) :: sendbuf
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Hy_free(win, ierror): free an operation (collective over its node); win
    !! becomes MPI_WIN_NULL.
    interface MPIX_Hy_free
        subroutine mpix_hy_free(win, ierror)
            integer, intent(inout) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_hy_free_f08(win, ierror)
            import :: MPI_Win
            type(MPI_Win), intent(inout) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface
end module mpix_hy
