/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/storage.h
 * @brief MPI storage windows: windows mapped onto files or block devices, alone or
 *        combined with memory in one contiguous range, made durable on demand.
 *
 * Every call takes the arguments of its MPI counterpart. Without the info hint
 * `alloc_type=storage` each call behaves exactly like that counterpart (the window is
 * made by MPI_Win_allocate, MPI_Win_allocate_shared or MPI_Alloc_mem). With it, the
 * window memory is a shared mapping of `storage_alloc_filename` (created 0600 if
 * missing, its blocks reserved at allocation so a full disk is an error here and never
 * a SIGBUS later), and the window is exposed to MPI with MPI_Win_create.
 *
 * @par Hints (info values are strings; see docs/storage.md for the full table)
 * - `alloc_type`: `memory` (default) | `storage`
 * - `storage_alloc_filename`: file or block device; required with `alloc_type=storage`
 * - `storage_alloc_offset`: byte offset in the file (default 0). Ranks of one call that
 *   name the same file and offset get consecutive page-aligned segments in rank order.
 * - `storage_alloc_factor`: fraction kept in memory, `0`..`1` (default 0), or `auto`
 *   (memory up to this rank's fair share of what the node can hold, the rest on storage)
 * - `storage_alloc_order`: `memory_first` (default) | `storage_first`
 * - `storage_alloc_unlink`: `true` removes the file when the window is freed
 * - `storage_alloc_discard`: `true` skips the final flush at free
 * - `access_style`, `file_perm`, `striping_factor`, `striping_unit`: MPI-IO reserved hints
 * - `mpix_storage_node_memory` / env `MPIX_STORAGE_NODE_MEMORY`: bytes the node offers
 *   to `auto` (default: available memory within the job's cgroup limit)
 * - `mpix_storage_tracking` / env `MPIX_STORAGE_TRACKING`: `auto` (default) | `page` |
 *   `huge`: dirty tracking per 4 KiB page or per 2 MiB folio between syncs; `auto`
 *   starts with 2 MiB (pages with `access_style=random`), probes the interval after the
 *   first sync and picks at each MPIX_Win_sync from the share of pages that changed
 * - `mpix_storage_huge_percent` / env `MPIX_STORAGE_HUGE_PERCENT`: that share, in
 *   percent, from which `auto` tracks per 2 MiB (default 6)
 * - `mpix_storage_sync` / env `MPIX_STORAGE_SYNC`: `auto` (default) | `log` | `in_place`:
 *   `log` keeps the storage part in private memory and saves each sync as one record of
 *   the changed pages in a redo log beside the file (`<file>.mpix-log.<offset>`, three
 *   times the storage part); `in_place` maps the file and writes changed pages back.
 *   `auto` means `log` for a pure storage window of one process on a regular file whose
 *   storage part fits in memory, `in_place` otherwise (shared windows, block devices,
 *   combined windows and factor=auto: a memory budget means out-of-core).
 * - `mpix_storage_log_changes` / env `MPIX_STORAGE_LOG_CHANGES`: `auto` (default) |
 *   `written` | `digest`: how a logged sync finds the changed pages. `written`: the
 *   pages the kernel saw written since the last sync (Linux 6.7 or later; the first store
 *   to a page in an interval costs a fault of about 1 µs); `digest`: a digest of every
 *   page. `auto` is `written` where the kernel offers it, reading every page instead at a
 *   sync while the process holds memory pinned for a device (`VmPin`) or XPMEM exists,
 *   whose writes bypass the page tables.
 *
 * @par Consistency
 * RMA and load/store complete in memory, as for any window. MPIX_Win_sync() makes the
 * local window's changed pages durable; to keep remote writers out while it runs, hold
 * an exclusive lock on the local rank (MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me)). With the
 * redo log a crash at any instant (process or node) leaves the last completed sync
 * recoverable, never a mix of two; the next allocation on the file replays it, and
 * MPIX_Win_free() writes the last sync into the file and removes the log. Written back
 * in place, a crash during a sync can leave pages of two syncs.
 *
 * @par Files
 * Existing files are opened without following symbolic links, and a file of another
 * user in a directory anyone may write to is refused; a window claims its bytes of the
 * file, so a second window on them is an error naming the file; a failed allocation
 * gives an existing file back its size.
 *
 * @par Fortran
 * The module mpix_storage (`use mpix_storage`, installed beside this header's folder)
 * declares these calls for `use mpi` and `use mpi_f08`; BASEPTR comes back as
 * TYPE(C_PTR).
 *
 * @par Errors
 * Collective calls agree on failure: if any rank cannot open, reserve or map its part,
 * every rank returns an error (class MPIX_ERRKIND_STORAGE_IO, MPIX_ERRKIND_BAD_HINT or
 * MPIX_ERRKIND_ARGUMENT naming the path, value or rank), files the call created are
 * removed and no mapping is left.
 */
#ifndef MPIX_STORAGE_H
#define MPIX_STORAGE_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief MPI_Win_allocate, on storage when the info says so.
 *
 * Collective over @p comm. With `alloc_type=storage`, maps this rank's @p size bytes
 * (memory part, then storage part, or the reverse by `storage_alloc_order`) in one
 * contiguous range at `*(void **)baseptr`. If any rank asks for storage, every rank's
 * window is made with MPI_Win_create (memory-only ranks get anonymous memory);
 * otherwise the call is MPI_Win_allocate itself.
 *
 * @param size      bytes of this rank's window (0 allowed)
 * @param disp_unit displacement unit, as MPI_Win_allocate
 * @param info      hints (MPI_INFO_NULL: a memory window)
 * @param comm      communicator
 * @param[out] baseptr address of a `void *` that receives the local base
 * @param[out] win  the window
 * @return MPI_SUCCESS or an error code, raised on @p comm. MPIX_ERRKIND_UNSUPPORTED on
 *         every rank where the MPI moves a window's base (MPICH 4.0 over UCX 1.13 rounds
 *         it down to 16 bytes: an offset inside a page that is not a multiple of 16),
 *         since its one-sided operations would miss the window.
 * @par Complexity two MPI_Allreduce plus the window creation; storage: O(1) system
 *      calls per rank, reserving the file's blocks costs O(size) on file systems
 *      without native fallocate.
 */
int MPIX_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win);

