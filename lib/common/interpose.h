/* SPDX-License-Identifier: BSD-3-Clause */
/* For the interposition libraries only (libmpix-pmpi.so, libmpix-guard.so): which of
 * their wrappers act. Exported from libmpix so that the setting is parsed by the one
 * settings table, but not part of the API. */
#ifndef MPIX_COMMON_INTERPOSE_H
#define MPIX_COMMON_INTERPOSE_H

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

enum mpix_interposed {
    MPIX_INTERPOSE_STORAGE = 1 << 0,
    MPIX_INTERPOSE_GUARD = 1 << 1,
    MPIX_INTERPOSE_ZCOPY = 1 << 2
};

/* The modules MPIX_PMPI names, else those of @library_default ("storage", "guard");
 * parsed once per process. A malformed MPIX_PMPI is reported on stderr once and the
 * default used: the wrappers have no caller to return an error to. */
__attribute__((visibility("default"))) int mpix_interpose_modules(const char *library_default);

/* @info plus the hints of MPIX_STORAGE_DEFAULT_HINTS for keys it lacks, in a new info
 * (*@merged, which the caller frees), or @info itself when there are none; %r becomes
 * the rank in MPI_COMM_WORLD, %w the number of the process's window. A pair without
 * '=' is an MPIX_ERRKIND_BAD_HINT error, raised on @comm (the window's communicator). */
__attribute__((visibility("default"))) int mpix_interpose_default_hints(MPI_Info info, MPI_Comm comm,
                                                                        MPI_Info *merged);

/* guard: before @bytes of memory at @memory go back to the allocator (free and realloc
 * on the program's thread: lib/guard/release.c) or to the kernel (read, write, ...:
 * lib/guard/system_calls.c), finish the guarded transfers that still need any of them. */
__attribute__((visibility("default"))) void mpix_interpose_guard_release(const void *memory, size_t bytes);
/* guard: after an MPI call that made a window (@rc its code; *@win is read only when it
 * succeeded) or attached or detached memory, record the memory other processes reach
 * (lib/guard/exposed.h). The call's own code, else the recording's. */
__attribute__((visibility("default"))) int mpix_interpose_window_created(int rc, const MPI_Win *win);
/* guard: before MPI_Win_create exposes @size bytes at @base (other processes may reach
 * them once the collective call has begun), finish the guarded transfers on them.
 * mpix_interpose_window_attached does the same for attached memory. */
__attribute__((visibility("default"))) void mpix_interpose_window_exposing(const void *base, MPI_Aint size);
__attribute__((visibility("default"))) int mpix_interpose_window_attached(int rc, MPI_Win win, const void *base,
                                                                          MPI_Aint size);
__attribute__((visibility("default"))) int mpix_interpose_window_detached(int rc, MPI_Win win, const void *base);
/* Whether guard has transfers in flight in this process (a load and a test). */
__attribute__((visibility("default"))) int mpix_interpose_guard_busy(void);
/* guard: pthread_create, made through @next (the real function), after guard has taken
 * note of a thread the program starts (lib/guard/threads.c). */
typedef int mpix_thread_create_function(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
__attribute__((visibility("default"))) int mpix_interpose_guard_thread_create(mpix_thread_create_function *next,
                                                                              pthread_t *thread,
                                                                              const pthread_attr_t *attributes,
                                                                              void *(*start)(void *),
                                                                              void *argument);
/* guard: sigaction for SIGSEGV and SIGTRAP while guard's handler is installed: the
 * program's handler becomes the one guard passes faults that are not its own to, and
 * guard's stays (lib/guard/fault.c); otherwise, and for other signals, @next (the real
 * function) makes the call. */
typedef int mpix_sigaction_function(int, const struct sigaction *, struct sigaction *);
__attribute__((visibility("default"))) int mpix_interpose_guard_sigaction(mpix_sigaction_function *next, int signo,
                                                                          const struct sigaction *action,
                                                                          struct sigaction *old_action);

/* zcopy for the program's point-to-point calls (lib/zcopy/interposed*.c). _init after
 * PMPI_Init (collective over MPI_COMM_WORLD: it learns which processes of the node may
 * send this one zero-copy headers; @fortran_wrapped: the calling library wraps the MPI's
 * Fortran receives and completions too, else a loaded Fortran binding keeps zero-copy
 * off), _finalize before PMPI_Finalize. Each other function
 * has the signature and meaning of the MPI_ call it is named after; where zero-copy is
 * off in the process it is that call. */
#define MPIX_INTERPOSE_EXPORT __attribute__((visibility("default")))
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_init(int fortran_wrapped);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_finalize(void);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_send(const void *buf, int count, MPI_Datatype datatype, int dest,
                                                    int tag, MPI_Comm comm);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_isend(const void *buf, int count, MPI_Datatype datatype, int dest,
                                                     int tag, MPI_Comm comm, MPI_Request *request);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                                                    MPI_Comm comm, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_irecv(void *buf, int count, MPI_Datatype datatype, int source,
                                                     int tag, MPI_Comm comm, MPI_Request *request);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_recv_init(void *buf, int count, MPI_Datatype datatype, int source,
                                                         int tag, MPI_Comm comm, MPI_Request *request);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                        int dest, int sendtag, void *recvbuf, int recvcount,
                                                        MPI_Datatype recvtype, int source, int recvtag,
                                                        MPI_Comm comm, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_sendrecv_replace(void *buf, int count, MPI_Datatype datatype,
                                                                int dest, int sendtag, int source, int recvtag,
                                                                MPI_Comm comm, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_wait(MPI_Request *request, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_test(MPI_Request *request, int *flag, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_testall(int count, MPI_Request requests[], int *flag,
                                                       MPI_Status statuses[]);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_waitany(int count, MPI_Request requests[], int *index,
                                                       MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_testany(int count, MPI_Request requests[], int *index, int *flag,
                                                       MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_waitsome(int count, MPI_Request requests[], int *outcount,
                                                        int indices[], MPI_Status statuses[]);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_testsome(int count, MPI_Request requests[], int *outcount,
                                                        int indices[], MPI_Status statuses[]);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_request_free(MPI_Request *request);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_request_get_status(MPI_Request request, int *flag, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_cancel(MPI_Request *request);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_start(MPI_Request *request);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_startall(int count, MPI_Request requests[]);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_iprobe(int source, int tag, MPI_Comm comm, int *flag,
                                                      MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                                                      MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_improbe(int source, int tag, MPI_Comm comm, int *flag,
                                                       MPI_Message *message, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_mrecv(void *buf, int count, MPI_Datatype datatype,
                                                     MPI_Message *message, MPI_Status *status);
MPIX_INTERPOSE_EXPORT int mpix_interpose_zcopy_imrecv(void *buf, int count, MPI_Datatype datatype,
                                                      MPI_Message *message, MPI_Request *request);

#endif
