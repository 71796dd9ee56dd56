! SPDX-License-Identifier: BSD-3-Clause
! A Fortran MPI program that knows nothing of mpix: plain_storage.c's windows, written
! as a Fortran program writes them, built with the MPI's own mpif90 once per binding
! (fortran_binding.h). Every rank allocates a window with MPI_Win_allocate (storage hints in the info, file_perm
! as the decimal number of the mode), puts into its right neighbour's window, syncs and
! frees it; a dynamic window gets storage memory from MPI_Alloc_mem and attaches it. After
! the run each rank reads its files back.
!
! Usage: plain_storage_f MODE DIR EXPECT, as plain_storage.c:
!   MODE hints: the hints in the info arguments (files DIR/win-RANK, DIR/dyn-RANK);
!   MODE odd: the hints on odd ranks only, MPI_INFO_NULL on even ones (their windows stay memory);
!   MODE environment: MPI_INFO_NULL; MPIX_STORAGE_DEFAULT_HINTS is to name DIR/env-%r-%w;
!   EXPECT files: the files must hold the data; none: no file may appear (plain MPI).
program plain_storage
#include "fortran_binding.h"
    integer, parameter :: count = 65536
    integer :: rank, ranks, left, right, ierr, failures, all_failures, mine
    HANDLE(MPI_Win) :: win
    HANDLE(MPI_Info) :: info
    ADDRESS :: base_address
    integer(kind=MPI_ADDRESS_KIND) :: bytes, my_disp
    integer(kind=MPI_ADDRESS_KIND), allocatable :: disps(:)
    integer, pointer :: values(:)
    character(len=512) :: mode, dir, expect, window_path, dynamic_path
    logical :: use_hints, hinted, expect_file

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
    if (command_argument_count() /= 3) then
        write (0, '(a)') 'usage: plain_storage_f hints|odd|environment DIR files|none'
        call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    call get_command_argument(1, mode)
    call get_command_argument(2, dir)
    call get_command_argument(3, expect)
    use_hints = mode == 'hints' .or. mode == 'odd'
    hinted = use_hints .and. (mode /= 'odd' .or. modulo(rank, 2) == 1)
    expect_file = expect == 'files' .and. (hinted .or. .not. use_hints)
    left = modulo(rank - 1, ranks)
    right = modulo(rank + 1, ranks)
    failures = 0
    bytes = 4_MPI_ADDRESS_KIND * count
    if (use_hints) then
        write (window_path, '(a, "/win-", i0)') trim(dir), rank
    else
        write (window_path, '(a, "/env-", i0, "-0")') trim(dir), rank
    end if
    write (dynamic_path, '(a, "/dyn-", i0)') trim(dir), rank

    ! An allocated window.
    if (hinted) then
        call storage_info(window_path, info)
    else
        info = MPI_INFO_NULL
    end if
    call MPI_Win_allocate(bytes, 4, info, MPI_COMM_WORLD, base_address, win, ierr)
    call expect_true(ierr == MPI_SUCCESS, 'MPI_Win_allocate failed')
    call c_f_pointer(AS_C_POINTER(base_address), values, [count])
    call exchange(win, 0_MPI_ADDRESS_KIND)
    call MPI_Win_free(win, ierr)
    if (hinted) call MPI_Info_free(info, ierr)
    call check_file(window_path)

    ! A dynamic window on MPI_Alloc_mem memory (hints only on MPI_Alloc_mem).
    if (use_hints) then
        info = MPI_INFO_NULL
        if (hinted) call storage_info(dynamic_path, info)
        call MPI_Alloc_mem(bytes, info, base_address, ierr)
        call expect_true(ierr == MPI_SUCCESS, 'MPI_Alloc_mem failed')
        if (hinted) call MPI_Info_free(info, ierr)
        call c_f_pointer(AS_C_POINTER(base_address), values, [count])
        call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
        call MPI_Win_attach(win, values, bytes, ierr)
        call expect_true(ierr == MPI_SUCCESS, 'MPI_Win_attach failed')
        allocate (disps(0:ranks - 1))
        call MPI_Get_address(values, my_disp, ierr)
        call MPI_Allgather(my_disp, 1, MPI_AINT, disps, 1, MPI_AINT, MPI_COMM_WORLD, ierr)
        call exchange(win, disps(right))
        call MPI_Win_detach(win, values, ierr)
        call MPI_Win_free(win, ierr)
        call MPI_Free_mem(values, ierr)
        call expect_true(ierr == MPI_SUCCESS, 'MPI_Free_mem failed')
        call check_file(dynamic_path)
    end if

    call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (all_failures == 0) then
            write (*, '("plain_storage_f ", a, ": PASS (0 failed checks)")') trim(mode)
        else
            write (*, '("plain_storage_f ", a, ": FAIL (", i0, " failed checks)")') trim(mode), all_failures
        end if
    end if
    call MPI_Finalize(ierr)
    if (all_failures /= 0) error stop 1

