! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program's guarded transfers through the guard calls, built once per MPI
! binding (-DMPIF_H: mpif.h and the calls without interfaces, compiled as such programs
! are, with gfortran's -fallow-argument-mismatch; -DUSE_MPI: use mpi; -DF08: use mpi_f08,
! IERROR left out where it may be), run with every receive protected
! (MPIX_GUARD_POLL_NS=0):
! - a ring of MPIX_Sendrecv_guarded on arrays of 256 KiB (sent in place, read-only until
!   sent) and of 800 bytes (copied), the send array overwritten and the received one
!   read at once after each call, over iterations whose values change;
! - MPIX_Send_guarded (32 KB, copied) and MPIX_Recv_guarded with a status (source, tag
!   and count final on return) and into every other element (a vector type: the
!   elements between keep their values);
! - received arrays handed to the kernel at once, by write(2) and by a WRITE statement:
!   every byte is taken, with the values received (libmpix's write finishes the
!   transfer first);
! - arrays of 1 MiB deallocated as soon as the calls return, one of them unread;
! - a destination out of range is an error returned, and MPIX_Guard_complete_all ends
!   with none.
! Any failure aborts the job.
program guard_fortran
#if !defined(MPIF_H)
    use mpix_guard
#endif
! The binding's use or include, HANDLE(kind), STATUS, IERR (tests/pmpi).
#include "fortran_binding.h"
    interface
        ! The C library's, to hand an array to the kernel directly.
        function c_open(path, flags) bind(C, name='open') result(fd)
            import :: c_char, c_int
            character(kind=c_char), intent(in) :: path(*)
            integer(c_int), value :: flags
            integer(c_int) :: fd
        end function
        function c_write(fd, buf, bytes) bind(C, name='write') result(written)
            import :: c_int, c_size_t, c_intptr_t
            integer(c_int), value :: fd
            !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
            type(*), dimension(*), intent(in) :: buf
            integer(c_size_t), value :: bytes
            integer(c_intptr_t) :: written   ! ssize_t
        end function
        function c_close(fd) bind(C, name='close') result(rc)
            import :: c_int
            integer(c_int), value :: fd
            integer(c_int) :: rc
        end function
    end interface
    integer, parameter :: large = 32768, small = 100, iterations = 6
    integer :: ierr, rank, size, left, right, failures

    call start()
    left = modulo(rank - 1, size)
    right = modulo(rank + 1, size)

    call kernel_takes_received()
    call ring(large)
    call ring(small)
    call send_and_receive()
    call every_other_element()
    call deallocated_at_once()
    call errors()
    call MPIX_Guard_complete_all(ierr)
    call check(ierr == MPI_SUCCESS, 'MPIX_Guard_complete_all at the end')
    call finish('guard Fortran')

