/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mpix/common.h
 * @brief What every mpix module shares: library version, mpix error classes, hint checking.
 *
 * @section errors Error handling
 * Every MPIX_ function returns an MPI error code. On failure it first calls the error
 * handler of the object involved (the communicator, the window; MPI_COMM_WORLD when
 * there is none, as MPI-3 does, and none in a program of MPI-4 sessions alone, where the
 * code is only returned), so MPI_ERRORS_ARE_FATAL aborts and MPI_ERRORS_RETURN hands the
 * code back. Errors that mpix detects itself carry a code of one of mpix's own
 * error classes (see ::MPIX_Error_kind); MPI_Error_string() on that code names what went
 * wrong and the offending value, for example
 * `mpix: invalid value 'banana' for hint 'storage_alloc_factor' (info): expected a number in [0, 1] or auto`.
 * A call that stands in for an MPI call with the same arguments (MPIX_Send_guarded,
 * MPIX_Recv_zcopy, MPIX_Probe_zcopy, ...) leaves to MPI what MPI's call would reject: a
 * null communicator, a negative count, a null or uncommitted datatype, a bad tag or
 * rank give MPI's own error class and message, raised by MPI.
 *
 * mpix keeps a small pool of error codes per class and rewrites their strings, so the
 * text of a code stays valid until 32 further errors of the same class have occurred in
 * the process; the class of a code never changes. The classes are registered lazily,
 * once per process, with MPI_Add_error_class.
 *
 * @section sessions MPI-4 sessions
 * A program may use MPI-4 sessions alone, without MPI_Init: every module works on a
 * communicator made from a session's process set (MPI_Comm_create_from_group), and so
 * do the interposition libraries under an unchanged program. mpix then keeps its
 * per-process state on a communicator of the process alone, made from a session of its
 * own (there is no MPI_COMM_SELF), which it finalizes when the process exits. Without
 * MPI_COMM_WORLD no peer has an identity the kernel copies can be set up with, so zcopy's
 * messages all go through MPI (correct, without the zero-copy speed), and virtual nodes
 * (`MPIX_HY_SPLIT=k`) count ranks of the communicator instead of MPI_COMM_WORLD. With
 * an MPI older than MPI-4, mpix needs MPI_Init.
 *
 * @section hints Hints
 * Module behaviour is tuned by MPI_Info keys; some keys also have an environment
 * variable that supplies the default when no info is passed (documented with each key
 * in docs/). A malformed value is an error of class ::MPIX_ERRKIND_BAD_HINT naming the
 * key, the value and where it came from; unknown keys are ignored, as MPI ignores them.
 */
#ifndef MPIX_COMMON_H
#define MPIX_COMMON_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Size of the buffer MPIX_Get_library_version() needs, terminating NUL included. */
#define MPIX_MAX_LIBRARY_VERSION_STRING 256

/** @cond HEADER_PORTABILITY (spellings for code in headers; not part of the reference) */
/* Functions and state defined in mpix's headers compile in every language version a
 * program may be built with: `inline` is C99 and C++, thread-local storage C11 and
 * C++11; older modes (-std=c89, -ansi, -std=c++98) get the compiler's own keywords. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define MPIX_INLINE_ inline
#elif defined(__GNUC__)
#define MPIX_INLINE_ __inline__
#else
#define MPIX_INLINE_
#endif
#if defined(__cplusplus) && __cplusplus >= 201103L
#define MPIX_THREAD_LOCAL_ thread_local
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define MPIX_THREAD_LOCAL_ _Thread_local
#elif defined(__GNUC__)
#define MPIX_THREAD_LOCAL_ __thread
#else
#error "mpix: this compiler has no thread-local storage in this language mode; use C11 or C++11"
#endif
/** @endcond */

/**
 * @brief The categories of errors that mpix detects itself; each is one MPI error class.
 *
 * Use MPIX_Query_error_class() to learn the MPI class number of a category, then compare
 * it with the class of a returned code (MPI_Error_class()).
 */
typedef enum MPIX_Error_kind {
    MPIX_ERRKIND_BAD_HINT = 0,  /**< an info key or environment variable has a malformed value */
    MPIX_ERRKIND_STORAGE_IO,    /**< a file or device operation failed (open, reserve, map, sync) */
    MPIX_ERRKIND_DATATYPE,      /**< a datatype mpix cannot handle in this call */
    MPIX_ERRKIND_UNSUPPORTED,   /**< the OS or MPI refused a facility mpix needs and no fallback applies */
    MPIX_ERRKIND_ARGUMENT,      /**< an argument outside what the call accepts (the value is named) */
    MPIX_ERRKIND_PEER,          /**< a collective call failed on another rank (its rank and message are named), or a zcopy peer exited in the middle of a message (its rank and pid are named) */
    MPIX_ERRKIND_COUNT          /**< number of categories; not a category */
} MPIX_Error_kind;

