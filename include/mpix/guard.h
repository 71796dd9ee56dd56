/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/guard.h
 * @brief Guarded transfers: blocking send/receive calls that return at once and overlap
 *        by themselves; page protection makes any early touch of a buffer wait.
 *
 * MPIX_Send_guarded, MPIX_Recv_guarded and MPIX_Sendrecv_guarded have the signatures and
 * the observable results of MPI_Send, MPI_Recv and MPI_Sendrecv: when one returns, the
 * program may read and write its buffers exactly as after the blocking call. The
 * transfer itself goes on in the background:
 * - a send buffer up to `MPIX_GUARD_COPY_BYTES` is copied and sent from the copy; a
 *   larger one is sent in place and its pages are made read-only, so the first write to
 *   them waits for the send;
 * - a receive lands in a private shadow buffer while the pages of the user's buffer are
 *   made inaccessible; the first access to them waits for the message, copies it in
 *   (only the bytes the datatype names) and gives the pages back.
 *
 * The waiting happens in a SIGSEGV handler that finds the transfers covering the faulting
 * page. A fault on memory mpix did not protect goes to the handler that was installed
 * before (MPI's, the program's, or the default action), so a real crash still dies with
 * SIGSEGV. A SIGSEGV handler the program installs later with sigaction or signal takes
 * that place and leaves guard's installed (libmpix defines both calls).
 *
 * @par Pages shared by several transfers
 * Protection is per page (usually 4 KiB), so transfers whose buffers share a page are
 * ordered as the blocking program orders them: a receive waits first for the earlier
 * transfers that touch the same bytes and for earlier in-place sends on the same pages
 * (their pages cannot become inaccessible while MPI still reads them); a send waits for
 * earlier receives into the same bytes, and is copied when one of its pages is covered
 * by a receive still in flight. A page becomes accessible again when the last transfer
 * that needs it protected completes.
 *
 * @par Chains
 * Guarded calls issued one after another with no touch of guarded memory in between
 * (the four MPI_Sendrecv of a halo exchange) form a chain. The first access to any
 * page of a chain completes the whole chain with one MPI_Waitall and restores its
 * pages in one pass, merging neighbouring pages into single mprotect calls: one fault
 * per chain instead of one per transfer. A chain made of the same calls as the one
 * before it is learned, and its last call then completes it before returning, with no
 * protection and no fault (nothing of the program can run in between, so this is
 * always safe). `MPIX_GUARD_CHAIN=off` completes transfers one by one instead.
 *
 * @par Other MPI calls
 * MPI itself must never find a guarded page: pass a buffer that shares a page with an
 * unfinished guarded transfer to another MPI call only after MPIX_Guard_complete (or
 * MPIX_Guard_complete_all). `<mpix/guard_inject.h>` and `libmpix-guard.so` do this for
 * the program: every other communication call completes the guarded transfers first.
 * MPI_Finalize completes everything (mpix hangs its state on MPI_COMM_SELF).
 *
 * @par Memory other processes reach
 * Page protection holds back only this process. A guarded transfer on a window's memory
 * (windows from MPIX_Win_allocate and MPIX_Win_allocate_shared, and, where guard
 * interposes, MPI_Win_create, MPI_Win_allocate, MPI_Win_allocate_shared and
 * MPI_Win_attach) is finished before its call returns; the spin calls, the hybrid
 * collectives, MPIX_Win_sync, MPIX_Win_flush_storage, MPIX_Win_free and MPIX_Free_mem
 * finish the caller's guarded transfers first. With windows made by plain MPI calls,
 * call MPIX_Guard_complete before telling another process that it may read or write
 * what a guarded transfer is on.
 *
 * @par System calls
 * The kernel does not raise SIGSEGV for a protected buffer handed to a system call: it
 * fails with EFAULT. libmpix therefore defines the C library's calls that hand a buffer
 * to the kernel (read, write, their p- and v- forms, fread, fwrite, send, recv and their
 * -to, -from and -msg forms, and _FORTIFY_SOURCE's checked forms), which finish the
 * transfers that need the buffer's bytes first. Call MPIX_Guard_complete on a buffer
 * before giving it to any other system call (munmap(2), ioctl(2), a raw syscall(2))
 * while a guarded transfer on it may be unfinished.
 *
 * @par Memory given back
 * A buffer may be freed as soon as a guarded call returns, as after the blocking call:
 * libmpix defines free, realloc and reallocarray, which finish the transfers that need
 * the block's bytes before handing it to the allocator (the one found after libmpix).
 *
 * @par Threads
 * Guarded transfers run only when MPI provides MPI_THREAD_SINGLE: the fault handler must
 * call MPI from whichever thread touches the buffer, which MPI_THREAD_FUNNELED and
 * MPI_THREAD_SERIALIZED forbid and which MPI_THREAD_MULTIPLE would let race with the
 * thread that issued the transfer. At any other level the calls are the plain blocking
 * calls (`MPIX_VERBOSE=1` says so). So they are in a process whose OpenMP runtime may run
 * more than one thread (`omp_get_max_threads()` above 1 at the first guarded call): a
 * program that calls MPI_Init and reads a received array in a parallel loop has worker
 * threads that touch the buffer yet may not call MPI to finish its transfer. The same
 * holds while threads the program started itself run (pthreads, std::thread, a threaded
 * BLAS's pool): libmpix defines pthread_create, and before such a thread starts, every
 * guarded transfer is finished; guarded calls resume once those threads have ended.
 * Threads MPI starts (its progress and runtime threads) do not count.
 *
 * @par Fortran
 * The module mpix_guard (`use mpix_guard`, installed beside this header's folder)
 * declares these calls for `use mpi` and `use mpi_f08`.
 *
 * @par Knobs (environment variables, read at the first guarded call)
 * - `MPIX_GUARD` (`on`|`off`, default on): off makes every guarded call the plain
 *   blocking MPI call.
 * - `MPIX_GUARD_COPY_BYTES` (default 65536): send buffers spanning up to this many bytes
 *   are copied instead of protected.
 * - `MPIX_GUARD_CHAIN` (`on`|`off`, default on): complete chains as a unit, and a chain
 *   seen twice in a row at its last call.
 * - `MPIX_GUARD_POLL_NS` (default: twice what guard's mprotect calls have been costing):
 *   how long a new receive is polled before its pages are protected; a message that
 *   arrives meanwhile is unpacked at once and nothing is protected. 0 never polls.
 * - `MPIX_VERBOSE=1`: print the mode once, and the counters (transfers, copies,
 *   mprotect calls, faults, waits) at MPI_Finalize.
 */
#ifndef MPIX_GUARD_H
#define MPIX_GUARD_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief MPI_Send that returns at once; the send goes on in the background.
 *
 * After return the program may overwrite @p buf: a small buffer was copied, a large one
 * is read-only until the send completes, so a write waits for it. Arguments as MPI_Send
 * (MPI_PROC_NULL, zero counts and any committed datatype included).
 * @param buf      data to send
 * @param count    elements, >= 0
 * @param datatype any committed datatype
 * @param dest     rank in @p comm, or MPI_PROC_NULL
 * @param tag      0 .. MPI_TAG_UB
 * @param comm     communicator
 * @return MPI_SUCCESS or the error MPI_Isend gave, raised on @p comm. An error found
 *         when the transfer completes later (here or in a guarded receive) is given by
 *         MPI to the handler its completion calls use (the communicator's with Open
 *         MPI, MPI_COMM_WORLD's with MPICH), once, and its code returned by the next
 *         MPIX_Guard_complete or MPIX_Guard_complete_all, or by the next fenced call
 *         that succeeds (mpix/guard_inject.h, libmpix-guard.so).
 * @par Complexity one MPI_Isend, plus a copy (small buffers) or one mprotect call per
 *      run of pages (large ones); O(guarded transfers in flight) bookkeeping.
 */
int MPIX_Send_guarded(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);

/**
 * @brief MPI_Recv that returns at once; the first access to @p buf waits for the data.
 *
 * With @p status = MPI_STATUS_IGNORE the call returns as soon as the receive is posted.
 * With a status, it first waits for the message's envelope (MPI_Mprobe), so source, tag
 * and count are final, and a message longer than the buffer is received at once and
 * reported as MPI_ERR_TRUNCATE, as MPI_Recv does.
 * @param buf      where the data goes (inaccessible until it is there)
 * @param count    elements the buffer holds, >= 0
 * @param datatype any committed datatype (the caller may free it after the call)
 * @param source   rank in @p comm, MPI_ANY_SOURCE or MPI_PROC_NULL
 * @param tag      tag or MPI_ANY_TAG
 * @param comm     communicator
 * @param status   MPI_STATUS_IGNORE, or filled before return (source, tag, count)
 * @return MPI_SUCCESS or an MPI error raised on @p comm.
 * @par Complexity one MPI_Irecv (MPI_Imrecv with a status) into a shadow buffer of the
 *      datatype's span, and one mprotect call per run of pages; the copy-in at completion
 *      is one memcpy per block of the datatype's (memoized) layout.
 */
int MPIX_Recv_guarded(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Status *status);

/**
 * @brief MPI_Sendrecv made of a guarded send and a guarded receive, both started before
 *        the call returns (so it cannot deadlock where MPI_Sendrecv would not).
 * @param sendbuf, sendcount, sendtype, dest, sendtag   the send, as MPIX_Send_guarded
 * @param recvbuf, recvcount, recvtype, source, recvtag the receive, as MPIX_Recv_guarded
 * @param comm     communicator of both
 * @param status   as MPIX_Recv_guarded
 * @return MPI_SUCCESS or an MPI error raised on @p comm; @p status as MPIX_Recv_guarded.
 * @par Complexity the sum of MPIX_Send_guarded and MPIX_Recv_guarded.
 */
int MPIX_Sendrecv_guarded(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status);

/**
 * @brief Finish every guarded transfer whose pages touch [@p buf, @p buf + @p len), copy
 *        received data in and give the pages back.
 *
 * Use it before handing such memory to a system call libmpix does not wrap (see System
 * calls above) or to an MPI call that mpix does not interpose.
 * @param buf start of the memory
 * @param len bytes, >= 0 (0 completes nothing)
 * @return MPI_SUCCESS, an error a completed transfer reported (see MPIX_Send_guarded; not
 *         raised again), or ::MPIX_ERRKIND_ARGUMENT for a negative @p len.
 * @par Complexity O(guarded transfers in flight) plus their waits.
 */
int MPIX_Guard_complete(const void *buf, MPI_Aint len);

/**
 * @brief Finish every guarded transfer of this process.
 * @return MPI_SUCCESS or the first error a completed transfer reported (see
 *         MPIX_Send_guarded; not raised again).
 * @par Complexity one MPI_Waitall, then one pass over the pages in use.
 */
int MPIX_Guard_complete_all(void);

#ifdef __cplusplus
}
#endif

#endif
