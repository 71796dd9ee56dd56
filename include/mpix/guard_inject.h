/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/guard_inject.h
 * @brief Compile-time injection of guarded transfers into an unchanged MPI program.
 *
 * Include it after <mpi.h> (or compile with `-include mpix/guard_inject.h`) and link
 * with mpix: MPI_Send, MPI_Recv and MPI_Sendrecv become MPIX_Send_guarded,
 * MPIX_Recv_guarded and MPIX_Sendrecv_guarded, and every other MPI call that may touch a
 * buffer or drive MPI's progress completes the guarded transfers first
 * (MPIX_Guard_complete_all), so MPI never meets a protected page. These are
 * function-like macros: taking the address of an MPI function still gives MPI's own.
 *
 * Errors: a guarded call returns its own errors at once. An error a guarded transfer
 * meets after its call returned (a truncated message received without a status) is
 * given by MPI to the communicator's handler when guard completes the transfer, and
 * returned once more by the next fenced call that itself succeeds, so that a program
 * that checks return codes sees it.
 *
 * The list is the one libmpix-guard.so interposes at run time (LD_PRELOAD); see
 * mpix/guard.h for the semantics and docs/guard.md for the thread levels.
 */
#ifndef MPIX_GUARD_INJECT_H
#define MPIX_GUARD_INJECT_H

#include <mpi.h>
#include <mpix/common.h>
#include <mpix/guard.h>

/** @cond INJECTED_MACROS (one macro per MPI call; not part of the reference) */
/* A fenced call: complete the guarded transfers, keeping their error, make the call,
 * and return its code, or the kept error where the call succeeded. Two steps joined by
 * the comma operator, so that the transfers complete before the call's arguments are
 * evaluated and the call made. */
static MPIX_THREAD_LOCAL_ int mpix_guard_deferred_;
static MPIX_INLINE_ void mpix_guard_fence_(void) { mpix_guard_deferred_ = MPIX_Guard_complete_all(); }
static MPIX_INLINE_ int mpix_guard_fenced_(int code)
{
    int deferred = mpix_guard_deferred_;
    mpix_guard_deferred_ = MPI_SUCCESS;
    return code != MPI_SUCCESS ? code : deferred;
}

/* Windows: the memory they expose is recorded after the call (libmpix), so that guarded
 * transfers on it finish in their call; the MPI call's own code first. */
#ifdef __cplusplus
extern "C" {
#endif
int mpix_interpose_window_created(int rc, const MPI_Win *win);
int mpix_interpose_window_attached(int rc, MPI_Win win, const void *base, MPI_Aint size);
int mpix_interpose_window_detached(int rc, MPI_Win win, const void *base);
#ifdef __cplusplus
}
#endif
#define MPI_Win_create(base, size, disp_unit, info, comm, win) \
    mpix_interpose_window_created(MPI_Win_create(base, size, disp_unit, info, comm, win), win)
#define MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win) \
    mpix_interpose_window_created(MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win), win)
#define MPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win) \
    mpix_interpose_window_created(MPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win), win)
#define MPI_Win_attach(win, base, size) \
    mpix_interpose_window_attached(MPI_Win_attach(win, base, size), win, base, size)
#define MPI_Win_detach(win, base) mpix_interpose_window_detached(MPI_Win_detach(win, base), win, base)

#define MPI_Send(...) MPIX_Send_guarded(__VA_ARGS__)
#define MPI_Recv(...) MPIX_Recv_guarded(__VA_ARGS__)
#define MPI_Sendrecv(...) MPIX_Sendrecv_guarded(__VA_ARGS__)

