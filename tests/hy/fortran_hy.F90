! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program's hybrid collectives through the hy calls, built once per MPI binding
! (-DMPIF_H: mpif.h and the calls without interfaces, compiled as such programs are, with
! gfortran's -fallow-argument-mismatch; -DUSE_MPI: use mpi; -DF08: use mpi_f08, IERROR
! left out where it may be): a hybrid communicator and its two levels;
! an allreduce of doubles (sum) from a send buffer and of integers (max) in place; an
! allgather from a send buffer and in place; a broadcast from every root, from a send
! buffer and in place; every result checked on every rank against MPI_Allreduce,
! MPI_Allgather and the values expected, over several iterations whose inputs change. A
! root out of range is an error on every rank (the window returns errors), and
! MPIX_Hy_free leaves MPI_WIN_NULL. Any failure aborts the job.
program hy_fortran
#if !defined(MPIF_H)
    use mpix_hy
#endif
! The binding's use or include, HANDLE(kind), IERR (tests/pmpi).
#include "fortran_binding.h"
    integer, parameter :: n = 5, iterations = 3
    HANDLE(MPI_Comm) :: hy_comm, node_comm, bridge_comm
    integer :: ierr, rank, size, node, nodes, node_size, leaders, node_sum, failures

    call start()

    call MPIX_Hy_comm_create(MPI_COMM_WORLD, MPI_INFO_NULL, hy_comm IERR)
    call MPIX_Hy_comm_query(hy_comm, node_comm, bridge_comm, node, nodes IERR)
    call MPI_Comm_size(node_comm, node_size, ierr)
    ! Every process counts its node once through its leader: the node sizes add up.
    leaders = 0
    if (bridge_comm /= MPI_COMM_NULL) leaders = node_size
    call MPI_Allreduce(leaders, node_sum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(node_sum == size .and. node >= 0 .and. node < nodes, 'levels')

    call allreduce_sum()
    call allreduce_max_in_place()
    call allgather()
    call bcast()
    call bad_root()

    call MPI_Comm_free(hy_comm, ierr)
    call finish('hy Fortran')

contains

#include "fortran_checks.h"

    ! Sum of doubles from a send buffer, against MPI_Allreduce.
    subroutine allreduce_sum()
        HANDLE(MPI_Win) :: win
        type(c_ptr) :: slot_address, result_address
        real(8), pointer :: result(:)
        real(8) :: input(n), expected(n)
        integer :: it, i
        call MPIX_Hy_allreduce_create(hy_comm, n, MPI_DOUBLE_PRECISION, MPI_SUM, slot_address, result_address, &
                                      win IERR)
        call c_f_pointer(result_address, result, [n])
        do it = 1, iterations
            input = [(real(rank * 100 + it * 10 + i, 8), i = 1, n)]
            call MPIX_Hy_allreduce(input, win IERR)
            call MPI_Allreduce(input, expected, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
            call check(all(result == expected), 'allreduce sum')
        end do
        call MPIX_Hy_free(win IERR)
        call check(win == MPI_WIN_NULL, 'window after MPIX_Hy_free')
    end subroutine

    ! Maximum of integers written into the slot, MPI_IN_PLACE.
    subroutine allreduce_max_in_place()
        HANDLE(MPI_Win) :: win
        type(c_ptr) :: slot_address, result_address
        integer, pointer :: slot(:), result(:)
        integer :: it, i, r
        call MPIX_Hy_allreduce_create(hy_comm, n, MPI_INTEGER, MPI_MAX, slot_address, result_address, win IERR)
        call c_f_pointer(slot_address, slot, [n])
        call c_f_pointer(result_address, result, [n])
        do it = 1, iterations
            ! The slot may be written once every process of the node left the last call.
            call MPI_Barrier(node_comm, ierr)
            slot = [(mod(rank * 7 + i * it, size + 3), i = 1, n)]
            call MPIX_Hy_allreduce(MPI_IN_PLACE, win IERR)
            call check(all(result == [(maxval([(mod(r * 7 + i * it, size + 3), r = 0, size - 1)]), i = 1, n)]), &
                       'allreduce max in place')
        end do
        call MPIX_Hy_free(win IERR)
    end subroutine

    ! Three doubles a process, from a send buffer and then written into its slot.
    subroutine allgather()
        HANDLE(MPI_Win) :: win
        type(c_ptr) :: result_address
        real(8), pointer :: result(:)
        real(8) :: input(3), expected(3 * size)
        integer :: it, i
        call MPIX_Hy_allgather_create(hy_comm, 3, MPI_DOUBLE_PRECISION, result_address, win IERR)
        call c_f_pointer(result_address, result, [3 * size])
        do it = 1, iterations
            input = [(real(rank * 1000 + it * 10 + i, 8), i = 1, 3)]
            call MPIX_Hy_allgather(input, win IERR)
            call MPI_Allgather(input, 3, MPI_DOUBLE_PRECISION, expected, 3, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
            call check(all(result == expected), 'allgather')
            call MPI_Barrier(node_comm, ierr)
            result(3 * rank + 1 : 3 * rank + 3) = -input
            call MPIX_Hy_allgather(MPI_IN_PLACE, win IERR)
            call check(all(result == -expected), 'allgather in place')
        end do
        call MPIX_Hy_free(win IERR)
    end subroutine

    ! Every root, from a send buffer and in place (the root writes its node's buffer).
    subroutine bcast()
        HANDLE(MPI_Win) :: win
        type(c_ptr) :: buffer_address
        real(8), pointer :: buffer(:)
        real(8) :: data(n)
        integer :: root, i
        call MPIX_Hy_bcast_create(hy_comm, n, MPI_DOUBLE_PRECISION, buffer_address, win IERR)
        call c_f_pointer(buffer_address, buffer, [n])
        do root = 0, size - 1
            data = [(real(root * 10 + i, 8), i = 1, n)]
            if (rank /= root) data = -1
            call MPIX_Hy_bcast(data, root, win IERR)
            call check(all(buffer == [(real(root * 10 + i, 8), i = 1, n)]), 'bcast')
            call MPI_Barrier(MPI_COMM_WORLD, ierr)
            if (rank == root) buffer = [(real(root * 10 + i, 8) + 0.5d0, i = 1, n)]
            call MPIX_Hy_bcast(MPI_IN_PLACE, root, win IERR)
            call check(all(buffer == [(real(root * 10 + i, 8) + 0.5d0, i = 1, n)]), 'bcast in place')
            call MPI_Barrier(MPI_COMM_WORLD, ierr)
        end do
        call MPIX_Hy_free(win IERR)
    end subroutine

    ! A root out of range: an error on every rank, through the window's handler.
    subroutine bad_root()
        HANDLE(MPI_Win) :: win
        type(c_ptr) :: buffer_address
        real(8) :: data(n)
        integer :: rc
        call MPIX_Hy_bcast_create(hy_comm, n, MPI_DOUBLE_PRECISION, buffer_address, win IERR)
        call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN, ierr)
        data = 0
        rc = MPI_SUCCESS
        call MPIX_Hy_bcast(data, size, win, rc)
        call check(rc /= MPI_SUCCESS, 'error of a root out of range')
        call MPIX_Hy_free(win IERR)
    end subroutine
end program