/**
 * @brief Version of the mpix library the program runs with.
 *
 * Writes `mpix MAJOR.MINOR.PATCH` followed by the MPI, hwloc and libnuma it was built
 * with, e.g. `mpix 0.1.0 (Open MPI 4.1.4; hwloc API 2.8.0; libnuma API 2)`.
 * May be called before MPI_Init and after MPI_Finalize, like MPI_Get_library_version.
 *
 * @param[out] version   buffer of at least ::MPIX_MAX_LIBRARY_VERSION_STRING chars
 * @param[out] resultlen length written, terminating NUL excluded
 * @return MPI_SUCCESS; MPI_ERR_ARG if a pointer is NULL (no handler can be called then
 *         if MPI is not initialized).
 * @par Complexity O(1).
 */
int MPIX_Get_library_version(char *version, int *resultlen);

/**
 * @brief MPI error class number of an mpix error category.
 *
 * Registers mpix's classes on first use. Needs MPI to be initialized.
 *
 * @param kind        one of ::MPIX_Error_kind
 * @param[out] errorclass the class, comparable with MPI_Error_class() of a returned code
 * @return MPI_SUCCESS; an ::MPIX_ERRKIND_ARGUMENT code naming @p kind if it is out of range.
 *         Errors are raised on MPI_COMM_WORLD (see @ref errors).
 * @par Complexity O(1) after the first call.
 */
int MPIX_Query_error_class(int kind, int *errorclass);

/**
 * @brief Check every mpix hint in @p info, and every mpix environment variable, for a
 *        well-formed value.
 *
 * Each module also checks its hints when it is called; this lets a program reject a bad
 * configuration up front, before it allocates anything. Keys mpix does not know are
 * ignored. Environment variables are checked even when @p info is MPI_INFO_NULL.
 *
 * @param info MPI_INFO_NULL or an info object
 * @return MPI_SUCCESS, or a code of class ::MPIX_ERRKIND_BAD_HINT whose string names the
 *         first bad key (or variable) and its value. Errors are raised on MPI_COMM_WORLD (see
 *         @ref errors).
 * @par Complexity O(number of mpix hints).
 */
int MPIX_Info_validate(MPI_Info info);

/**
 * @brief Read one of mpix's performance variables: a counter of what a module did, or
 *        a state it is in, by name.
 *
 * The names, what each counts and its scope are listed in the module manuals and in
 * `mpix_common(3)`'s table:
 * - `zcopy.*` are per communicator (@p comm: the one the messages used): `sent_plain`
 *   (sent as the program asked, without a header), `sent_eager`,
 *   `sent_mpi`, `sent_zero_copy` (messages by path), `sent_fragmented`, `sent_slower`,
 *   `sent_deferred`, `sent_priced` (of `sent_mpi`: why), `sent_by_shape` (of `sent_fragmented`: a datatype of a shape
 *   found too fragmented before, sent without reading its constructors), `sent_packed`,
 *   `sent_unpacked` (of `sent_mpi`: packed by the sender, unpacked by MPI or by the
 *   receiver), `sent_without_header` (of `sent_eager` and `sent_mpi`: sent as the
 *   program asked, the header having nothing to tell), `sent_data_apart` (of `sent_eager`
 *   and `sent_mpi`: a header alone, the data following as a message of its own),
 *   `sent_questions` (headers of their own that ask a peer whether it can attach to
 *   this process, before a message through MPI),
 *   `pulled_direct`, `pulled_staged`, `pulled_shared`, `pushed`, `push_refused`,
 *   `pulled_piped` (receives unpacked from the sender's pipe), `pipes_taken_over` (of
 *   those, the rest read by the receiver because the sender stalled),
 *   `helps_taken_back` (receives whose request that the sender copy a part no sender
 *   took in time: the receiver copied it),
 *   `layouts_flattened` (datatype contents this process had not seen), `layouts_read`,
 *   `layouts_global`, `layouts_pipelined`, `collapsed_units`, `collapse_deferred`,
 *   `collapse_refused`;
 * - `guard.*` are per process (@p comm is not read; pass MPI_COMM_NULL): the states
 *   `active` (0 while threads the program started run), `chain`, `copy_bytes`, `poll_ns`
 *   (-1: worked out from the measured cost),
 *   `self_memory` (1: protected pages are read through /proc/self/mem), and the counters
 *   `sends_copied`, `sends_in_place`, `receives`, `receives_polled`, `mprotect_calls`,
 *   `faults`, `faults_in_mpi`, `conflict_waits`, `chains`,
 *   `chains_completed_at_last_call`, `hidden_reads`, `retired`, `foreign_faults` (faults
 *   another thread of the process took on a guarded page), `neighbour_steps` (touches of
 *   other data on a guarded page from inside the allocator, let through one instruction
 *   at a time), `exposed` (transfers on memory other processes reach, a window's,
 *   finished before their call returned). Before the first
 *   guarded call they read 0.
 *
 * Counters only grow; take differences around the code of interest.
 * @param name  the variable, e.g. "zcopy.sent_zero_copy"
 * @param comm  the communicator of a per-communicator variable
 * @param[out] value its current value
 * @return MPI_SUCCESS; ::MPIX_ERRKIND_ARGUMENT naming @p name if no variable has that
 *         name, raised on MPI_COMM_WORLD (see @ref errors).
 * @par Complexity O(number of variables) string comparisons; no communication.
 */
int MPIX_Pvar_read(const char *name, MPI_Comm comm, MPI_Count *value);

#ifdef __cplusplus
}
#endif
#endif
