! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program's storage windows through the storage calls, built once per MPI
! binding (-DMPIF_H: mpif.h and the calls without interfaces, compiled as such programs
! are, with gfortran's -fallow-argument-mismatch; -DUSE_MPI: use mpi; -DF08: use mpi_f08,
! IERROR left out where it may be):
! - a window on a file of each rank's own (MPIX_Win_allocate): local stores and an MPI_Put
!   from the left neighbour, MPIX_Win_sync, MPIX_Win_get_info naming the file and the sync
!   in effect, MPIX_Win_free leaving MPI_WIN_NULL; the file read back after it holds
!   every value;
! - a shared window of the node on one file (MPIX_Win_allocate_shared): every rank
!   stores into its right neighbour's segment (MPIX_Win_shared_query),
!   MPIX_Win_flush_storage makes it durable, and the file, read back, holds every
!   segment in rank order; the window is freed with storage_alloc_unlink, which removes
!   the file;
! - storage memory from MPIX_Alloc_mem attached to a dynamic window (MPIX_Win_attach),
!   synced, detached and freed with MPIX_Free_mem: the file holds the values;
! - errors returned, not fatal: a rank out of range for MPIX_Win_shared_query, a file in
!   a missing folder for MPIX_Win_allocate (on every rank).
! Any failure aborts the job.
program storage_fortran
#if !defined(MPIF_H)
    use mpix_storage
