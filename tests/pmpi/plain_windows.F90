! SPDX-License-Identifier: BSD-3-Clause
! A Fortran MPI program that knows nothing of mpix and reads received data one-sided, as
! a code that gathers boundary data with MPI_Get does: rank 0 receives each round's
! array from rank 1 straight into memory a window exposes and tells rank 1 with a short
! message; rank 1 reads the array back with MPI_Get (lock, get, unlock) and checks it.
! Three windows: MPI_Win_create over an allocatable array, MPI_Win_allocate's memory and
! an array attached to a dynamic window; each is freed right after its last round. Built
! with the MPI's own mpif90 once per binding (fortran_binding.h); it prints one line. An
! interposition library that delays receives must finish this one before the short
! message tells rank 1: rank 1's MPI_Get reads rank 0's memory without rank 0 touching it.
program plain_windows
#include "fortran_binding.h"
    integer, parameter :: n = 65536, rounds = 5
    double precision, allocatable, target :: outgoing(:), back(:), created(:), attached(:)
    double precision, pointer :: window_data(:)
    integer :: rank, ranks, ierr, kind, round, i, wrong, total
    double precision :: ready(1)
    integer(kind=MPI_ADDRESS_KIND) :: bytes, target_disp
    ADDRESS :: base_address
    HANDLE(MPI_Win) :: win
    character(len=*), parameter :: names(3) = [character(len=8) :: 'create', 'allocate', 'dynamic']

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
    allocate (outgoing(n), back(n), created(n), attached(n))
    wrong = 0
    bytes = 0
    if (rank == 0) bytes = 8_MPI_ADDRESS_KIND * n

    do kind = 1, 3
        target_disp = 0
        select case (kind)
        case (1)
            call MPI_Win_create(created, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
            window_data => created
        case (2)
            call MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base_address, win, ierr)
            if (rank == 0) call c_f_pointer(AS_C_POINTER(base_address), window_data, [n])
        case (3)
            call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
            if (rank == 0) call MPI_Win_attach(win, attached, bytes, ierr)
            call MPI_Get_address(attached, target_disp, ierr)
            call MPI_Bcast(target_disp, 1, MPI_AINT, 0, MPI_COMM_WORLD, ierr)
            window_data => attached
        end select
        if (ierr /= MPI_SUCCESS) then
            write (0, '("rank ", i0, ": the ", a, " window failed")') rank, trim(names(kind))
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if

        do round = 1, rounds
            ready = round
            if (rank == 0 .and. ranks > 1) then
                call MPI_Recv(window_data, n, MPI_DOUBLE_PRECISION, 1, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
                call MPI_Send(ready, 1, MPI_DOUBLE_PRECISION, 1, 100 + round, MPI_COMM_WORLD, ierr)
            else if (rank == 1) then
                outgoing = [(kind * 1.0d7 + round * 1.0d5 + i, i = 1, n)]
                call MPI_Send(outgoing, n, MPI_DOUBLE_PRECISION, 0, round, MPI_COMM_WORLD, ierr)
                call MPI_Recv(ready, 1, MPI_DOUBLE_PRECISION, 0, 100 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
                call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
                call MPI_Get(back, n, MPI_DOUBLE_PRECISION, 0, target_disp, n, MPI_DOUBLE_PRECISION, win, ierr)
                call MPI_Win_unlock(0, win, ierr)
                if (any(back /= outgoing)) then
                    write (0, '("rank 1: ", a, " window, round ", i0, ": MPI_Get read ", es12.5, " for ", es12.5)') &
                        trim(names(kind)), round, back(1), outgoing(1)
                    wrong = wrong + 1
                end if
            end if
            call MPI_Barrier(MPI_COMM_WORLD, ierr)   ! read before the next round overwrites
        end do

        if (kind == 3 .and. rank == 0) call MPI_Win_detach(win, attached, ierr)
        call MPI_Win_free(win, ierr)
    end do

    call MPI_Allreduce(wrong, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) write (*, '("windows: ", i0, " ranks, ", i0, " rounds, ", i0, " wrong")') ranks, rounds, total
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1
end program
