/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy for a program's own MPI calls (libmpix-pmpi.so with MPIX_PMPI=zcopy): the state
 * the interposed calls share in a process. interposed.c sends and receives,
 * interposed_requests.c completes the requests, interposed_probe.c answers probes. */
#ifndef MPIX_ZCOPY_INTERPOSED_H
#define MPIX_ZCOPY_INTERPOSED_H

#include "zcopy.h"

#include <uthash.h>

/* A receive of the program that a zero-copy header may land in: the header arrives in
 * its buffer, through its datatype, and is read back from there; or, for a shape this
 * process's own sends take packed (@packed), MPI receives the message as MPI_PACKED
 * bytes, which are unpacked into the buffer once it completed (a header read from them). */
typedef struct mpix_interposed_receive {
    MPI_Request request;          /* the program's handle: the key */
    void *buf;
    int count;
    MPI_Datatype datatype;        /* a duplicate the entry owns, or a named type */
    int owns_datatype;
    MPI_Comm comm;
    int persistent, active;       /* MPI_Recv_init: started and not yet completed */
    const char *call;             /* MPI_Irecv or MPI_Recv_init, for errors */
    int inspected;                /* complete in MPI and read (and pulled) already */
    int rc;                       /* the zero-copy read's result */
    MPI_Count bytes;              /* the zero-copy message's length; -1: MPI delivered it */
    int from_stash;               /* matched a message a probe took: complete already, and
                                     the request a generalized one (below) */
    char *packed;                 /* the MPI_PACKED bytes MPI receives, or NULL */
    int capacity;                 /* their room: the receive's size in bytes */
    int generalized_completed;
    MPI_Status stash_status;
    UT_hash_handle hh;
} mpix_interposed_receive;

typedef struct mpix_interposed_send {
    MPI_Request request;          /* the program's handle, a generalized request: the key */
    int generalized_completed;
    mpix_zcopy_send send;         /* its inner request: the header's MPI_Isend */
    UT_hash_handle hh;
} mpix_interposed_send;

/* A message a probe of the program had to receive to know its length (interposed_probe.c). */
typedef struct mpix_interposed_stashed {
    MPI_Comm comm;
    MPI_Status status;            /* as the probe reported it: source, tag, real length */
    int is_header;
    mpix_zcopy_header header;     /* is_header: a live zero-copy message, not yet read */
    char *packed;                 /* otherwise: the message, received as MPI_PACKED */
    int packed_bytes;
    struct mpix_interposed_stashed *next;
} mpix_interposed_stashed;

typedef struct mpix_interposed_staged {
    int slot_index;
    char *buffer;
} mpix_interposed_staged;

struct mpix_zcopy_interposed {
    pthread_mutex_t lock;         /* everything below, for MPI_THREAD_MULTIPLE programs */
    int active;                   /* peers on this node send this process zero-copy headers */
    int verbose;
    double stage_after;           /* seconds a sender waits before it stages */
    mpix_interposed_receive *receives;
    mpix_interposed_send *sends;
    _Atomic int tracked;          /* entries of both tables */
    mpix_interposed_stashed *stash, *stash_tail;
    _Atomic int stashed;
    mpix_interposed_staged *staged;
    int staged_count, staged_capacity;
    _Atomic int staged_pending;
    unsigned long sent_zero_copy, sent_plain, received_zero_copy, staged_sends;
    unsigned long sent_packed;   /* of sent_plain: packed by this process (send.c) */
    unsigned long received_unpacked;   /* received as MPI_PACKED and unpacked (interposed.c) */
};
typedef struct mpix_zcopy_interposed mpix_zcopy_interposed;

/* The process's state once MPI_Init has set it up; NULL before, and where zero-copy
 * interposition is off. */
mpix_zcopy_interposed *mpix_interposed_state(mpix_zcopy_process **process);
void mpix_zcopy_interposed_destroy(mpix_zcopy_process *process);

/* After MPI delivered a message of the program into @buf (@status complete): when it is
 * a live zero-copy header, reads the message it announces into @buf and answers 1 with
 * *@rc its result and *@bytes its length; 0 for a message MPI delivered itself. @call:
 * the program's receive, which an error names. */
int mpix_interposed_inspect(void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, const MPI_Status *status,
                            int may_ask_help, const char *call, int *rc, MPI_Count *bytes);
/* After MPI delivered a message of the program as MPI_PACKED bytes into @packed
 * (@status complete): reads the zero-copy message a header there announces into @buf,
 * else unpacks the bytes into @buf; *@rc the result, *@bytes the message's length (-1
 * where MPI's status tells it). @get_rc: what the receive, or the query of its request,
 * answered; a truncated message's first bytes are unpacked too, as MPI would have
 * delivered them, and *@rc is that answer. */
void mpix_interposed_unpack_arrived(const char *packed, int capacity, const MPI_Status *status, int get_rc, void *buf,
                                    int count, MPI_Datatype datatype, MPI_Comm comm, int may_ask_help,
                                    const char *call, int *rc,
                                    MPI_Count *bytes);
/* @status as the program's receive of a zero-copy message of @bytes reports it. */
int mpix_interposed_status_set(MPI_Status *status, MPI_Count bytes, int count, MPI_Datatype datatype, int rc);

/* Reads every tracked receive that MPI completed (the caller holds the lock): a sender
 * waiting for one of them then goes on, whatever this process waits for.
 * @may_ask_help: as for mpix_zcopy_receive_header. */
void mpix_interposed_progress_locked(mpix_zcopy_interposed *state, int may_ask_help);

/* A receive of the program already complete, with @status and result @rc, behind a
 * generalized request (a message a matched probe handed over). */
int mpix_interposed_receive_done(void *buf, int count, MPI_Datatype datatype, const MPI_Status *status, int rc,
                                 MPI_Comm comm, MPI_Request *request);

/* A stashed message that a receive (@source, @tag on @comm) matches, taken off the
 * stash (the caller holds the lock); NULL when none. */
mpix_interposed_stashed *mpix_interposed_stash_take(mpix_zcopy_interposed *state, int source, int tag, MPI_Comm comm);
/* Delivers @stashed into the receive (the program's @call) and frees it. */
int mpix_interposed_stash_deliver(mpix_interposed_stashed *stashed, void *buf, int count, MPI_Datatype datatype,
                                  MPI_Status *status, const char *call);

#endif