#endif
! The binding's use or include, HANDLE(kind), IERR (tests/pmpi).
#include "fortran_binding.h"
    integer, parameter :: n = 8192   ! 64 KiB of doubles: whole pages
    integer(kind=MPI_ADDRESS_KIND), parameter :: bytes = 8_MPI_ADDRESS_KIND * n
    integer :: ierr, rank, size, left, right, failures, job
    character(len=256) :: prefix

    call start()
    left = modulo(rank - 1, size)
    right = modulo(rank + 1, size)
    ! Files of this job alone: named after rank 0's process.
    job = getpid()
    call MPI_Bcast(job, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    write (prefix, '(a, i0)') '/tmp/mpix-test-fortran-storage-', job

    call allocated_window()
    call shared_window()
    call attached_memory()
    call errors()

    call finish('storage Fortran')

contains

#include "fortran_checks.h"

    ! Info for a storage window on @path; @extra_key=@extra_value too unless blank.
    subroutine storage_info(path, extra_key, extra_value, info)
        character(*), intent(in) :: path, extra_key, extra_value
        HANDLE(MPI_Info), intent(out) :: info
        call MPI_Info_create(info, ierr)
        call MPI_Info_set(info, 'alloc_type', 'storage', ierr)
        call MPI_Info_set(info, 'storage_alloc_filename', trim(path), ierr)
        if (len_trim(extra_key) > 0) call MPI_Info_set(info, extra_key, extra_value, ierr)
    end subroutine

    ! The @count doubles at the start of the file @path; @remove deletes it after.
    subroutine read_file(path, values, count, remove)
        character(*), intent(in) :: path
        integer, intent(in) :: count
        real(8), intent(out) :: values(count)
        logical, intent(in) :: remove
        integer :: unit, status
        values = -1
        open (newunit=unit, file=trim(path), access='stream', form='unformatted', action='readwrite', &
              status='old', iostat=status)
        call check(status == 0, 'file '//trim(path)//' missing')
        if (status /= 0) return
        read (unit, pos=1, iostat=status) values
        call check(status == 0, 'file '//trim(path)//' too short')
        if (remove) then
            close (unit, status='delete')
        else
            close (unit)
        end if
    end subroutine

    ! A window of each rank's own file: stores, a Put from the left, sync, info, free.
    subroutine allocated_window()
        HANDLE(MPI_Win) :: win
        HANDLE(MPI_Info) :: info, info_used
        type(c_ptr) :: base_address
        real(8), pointer :: window(:)
        real(8) :: from_left(1), in_file(n)
        character(len=256) :: path, value
        logical :: found
        integer :: i
        write (path, '(a, "-win-", i0)') trim(prefix), rank
        call storage_info(path, '', '', info)
        call MPIX_Win_allocate(bytes, 8, info, MPI_COMM_WORLD, base_address, win IERR)
        call MPI_Info_free(info, ierr)
        call c_f_pointer(base_address, window, [n])
        window = [(real(rank * 100000 + i, 8), i = 1, n)]
        from_left(1) = real(-rank - 1, 8)   ! what the right neighbour expects from its left
        call MPI_Win_fence(0, win, ierr)
        call MPI_Put(from_left, 1, MPI_DOUBLE_PRECISION, right, 0_MPI_ADDRESS_KIND, 1, MPI_DOUBLE_PRECISION, &
                     win, ierr)
        call MPI_Win_fence(0, win, ierr)
        call check(window(1) == real(-left - 1, 8), 'value put by the left neighbour')
        call MPIX_Win_sync(win IERR)

        call MPIX_Win_get_info(win, info_used IERR)
        call MPI_Info_get(info_used, 'storage_alloc_filename', len(value), value, found, ierr)
        call check(found .and. value == path, 'storage_alloc_filename in MPIX_Win_get_info')
        call MPI_Info_get(info_used, 'mpix_storage_sync', len(value), value, found, ierr)
        call check(found .and. (value == 'log' .or. value == 'in_place'), 'mpix_storage_sync in MPIX_Win_get_info')
        call MPI_Info_free(info_used, ierr)

        call MPIX_Win_free(win IERR)
        call check(win == MPI_WIN_NULL, 'window after MPIX_Win_free')
        call read_file(path, in_file, n, .true.)
        call check(in_file(1) == real(-left - 1, 8), 'first value in the file (from the left)')
        call check(all(in_file(2:) == [(real(rank * 100000 + i, 8), i = 2, n)]), 'values in the window''s file')
    end subroutine

    ! One file for the node's shared window; each rank writes its right neighbour's
    ! segment and makes it durable with MPIX_Win_flush_storage.
    subroutine shared_window()
        HANDLE(MPI_Comm) :: node_comm
        HANDLE(MPI_Win) :: win
        HANDLE(MPI_Info) :: info
        type(c_ptr) :: base_address, right_address
        real(8), pointer :: right_segment(:)
        real(8), allocatable :: in_file(:)
        integer(kind=MPI_ADDRESS_KIND) :: right_bytes
        integer :: node_rank, node_size, node_right, right_disp_unit, r, i
        logical :: exists
        character(len=256) :: path
        call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node_comm, ierr)
        call MPI_Comm_rank(node_comm, node_rank, ierr)
        call MPI_Comm_size(node_comm, node_size, ierr)
        node_right = modulo(node_rank + 1, node_size)
        write (path, '(a, "-shared")') trim(prefix)
        call storage_info(path, 'storage_alloc_unlink', 'true', info)
        call MPIX_Win_allocate_shared(bytes, 8, info, node_comm, base_address, win IERR)
        call MPI_Info_free(info, ierr)
        call MPIX_Win_shared_query(win, node_right, right_bytes, right_disp_unit, right_address IERR)
        call check(right_bytes == bytes .and. right_disp_unit == 8, 'size and unit from MPIX_Win_shared_query')
        call c_f_pointer(right_address, right_segment, [n])
        call MPI_Win_lock_all(0, win, ierr)
        right_segment = [(real(node_right * 1000 + i, 8), i = 1, n)]
        call MPIX_Win_flush_storage(node_right, win IERR)
        call MPI_Win_unlock_all(win, ierr)
        call MPI_Barrier(node_comm, ierr)
        if (node_rank == 0) then
            allocate (in_file(n * node_size))
            call read_file(path, in_file, n * node_size, .false.)
            do r = 0, node_size - 1
                call check(all(in_file(r * n + 1:(r + 1) * n) == [(real(r * 1000 + i, 8), i = 1, n)]), &
                           'segment in the shared window''s file')
            end do
        end if
        call MPI_Barrier(node_comm, ierr)
        call MPIX_Win_free(win IERR)
        call check(win == MPI_WIN_NULL, 'shared window after MPIX_Win_free')
        inquire (file=trim(path), exist=exists)
        call check(.not. exists, 'file kept after MPIX_Win_free with storage_alloc_unlink')
        call MPI_Comm_free(node_comm, ierr)
    end subroutine

    ! Storage memory from MPIX_Alloc_mem in a dynamic window.
    subroutine attached_memory()
        HANDLE(MPI_Win) :: win
        HANDLE(MPI_Info) :: info
        type(c_ptr) :: base_address
        real(8), pointer :: memory(:)
        real(8) :: in_file(n)
        character(len=256) :: path
        integer :: i
        write (path, '(a, "-dyn-", i0)') trim(prefix), rank
        call storage_info(path, 'mpix_storage_sync', 'in_place', info)
        call MPIX_Alloc_mem(bytes, info, base_address IERR)
        call MPI_Info_free(info, ierr)
        call c_f_pointer(base_address, memory, [n])
        call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
        call MPIX_Win_attach(win, memory, bytes IERR)
        memory = [(real(-rank * 7 - i, 8), i = 1, n)]
        call MPIX_Win_sync(win IERR)
        call read_file(path, in_file, n, .false.)
        call check(all(in_file == memory), 'values of the attached memory in its file after MPIX_Win_sync')
        call MPIX_Win_detach(win, memory IERR)
        call MPI_Win_free(win, ierr)
        call MPIX_Free_mem(memory IERR)
        call read_file(path, in_file, n, .true.)
        call check(all(in_file == [(real(-rank * 7 - i, 8), i = 1, n)]), 'values in the file after MPIX_Free_mem')
    end subroutine

    ! Errors come back as codes where the handler returns them.
    subroutine errors()
        HANDLE(MPI_Comm) :: comm
        HANDLE(MPI_Win) :: win
        HANDLE(MPI_Info) :: info
        type(c_ptr) :: base_address
        integer(kind=MPI_ADDRESS_KIND) :: query_bytes
        integer :: rc, disp_unit, error_class
        call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
        call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN, ierr)
        call MPIX_Win_allocate_shared(bytes, 8, MPI_INFO_NULL, MPI_COMM_SELF, base_address, win IERR)
        call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN, ierr)
        rc = MPI_SUCCESS
        call MPIX_Win_shared_query(win, 1, query_bytes, disp_unit, base_address, rc)
        call check(rc /= MPI_SUCCESS, 'error of a rank out of range in MPIX_Win_shared_query')
        call MPIX_Win_free(win IERR)

        ! Only rank 0's file cannot be made: every rank's call fails.
        if (rank == 0) then
            call storage_info('/nonexistent-mpix-dir/window', '', '', info)
        else
            call storage_info(trim(prefix)//'-never', 'storage_alloc_unlink', 'true', info)
        end if
        rc = MPI_SUCCESS
        call MPIX_Win_allocate(bytes, 8, info, comm, base_address, win, rc)
        call check(rc /= MPI_SUCCESS, 'error of a file in a missing folder, on every rank')
        if (rc /= MPI_SUCCESS) then
            call MPI_Error_class(rc, error_class, ierr)
            call check(error_class /= MPI_SUCCESS, 'error class')
        else
            call MPIX_Win_free(win IERR)
        end if
        call MPI_Info_free(info, ierr)
        call MPI_Comm_free(comm, ierr)
    end subroutine
end program
