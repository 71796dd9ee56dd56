! SPDX-License-Identifier: BSD-3-Clause
! A Fortran halo exchange through the zcopy calls (use mpi_f08 and the module mpix_zcopy).
!
! The ranks form a ring along y; each owns an n^3 block of a (0:n+1)^3 array. Every step
! posts the receives of its two ghost y-planes and the sends of its two edge y-planes
! with MPIX_Irecv_zcopy/MPIX_Isend_zcopy, waits for all four with MPI_Waitall, and
! averages each interior cell with its y-neighbours. A y-plane's interior is n runs of n
! doubles, a subarray built and freed every step as applications do; it moves from one
! rank's array into the other's ghost plane without a packing buffer. The same exchange
! runs with MPI_Sendrecv on a copy, and the program checks both give the same grid.
!
! Build: mpif90 -I<includedir> zcopy_halo.f90 -lmpix; run: mpirun -np 2 zcopy_halo
program zcopy_halo
    use mpi_f08
    use mpix_zcopy
    implicit none
    integer, parameter :: n = 48, steps = 10
    real(8), allocatable :: grid(:, :, :), reference(:, :, :)
    ! The y-planes a step moves: ghost below, edge below, edge above, ghost above.
    integer, parameter :: at(4) = [0, 1, n, n + 1]
    type(MPI_Datatype) :: planes(4)
    type(MPI_Request) :: requests(4)
    integer :: rank, size, below, above, step, i, j, k, mismatches

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, size)
    below = mod(rank + size - 1, size)
    above = mod(rank + 1, size)
    allocate(grid(0:n + 1, 0:n + 1, 0:n + 1))
    grid = 0
    do k = 1, n
        do j = 1, n
            do i = 1, n
                grid(i, j, k) = rank * 1000d0 + j * 10d0 + k + i * 0.01d0
            end do
        end do
    end do
    reference = grid

    do step = 1, steps
        do i = 1, 4
            planes(i) = plane(at(i))
        end do
        call MPIX_Irecv_zcopy(grid, 1, planes(1), below, 0, MPI_COMM_WORLD, requests(1))
        call MPIX_Irecv_zcopy(grid, 1, planes(4), above, 1, MPI_COMM_WORLD, requests(2))
        call MPIX_Isend_zcopy(grid, 1, planes(3), above, 0, MPI_COMM_WORLD, requests(3))
        call MPIX_Isend_zcopy(grid, 1, planes(2), below, 1, MPI_COMM_WORLD, requests(4))
        call MPI_Waitall(4, requests, MPI_STATUSES_IGNORE)
        call MPI_Sendrecv(reference, 1, planes(3), above, 10, reference, 1, planes(1), below, 10, &
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call MPI_Sendrecv(reference, 1, planes(2), below, 11, reference, 1, planes(4), above, 11, &
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        do i = 1, 4
            call MPI_Type_free(planes(i))
        end do
        call smooth(grid)
        call smooth(reference)
    end do

    mismatches = count(grid /= reference)
    call MPI_Allreduce(MPI_IN_PLACE, mismatches, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (mismatches /= 0) then
        if (rank == 0) print '(a, i0, a)', 'zcopy_halo: ', mismatches, ' cells differ'
        call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
    if (rank == 0) print '(a, i0, a, i0, a)', 'zcopy_halo: ', steps, ' steps on ', size, ' ranks, grids identical'
    call MPI_Finalize()

contains

    ! The y-plane j of the array, interior only.
    type(MPI_Datatype) function plane(j)
        integer, intent(in) :: j
        call MPI_Type_create_subarray(3, [n + 2, n + 2, n + 2], [n, 1, n], [1, j, 1], MPI_ORDER_FORTRAN, &
                                      MPI_DOUBLE_PRECISION, plane)
        call MPI_Type_commit(plane)
    end function

    subroutine smooth(field)
        real(8), intent(inout) :: field(0:, 0:, 0:)
        real(8), allocatable :: before(:, :, :)
        before = field
        field(1:n, 1:n, 1:n) = (before(1:n, 0:n - 1, 1:n) + before(1:n, 1:n, 1:n) + before(1:n, 2:n + 1, 1:n)) / 3
    end subroutine
end program zcopy_halo
