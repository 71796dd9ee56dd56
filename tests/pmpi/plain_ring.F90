! SPDX-License-Identifier: BSD-3-Clause
! A Fortran MPI program that knows nothing of mpix, in the style of a stencil code: a
! ring of blocking MPI_Send/MPI_Recv (even ranks send first), an MPI_Sendrecv the other
! way, and a halo of strided rows with MPI_Isend/MPI_Irecv on a vector type built and
! freed every iteration; each step computes on what arrived. Built with the MPI's own
! mpif90 once per binding (fortran_binding.h). It prints one checksum per rank; any
! interposition library must leave them as plain MPI gives them.
program plain_ring
#include "fortran_binding.h"
    integer, parameter :: n = 16384, rows = 64, columns = 512, steps = 12
    double precision, allocatable :: outgoing(:), incoming(:), returned(:), grid(:, :)
    double precision :: checksum
    double precision, allocatable :: checksums(:)
    integer :: rank, ranks, left, right, ierr, step, i
    HANDLE(MPI_Datatype) :: row
    HANDLE(MPI_Request) :: requests(4)
    STATUS :: status

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
    left = modulo(rank - 1, ranks)
    right = modulo(rank + 1, ranks)
    allocate (outgoing(n), incoming(n), returned(n), grid(0:rows + 1, columns), checksums(0:ranks - 1))
    grid = rank
    checksum = 0

    do step = 1, steps
        outgoing = [(rank * 1.0d6 + step * 1.0d3 + i, i = 1, n)]
        if (modulo(rank, 2) == 0) then
            call MPI_Send(outgoing, n, MPI_DOUBLE_PRECISION, right, step, MPI_COMM_WORLD, ierr)
            call MPI_Recv(incoming, n, MPI_DOUBLE_PRECISION, left, step, MPI_COMM_WORLD, status, ierr)
        else
            call MPI_Recv(incoming, n, MPI_DOUBLE_PRECISION, left, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
            call MPI_Send(outgoing, n, MPI_DOUBLE_PRECISION, right, step, MPI_COMM_WORLD, ierr)
        end if
        checksum = checksum + sum(incoming) / n
        call MPI_Sendrecv(incoming, n, MPI_DOUBLE_PRECISION, left, 100 + step, &
                          returned, n, MPI_DOUBLE_PRECISION, right, 100 + step, MPI_COMM_WORLD, status, ierr)
        if (any(returned /= outgoing)) then
            write (0, '("rank ", i0, ": step ", i0, ": the ring did not return what this rank sent")') rank, step
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if

        ! Halo rows: grid(1, :) and grid(rows, :) are strided in memory (column-major).
        call MPI_Type_vector(columns, 1, rows + 2, MPI_DOUBLE_PRECISION, row, ierr)
        call MPI_Type_commit(row, ierr)
        call MPI_Irecv(grid(0, 1), 1, row, left, 200, MPI_COMM_WORLD, requests(1), ierr)
        call MPI_Irecv(grid(rows + 1, 1), 1, row, right, 201, MPI_COMM_WORLD, requests(2), ierr)
        call MPI_Isend(grid(rows, 1), 1, row, right, 200, MPI_COMM_WORLD, requests(3), ierr)
        call MPI_Isend(grid(1, 1), 1, row, left, 201, MPI_COMM_WORLD, requests(4), ierr)
        call MPI_Waitall(4, requests, MPI_STATUSES_IGNORE, ierr)
        call MPI_Type_free(row, ierr)
        grid(1:rows, :) = 0.25d0 * (grid(0:rows - 1, :) + grid(2:rows + 1, :)) + 0.5d0 * grid(1:rows, :) + step
        checksum = checksum + sum(grid(1:rows, :)) / (rows * columns)
    end do

    call MPI_Gather(checksum, 1, MPI_DOUBLE_PRECISION, checksums, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        do i = 0, ranks - 1
            write (*, '("rank ", i0, ": checksum ", es24.16)') i, checksums(i)
        end do
    end if
    call MPI_Finalize(ierr)
end program
