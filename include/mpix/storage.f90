! SPDX-License-Identifier: BSD-3-Clause
!> @file
!! The storage calls for Fortran: `use mpix_storage` beside `use mpi` or `use mpi_f08`.
!!
!! Each call takes the arguments of the C call in mpix/storage.h, in the binding the
!! program uses: integer handles and an integer IERROR with `use mpi` (and with mpif.h,
!! whose programs may call the same names without the module), handles of mpi_f08's
!! types and an optional IERROR with `use mpi_f08`. What they do, their hints and errors
!! are those of the C calls.
!!
!! SIZE is an INTEGER(KIND=MPI_ADDRESS_KIND). BASEPTR comes back as TYPE(C_PTR) (`use,
!! intrinsic :: iso_c_binding`); `call c_f_pointer(baseptr, array, [n])` makes it an
!! array. Without the module (mpif.h) an INTEGER(KIND=MPI_ADDRESS_KIND) takes the address
!! as well. BASE (MPIX_Free_mem, MPIX_Win_attach, MPIX_Win_detach) is the memory itself,
!! as for MPI_Free_mem: pass the array (`TYPE(*), DIMENSION(*)`, with gfortran's
!! NO_ARG_CHECK, so any type, kind and rank is taken), not a TYPE(C_PTR) holding its
!! address.
!!
!! The module is built by the MPI's own Fortran wrapper and installed beside the
!! headers; link with -lmpix.
module mpix_storage
    use, intrinsic :: iso_c_binding, only: c_ptr
    use mpi_f08, only: MPI_Comm, MPI_Info, MPI_Win, MPI_ADDRESS_KIND
    implicit none
    private
    public :: MPIX_Win_allocate, MPIX_Win_allocate_shared, MPIX_Win_shared_query, MPIX_Alloc_mem, MPIX_Free_mem, &
              MPIX_Win_attach, MPIX_Win_detach, MPIX_Win_sync, MPIX_Win_free, MPIX_Win_get_info, &
              MPIX_Win_flush_storage

    !> MPIX_Win_allocate(size, disp_unit, info, comm, baseptr, win, ierror): MPI_Win_allocate,
    !! on storage when the info says so (collective).
    interface MPIX_Win_allocate
        subroutine mpix_win_allocate(size, disp_unit, info, comm, baseptr, win, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            integer, intent(in) :: disp_unit, info, comm
            type(c_ptr), intent(out) :: baseptr
            integer, intent(out) :: win, ierror
        end subroutine
        subroutine mpix_win_allocate_f08(size, disp_unit, info, comm, baseptr, win, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND, MPI_Comm, MPI_Info, MPI_Win
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            integer, intent(in) :: disp_unit
            type(MPI_Info), intent(in) :: info
            type(MPI_Comm), intent(in) :: comm
            type(c_ptr), intent(out) :: baseptr
            type(MPI_Win), intent(out) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win, ierror):
    !! MPI_Win_allocate_shared, on storage when the info says so (collective, one node).
    interface MPIX_Win_allocate_shared
        subroutine mpix_win_allocate_shared(size, disp_unit, info, comm, baseptr, win, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            integer, intent(in) :: disp_unit, info, comm
            type(c_ptr), intent(out) :: baseptr
            integer, intent(out) :: win, ierror
        end subroutine
        subroutine mpix_win_allocate_shared_f08(size, disp_unit, info, comm, baseptr, win, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND, MPI_Comm, MPI_Info, MPI_Win
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            integer, intent(in) :: disp_unit
            type(MPI_Info), intent(in) :: info
            type(MPI_Comm), intent(in) :: comm
            type(c_ptr), intent(out) :: baseptr
            type(MPI_Win), intent(out) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_shared_query(win, rank, size, disp_unit, baseptr, ierror): where rank's
    !! segment of a shared window lies in this process's memory.
    interface MPIX_Win_shared_query
        subroutine mpix_win_shared_query(win, rank, size, disp_unit, baseptr, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND
            integer, intent(in) :: win, rank
            integer(kind=MPI_ADDRESS_KIND), intent(out) :: size
            integer, intent(out) :: disp_unit
            type(c_ptr), intent(out) :: baseptr
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_shared_query_f08(win, rank, size, disp_unit, baseptr, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND, MPI_Win
            type(MPI_Win), intent(in) :: win
            integer, intent(in) :: rank
            integer(kind=MPI_ADDRESS_KIND), intent(out) :: size
            integer, intent(out) :: disp_unit
            type(c_ptr), intent(out) :: baseptr
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Alloc_mem(size, info, baseptr, ierror): MPI_Alloc_mem, on storage when the info
    !! says so; for dynamic windows (attach it with MPIX_Win_attach).
    interface MPIX_Alloc_mem
        subroutine mpix_alloc_mem(size, info, baseptr, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            integer, intent(in) :: info
            type(c_ptr), intent(out) :: baseptr
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_alloc_mem_f08(size, info, baseptr, ierror)
            import :: c_ptr, MPI_ADDRESS_KIND, MPI_Info
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            type(MPI_Info), intent(in) :: info
            type(c_ptr), intent(out) :: baseptr
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Free_mem(base, ierror): free memory from MPIX_Alloc_mem (storage flushed first,
    !! unless discarded). One procedure serves both bindings (no handle tells them apart):
    !! IERROR is optional in each.
    interface MPIX_Free_mem
        subroutine mpix_free_mem(base, ierror)
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
            type(*), dimension(*), intent(inout) :: base
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_attach(win, base, size, ierror): MPI_Win_attach, recording storage memory
    !! so that MPIX_Win_sync covers it.
    interface MPIX_Win_attach
        subroutine mpix_win_attach(win, base, size, ierror)
            import :: MPI_ADDRESS_KIND
            integer, intent(in) :: win
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
            type(*), dimension(*), intent(inout) :: base
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_attach_f08(win, base, size, ierror)
            import :: MPI_ADDRESS_KIND, MPI_Win
            type(MPI_Win), intent(in) :: win
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
            type(*), dimension(*), intent(inout) :: base
            integer(kind=MPI_ADDRESS_KIND), intent(in) :: size
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_detach(win, base, ierror): MPI_Win_detach, forgetting a storage region.
    interface MPIX_Win_detach
        subroutine mpix_win_detach(win, base, ierror)
            integer, intent(in) :: win
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
            type(*), dimension(*), intent(in) :: base
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_detach_f08(win, base, ierror)
            import :: MPI_Win
            type(MPI_Win), intent(in) :: win
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: base
            type(*), dimension(*), intent(in) :: base
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_sync(win, ierror): MPI_Win_sync, then the local window's changed storage
    !! pages made durable (local).
    interface MPIX_Win_sync
        subroutine mpix_win_sync(win, ierror)
            integer, intent(in) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_sync_f08(win, ierror)
            import :: MPI_Win
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_free(win, ierror): MPI_Win_free, then flush, unmap and close the storage
    !! (collective); win becomes MPI_WIN_NULL.
    interface MPIX_Win_free
        subroutine mpix_win_free(win, ierror)
            integer, intent(inout) :: win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_free_f08(win, ierror)
            import :: MPI_Win
            type(MPI_Win), intent(inout) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_get_info(win, info_used, ierror): MPI_Win_get_info plus the storage hints
    !! in effect on this process's segment (free info_used with MPI_Info_free).
    interface MPIX_Win_get_info
        subroutine mpix_win_get_info(win, info_used, ierror)
            integer, intent(in) :: win
            integer, intent(out) :: info_used, ierror
        end subroutine
        subroutine mpix_win_get_info_f08(win, info_used, ierror)
            import :: MPI_Info, MPI_Win
            type(MPI_Win), intent(in) :: win
            type(MPI_Info), intent(out) :: info_used
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface

    !> MPIX_Win_flush_storage(rank, win, ierror): MPI_Win_flush, and the target's storage
    !! durable too for a target whose segment this process maps (shared windows).
    interface MPIX_Win_flush_storage
        subroutine mpix_win_flush_storage(rank, win, ierror)
            integer, intent(in) :: rank, win
            integer, intent(out) :: ierror
        end subroutine
        subroutine mpix_win_flush_storage_f08(rank, win, ierror)
            import :: MPI_Win
            integer, intent(in) :: rank
            type(MPI_Win), intent(in) :: win
            integer, optional, intent(out) :: ierror
        end subroutine
    end interface
end module mpix_storage