/**
 * @brief MPI_Win_allocate_shared, on storage when the info says so.
 *
 * Collective over @p comm, whose processes must share a node. With storage, every
 * process maps every segment (memory and storage parts alike) side by side in one range
 * in rank order; each segment starts on a page boundary, so the range has no gaps when
 * sizes are page multiples. Loads and stores to a peer's segment reach the same pages
 * as the peer's own. Without storage this is MPI_Win_allocate_shared.
 *
 * @param size      bytes of this rank's segment (0 allowed)
 * @param disp_unit displacement unit, as MPI_Win_allocate_shared
 * @param info      hints (MPI_INFO_NULL: a memory window)
 * @param comm      communicator whose processes share a node
 * @param[out] baseptr address of a `void *` that receives this rank's segment
 * @param[out] win  the window
 * @return MPI_SUCCESS or an error code, raised on @p comm. An offset that is not a
 *         multiple of the page size is an MPIX_ERRKIND_ARGUMENT error here.
 * @par Complexity one MPI_Allgather of a small descriptor, then O(ranks) mappings.
 */
int MPIX_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                             MPI_Win *win);

/**
 * @brief MPI_Win_shared_query for memory and storage shared windows alike.
 *
 * @param win  a window from MPIX_Win_allocate_shared
 * @param rank a rank of the window's group, or MPI_PROC_NULL for the first non-empty
 *             segment, as MPI_Win_shared_query
 * @param[out] size      the segment's size in bytes
 * @param[out] disp_unit the segment's displacement unit
 * @param[out] baseptr   address of a `void *` that receives the caller's address of the segment
 * @return MPI_SUCCESS; MPIX_ERRKIND_ARGUMENT naming @p rank if it is out of range. Raised
 *         on @p win. @par Complexity O(1).
 */
int MPIX_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr);

/**
 * @brief MPI_Alloc_mem, on storage when the info says so; for dynamic windows.
 *
 * Not collective. With `alloc_type=storage` the memory is a mapping as in
 * MPIX_Win_allocate; attach it with MPIX_Win_attach so MPIX_Win_sync covers it.
 * @param size bytes to allocate
 * @param info hints (MPI_INFO_NULL: MPI_Alloc_mem)
 * @param[out] baseptr address of a `void *` that receives the memory
 * @return MPI_SUCCESS or an error code, raised on MPI_COMM_WORLD.
 */
int MPIX_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);

/**
 * @brief MPI_Free_mem for memory from MPIX_Alloc_mem; storage is flushed (unless
 *        `storage_alloc_discard`), unmapped and unlinked if asked.
 *
 * Guarded transfers (mpix/guard.h) still in flight are finished first, on any memory.
 * @param base what MPIX_Alloc_mem returned
 * @return MPI_SUCCESS or an error code, raised on MPI_COMM_WORLD.
 */
int MPIX_Free_mem(void *base);

/**
 * @brief MPI_Win_attach that also records storage memory, so MPIX_Win_sync flushes it.
 * @param win  a dynamic window (MPI_Win_create_dynamic)
 * @param base start of the memory to expose
 * @param size its length in bytes
 * @return MPI_SUCCESS or an error code, raised on @p win. @par Complexity O(attached regions).
 */