#define MPI_Bsend(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Bsend(__VA_ARGS__)))
#define MPI_Ssend(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ssend(__VA_ARGS__)))
#define MPI_Rsend(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Rsend(__VA_ARGS__)))
#define MPI_Isend(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Isend(__VA_ARGS__)))
#define MPI_Ibsend(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ibsend(__VA_ARGS__)))
#define MPI_Issend(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Issend(__VA_ARGS__)))
#define MPI_Irsend(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Irsend(__VA_ARGS__)))
#define MPI_Irecv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Irecv(__VA_ARGS__)))
#define MPI_Sendrecv_replace(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Sendrecv_replace(__VA_ARGS__)))
#define MPI_Mrecv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Mrecv(__VA_ARGS__)))
#define MPI_Imrecv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Imrecv(__VA_ARGS__)))
#define MPI_Send_init(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Send_init(__VA_ARGS__)))
#define MPI_Bsend_init(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Bsend_init(__VA_ARGS__)))
#define MPI_Ssend_init(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ssend_init(__VA_ARGS__)))
#define MPI_Rsend_init(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Rsend_init(__VA_ARGS__)))
#define MPI_Recv_init(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Recv_init(__VA_ARGS__)))
#define MPI_Start(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Start(__VA_ARGS__)))
#define MPI_Startall(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Startall(__VA_ARGS__)))
#define MPI_Wait(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Wait(__VA_ARGS__)))
#define MPI_Waitall(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Waitall(__VA_ARGS__)))
#define MPI_Waitany(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Waitany(__VA_ARGS__)))
#define MPI_Waitsome(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Waitsome(__VA_ARGS__)))
#define MPI_Test(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Test(__VA_ARGS__)))
#define MPI_Testall(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Testall(__VA_ARGS__)))
#define MPI_Testany(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Testany(__VA_ARGS__)))
#define MPI_Testsome(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Testsome(__VA_ARGS__)))
#define MPI_Probe(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Probe(__VA_ARGS__)))
#define MPI_Iprobe(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iprobe(__VA_ARGS__)))
#define MPI_Mprobe(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Mprobe(__VA_ARGS__)))
#define MPI_Improbe(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Improbe(__VA_ARGS__)))
#define MPI_Cancel(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Cancel(__VA_ARGS__)))
#define MPI_Request_free(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Request_free(__VA_ARGS__)))
#define MPI_Barrier(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Barrier(__VA_ARGS__)))
#define MPI_Bcast(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Bcast(__VA_ARGS__)))
#define MPI_Gather(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Gather(__VA_ARGS__)))
#define MPI_Gatherv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Gatherv(__VA_ARGS__)))
#define MPI_Scatter(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Scatter(__VA_ARGS__)))
#define MPI_Scatterv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Scatterv(__VA_ARGS__)))
#define MPI_Allgather(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Allgather(__VA_ARGS__)))
#define MPI_Allgatherv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Allgatherv(__VA_ARGS__)))
#define MPI_Alltoall(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Alltoall(__VA_ARGS__)))
#define MPI_Alltoallv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Alltoallv(__VA_ARGS__)))
#define MPI_Alltoallw(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Alltoallw(__VA_ARGS__)))
#define MPI_Reduce(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Reduce(__VA_ARGS__)))
#define MPI_Allreduce(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Allreduce(__VA_ARGS__)))
#define MPI_Reduce_scatter_block(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Reduce_scatter_block(__VA_ARGS__)))
#define MPI_Reduce_scatter(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Reduce_scatter(__VA_ARGS__)))
#define MPI_Scan(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Scan(__VA_ARGS__)))
#define MPI_Exscan(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Exscan(__VA_ARGS__)))
#define MPI_Reduce_local(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Reduce_local(__VA_ARGS__)))
#define MPI_Ibarrier(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ibarrier(__VA_ARGS__)))
#define MPI_Ibcast(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ibcast(__VA_ARGS__)))
#define MPI_Iallgather(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iallgather(__VA_ARGS__)))
#define MPI_Ialltoall(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ialltoall(__VA_ARGS__)))
#define MPI_Ireduce(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ireduce(__VA_ARGS__)))
#define MPI_Iallreduce(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iallreduce(__VA_ARGS__)))
#define MPI_Igather(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Igather(__VA_ARGS__)))
#define MPI_Igatherv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Igatherv(__VA_ARGS__)))
#define MPI_Iscatter(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iscatter(__VA_ARGS__)))
#define MPI_Iscatterv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iscatterv(__VA_ARGS__)))
#define MPI_Iallgatherv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iallgatherv(__VA_ARGS__)))
#define MPI_Ialltoallv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ialltoallv(__VA_ARGS__)))
#define MPI_Ialltoallw(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ialltoallw(__VA_ARGS__)))
#define MPI_Ireduce_scatter_block(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ireduce_scatter_block(__VA_ARGS__)))
#define MPI_Ireduce_scatter(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ireduce_scatter(__VA_ARGS__)))
#define MPI_Iscan(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iscan(__VA_ARGS__)))
#define MPI_Iexscan(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Iexscan(__VA_ARGS__)))
#define MPI_Neighbor_allgather(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Neighbor_allgather(__VA_ARGS__)))
#define MPI_Neighbor_allgatherv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Neighbor_allgatherv(__VA_ARGS__)))
#define MPI_Neighbor_alltoall(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Neighbor_alltoall(__VA_ARGS__)))
#define MPI_Neighbor_alltoallv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Neighbor_alltoallv(__VA_ARGS__)))
#define MPI_Neighbor_alltoallw(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Neighbor_alltoallw(__VA_ARGS__)))
#define MPI_Ineighbor_allgather(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ineighbor_allgather(__VA_ARGS__)))
#define MPI_Ineighbor_allgatherv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ineighbor_allgatherv(__VA_ARGS__)))
#define MPI_Ineighbor_alltoall(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ineighbor_alltoall(__VA_ARGS__)))
#define MPI_Ineighbor_alltoallv(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ineighbor_alltoallv(__VA_ARGS__)))
#define MPI_Ineighbor_alltoallw(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Ineighbor_alltoallw(__VA_ARGS__)))
#define MPI_Pack(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Pack(__VA_ARGS__)))
#define MPI_Unpack(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Unpack(__VA_ARGS__)))
#define MPI_Pack_external(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Pack_external(__VA_ARGS__)))
#define MPI_Unpack_external(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Unpack_external(__VA_ARGS__)))
#define MPI_Buffer_attach(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Buffer_attach(__VA_ARGS__)))
#define MPI_Buffer_detach(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Buffer_detach(__VA_ARGS__)))
#define MPI_Put(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Put(__VA_ARGS__)))
#define MPI_Get(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Get(__VA_ARGS__)))
#define MPI_Accumulate(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Accumulate(__VA_ARGS__)))
#define MPI_Get_accumulate(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Get_accumulate(__VA_ARGS__)))
#define MPI_Fetch_and_op(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Fetch_and_op(__VA_ARGS__)))
#define MPI_Compare_and_swap(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Compare_and_swap(__VA_ARGS__)))
#define MPI_Win_fence(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_fence(__VA_ARGS__)))
#define MPI_Win_lock(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_lock(__VA_ARGS__)))
#define MPI_Win_unlock(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_unlock(__VA_ARGS__)))
#define MPI_Win_lock_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_lock_all(__VA_ARGS__)))
#define MPI_Win_unlock_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_unlock_all(__VA_ARGS__)))
#define MPI_Win_flush(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_flush(__VA_ARGS__)))
#define MPI_Win_flush_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_flush_all(__VA_ARGS__)))
#define MPI_Win_flush_local(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_flush_local(__VA_ARGS__)))
#define MPI_Win_flush_local_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_flush_local_all(__VA_ARGS__)))
#define MPI_Win_post(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_post(__VA_ARGS__)))
#define MPI_Win_start(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_start(__VA_ARGS__)))
#define MPI_Win_complete(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_complete(__VA_ARGS__)))
#define MPI_Win_wait(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_wait(__VA_ARGS__)))
#define MPI_Win_test(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_test(__VA_ARGS__)))
#define MPI_Rput(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Rput(__VA_ARGS__)))
#define MPI_Rget(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Rget(__VA_ARGS__)))
#define MPI_Raccumulate(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Raccumulate(__VA_ARGS__)))
#define MPI_Rget_accumulate(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Rget_accumulate(__VA_ARGS__)))
#define MPI_Win_sync(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_sync(__VA_ARGS__)))
#define MPI_Win_free(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Win_free(__VA_ARGS__)))
#define MPI_Free_mem(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Free_mem(__VA_ARGS__)))
#define MPI_File_read(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read(__VA_ARGS__)))
#define MPI_File_write(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write(__VA_ARGS__)))
#define MPI_File_read_at(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_at(__VA_ARGS__)))
#define MPI_File_write_at(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_at(__VA_ARGS__)))
#define MPI_File_read_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_all(__VA_ARGS__)))
#define MPI_File_write_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_all(__VA_ARGS__)))
#define MPI_File_read_at_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_at_all(__VA_ARGS__)))
#define MPI_File_write_at_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_at_all(__VA_ARGS__)))
#define MPI_File_iread(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iread(__VA_ARGS__)))
#define MPI_File_iwrite(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iwrite(__VA_ARGS__)))
#define MPI_File_iread_at(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iread_at(__VA_ARGS__)))
#define MPI_File_iwrite_at(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iwrite_at(__VA_ARGS__)))
#define MPI_File_read_shared(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_shared(__VA_ARGS__)))
#define MPI_File_write_shared(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_shared(__VA_ARGS__)))
#define MPI_File_read_ordered(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_ordered(__VA_ARGS__)))
#define MPI_File_write_ordered(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_ordered(__VA_ARGS__)))
#define MPI_File_iread_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iread_all(__VA_ARGS__)))
#define MPI_File_iwrite_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iwrite_all(__VA_ARGS__)))
#define MPI_File_iread_at_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iread_at_all(__VA_ARGS__)))
#define MPI_File_iwrite_at_all(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iwrite_at_all(__VA_ARGS__)))
#define MPI_File_iread_shared(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iread_shared(__VA_ARGS__)))
#define MPI_File_iwrite_shared(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_iwrite_shared(__VA_ARGS__)))
#define MPI_File_read_all_begin(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_all_begin(__VA_ARGS__)))
#define MPI_File_read_all_end(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_all_end(__VA_ARGS__)))
#define MPI_File_write_all_begin(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_all_begin(__VA_ARGS__)))
#define MPI_File_write_all_end(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_all_end(__VA_ARGS__)))
#define MPI_File_read_at_all_begin(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_at_all_begin(__VA_ARGS__)))
#define MPI_File_read_at_all_end(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_at_all_end(__VA_ARGS__)))
#define MPI_File_write_at_all_begin(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_at_all_begin(__VA_ARGS__)))
#define MPI_File_write_at_all_end(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_at_all_end(__VA_ARGS__)))
#define MPI_File_read_ordered_begin(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_ordered_begin(__VA_ARGS__)))
#define MPI_File_read_ordered_end(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_read_ordered_end(__VA_ARGS__)))
#define MPI_File_write_ordered_begin(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_ordered_begin(__VA_ARGS__)))
#define MPI_File_write_ordered_end(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_File_write_ordered_end(__VA_ARGS__)))
#define MPI_Comm_free(...) (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Comm_free(__VA_ARGS__)))
#define MPI_Finalize() (mpix_guard_fence_(), mpix_guard_fenced_(MPI_Finalize()))
/** @endcond */

#endif
