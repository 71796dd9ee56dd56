! SPDX-License-Identifier: BSD-3-Clause
! A Fortran application's communication through the zcopy calls, built once per MPI
! binding (-DMPIF_H: mpif.h and the calls without interfaces; -DUSE_MPI: use mpi; -DF08:
! use mpi_f08, IERROR left out): NAS MG-style y-face halos of a 3-D array (a vector
! type built, committed and freed every iteration; 1 KiB rows, 24 KiB faces, and a
! coarse level's 80-byte rows) posted with MPIX_Irecv_zcopy/MPIX_Isend_zcopy and
! completed by MPI_Waitall, the same faces shifted round a ring with the blocking calls,
! messages of irregular length received after MPIX_Probe_zcopy, MPIX_Iprobe_zcopy and the
! matched probes (MPIX_Mprobe_zcopy, MPIX_Improbe_zcopy, MPIX_Mrecv_zcopy, MPIX_Imrecv_zcopy),
! a type committed with MPIX_Type_commit_comm, and arguments MPI would reject. Every
! ghost cell, status and count is checked; any failure aborts the job.
program zcopy_fortran
#if !defined(MPIF_H)
    use mpix_zcopy
#endif
! The binding's use or include, HANDLE(kind), STATUS and IERR (tests/pmpi).
#include "fortran_binding.h"
#if defined(F08)
#define STATUSES_OF(name, n) type(MPI_Status) :: name(n)
#define SOURCE(s) s%MPI_SOURCE
#define TAG(s) s%MPI_TAG
#define SOURCE_AT(s, i) s(i)%MPI_SOURCE
#define TAG_AT(s, i) s(i)%MPI_TAG
#define EACH(s, i) s(i)
#else
#define STATUSES_OF(name, n) integer :: name(MPI_STATUS_SIZE, n)
#define SOURCE(s) s(MPI_SOURCE)
#define TAG(s) s(MPI_TAG)
#define SOURCE_AT(s, i) s(MPI_SOURCE, i)
#define TAG_AT(s, i) s(MPI_TAG, i)
#define EACH(s, i) s(:, i)
#endif
    integer, parameter :: iterations = 4, rows = 8
    HANDLE(MPI_Comm) :: comm, checked
    integer :: ierr, rank, size, left, right, failures, total, it, level
    real(8), allocatable :: u(:, :, :)
    integer :: n1, n3

    call MPI_Init(ierr)
    comm = MPI_COMM_WORLD
    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, size, ierr)
    left = mod(rank - 1 + size, size)
    right = mod(rank + 1, size)
    failures = 0

    do level = 1, 2
        if (level == 1) then
            n1 = 128
            n3 = 24
        else
            n1 = 10
            n3 = 10
        end if
        allocate(u(n1, 0:rows + 1, n3))
        do it = 1, iterations
            call halo(it)
            if (size > 1) call shift(it)
        end do
        deallocate(u)
    end do
    do it = 1, iterations
        call probed(it)
    end do
    call committed_for_comm()
    call rejected()

    call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
    if (total /= 0) then
        if (rank == 0) print '(a, i0, a)', 'zcopy_fortran: ', total, ' failures'
        call MPI_Abort(comm, 1, ierr)
    end if
    if (rank == 0) print '(a, i0, a)', 'zcopy_fortran: passed on ', size, ' ranks'
    call MPI_Finalize(ierr)

