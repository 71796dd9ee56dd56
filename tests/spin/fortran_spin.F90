! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program's leader-to-node signalling through the spin calls, built once per
! MPI binding (-DMPIF_H: mpif.h and the calls without interfaces, compiled as such
! programs are, with gfortran's -fallow-argument-mismatch; -DUSE_MPI: use mpi; -DF08:
! use mpi_f08, IERROR left out where it may be). The node's shared window
! (MPIX_Win_allocate_shared, module mpix_storage) holds the leader's data and one slot per
! process; over several rounds the leader writes new data and posts, every other process
! waits and checks all of it, and after a barrier every process finds every other's slot
! of that round. A post by a process other than the leader, and a wait by the leader, are
! errors returned by the window. Any failure aborts the job.
program spin_fortran
#if !defined(MPIF_H)
    use mpix_storage
    use mpix_spin
#endif
! The binding's use or include, HANDLE(kind), IERR (tests/pmpi).
#include "fortran_binding.h"
    integer, parameter :: n = 1000, rounds = 50
    HANDLE(MPI_Comm) :: node_comm
    HANDLE(MPI_Win) :: win
    type(c_ptr) :: base_address
    integer(kind=MPI_ADDRESS_KIND) :: bytes
    integer, pointer :: shared(:)
    integer :: ierr, rank, size, node_rank, node_size, failures, round, i, rc, disp_unit

    call start()
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node_comm, ierr)
    call MPI_Comm_rank(node_comm, node_rank, ierr)
    call MPI_Comm_size(node_comm, node_size, ierr)

    ! The leader's segment holds all: n values, then one slot per process of the node.
    bytes = 0
    if (node_rank == 0) bytes = 4_MPI_ADDRESS_KIND * (n + node_size)
    call MPIX_Win_allocate_shared(bytes, 4, MPI_INFO_NULL, node_comm, base_address, win IERR)
    call MPIX_Win_shared_query(win, 0, bytes, disp_unit, base_address IERR)
    call c_f_pointer(base_address, shared, [n + node_size])
    call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN, ierr)

    do round = 1, rounds
        if (node_rank == 0) then
            shared(1:n) = [(round * 10000 + i, i = 1, n)]
            call MPIX_Win_spin_post(win IERR)
        else
            call MPIX_Win_spin_wait(win IERR)
            call check(all(shared(1:n) == [(round * 10000 + i, i = 1, n)]), 'data after MPIX_Win_spin_wait')
        end if
        shared(n + 1 + node_rank) = round * 100 + node_rank
        call MPIX_Win_spin_barrier(win IERR)
        call check(all(shared(n + 1:) == [(round * 100 + i, i = 0, node_size - 1)]), 'slots after the barrier')
        ! Nobody writes the next round's slots or data before all have read these.
        call MPIX_Win_spin_barrier(win IERR)
    end do

    rc = MPI_SUCCESS
    if (node_rank == 0) then
        call MPIX_Win_spin_wait(win, rc)
        call check(rc /= MPI_SUCCESS, 'error of a wait by the leader')
    else
        call MPIX_Win_spin_post(win, rc)
        call check(rc /= MPI_SUCCESS, 'error of a post by another process')
    end if

    call MPIX_Win_free(win IERR)
    call check(win == MPI_WIN_NULL, 'window after MPIX_Win_free')
    call MPI_Comm_free(node_comm, ierr)
    call finish('spin Fortran')

contains

#include "fortran_checks.h"
end program