contains

    integer function value_at(owner, i)
        integer, intent(in) :: owner, i
        value_at = owner * 1000003 + i
    end function

    subroutine expect_true(condition, message)
        logical, intent(in) :: condition
        character(len=*), intent(in) :: message
        if (.not. condition) then
            failures = failures + 1
            write (0, '("rank ", i0, ": ", a)') rank, message
        end if
    end subroutine

    subroutine storage_info(path, new_info)
        character(len=*), intent(in) :: path
        HANDLE(MPI_Info), intent(out) :: new_info
        character(len=16) :: perm
        write (perm, '(i0)') 384   ! S_IRUSR | S_IWUSR, as the decimal number of the mode
        call MPI_Info_create(new_info, ierr)
        call MPI_Info_set(new_info, 'alloc_type', 'storage', ierr)
        call MPI_Info_set(new_info, 'storage_alloc_filename', trim(path), ierr)
        call MPI_Info_set(new_info, 'storage_alloc_unlink', 'false', ierr)
        call MPI_Info_set(new_info, 'file_perm', trim(perm), ierr)
    end subroutine

    ! Fill the window, put -rank-1 into the right neighbour's first element, sync.
    subroutine exchange(window, target_disp)
        HANDLE(MPI_Win), intent(in) :: window
        integer(kind=MPI_ADDRESS_KIND), intent(in) :: target_disp
        integer :: i
        do i = 2, count
            values(i) = value_at(rank, i)
        end do
        mine = -rank - 1
        call MPI_Win_lock_all(0, window, ierr)
        call MPI_Put(mine, 1, MPI_INTEGER, right, target_disp, 1, MPI_INTEGER, window, ierr)
        call MPI_Win_flush_all(window, ierr)
        call MPI_Win_unlock_all(window, ierr)
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
        call MPI_Win_lock_all(0, window, ierr)
        call MPI_Win_sync(window, ierr)
        call expect_true(ierr == MPI_SUCCESS, 'MPI_Win_sync failed')
        call MPI_Win_unlock_all(window, ierr)
    end subroutine

    ! The file holds count integers: value_at(rank) except the first, the left neighbour's put.
    subroutine check_file(path)
        character(len=*), intent(in) :: path
        integer :: unit, status, i
        integer, allocatable :: stored(:)
        logical :: exists
        inquire (file=trim(path), exist=exists)
        if (.not. expect_file) then
            call expect_true(.not. exists, trim(path)//' exists, but the run was to use plain MPI')
            return
        end if
        call expect_true(exists, trim(path)//' is missing: the window was not a storage window')
        if (.not. exists) return
        allocate (stored(count))
        open (newunit=unit, file=trim(path), access='stream', form='unformatted', status='old', iostat=status)
        read (unit, iostat=status) stored
        close (unit)
        call expect_true(status == 0, trim(path)//' is short')
        call expect_true(all(stored(2:) == [(value_at(rank, i), i = 2, count)]), &
                         trim(path)//' does not hold this rank''s values')
        call expect_true(stored(1) == -left - 1, trim(path)//': the neighbour''s put is missing')
    end subroutine
end program
