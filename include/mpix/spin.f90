! SPDX-License-Identifier: BSD-3-Clause
!> @file
!! The spin calls for Fortran: `use mpix_spin` beside `use mpi` or `use mpi_f08`.
!!
!! Each call takes the window of the C call in mpix/spin.h (made by
!! MPIX_Win_allocate_shared, module mpix_storage) in the binding the program uses: an
!! integer handle and an integer IERROR with `use mpi` (and with mpif.h, whose programs
!! may call the same names without the module), mpi_f08's TYPE(MPI_Win) and an optional
!! IERROR with `use mpi_f08`. What they do and their errors are those of the C calls.
!!
!! The module is built by the MPI's own Fortran wrapper and installed beside the
!! headers; link with -lmpix.
module mpix_spin
    use mpi_f08, only: MPI_Win
    implicit none
    private
    public :: MPIX_Win_spin_post, MPIX_Win_spin_wait, MPIX_Win_spin_barrier

    !> MPIX_Win_spin_post(win, ierror): the leader (rank 0 of the window's group)
    !! publishes every store it made so far.
    interface MPIX_Win_spin_post
        subroutine mpix_win_spin_post(win, ierror)
            integer, intent(in) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_spin_post_f08(win, ierror)
            import :: MPI_Win
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_spin_wait(win, ierror): another process returns once the leader's next
    !! post (its n-th for this process's n-th wait) and the stores before it are visible.
    interface MPIX_Win_spin_wait
        subroutine mpix_win_spin_wait(win, ierror)
            integer, intent(in) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_spin_wait_f08(win, ierror)
            import :: MPI_Win
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_spin_barrier(win, ierror): every process of the window's group returns
    !! once all have entered; stores before it are visible to all after it.
    interface MPIX_Win_spin_barrier
        subroutine mpix_win_spin_barrier(win, ierror)
            integer, intent(in) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_spin_barrier_f08(win, ierror)
            import :: MPI_Win
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface
end module mpix_spin
