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
 * The list is the one libmpix-guard.so interposes at run time (LD_PRELOAD); see
 * mpix/guard.h for the semantics and docs/guard.md for the thread levels.
 */
#ifndef MPIX_GUARD_INJECT_H
#define MPIX_GUARD_INJECT_H

#include <mpi.h>
#include <mpix/guard.h>

/** @cond INJECTED_MACROS (one macro per MPI call; not part of the reference) */
#define MPI_Send(...) MPIX_Send_guarded(__VA_ARGS__)
#define MPI_Recv(...) MPIX_Recv_guarded(__VA_ARGS__)
#define MPI_Sendrecv(...) MPIX_Sendrecv_guarded(__VA_ARGS__)

#define MPI_Bsend(...) ((void)MPIX_Guard_complete_all(), MPI_Bsend(__VA_ARGS__))
#define MPI_Ssend(...) ((void)MPIX_Guard_complete_all(), MPI_Ssend(__VA_ARGS__))
#define MPI_Rsend(...) ((void)MPIX_Guard_complete_all(), MPI_Rsend(__VA_ARGS__))
#define MPI_Isend(...) ((void)MPIX_Guard_complete_all(), MPI_Isend(__VA_ARGS__))
#define MPI_Ibsend(...) ((void)MPIX_Guard_complete_all(), MPI_Ibsend(__VA_ARGS__))
#define MPI_Issend(...) ((void)MPIX_Guard_complete_all(), MPI_Issend(__VA_ARGS__))
#define MPI_Irsend(...) ((void)MPIX_Guard_complete_all(), MPI_Irsend(__VA_ARGS__))
#define MPI_Irecv(...) ((void)MPIX_Guard_complete_all(), MPI_Irecv(__VA_ARGS__))
#define MPI_Sendrecv_replace(...) ((void)MPIX_Guard_complete_all(), MPI_Sendrecv_replace(__VA_ARGS__))
#define MPI_Mrecv(...) ((void)MPIX_Guard_complete_all(), MPI_Mrecv(__VA_ARGS__))
#define MPI_Imrecv(...) ((void)MPIX_Guard_complete_all(), MPI_Imrecv(__VA_ARGS__))
#define MPI_Send_init(...) ((void)MPIX_Guard_complete_all(), MPI_Send_init(__VA_ARGS__))
#define MPI_Bsend_init(...) ((void)MPIX_Guard_complete_all(), MPI_Bsend_init(__VA_ARGS__))
#define MPI_Ssend_init(...) ((void)MPIX_Guard_complete_all(), MPI_Ssend_init(__VA_ARGS__))
#define MPI_Rsend_init(...) ((void)MPIX_Guard_complete_all(), MPI_Rsend_init(__VA_ARGS__))
#define MPI_Recv_init(...) ((void)MPIX_Guard_complete_all(), MPI_Recv_init(__VA_ARGS__))
#define MPI_Start(...) ((void)MPIX_Guard_complete_all(), MPI_Start(__VA_ARGS__))
#define MPI_Startall(...) ((void)MPIX_Guard_complete_all(), MPI_Startall(__VA_ARGS__))
#define MPI_Wait(...) ((void)MPIX_Guard_complete_all(), MPI_Wait(__VA_ARGS__))
#define MPI_Waitall(...) ((void)MPIX_Guard_complete_all(), MPI_Waitall(__VA_ARGS__))
#define MPI_Waitany(...) ((void)MPIX_Guard_complete_all(), MPI_Waitany(__VA_ARGS__))
#define MPI_Waitsome(...) ((void)MPIX_Guard_complete_all(), MPI_Waitsome(__VA_ARGS__))
#define MPI_Test(...) ((void)MPIX_Guard_complete_all(), MPI_Test(__VA_ARGS__))
#define MPI_Testall(...) ((void)MPIX_Guard_complete_all(), MPI_Testall(__VA_ARGS__))
#define MPI_Testany(...) ((void)MPIX_Guard_complete_all(), MPI_Testany(__VA_ARGS__))
#define MPI_Testsome(...) ((void)MPIX_Guard_complete_all(), MPI_Testsome(__VA_ARGS__))
#define MPI_Probe(...) ((void)MPIX_Guard_complete_all(), MPI_Probe(__VA_ARGS__))
#define MPI_Iprobe(...) ((void)MPIX_Guard_complete_all(), MPI_Iprobe(__VA_ARGS__))
#define MPI_Mprobe(...) ((void)MPIX_Guard_complete_all(), MPI_Mprobe(__VA_ARGS__))
#define MPI_Improbe(...) ((void)MPIX_Guard_complete_all(), MPI_Improbe(__VA_ARGS__))
#define MPI_Cancel(...) ((void)MPIX_Guard_complete_all(), MPI_Cancel(__VA_ARGS__))
#define MPI_Request_free(...) ((void)MPIX_Guard_complete_all(), MPI_Request_free(__VA_ARGS__))
#define MPI_Barrier(...) ((void)MPIX_Guard_complete_all(), MPI_Barrier(__VA_ARGS__))
#define MPI_Bcast(...) ((void)MPIX_Guard_complete_all(), MPI_Bcast(__VA_ARGS__))
#define MPI_Gather(...) ((void)MPIX_Guard_complete_all(), MPI_Gather(__VA_ARGS__))
#define MPI_Gatherv(...) ((void)MPIX_Guard_complete_all(), MPI_Gatherv(__VA_ARGS__))
#define MPI_Scatter(...) ((void)MPIX_Guard_complete_all(), MPI_Scatter(__VA_ARGS__))
#define MPI_Scatterv(...) ((void)MPIX_Guard_complete_all(), MPI_Scatterv(__VA_ARGS__))
#define MPI_Allgather(...) ((void)MPIX_Guard_complete_all(), MPI_Allgather(__VA_ARGS__))
#define MPI_Allgatherv(...) ((void)MPIX_Guard_complete_all(), MPI_Allgatherv(__VA_ARGS__))
#define MPI_Alltoall(...) ((void)MPIX_Guard_complete_all(), MPI_Alltoall(__VA_ARGS__))
#define MPI_Alltoallv(...) ((void)MPIX_Guard_complete_all(), MPI_Alltoallv(__VA_ARGS__))
#define MPI_Reduce(...) ((void)MPIX_Guard_complete_all(), MPI_Reduce(__VA_ARGS__))
#define MPI_Allreduce(...) ((void)MPIX_Guard_complete_all(), MPI_Allreduce(__VA_ARGS__))
#define MPI_Reduce_scatter_block(...) ((void)MPIX_Guard_complete_all(), MPI_Reduce_scatter_block(__VA_ARGS__))
#define MPI_Reduce_scatter(...) ((void)MPIX_Guard_complete_all(), MPI_Reduce_scatter(__VA_ARGS__))
#define MPI_Scan(...) ((void)MPIX_Guard_complete_all(), MPI_Scan(__VA_ARGS__))
#define MPI_Exscan(...) ((void)MPIX_Guard_complete_all(), MPI_Exscan(__VA_ARGS__))
#define MPI_Reduce_local(...) ((void)MPIX_Guard_complete_all(), MPI_Reduce_local(__VA_ARGS__))
#define MPI_Ibarrier(...) ((void)MPIX_Guard_complete_all(), MPI_Ibarrier(__VA_ARGS__))
#define MPI_Ibcast(...) ((void)MPIX_Guard_complete_all(), MPI_Ibcast(__VA_ARGS__))
#define MPI_Iallgather(...) ((void)MPIX_Guard_complete_all(), MPI_Iallgather(__VA_ARGS__))
#define MPI_Ialltoall(...) ((void)MPIX_Guard_complete_all(), MPI_Ialltoall(__VA_ARGS__))
#define MPI_Ireduce(...) ((void)MPIX_Guard_complete_all(), MPI_Ireduce(__VA_ARGS__))
#define MPI_Iallreduce(...) ((void)MPIX_Guard_complete_all(), MPI_Iallreduce(__VA_ARGS__))
#define MPI_Pack(...) ((void)MPIX_Guard_complete_all(), MPI_Pack(__VA_ARGS__))
#define MPI_Unpack(...) ((void)MPIX_Guard_complete_all(), MPI_Unpack(__VA_ARGS__))
#define MPI_Put(...) ((void)MPIX_Guard_complete_all(), MPI_Put(__VA_ARGS__))
#define MPI_Get(...) ((void)MPIX_Guard_complete_all(), MPI_Get(__VA_ARGS__))
#define MPI_Accumulate(...) ((void)MPIX_Guard_complete_all(), MPI_Accumulate(__VA_ARGS__))
#define MPI_Get_accumulate(...) ((void)MPIX_Guard_complete_all(), MPI_Get_accumulate(__VA_ARGS__))
#define MPI_Fetch_and_op(...) ((void)MPIX_Guard_complete_all(), MPI_Fetch_and_op(__VA_ARGS__))
#define MPI_Compare_and_swap(...) ((void)MPIX_Guard_complete_all(), MPI_Compare_and_swap(__VA_ARGS__))
#define MPI_Win_fence(...) ((void)MPIX_Guard_complete_all(), MPI_Win_fence(__VA_ARGS__))
#define MPI_Win_lock(...) ((void)MPIX_Guard_complete_all(), MPI_Win_lock(__VA_ARGS__))
#define MPI_Win_unlock(...) ((void)MPIX_Guard_complete_all(), MPI_Win_unlock(__VA_ARGS__))
#define MPI_Win_lock_all(...) ((void)MPIX_Guard_complete_all(), MPI_Win_lock_all(__VA_ARGS__))
#define MPI_Win_unlock_all(...) ((void)MPIX_Guard_complete_all(), MPI_Win_unlock_all(__VA_ARGS__))
#define MPI_Win_flush(...) ((void)MPIX_Guard_complete_all(), MPI_Win_flush(__VA_ARGS__))
#define MPI_Win_flush_all(...) ((void)MPIX_Guard_complete_all(), MPI_Win_flush_all(__VA_ARGS__))
#define MPI_Win_sync(...) ((void)MPIX_Guard_complete_all(), MPI_Win_sync(__VA_ARGS__))
#define MPI_File_read(...) ((void)MPIX_Guard_complete_all(), MPI_File_read(__VA_ARGS__))
#define MPI_File_write(...) ((void)MPIX_Guard_complete_all(), MPI_File_write(__VA_ARGS__))
#define MPI_File_read_at(...) ((void)MPIX_Guard_complete_all(), MPI_File_read_at(__VA_ARGS__))
#define MPI_File_write_at(...) ((void)MPIX_Guard_complete_all(), MPI_File_write_at(__VA_ARGS__))
#define MPI_File_read_all(...) ((void)MPIX_Guard_complete_all(), MPI_File_read_all(__VA_ARGS__))
#define MPI_File_write_all(...) ((void)MPIX_Guard_complete_all(), MPI_File_write_all(__VA_ARGS__))
#define MPI_File_read_at_all(...) ((void)MPIX_Guard_complete_all(), MPI_File_read_at_all(__VA_ARGS__))
#define MPI_File_write_at_all(...) ((void)MPIX_Guard_complete_all(), MPI_File_write_at_all(__VA_ARGS__))
#define MPI_Comm_free(...) ((void)MPIX_Guard_complete_all(), MPI_Comm_free(__VA_ARGS__))
#define MPI_Finalize() ((void)MPIX_Guard_complete_all(), MPI_Finalize())
/** @endcond */

#endif
