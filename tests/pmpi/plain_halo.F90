! SPDX-License-Identifier: BSD-3-Clause
! A Fortran MPI program that knows nothing of mpix: a block of doubles per rank in a
! periodic ring, depth ghost rows deep on each side (the first index is contiguous, so a
! halo of whole rows of 512 doubles is a vector of 4 KiB blocks), exchanged with
! MPI_Irecv/MPI_Isend and MPI_Waitall on a vector type built and freed every step; then
! a blocking MPI_Send into a contiguous MPI_Recv, MPI_Probe + MPI_Get_count sizing the
! receive, MPI_Waitany, and MPI_Test polled. Every received value is checked (a wrong one aborts), and
! rank 0 prints one line per rank. Built with the MPI's own mpif90 once per binding
! (fortran_binding.h); under LD_PRELOAD=libmpix-pmpi.so with MPIX_PMPI=zcopy the output
! must be the same (tests/pmpi/preload_zcopy.sh).
program plain_halo
#include "fortran_binding.h"
    integer, parameter :: depth = 512, columns = 2 * depth, width = columns + 2 * depth, rows = 64, steps = 20
    double precision, allocatable :: grid(:, :), packed(:)
    integer :: rank, ranks, left, right, ierr, step, r, k, count, index, errors, all_errors
    logical :: done
    HANDLE(MPI_Datatype) :: halo
    HANDLE(MPI_Request) :: requests(4)
    STATUS :: status

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
    left = modulo(rank - 1, ranks)
    right = modulo(rank + 1, ranks)
    allocate (grid(width, rows), packed(depth * rows))
    errors = 0

    do step = 0, steps
        call fill(step)
        grid(1:depth, :) = -1
        grid(depth + columns + 1:width, :) = -1
        call MPI_Type_vector(rows, depth, width, MPI_DOUBLE_PRECISION, halo, ierr)
        call MPI_Type_commit(halo, ierr)
        call MPI_Irecv(grid(1, 1), 1, halo, left, 0, MPI_COMM_WORLD, requests(1), ierr)
        call MPI_Irecv(grid(depth + columns + 1, 1), 1, halo, right, 1, MPI_COMM_WORLD, requests(2), ierr)
        call MPI_Isend(grid(columns + 1, 1), 1, halo, right, 0, MPI_COMM_WORLD, requests(3), ierr)
        call MPI_Isend(grid(depth + 1, 1), 1, halo, left, 1, MPI_COMM_WORLD, requests(4), ierr)
        call MPI_Type_free(halo, ierr)
        call MPI_Waitall(4, requests, MPI_STATUSES_IGNORE, ierr)
        call check_ghost(1, left, columns + 1, step)
        call check_ghost(depth + columns + 1, right, depth + 1, step)
    end do

    step = steps
    call MPI_Type_vector(rows, depth, width, MPI_DOUBLE_PRECISION, halo, ierr)
    call MPI_Type_commit(halo, ierr)
    packed = 0
    if (modulo(rank, 2) == 0) then
        call MPI_Send(grid(columns + 1, 1), 1, halo, right, 2, MPI_COMM_WORLD, ierr)
        call MPI_Recv(packed, depth * rows, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, status, ierr)
    else
        call MPI_Recv(packed, depth * rows, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, status, ierr)
        call MPI_Send(grid(columns + 1, 1), 1, halo, right, 2, MPI_COMM_WORLD, ierr)
    end if
    call check_packed(left, columns + 1)

    packed = 0
    call MPI_Isend(grid(columns + 1, 1), 1, halo, right, 3, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Probe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    if (count /= depth * rows) errors = errors + 1
    call MPI_Recv(packed, count, MPI_DOUBLE_PRECISION, left, 3, MPI_COMM_WORLD, status, ierr)
    call MPI_Wait(requests(1), MPI_STATUS_IGNORE, ierr)
    call check_packed(left, columns + 1)

    packed = 0
    call MPI_Irecv(packed, depth * rows, MPI_DOUBLE_PRECISION, left, 4, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(grid(columns + 1, 1), 1, halo, right, 4, MPI_COMM_WORLD, requests(2), ierr)
    ! Both requests complete, whichever first: checked on the handles, as MPICH 4.0's
    ! mpi_f08 MPI_Waitany reports the index from 0.
    do k = 1, 2
        call MPI_Waitany(2, requests, index, status, ierr)
#if !defined(F08)
        if (index < 1 .or. index > 2) errors = errors + 1
#endif
    end do
    if (requests(1) /= MPI_REQUEST_NULL .or. requests(2) /= MPI_REQUEST_NULL) errors = errors + 1
    call check_packed(left, columns + 1)

    ! Polled with MPI_Test, as a program overlapping work would.
    packed = 0
    call MPI_Irecv(packed, depth * rows, MPI_DOUBLE_PRECISION, left, 5, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(grid(columns + 1, 1), 1, halo, right, 5, MPI_COMM_WORLD, requests(2), ierr)
    done = .false.
    do while (.not. done)
        call MPI_Test(requests(1), done, status, ierr)
    end do
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    if (count /= depth * rows) errors = errors + 1
    call MPI_Wait(requests(2), MPI_STATUS_IGNORE, ierr)
    call check_packed(left, columns + 1)
    call MPI_Type_free(halo, ierr)

    call MPI_Allreduce(errors, all_errors, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (all_errors /= 0) then
        write (0, '("rank ", i0, ": ", i0, " wrong values")') rank, errors
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    if (rank == 0) write (*, '("plain_halo: ", i0, " ranks, all values right")') ranks
    call MPI_Finalize(ierr)

contains

    double precision function value(owner, at_step, row, column)
        integer, intent(in) :: owner, at_step, row, column
        value = owner * 1d7 + at_step * 1d5 + row * 2000 + column
    end function

    subroutine fill(at_step)
        integer, intent(in) :: at_step
        do r = 1, rows
            do k = depth + 1, depth + columns
                grid(k, r) = value(rank, at_step, r, k)
            end do
        end do
    end subroutine

    ! Ghost columns at..at+depth-1 hold owner's columns first..first+depth-1.
    subroutine check_ghost(at, owner, first, at_step)
        integer, intent(in) :: at, owner, first, at_step
        do r = 1, rows
            do k = 0, depth - 1
                if (grid(at + k, r) /= value(owner, at_step, r, first + k)) errors = errors + 1
            end do
        end do
    end subroutine

    subroutine check_packed(owner, first)
        integer, intent(in) :: owner, first
        do r = 1, rows
            do k = 0, depth - 1
                if (packed((r - 1) * depth + k + 1) /= value(owner, step, r, first + k)) errors = errors + 1
            end do
        end do
    end subroutine
end program