int MPIX_Win_attach(MPI_Win win, void *base, MPI_Aint size);

/**
 * @brief MPI_Win_detach, forgetting a storage region recorded by MPIX_Win_attach.
 * @param win  the dynamic window
 * @param base the start given to MPIX_Win_attach
 * @return MPI_SUCCESS or an error code, raised on @p win.
 */
int MPIX_Win_detach(MPI_Win win, const void *base);

/**
 * @brief MPI_Win_sync, then every changed storage page of the local window made
 *        durable on its device.
 *
 * Local. Covers the local segment of a storage or shared storage window and every
 * storage region attached with MPIX_Win_attach. On a memory window it is MPI_Win_sync.
 * With `mpix_storage_sync=log` the changed pages are appended to the window's redo log
 * as one record, made durable with one fdatasync: after a crash at any instant the next
 * allocation on the file finds the state of the last completed call, never a mix of two.
 * Written back in place (`in_place`), the changed pages are written into the file and
 * synced (msync MS_SYNC). Guarded transfers (mpix/guard.h) still in flight are finished
 * first, so the file gets what the blocking calls had written.
 * @param win any window
 * @return MPI_SUCCESS or an MPIX_ERRKIND_STORAGE_IO error naming the file, raised on @p win.
 * @par Complexity proportional to the pages changed since the last sync, not to the
 *      window size: in place, in units of the tracking granularity (4 KiB, or 2 MiB while
 *      `mpix_storage_tracking=auto` sees dense changes); with the log, the pages written
 *      since the last sync are read (every page with `mpix_storage_log_changes=digest`,
 *      after a dense sync, or while memory is pinned) and the changed ones written
 *      sequentially; when more than half the window changed, or the log's record area is
 *      full, the whole window is written once instead, as a new base image.
 */
int MPIX_Win_sync(MPI_Win win);

/**
 * @brief MPI_Win_free, then flush (unless `storage_alloc_discard`), unmap, close and
 *        (with `storage_alloc_unlink`) remove the files.
 *
 * Collective. Free storage windows with this call: it tears the mapping down only after
 * MPI_Win_free has returned, when no peer can still reach the memory. Guarded transfers
 * (mpix/guard.h) still in flight are finished first, on any window.
 * @param[in,out] win the window; MPI_WIN_NULL on return
 * @return MPI_SUCCESS or an error code, raised on the window before it is freed or on
 *         MPI_COMM_WORLD after.
 */
int MPIX_Win_free(MPI_Win *win);

/**
 * @brief MPI_Win_get_info plus the storage hints in effect on this process's segment.
 *
 * MPIs keep only the info keys they know (MPICH drops mpix's), so this call adds them
 * back as they were applied: `alloc_type`, `storage_alloc_filename`,
 * `storage_alloc_offset` (where this rank's segment starts in the file),
 * `storage_alloc_factor` (the fraction actually in memory, after page rounding or
 * `auto`), `storage_alloc_order`, `storage_alloc_unlink`, `storage_alloc_discard`,
 * `access_style`, `file_perm`, `mpix_storage_sync` (`log` or `in_place`), the
 * read-only `mpix_storage_generation` (logged windows: syncs the file and its log hold,
 * counted across restarts), `mpix_storage_tracking`, `mpix_storage_huge_percent`,
 * the read-only `mpix_storage_tracking_bytes` (granularity until the next sync: the page
 * size or 2097152) and `mpix_storage_tracking_probe` (`true` while a sample of the window
 * is tracked by page to measure the share of changed pages), and the striping hints as given (accepted, not applied: they need a
 * striped file system such as Lustre). For other windows it is
 * MPI_Win_get_info.
 * @param win the window
 * @param[out] info_used a new info object; free it with MPI_Info_free
 * @return MPI_SUCCESS or the error of MPI_Win_get_info. @par Complexity O(hints).
 */
int MPIX_Win_get_info(MPI_Win win, MPI_Info *info_used);

/**
 * @brief After MPI_Win_flush(rank, win): the target's storage durable too, for a target
 *        on the caller's node.
 *
 * For a shared storage window (MPIX_Win_allocate_shared) the caller flushes the
 * target's segment through its own mapping of it. For a target whose segment the caller
 * does not map (other windows, other nodes) it completes RMA (MPI_Win_flush) and
 * returns MPIX_ERRKIND_UNSUPPORTED: durability then needs MPIX_Win_sync on the target.
 * On a memory window it is MPI_Win_flush. Guarded transfers (mpix/guard.h) still in
 * flight are finished first, as by MPIX_Win_sync.
 * @param rank target rank in the window's group
 * @param win  the window
 * @return MPI_SUCCESS or an error code, raised on @p win.
 */
int MPIX_Win_flush_storage(int rank, MPI_Win win);

#ifdef __cplusplus
}
#endif
#endif