contains

    real(8) function value(owner, it, i)
        integer, intent(in) :: owner, it, i
        value = owner * 1.0d6 + it * 1.0d3 + i
    end function

    ! A received array handed to the kernel at once: write(2) of it, then a Fortran
    ! WRITE statement (the runtime's own write(2)), take every byte, the values received
    ! (libmpix finishes the guarded receive first: its pages were protected, which the
    ! kernel refuses with EFAULT instead of faulting).
    subroutine kernel_takes_received()
        integer, parameter :: n = 3000   ! several pages
        real(8), allocatable :: sent(:), received(:), back(:)
        character(len=64) :: path, statement_path
        integer(c_int) :: fd, closed
        integer :: i, unit
        allocate (sent(n), received(n), back(n))
        sent = [(value(rank, 0, i), i = 1, n)]
        received = 0
        write (path, '(a, i0)') '/tmp/mpix-test-fortran-guard-', getpid()
        write (statement_path, '(a, i0)') '/tmp/mpix-test-fortran-guard-statement-', getpid()
        open (newunit=unit, file=trim(path), status='replace')
        close (unit)
        ! Opened before the receive: the path's temporary could share a protected page.
        fd = c_open(trim(path)//c_null_char, 1_c_int)   ! O_WRONLY
        call check(fd >= 0, 'open of '//trim(path))
        call MPIX_Send_guarded(sent, n, MPI_DOUBLE_PRECISION, right, 9, MPI_COMM_WORLD IERR)
        call MPIX_Recv_guarded(received, n, MPI_DOUBLE_PRECISION, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
        call check(c_write(fd, received, int(8 * n, c_size_t)) == 8 * n, 'write(2) of a guarded receive''s array')
        closed = c_close(fd)
        open (newunit=unit, file=trim(statement_path), access='stream', form='unformatted', status='replace')
        sent = [(value(rank, 1, i), i = 1, n)]
        call MPIX_Send_guarded(sent, n, MPI_DOUBLE_PRECISION, right, 10, MPI_COMM_WORLD IERR)
        call MPIX_Recv_guarded(received, n, MPI_DOUBLE_PRECISION, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
        write (unit) received
        close (unit)
        call check(all(received == [(value(left, 1, i), i = 1, n)]), 'data of the second receive')
        open (newunit=unit, file=trim(path), access='stream', form='unformatted', status='old')
        read (unit) back
        close (unit, status='delete')
        call check(all(back == [(value(left, 0, i), i = 1, n)]), 'what write(2) took')
        open (newunit=unit, file=trim(statement_path), access='stream', form='unformatted', status='old')
        read (unit) back
        close (unit, status='delete')
        call check(all(back == [(value(left, 1, i), i = 1, n)]), 'what the WRITE statement took')
        deallocate (sent, received, back)
    end subroutine

    ! Sendrecv around the ring; the send array is rewritten at once.
    subroutine ring(n)
        integer, intent(in) :: n
        real(8), allocatable :: outgoing(:), incoming(:)
        STATUS :: status
        integer :: it, i
        allocate (outgoing(n), incoming(n))
        do it = 1, iterations
            outgoing = [(value(rank, it, i), i = 1, n)]
            call MPIX_Sendrecv_guarded(outgoing, n, MPI_DOUBLE_PRECISION, right, it, incoming, n, &
                                       MPI_DOUBLE_PRECISION, left, it, MPI_COMM_WORLD, status IERR)
            outgoing = -1   ! waits for the send where it went in place
            call check(all(incoming == [(value(left, it, i), i = 1, n)]), 'data of MPIX_Sendrecv_guarded')
        end do
        deallocate (outgoing, incoming)
    end subroutine

    ! Send and receive apart; the status is final when the receive returns. The send is
    ! copied (under MPIX_GUARD_COPY_BYTES), so sending first around the ring is safe, as
    ! it is with MPI's eager sends.
    subroutine send_and_receive()
        integer, parameter :: n = 4000
        real(8), allocatable :: outgoing(:), incoming(:)
        STATUS :: status
        integer :: count, i
        allocate (outgoing(n), incoming(n + 10))
        outgoing = [(value(rank, 7, i), i = 1, n)]
        incoming = 0
        call MPIX_Send_guarded(outgoing, n, MPI_DOUBLE_PRECISION, right, 42, MPI_COMM_WORLD IERR)
        call MPIX_Recv_guarded(incoming, n + 10, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 42, MPI_COMM_WORLD, status IERR)
        call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
#if defined(F08)
        call check(status%MPI_SOURCE == left .and. status%MPI_TAG == 42, 'source and tag in the status')
#else
        call check(status(MPI_SOURCE) == left .and. status(MPI_TAG) == 42, 'source and tag in the status')
#endif
        call check(count == n, 'count in the status')
        call check(all(incoming(1:n) == [(value(left, 7, i), i = 1, n)]) .and. all(incoming(n + 1:) == 0), &
                   'data of MPIX_Recv_guarded')
        outgoing = 0
        deallocate (outgoing, incoming)
    end subroutine

    ! Into every other element: the elements between keep their values.
    subroutine every_other_element()
        integer, parameter :: n = 4000
        real(8), allocatable :: outgoing(:), incoming(:)
        HANDLE(MPI_Datatype) :: every_other
        integer :: i
        allocate (outgoing(n), incoming(2 * n))
        outgoing = [(value(rank, 8, i), i = 1, n)]
        incoming = -5
        call MPI_Type_vector(n, 1, 2, MPI_DOUBLE_PRECISION, every_other, ierr)
        call MPI_Type_commit(every_other, ierr)
        call MPIX_Send_guarded(outgoing, n, MPI_DOUBLE_PRECISION, right, 43, MPI_COMM_WORLD IERR)
        call MPIX_Recv_guarded(incoming, 1, every_other, left, 43, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
        call MPI_Type_free(every_other, ierr)   ! the receive keeps what it needs
        call check(all(incoming(1::2) == [(value(left, 8, i), i = 1, n)]), 'elements received through a vector')
        call check(all(incoming(2::2) == -5), 'elements between those of the vector')
        deallocate (outgoing, incoming)
    end subroutine

    ! Arrays deallocated as soon as the calls return, one of them unread: guard finishes
    ! what still needs them first (1 MiB: blocks the C library unmaps when freed).
    subroutine deallocated_at_once()
        integer, parameter :: n = 131072
        real(8), allocatable :: outgoing(:), incoming(:), unread(:)
        STATUS :: status
        integer :: i
        allocate (outgoing(n), incoming(n), unread(n))
        outgoing = [(value(rank, 9, i), i = 1, n)]
        call MPIX_Sendrecv_guarded(outgoing, n, MPI_DOUBLE_PRECISION, right, 44, incoming, n, MPI_DOUBLE_PRECISION, &
                                   left, 44, MPI_COMM_WORLD, status IERR)
        deallocate (outgoing)
        call MPIX_Sendrecv_guarded(incoming, n, MPI_DOUBLE_PRECISION, right, 45, unread, n, MPI_DOUBLE_PRECISION, &
                                   left, 45, MPI_COMM_WORLD, status IERR)
        deallocate (unread)
        call check(all(incoming == [(value(left, 9, i), i = 1, n)]), 'data received before the send array went')
        deallocate (incoming)
    end subroutine

    subroutine errors()
        HANDLE(MPI_Comm) :: comm
        real(8) :: data(4)
        integer :: rc
        call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
        call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN, ierr)
        data = 1
        rc = MPI_SUCCESS
        call MPIX_Send_guarded(data, 4, MPI_DOUBLE_PRECISION, size, 1, comm, rc)
        call check(rc /= MPI_SUCCESS, 'error of a destination out of range')
        call MPI_Comm_free(comm, ierr)
    end subroutine

#include "fortran_checks.h"
end program
