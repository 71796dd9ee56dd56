! SPDX-License-Identifier: BSD-3-Clause
! Checkpoint/restart with a storage window, from Fortran: a 1D heat-diffusion loop keeps
! its state in a window on a file and makes it durable every few steps with
! MPIX_Win_sync, which writes only the pages that changed. When the program starts and
! finds a checkpoint in the file, it resumes from there.
! Build: mpif90 storage_checkpoint.f90 $(pkg-config --cflags --libs mpix)
! Run:   mpirun -np 2 ./storage_checkpoint [FILE]   (run it twice: the second run resumes)
! Without FILE it demonstrates both runs in one process lifetime: it stops after half of
! the steps, frees the window, allocates it again on the same file and finishes, then
! checks the result against an uninterrupted run.
program storage_checkpoint
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    use mpi_f08
    use mpix_storage
    implicit none
    integer, parameter :: cells = 65536, steps = 40, checkpoint_every = 5
    ! A state is the marker, the steps completed, then this rank's part of the rod.
    integer, parameter :: marker_at = 1, step_at = 2, first_cell = 3
    real(8), parameter :: marker = 1129270.5d0   ! says a checkpoint is present
    real(8), pointer :: state(:)
    real(8), allocatable :: reference(:)
    type(MPI_Win) :: win
    character(len=512) :: path
    integer :: rank, ranks, same, all_same, status
    logical :: demo

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, ranks)
    demo = command_argument_count() < 1
    if (demo) then
        call system_clock(status)   ! one file for the job: rank 0's clock names it
        call MPI_Bcast(status, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
        write (path, '(a, i0, a)') '/tmp/mpix-checkpoint-', status, '.dat'
    else
        call get_command_argument(1, path)
    end if

    call open_state(path, state, win)
    if (state(marker_at) /= marker) then
        state = 0
        if (rank == 0) print '(3a)', 'checkpoint: no checkpoint in ', trim(path), ': starting at step 0'
    else if (rank == 0) then
        print '(a, i0)', 'checkpoint: resuming from step ', nint(state(step_at))
    end if
    status = 0
    if (demo) then
        call run(state, steps / 2, win)
        ! "Crash" after a checkpoint: the new window finds the state on the file.
        call MPIX_Win_free(win)
        call open_state(path, state, win)
        if (rank == 0) print '(a, i0)', 'checkpoint: restarted, the file says step ', nint(state(step_at))
        call run(state, steps, win)
        allocate (reference(first_cell + cells - 1))
        reference = 0
        call run(reference, steps, MPI_WIN_NULL)
        same = merge(1, 0, all(reference(first_cell:) == state(first_cell:)))
        call MPI_Allreduce(same, all_same, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
        if (rank == 0 .and. all_same == 1) then
            print '(a, i0, a, i0, a)', 'checkpoint: ', steps, ' steps with a restart at ', steps / 2, &
                ' match the uninterrupted run'
        else if (rank == 0) then
            print '(a, i0, a, i0, a)', 'checkpoint: ', steps, ' steps with a restart at ', steps / 2, &
                ' DO NOT match the uninterrupted run'
        end if
        if (all_same /= 1) status = 1
    else
        call run(state, steps, win)
        if (rank == 0) print '(a, i0, a)', 'checkpoint: finished step ', nint(state(step_at)), &
            '; the next run resumes here'
    end if
    call MPIX_Win_free(win)
    if (demo .and. rank == 0) call remove_file(path)
    call MPI_Finalize()
    if (status /= 0) error stop 1

contains

    ! This rank's state in a storage window on @path: one file, rank r gets the r-th part.
    subroutine open_state(path, state, win)
        character(*), intent(in) :: path
        real(8), pointer, intent(out) :: state(:)
        type(MPI_Win), intent(out) :: win
        type(MPI_Info) :: info
        type(c_ptr) :: base
        call MPI_Info_create(info)
        call MPI_Info_set(info, 'alloc_type', 'storage')
        call MPI_Info_set(info, 'storage_alloc_filename', trim(path))
        call MPIX_Win_allocate(8_MPI_ADDRESS_KIND * (first_cell + cells - 1), 8, info, MPI_COMM_WORLD, base, win)
        call MPI_Info_free(info)
        call c_f_pointer(base, state, [first_cell + cells - 1])
    end subroutine

    ! Advances @state to @until steps, exchanging ghost cells, checkpointing as it goes.
    subroutine run(state, until, win)
        real(8), intent(inout) :: state(:)
        integer, intent(in) :: until
        type(MPI_Win), intent(in) :: win
        real(8) :: left_ghost, right_ghost
        real(8), allocatable :: next(:)
        integer :: left, right, i
        left = merge(rank - 1, MPI_PROC_NULL, rank > 0)
        right = merge(rank + 1, MPI_PROC_NULL, rank < ranks - 1)
        allocate (next(cells))
        associate (rod => state(first_cell:))
            do while (nint(state(step_at)) < until)
                left_ghost = 100   ! the rod's left end is held hot
                right_ghost = 0
                call MPI_Sendrecv(rod(1), 1, MPI_DOUBLE_PRECISION, left, 0, right_ghost, 1, MPI_DOUBLE_PRECISION, &
                                  right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
                call MPI_Sendrecv(rod(cells), 1, MPI_DOUBLE_PRECISION, right, 1, left_ghost, 1, &
                                  MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
                do i = 1, cells
                    next(i) = rod(i) + 0.25d0 * (merge(rod(max(i - 1, 1)), left_ghost, i > 1) - 2 * rod(i) + &
                                                 merge(rod(min(i + 1, cells)), right_ghost, i < cells))
                end do
                rod = next
                state(step_at) = state(step_at) + 1
                if (win /= MPI_WIN_NULL .and. modulo(nint(state(step_at)), checkpoint_every) == 0) then
                    state(marker_at) = marker
                    call MPIX_Win_sync(win)   ! durable: what changed since the last checkpoint
                end if
            end do
        end associate
    end subroutine

    subroutine remove_file(path)
        character(*), intent(in) :: path
        integer :: unit
        open (newunit=unit, file=trim(path), status='old')
        close (unit, status='delete')
    end subroutine
end program
