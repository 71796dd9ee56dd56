! SPDX-License-Identifier: BSD-3-Clause
! The start, checks and end of a Fortran test program (tests/<module>/fortran_*.F90),
! included (by the preprocessor) after its CONTAINS; the program declares the integers
! rank, size, failures and ierr.

    ! MPI_Init; rank and size in MPI_COMM_WORLD, no failures yet.
    subroutine start()
        call MPI_Init(ierr)
        call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
        call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
        failures = 0
    end subroutine

    ! Counts a wrong result on this rank and names it.
    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(*), intent(in) :: what
        if (.not. ok) then
            failures = failures + 1
            print '(a, i0, 2a)', 'rank ', rank, ': wrong ', what
        end if
    end subroutine

    ! Adds up every rank's failures: the job aborts if there is one; otherwise rank 0
    ! prints "@name: <size> ranks passed". Then MPI_Finalize.
    subroutine finish(name)
        character(*), intent(in) :: name
        call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
        if (failures /= 0) then
            if (rank == 0) print '(2a, i0, a)', name, ': ', failures, ' failures'
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
        if (rank == 0) print '(2a, i0, a)', name, ': ', size, ' ranks passed'
        call MPI_Finalize(ierr)
    end subroutine