contains

    real(8) function value(owner, it, i, j, k)
        integer, intent(in) :: owner, it, i, j, k
        value = owner * 1d6 + it * 1d5 + i + 200 * j + 3000 * k
    end function

    subroutine fail(what, it)
        character(*), intent(in) :: what
        integer, intent(in) :: it
        print '(a, i0, a, a, a, i0)', '[rank ', rank, '] ', what, ', iteration ', it
        failures = failures + 1
    end subroutine

    subroutine fill(it)
        integer, intent(in) :: it
        integer :: i, j, k
        u = -1
        do k = 1, n3
            do j = 1, rows
                do i = 1, n1
                    u(i, j, k) = value(rank, it, i, j, k)
                end do
            end do
        end do
    end subroutine

    ! Ghost plane @ghost must hold plane @plane of @owner's interior.
    subroutine check_ghost(ghost, owner, plane, it)
        integer, intent(in) :: ghost, owner, plane, it
        integer :: i, k, wrong
        wrong = 0
        do k = 1, n3
            do i = 1, n1
                if (u(i, ghost, k) /= value(owner, it, i, plane, k)) wrong = wrong + 1
            end do
        end do
        if (wrong /= 0) call fail('ghost cells differ', it)
    end subroutine

    subroutine face_type(face)
        HANDLE(MPI_Datatype), intent(out) :: face
        call MPI_Type_vector(n3, n1, n1 * (rows + 2), MPI_DOUBLE_PRECISION, face, ierr)
        call MPI_Type_commit(face, ierr)
    end subroutine

    ! Post both receives and both sends, then wait for all four.
    subroutine halo(it)
        integer, intent(in) :: it
        HANDLE(MPI_Datatype) :: face
        HANDLE(MPI_Request) :: requests(4)
        STATUSES_OF(statuses, 4)
        integer :: count
        call fill(it)
        call face_type(face)
        call MPIX_Irecv_zcopy(u(1, 0, 1), 1, face, left, 2, comm, requests(1) IERR)
        call MPIX_Irecv_zcopy(u(1, rows + 1, 1), 1, face, right, 1, comm, requests(2) IERR)
        call MPIX_Isend_zcopy(u(1, 1, 1), 1, face, left, 1, comm, requests(3) IERR)
        call MPIX_Isend_zcopy(u(1, rows, 1), 1, face, right, 2, comm, requests(4) IERR)
        call MPI_Waitall(4, requests, statuses, ierr)
        if (SOURCE_AT(statuses, 1) /= left .or. TAG_AT(statuses, 1) /= 2) call fail('halo status 1', it)
        if (SOURCE_AT(statuses, 2) /= right .or. TAG_AT(statuses, 2) /= 1) call fail('halo status 2', it)
        call MPI_Get_count(EACH(statuses, 1), face, count, ierr)
        if (count /= 1) call fail('halo count', it)
        call MPI_Type_free(face, ierr)
        call check_ghost(0, left, rows, it)
        call check_ghost(rows + 1, right, 1, it)
    end subroutine

    ! The top plane goes right, blocking; even ranks send first.
    subroutine shift(it)
        integer, intent(in) :: it
        HANDLE(MPI_Datatype) :: face
        STATUS :: status
        integer :: count
        call fill(it)
        call face_type(face)
        if (mod(rank, 2) == 0) call MPIX_Send_zcopy(u(1, rows, 1), 1, face, right, 3, comm IERR)
        call MPIX_Recv_zcopy(u(1, 0, 1), 1, face, left, MPI_ANY_TAG, comm, status IERR)
        if (mod(rank, 2) /= 0) call MPIX_Send_zcopy(u(1, rows, 1), 1, face, right, 3, comm IERR)
        if (SOURCE(status) /= left .or. TAG(status) /= 3) call fail('shift status', it)
        call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
        if (count /= n1 * n3) call fail('shift count', it)
        call MPI_Type_free(face, ierr)
        call check_ghost(0, left, rows, it)
    end subroutine

    ! Messages whose length the receiver learns from a probe: MPIX_Probe_zcopy, a loop of
    ! MPIX_Iprobe_zcopy, MPIX_Mprobe_zcopy then MPIX_Mrecv_zcopy, a loop of
    ! MPIX_Improbe_zcopy then MPIX_Imrecv_zcopy, by turns.
    subroutine probed(it)
        integer, intent(in) :: it
        real(8), allocatable :: out(:), in(:)
        HANDLE(MPI_Request) :: request, receive
        HANDLE(MPI_Message) :: message
        STATUS :: status
        integer :: sent, expected, count, i, way
        logical :: flag
        sent = 100 + 37 * rank + 1500 * it
        expected = 100 + 37 * left + 1500 * it
        way = mod(it - 1, 4)
        allocate(out(sent))
        do i = 1, sent
            out(i) = value(rank, it, i, 0, 0)
        end do
        call MPIX_Isend_zcopy(out(1), sent, MPI_DOUBLE_PRECISION, right, 5, comm, request IERR)
        flag = .false.
        select case (way)
        case (0)
            call MPIX_Probe_zcopy(left, 5, comm, status IERR)
        case (1)
            do while (.not. flag)
                call MPIX_Iprobe_zcopy(MPI_ANY_SOURCE, 5, comm, flag, status IERR)
            end do
        case (2)
            call MPIX_Mprobe_zcopy(left, 5, comm, message, status IERR)
        case default
            do while (.not. flag)
                call MPIX_Improbe_zcopy(MPI_ANY_SOURCE, 5, comm, flag, message, status IERR)
            end do
        end select
        call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
        if (count /= expected .or. SOURCE(status) /= left) call fail('probed count or source', it)
        allocate(in(max(count, 1)))
        select case (way)
        case (0, 1)
            call MPIX_Recv_zcopy(in(1), count, MPI_DOUBLE_PRECISION, left, 5, comm, MPI_STATUS_IGNORE IERR)
        case (2)
            call MPIX_Mrecv_zcopy(in(1), count, MPI_DOUBLE_PRECISION, message, status IERR)
            if (SOURCE(status) /= left .or. TAG(status) /= 5) call fail('mrecv status', it)
        case default
            call MPIX_Imrecv_zcopy(in(1), count, MPI_DOUBLE_PRECISION, message, receive IERR)
            call MPI_Wait(receive, status, ierr)
            if (SOURCE(status) /= left .or. TAG(status) /= 5) call fail('imrecv status', it)
        end select
        if (way >= 2 .and. message /= MPI_MESSAGE_NULL) call fail('message handle left', it)
        call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
        do i = 1, min(count, expected)
            if (in(i) /= value(left, it, i, 0, 0)) then
                call fail('probed data differ', it)
                exit
            end if
        end do
        deallocate(out, in)
    end subroutine

    ! A type given one id on every rank of comm, used, and freed to MPI_DATATYPE_NULL.
    subroutine committed_for_comm()
        HANDLE(MPI_Datatype) :: face
        HANDLE(MPI_Request) :: requests(2)
        n1 = 128
        n3 = 24
        allocate(u(n1, 0:rows + 1, n3))
        call fill(iterations + 1)
        call MPI_Type_vector(n3, n1, n1 * (rows + 2), MPI_DOUBLE_PRECISION, face, ierr)
        call MPIX_Type_commit_comm(face, comm IERR)
        call MPIX_Irecv_zcopy(u(1, 0, 1), 1, face, left, 6, comm, requests(1) IERR)
        call MPIX_Isend_zcopy(u(1, rows, 1), 1, face, right, 6, comm, requests(2) IERR)
        call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
        call check_ghost(0, left, rows, iterations + 1)
        call MPIX_Type_free_comm(face, comm IERR)
        if (face /= MPI_DATATYPE_NULL) call fail('MPIX_Type_free_comm left the handle', 0)
        deallocate(u)
    end subroutine

    ! With MPI_ERRORS_RETURN, IERROR reports what MPI would reject.
    subroutine rejected()
        real(8) :: x(1)
        HANDLE(MPI_Request) :: request
        STATUS :: status
        integer :: code
        logical :: flag
        call MPI_Comm_dup(comm, checked, ierr)
        call MPI_Comm_set_errhandler(checked, MPI_ERRORS_RETURN, ierr)
        x = 1
        call MPIX_Send_zcopy(x(1), 1, MPI_DOUBLE_PRECISION, size, 0, checked, code)
        if (code == MPI_SUCCESS) call fail('send to rank size accepted', 0)
        call MPIX_Recv_zcopy(x(1), -1, MPI_DOUBLE_PRECISION, 0, 0, checked, status, code)
        if (code == MPI_SUCCESS) call fail('receive of count -1 accepted', 0)
        call MPIX_Isend_zcopy(x(1), 1, MPI_DOUBLE_PRECISION, -5, 0, checked, request, code)
        if (code == MPI_SUCCESS) call fail('isend to rank -5 accepted', 0)
        call MPIX_Irecv_zcopy(x(1), 1, MPI_DATATYPE_NULL, 0, 0, checked, request, code)
        if (code == MPI_SUCCESS) call fail('irecv of MPI_DATATYPE_NULL accepted', 0)
        call MPIX_Probe_zcopy(size + 3, 0, checked, status, code)
        if (code == MPI_SUCCESS) call fail('probe of rank size+3 accepted', 0)
        call MPIX_Iprobe_zcopy(0, -2, checked, flag, status, code)
        if (code == MPI_SUCCESS) call fail('iprobe of tag -2 accepted', 0)
        ! A send to MPI_PROC_NULL succeeds, as MPI_Send's does.
        call MPIX_Send_zcopy(x(1), 1, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 0, checked, code)
        if (code /= MPI_SUCCESS) call fail('send to MPI_PROC_NULL refused', 0)
        call MPIX_Recv_zcopy(x(1), 1, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 0, checked, status, code)
        if (code /= MPI_SUCCESS .or. SOURCE(status) /= MPI_PROC_NULL) call fail('receive from MPI_PROC_NULL', 0)
        call MPI_Comm_free(checked, ierr)
    end subroutine
end program zcopy_fortran
