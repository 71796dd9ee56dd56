/* SPDX-License-Identifier: BSD-3-Clause */
/* zcopy internals: flattened layouts, their caches on datatypes and communicators, the
 * per-process peer directory, the wire header, and the cross-memory copy engine. */
#ifndef MPIX_ZCOPY_INTERNAL_H
#define MPIX_ZCOPY_INTERNAL_H

#include <mpi.h>
#include "common/datatype.h"
#include "common/scratch.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- layouts (layout.c) ------------------------------------------------------------ */

/* A contiguous run of bytes at @offset from the buffer pointer. */
typedef struct mpix_block {
    MPI_Aint offset, length;
} mpix_block;

/* Estimated one-way cost (ns) of moving a layout by kernel iovecs, by staged spans,
 * and by the MPI datatype engine (copy.c). */
typedef struct mpix_zcopy_costs {
    double direct, staged, mpi;
} mpix_zcopy_costs;

/* Times of a layout's recent sends one way, timed until the receiver had the data. */
enum { MPIX_PATH_SAMPLES = 5 };   /* odd: the median is one of them */
typedef struct mpix_path_samples {
    double seconds[MPIX_PATH_SAMPLES];   /* a ring, by count */
    int count;                           /* timed sends so far */
} mpix_path_samples;

/* The ways a large message to an attachable peer can go (path.c): zero-copy; through
 * MPI with the caller's datatype; packed by the sender (MPI_Pack) and sent as
 * MPI_PACKED, which the receiver's datatype matches; packed, and unpacked by the
 * receiver (received as MPI_PACKED, then MPI_Unpack). Which of the MPI ways is fastest
 * depends on the MPI and the layout (pack.c). */
enum { MPIX_ZCOPY_WAY_ZERO_COPY, MPIX_ZCOPY_WAY_DATATYPE, MPIX_ZCOPY_WAY_PACKED, MPIX_ZCOPY_WAY_UNPACKED,
       MPIX_ZCOPY_WAYS };
#define MPIX_ZCOPY_WAYS_ALL ((1u << MPIX_ZCOPY_WAYS) - 1)
#define MPIX_ZCOPY_WAYS_MPI (MPIX_ZCOPY_WAYS_ALL & ~(1u << MPIX_ZCOPY_WAY_ZERO_COPY))

/* Whether the set @ways holds @way. */
static inline int mpix_zcopy_has_way(unsigned ways, int way) { return (ways >> way) & 1u; }
#define MPIX_ZCOPY_WAYS_PACKING ((1u << MPIX_ZCOPY_WAY_PACKED) | (1u << MPIX_ZCOPY_WAY_UNPACKED))

/* A sender's duels between the ways of one layout or shape, and the way it takes
 * between them (path.c). */
typedef struct mpix_path_learner {
    mpix_path_samples samples[MPIX_ZCOPY_WAYS];
    int phase, period;           /* place in the cycle of a duel and decided sends */
    int learning;                /* the cycle is a duel only */
    int deferred;                /* the cycle is mpix_zcopy_learner_defer's, before any duel */
    int taken;                   /* the way taken until the next duel, and the duel's last */
    int duel[MPIX_ZCOPY_WAYS];   /* the cycle's duel: a burst of each of these ways */
    int duel_ways;
    int duel_start[MPIX_ZCOPY_WAYS];   /* each way's timed sends when the cycle began */
    unsigned ways;               /* the ways the cycle was planned for */
    int decided_period;          /* the last decided cycle's period, 0 before any */
    int opens_with_datatype;     /* the next duel's first burst is MPI's datatype way (once) */
} mpix_path_learner;

/* Blocks in type-map order (the order the bytes travel in), adjacent ones merged, with
 * the costs of moving them once computed (for the gap limit they were computed with). */
typedef struct mpix_layout {
    mpix_block *blocks;
    MPI_Aint nblocks, capacity;
    MPI_Count bytes;
    MPI_Aint lowest, highest;    /* the bytes lie in [lowest, highest) from the buffer */
    MPI_Aint costed_gap_limit;   /* -1: not yet */
    mpix_zcopy_costs costs;
} mpix_layout;

int mpix_layout_append(mpix_layout *layout, MPI_Aint offset, MPI_Aint length);
void mpix_layout_free(mpix_layout *layout);

/* A place in a layout's bytes, in type-map order (copy.c): block @index, @used bytes of
 * it behind. */
typedef struct mpix_layout_cursor {
    const mpix_block *blocks;
    MPI_Aint count, index, used;
} mpix_layout_cursor;

/* A cursor at type-map byte @first of @layout. */
void mpix_layout_cursor_at(mpix_layout_cursor *cursor, const mpix_layout *layout, MPI_Count first);
/* Copies the next @bytes of the layout at @base to @to, contiguous, and moves on. */
void mpix_layout_gather(mpix_layout_cursor *cursor, const char *base, char *to, MPI_Count bytes);
/* Copies @bytes from @from, contiguous, into the next bytes of the layout at @base. */
void mpix_layout_scatter(mpix_layout_cursor *cursor, char *base, const char *from, MPI_Count bytes);


/* The type map of one element of @type; MPIX_ERRKIND_DATATYPE for a combiner mpix does
 * not know. Never packs. */
int mpix_layout_of_element(MPI_Datatype type, mpix_layout *element);

/* @count copies of @element, each @extent bytes after the previous. */
int mpix_layout_repeat(const mpix_layout *element, MPI_Aint count, MPI_Aint extent, mpix_layout *out);

/* ---- a constructor's arguments (contents.c) ------------------------------------------ */

/* What MPI_Type_get_contents returned for one constructor; ntypes: the children to free
 * (0 until the call succeeded). */
typedef struct mpix_type_contents {
    int *ints;
    MPI_Aint *addresses;
    MPI_Datatype *types;
    int ntypes;
} mpix_type_contents;

/* MPI_Type_get_contents of @type with the counts its envelope gave, into arrays of
 * their own. */
int mpix_type_contents_get(MPI_Datatype type, int integers, int addresses, int datatypes, mpix_type_contents *c);
/* Frees the derived children and the arrays; the first failure to free a child is
 * returned and stops the frees of the rest. */
int mpix_type_contents_free(mpix_type_contents *c);

/* ---- content keys of datatypes (type_key.c) ---------------------------------------- */

/* A datatype's constructor tree as bytes: equal keys, equal type maps. */
typedef struct mpix_type_key {
    unsigned char *bytes;
    size_t length, capacity;
} mpix_type_key;

int mpix_type_key_of(MPI_Datatype type, mpix_type_key *key);
void mpix_type_key_free(mpix_type_key *key);

/* ---- memoized layouts (type_cache.c) ------------------------------------------------ */

typedef struct mpix_layout_table mpix_layout_table;   /* layouts by content key */
typedef struct mpix_zcopy_comm mpix_zcopy_comm;

/* A layout to use for one call: memoized by the datatype's content (id > 0) or made for
 * this call only (owned, id 0; predefined types, which carry no attributes). */
typedef struct mpix_layout_view {
    mpix_layout *layout;
    uint64_t id;           /* unique in this process for (datatype state, count) */
    uint64_t global_id;    /* from MPIX_Type_commit_comm on global_comm, else 0 */
    MPI_Comm global_comm;
    mpix_layout owned;
    void *cache;           /* the memoized entry while this view uses its layout (type_cache.c) */
} mpix_layout_view;

/* Flattens a datatype only the first time its content is seen in this process
 * (zc->stats.layouts_flattened). */
int mpix_layout_view_get(mpix_zcopy_comm *zc, MPI_Datatype type, int count, mpix_layout_view *view);
void mpix_layout_view_release(mpix_layout_view *view);
/* Whether @type holds its memoized layout already (an attribute lookup; 0 for named types). */
int mpix_layout_cached(MPI_Datatype type, int *cached);

/* Records the collectively agreed id on the datatype's cache (type_cache.c). */
int mpix_type_set_global_id(mpix_zcopy_comm *zc, MPI_Datatype type, MPI_Comm comm, uint64_t global_id);
int mpix_type_get_global_id(MPI_Datatype type, MPI_Comm comm, uint64_t *global_id);

/* ---- per-process peer directory (process.c) --------------------------------------- */

/* What a peer writes into this process's directory, by cross-memory attach, once it has
 * proved it can: its pid, and 1. Read-only for this process. */
typedef struct mpix_zcopy_directory_entry {
    _Atomic int32_t pid;          /* written by the peer's process_vm_writev */
    _Atomic int32_t can_read_me;
} mpix_zcopy_directory_entry;

enum { MPIX_ZCOPY_ACCESS_UNKNOWN = 0, MPIX_ZCOPY_ACCESS_OK = 1, MPIX_ZCOPY_ACCESS_REFUSED = 2 };

/* Keyword order of MPIX_ZCOPY_ATTACH: attach as the kernel allows; answer every probe no,
 * as a kernel that forbids cross-memory attach would; answer probes but fail every write
 * of a sender's part, as a kernel that lets peers read this process but not it write
 * into them would. The last two exist so that tests reach the fallbacks. */
enum { MPIX_ZCOPY_ATTACH_PROBE, MPIX_ZCOPY_ATTACH_REFUSE, MPIX_ZCOPY_ATTACH_REFUSE_PUSH };

typedef struct mpix_zcopy_slot mpix_zcopy_slot;       /* mailbox.c */
typedef struct mpix_zcopy_mapped mpix_zcopy_mapped;   /* mailbox.c: peers' mailboxes by pid */

enum { MPIX_ZCOPY_COLLAPSE_UNITS = 1024 };   /* 2 MiB units whose sights are remembered (2 GiB) */
/* A first fold's cost before one was measured: 0.43-0.46 ms per 2 MiB where the memory
 * the kernel takes is backed (collapse.c). */
#define MPIX_ZCOPY_FOLD_NS_PRIOR 450000u

/* What MPI tells of a datatype without copying its constructors (shape.c). */
typedef struct mpix_type_shape {
    int combiner, integers, addresses, datatypes, count;
    MPI_Count size, lb, extent, true_lb, true_extent;
} mpix_type_shape;

enum { MPIX_ZCOPY_SHAPES = 64 };   /* shapes remembered, each with its learner */

/* A shape a sender has sent (shape.c). */
/* What a layout's first send priced it at (send.c), for its shape's learner (shape.c). */
typedef struct mpix_zcopy_prices {
    double kernel_ns_per_byte;   /* mpix_zcopy_kernel_ns_per_byte: its kernel copy, per byte */
    int unhelped_loses;          /* mpix_zcopy_unhelped_copy_loses */
    int large_blocks;            /* mpix_zcopy_packing_cannot_pay: the packed ways never join */
    int pipes;                   /* mpix_zcopy_pipes_pay: its blocking zero-copy sends pipe */
} mpix_zcopy_prices;

typedef struct mpix_zcopy_shape_entry {
    mpix_type_shape shape;
    int fragmented;              /* too fragmented for kernel copies: MPI's ways only */
    mpix_zcopy_prices prices;    /* at its first send; zero where not priced (fragmented) */
    int packing_joins;           /* zero-copy lost a decision: the packed ways join its duels */
    int packing_judged;          /* packing joined and was priced out or decided on or against */
    unsigned generation;         /* bumped when the entry is reused */
    /* The explicit calls' sends, timed until the receiver has the data, and the
     * program's own (interposed.c), timed until MPI_Send returns and without the
     * receiver's unpacking: neither way's figures are the other's. */
    mpix_path_learner learners[2];
} mpix_zcopy_shape_entry;

/* The settings a communicator's calls read, from the environment (MPIX_ZCOPY_*), read
 * once with the process's state and copied into each communicator's: a communicator's
 * state made after a program's first large messages took 27-30 us with MPICH, of which
 * reading them (an environment lookup and its text each) 3-11 us. */
typedef struct mpix_zcopy_settings {
    int enabled;                 /* MPIX_ZCOPY */
    int verbose;
    MPI_Count eager_bytes;       /* MPIX_ZCOPY_EAGER_BYTES */
    MPI_Aint coalesce_bytes;     /* MPIX_ZCOPY_COALESCE_BYTES */
    MPI_Count split_bytes;       /* MPIX_ZCOPY_SPLIT_BYTES, 0: never split */
    int method;                  /* MPIX_ZCOPY_METHOD, MPIX_ZCOPY_METHOD_* */
    int pipes;                   /* MPIX_ZCOPY_PIPES, MPIX_ZCOPY_PIPES_* */
    int one_caller;              /* below MPI_THREAD_MULTIPLE: one thread in MPI at a time */
    int packs_natively;          /* mpix_zcopy_packs_natively, unless MPIX_ZCOPY_PACK_BY_COPY=false */
    int receives_in_place;       /* mpix_zcopy_receives_part_elements: receives posted into the buffer */
} mpix_zcopy_settings;

typedef struct mpix_zcopy_process {
    mpix_zcopy_settings settings;            /* copied into each communicator's state */
    uint32_t node_key;                       /* boot, pid namespace and host of this process */
    pid_t pid;
    int world_size;
    mpix_zcopy_directory_entry *directory;   /* by MPI_COMM_WORLD rank: who can read me */
    unsigned char *access;                   /* by world rank: can I attach to them */
    _Atomic unsigned char *learn_asks;       /* by world rank: messages that asked them whether
                                                they can attach to me (MPIX_ZCOPY_LEARN_ASKS) */
    uint64_t next_layout_id;
    uint64_t next_global_id;                 /* agreed upwards by MPIX_Type_commit_comm */
    int attach;                              /* MPIX_ZCOPY_ATTACH, MPIX_ZCOPY_ATTACH_* */
    int mailbox_fd;                          /* memfd of this process's slots */
    mpix_zcopy_slot *mailbox;                /* MPIX_ZCOPY_SLOTS of them */
    int slots_in_use;                        /* MPIX_ZCOPY_SLOTS (hint): how many a send may take */
    mpix_zcopy_mapped *mapped;               /* senders' mailboxes this process mapped */
    int collapse;                            /* MPIX_ZCOPY_COLLAPSE */
    int fold_sight;                          /* MPIX_ZCOPY_FOLD_SIGHT; 0: from fold_ns */
    double fold_call_seconds;                /* MPIX_ZCOPY_FOLD_CALL_US; 0: no limit */
    struct mpix_zcopy_folder *folder;        /* folder.c; NULL: MPIX_ZCOPY_FOLD_THREAD is false */
    _Atomic uint64_t fold_ns;                /* collapse.c: what a first fold costs, a running mean */
    _Atomic uint64_t collapse_sights[MPIX_ZCOPY_COLLAPSE_UNITS];   /* collapse.c */
    mpix_layout_table *layouts;              /* type_cache.c */
    mpix_zcopy_shape_entry shapes[MPIX_ZCOPY_SHAPES];   /* shape.c: a ring */
    int shape_count, next_shape;
    int packing_decided;                     /* fragmented shapes decided with packing in their duels */
    int packing_won;                         /* of those, decided on a packed way */
    int joined_lost, joined_won;             /* shapes kernel copies may serve whose joined packing
                                                lost (priced out, decided against), or won */
    /* shape.c: the cost model's kernel ns per byte of the cheapest shape on which
     * zero-copy lost clearly, of the costliest on which it won (0: none yet). */
    double zero_copy_lost_at, zero_copy_won_at;
    /* copy.c: what this machine's kernel charges for a copy between processes, per iovec
     * and per byte, measured at the first need (0: not yet); MPIX_ZCOPY_KERNEL_IOVEC_NS
     * sets the first. */
    double kernel_iovec_ns, kernel_bytes_per_ns;
    double memcpy_bytes_per_ns;              /* copy.c: a memcpy's, measured with them */
    double mpi_bytes_per_ns;                 /* MPIX_ZCOPY_MPI_BYTES_PER_NS (testing), 0: priced from those */
    _Atomic int rates_known;                 /* copy.c: set (release) once the three above are */
    _Atomic double pipes_resume_at;          /* pipe.c: no pipes before this MPI_Wtime (a receiver
                                                took a message over from this process) */
    double pull_delay_seconds;               /* MPIX_ZCOPY_PULL_DELAY_US (testing) */
    struct mpix_zcopy_progress *_Atomic progress;   /* request.c: made by the first nonblocking call */
    struct mpix_zcopy_interposed *interposed;   /* interposed.c: the program's own calls */
    struct mpix_zcopy_handover *_Atomic handover;   /* mprobe.c: made by the first matched probe */
} mpix_zcopy_process;

int mpix_layout_table_create(mpix_layout_table **table);
void mpix_layout_table_destroy(mpix_layout_table *table);

int mpix_zcopy_process_get(mpix_zcopy_process **process);

/* ---- per-communicator state (comm.c) ------------------------------------------------ */

typedef struct mpix_zcopy_received mpix_zcopy_received;   /* uthash tables, comm.c */
typedef struct mpix_zcopy_global mpix_zcopy_global;

/* Keyword order of MPIX_ZCOPY_METHOD: learnt; zero-copy by kernel iovecs or staged
 * spans; one MPI way (MPIX_ZCOPY_WAY_DATATYPE, _PACKED, _UNPACKED); zero-copy's way
 * through the sender's pipe (pipe.c). */
enum { MPIX_ZCOPY_METHOD_AUTO, MPIX_ZCOPY_METHOD_DIRECT, MPIX_ZCOPY_METHOD_STAGED, MPIX_ZCOPY_METHOD_DATATYPE,
       MPIX_ZCOPY_METHOD_PACKED, MPIX_ZCOPY_METHOD_UNPACKED, MPIX_ZCOPY_METHOD_PIPED };
/* Keyword order of MPIX_ZCOPY_PIPES. */
enum { MPIX_ZCOPY_PIPES_AUTO, MPIX_ZCOPY_PIPES_ON, MPIX_ZCOPY_PIPES_OFF };

/* What the calls on a communicator did, for tests and MPIX_VERBOSE: they assert the path
 * taken, not only the bytes. */
typedef struct mpix_zcopy_stats {
    unsigned long sent[4];            /* by MPIX_ZCOPY_PLAIN / _EAGER / _MPI / _RTS */
    unsigned long sent_fragmented;    /* of sent[MPI]: layout too fragmented for a kernel copy */
    unsigned long sent_by_shape;      /* of sent_fragmented: its shape known so, no key built */
    unsigned long sent_slower;        /* of sent[MPI]: decided sends, zero-copy measured slower */
    unsigned long sent_deferred;      /* of sent[MPI]: zero-copy deferred, a cheaper shape lost it */
    unsigned long sent_priced;        /* of sent[MPI]: nonblocking, zero-copy priced above MPI (copy.c) */
    unsigned long sent_packed;        /* of sent[MPI]: packed by the sender, received with the datatype */
    unsigned long sent_unpacked;      /* of sent[MPI]: packed by the sender, unpacked by the receiver */
    unsigned long sent_data_apart;    /* of sent[EAGER], sent[MPI]: a header alone, the data the next message */
    unsigned long sent_without_header; /* of sent[EAGER], sent[MPI]: as the program asked, no header */
    unsigned long sent_questions;     /* LEARN headers sent before messages through MPI */
    unsigned long pulled_direct, pulled_staged;
    unsigned long pulled_shared;      /* receives whose sender copied a part */
    unsigned long pulled_piped;       /* receives unpacked from the sender's pipe (pipe.c) */
    unsigned long pipes_taken_over;   /* of those, the rest read by the receiver: the sender stalled, or the pipe ran slower than the kernel copies */
    unsigned long helps_taken_back;   /* receives whose request for help no sender took: a second pull */
    unsigned long pushed;             /* sends that copied a part for the receiver */
    unsigned long push_refused;       /* sends whose part the kernel refused: the receiver copied it */
    unsigned long layouts_flattened;  /* datatypes whose content this process had not seen */
    unsigned long layouts_read;       /* sender layouts read from its memory */
    unsigned long layouts_global;     /* sender layouts known by a collective id */
    unsigned long layouts_pipelined;  /* of layouts_read: read in chunks behind the copy */
    unsigned long collapsed_units;    /* 2 MiB units of message buffers folded into huge pages */
    unsigned long collapse_deferred;  /* units the kernel could not fold now (EAGAIN, EBUSY) */
    unsigned long collapse_refused;   /* units it refused (ENOMEM, EINVAL): tried at refold */
} mpix_zcopy_stats;

struct mpix_zcopy_comm {
    mpix_zcopy_settings settings;   /* the process's */
    int peers;                   /* size of the (remote) group */
    int rank;                    /* this process's, in the (local) group */
    MPI_Comm comm;               /* the communicator this state hangs on */
    int *_Atomic world_ranks;    /* mpix_zcopy_world_rank's table, made at its first call */
    mpix_zcopy_received *received;   /* (peer, layout id) -> the peer's layout */
    int received_count;
    mpix_zcopy_global *globals;      /* global id -> this process's layout of that type */
    mpix_scratch staging;        /* staging for coalesced spans (mpix_zcopy_scratch_take) */
    /* Buffers of packed messages (pack.c), kept while the communicator lives: a program
     * that frees its communicators frees them too. */
    mpix_scratch packing, unpacking;
    mpix_zcopy_stats stats;      /* counters: threads may lose an increment */
    mpix_zcopy_process *process;
    /* Threads may call on one communicator at once: the lock guards the two tables
     * above and calls_in_flight. A layout found in a table stays valid
     * while its call is in flight, since entries are evicted or re-expanded only by a
     * call that is alone on the communicator. */
    pthread_mutex_t lock;
    int calls_in_flight;         /* between mpix_zcopy_comm_enter and _leave */
    _Atomic int requests_pending;   /* nonblocking calls not yet complete (request.c) */
    _Atomic unsigned long folds_pending;   /* units queued for the folding thread (folder.c) */
    struct mpix_zcopy_probed *probed;   /* messages a probe received, oldest first (probe.c); under lock */
    struct mpix_zcopy_probed *probed_last;   /* the newest of them, where the next goes */
    _Atomic int probed_count;
};

int mpix_zcopy_comm_get(MPI_Comm comm, mpix_zcopy_comm **state);
/* The MPI_COMM_WORLD rank of peer @rank of @zc's communicator; MPI_UNDEFINED for a
 * process of another world, a rank out of range (or where the translation failed),
 * which then always gets the MPI path. The table is made by the first call that needs it (a zero-copy
 * candidate, a header's sender), not with the state: messages of up to 16 KiB through
 * MPI never ask. */
int mpix_zcopy_world_rank(mpix_zcopy_comm *zc, int rank);
/* Whether @rank is a peer of @zc's communicator that this process can attach to (its
 * memory readable: MPIX_ZCOPY_ACCESS_OK). */
int mpix_zcopy_peer_attachable(mpix_zcopy_comm *zc, int rank);
size_t mpix_zcopy_scratch_bytes(void);

/* Brackets a call's use of layouts found in @zc's tables (see mpix_zcopy_comm.lock). */
void mpix_zcopy_comm_enter(mpix_zcopy_comm *zc);
void mpix_zcopy_comm_leave(mpix_zcopy_comm *zc);

/* A staging buffer of coalesced spans, mpix_zcopy_scratch_bytes long: @zc's kept one,
 * or while another thread has it one of its own (NULL: no memory); give it back with
 * _give. */
char *mpix_zcopy_scratch_take(mpix_zcopy_comm *zc);
void mpix_zcopy_scratch_give(mpix_zcopy_comm *zc, char *scratch);

/* Layout cache of a receiver: NULL when (peer, id) is unknown. */
mpix_layout *mpix_zcopy_received_find(mpix_zcopy_comm *zc, int peer, uint64_t id);
/* Keeps @layout (taking ownership) under (peer, id), evicting the oldest beyond a bound. */
mpix_layout *mpix_zcopy_received_add(mpix_zcopy_comm *zc, int peer, uint64_t id, mpix_layout *layout);

mpix_layout *mpix_zcopy_global_find(mpix_zcopy_comm *zc, uint64_t global_id, int count);
int mpix_zcopy_global_add(mpix_zcopy_comm *zc, uint64_t global_id, MPI_Datatype type);
void mpix_zcopy_global_remove(mpix_zcopy_comm *zc, uint64_t global_id);

/* ---- path choice (path.c) ------------------------------------------------------------ */

/* The way (MPIX_ZCOPY_WAY_*) of a large message to a peer that can attach whose
 * datatype has no shape to learn on (a named type) or whose way is forced by
 * MPIX_ZCOPY_METHOD: forced, or by the cost model; never timed (*@timed 0). @ways: a
 * mask of those the send can take. The other sends learn per shape (shape.c). */
int mpix_zcopy_choose_path(mpix_zcopy_comm *zc, const mpix_layout_view *view, unsigned ways, int *timed);
/* The learner's way among @ways (see path.c), *@timed: whether to time this send until
 * the receiver has the data and pass the time to mpix_zcopy_learner_sample; *@decided:
 * taken without a duel. @grows_periods: its periods grow from the shortest (a program's
 * own sends, path.c). */
int mpix_zcopy_learner_choose(mpix_path_learner *learner, unsigned ways, int grows_periods, int *timed,
                              int *decided);
void mpix_zcopy_learner_sample(mpix_path_learner *learner, int way, double seconds);
/* A fresh learner's first @sends sends take @way, untimed; its duels begin after them. */
void mpix_zcopy_learner_defer(mpix_path_learner *learner, int way, int sends);
/* The median time of the fastest of @ways with enough timed sends to be known; 0: none. */
double mpix_zcopy_learner_fastest(const mpix_path_learner *learner, unsigned ways);
/* Whether a decided learner's @way was CLEAR times slower than the way it took. */
int mpix_zcopy_learner_lost(const mpix_path_learner *learner, int way);
/* A way forced by MPIX_ZCOPY_METHOD, or -1. */
int mpix_zcopy_forced_way(const mpix_zcopy_comm *zc, unsigned ways);
/* Whether MPI's datatype engine clearly beats both kernel copies for @layout. */
int mpix_zcopy_too_fragmented(const mpix_zcopy_comm *zc, mpix_layout *layout);
/* Whether the receiver's kernel copy of @layout, alone (a nonblocking sender does not
 * help), costs more than a quarter over MPI's two copies (the sender's into its
 * transport, the receiver's out) and its datatype engine, priced with this machine's
 * kernel rates, measured at the first call (copy.c). What a nonblocking send whose shape no blocking send decided
 * goes by: in a halo exchange a send's time is the exchange's, both ranks' ways
 * together, which no duel of one rank's sends can time (shape.c). */
int mpix_zcopy_unhelped_copy_loses(mpix_zcopy_process *process, const mpix_layout *layout);
/* Whether packing @layout's data (a memcpy of every block, then one message) cannot beat
 * MPI's datatype: its blocks average 16 KiB or more (copy.c). */
int mpix_zcopy_packing_cannot_pay(const mpix_layout *layout);
/* The cost model's kernel copy of @layout (the cheaper of direct and staged), in
 * nanoseconds per byte: what orders layouts by how well zero-copy can do. */
double mpix_zcopy_kernel_ns_per_byte(const mpix_zcopy_comm *zc, mpix_layout *layout);

/* ---- shapes found too fragmented (shape.c) ------------------------------------------- */

int mpix_type_shape_of(MPI_Datatype type, int count, mpix_type_shape *shape);
/* An entry of the ring of fragmented shapes, as long as it holds the same shape. */
typedef struct mpix_zcopy_shape_ref {
    int entry;                   /* -1: none */
    unsigned generation;
} mpix_zcopy_shape_ref;
/* Whether this shape was sent before (then *@ref names its entry, and *@fragmented says
 * whether it was found too fragmented for kernel copies); never for a named type. */
int mpix_zcopy_shape_find(mpix_zcopy_process *process, const mpix_type_shape *shape, mpix_zcopy_shape_ref *ref,
                          int *fragmented);
/* Whether this process's sends of the shape @ref names (@interposed: the program's own)
 * go packed for good: its learner decided MPIX_ZCOPY_WAY_PACKED. */
int mpix_zcopy_shape_sends_packed(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed);
/* Adds the shape (or marks it @fragmented), evicting the oldest entry beyond
 * MPIX_ZCOPY_SHAPES; *@ref names its entry (-1 for a named type). @prices: its layout's,
 * NULL where not computed. */
void mpix_zcopy_shape_remember(mpix_zcopy_process *process, const mpix_type_shape *shape, int fragmented,
                               const mpix_zcopy_prices *prices, mpix_zcopy_shape_ref *ref);
/* The way of a send of the shape @ref names (@interposed: a program's own send), learnt
 * on its entry among @ways (*@decided: taken without a duel; *@deferred: through MPI
 * because zero-copy waits, a cheaper shape having lost it); MPIX_ZCOPY_WAY_DATATYPE,
 * untimed, once the entry holds another shape. The packed ways of @ways count for a
 * shape kernel copies may serve only once zero-copy lost it. */
int mpix_zcopy_shape_way(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed, unsigned ways,
                         int *timed, int *decided, int *deferred);
/* The way of a nonblocking send of the shape @ref names: its learner's decision, else
 * zero-copy where @ways allows it, the process's prior does not defer it (*@deferred)
 * and its price does not lose to MPI's (*@priced: mpix_zcopy_unhelped_copy_loses),
 * else the datatype. Nonblocking sends are not timed (their time is the program's), so
 * they read the learner and leave its duels to the blocking sends: driving them, every
 * other burst of four went the other way for good. Duels of their own misjudge too, in
 * a halo exchange, where a send's time is the exchange's, both ranks' ways together.
 * On the 2-core VM, timed from the call to the request's completion, they took MPI for
 * MILC's faces, where zero-copy is 1.8x faster (zero-copy's duel sends 170-400 us, MPI's
 * 100-290); timed until the receiver has the data (a slot, the header and data sent
 * apart), zero-copy's duel sends took 200-300 us against 100-120 once it is taken for
 * good, and MPI won again (0.81-0.99x of MPI's halo). Hence a price instead
 * (mpix_zcopy_unhelped_copy_loses). */
int mpix_zcopy_shape_peek(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed, unsigned ways,
                          int *deferred, int *priced);
/* A timed send's @seconds for the learner of @ref's shape, @pack_seconds of them spent
 * packing its data (0: not packed). */
void mpix_zcopy_shape_sample(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed, int way,
                             double seconds, double pack_seconds);
/* Whether @type's blocks are evidently too small for kernel copies, from its envelopes
 * (and a struct's contents, for a struct of at most 16 members): an indexed-family
 * type of at least 256 blocks averaging at most 32 bytes, or a struct of such types.
 * O(members) MPI calls. */
int mpix_type_evidently_fragmented(MPI_Datatype type, int *fragmented);

/* ---- wire header (one MPI message on the user's comm and tag) ---------------------- */

/* PLAIN: an interposed send (interposed.c) left to MPI, without a header. LEARN: a lone
 * header that only asks the receiver whether it can attach to the sender (learn_address),
 * sent before a message through MPI: whichever receive gets it answers and goes on
 * receiving, so it never pairs with another message. */
enum { MPIX_ZCOPY_PLAIN = 0, MPIX_ZCOPY_EAGER = 1, MPIX_ZCOPY_MPI = 2, MPIX_ZCOPY_RTS = 3, MPIX_ZCOPY_LEARN = 4 };
/* States of a message's slot; HELP: the receiver filled the slot's request and asks the
 * sender to copy the tail of the message while it copies the head; HELPING: the sender
 * took the request (a receiver whose request no sender took for a while takes it back
 * and copies the tail itself: the sender may be in a call that waits for the receiver's
 * process, MPI_Send of its header running a pass that receives from a third). An interposed
 * message (its header has a nonce) is claimed first: the receiver moves PENDING to
 * CLAIMED before it copies, or the sender, tired of waiting for a receiver that may be
 * in another call, moves it to STAGING, copies the data to a buffer of its own and
 * publishes it as STAGED, and the receiver reads that buffer instead. */
enum { MPIX_ZCOPY_PENDING = 0, MPIX_ZCOPY_DONE = 1, MPIX_ZCOPY_ABANDONED = 2, MPIX_ZCOPY_HELP = 3,
       MPIX_ZCOPY_CLAIMED = 4, MPIX_ZCOPY_STAGING = 5, MPIX_ZCOPY_STAGED = 6, MPIX_ZCOPY_HELPING = 7 };
#define MPIX_ZCOPY_MAGIC 0x7a637079u  /* "zcpy" */
/* What comes after a header of kind MPIX_ZCOPY_MPI: nothing (the data is in the same
 * message); the data, as the next message on the tag (packed or not, the receiver's
 * datatype matches it); the data packed, which the receiver receives as MPI_PACKED and
 * unpacks. */
enum { MPIX_ZCOPY_FOLLOWS_NOTHING = 0, MPIX_ZCOPY_FOLLOWS_DATA = 1, MPIX_ZCOPY_FOLLOWS_TO_UNPACK = 2 };
#define MPIX_ZCOPY_INLINE_BLOCKS 4

/* Where a process's side of a message lies, for the peer that copies into or out of it:
 * its buffer, and its layout by the cheapest name the peer may know it under. */
typedef struct mpix_zcopy_layout_ref {
    uint64_t base;                /* the buffer */
    uint64_t layout_address;      /* the blocks, nblocks of them, in the owner's memory */
    int64_t nblocks, count;       /* count: of the owner's datatype */
    int64_t bytes;                /* bytes the layout holds */
    uint64_t layout_id, global_id;
    mpix_block inline_blocks[MPIX_ZCOPY_INLINE_BLOCKS];
} mpix_zcopy_layout_ref;

typedef struct mpix_zcopy_header {
    uint32_t magic, kind;
    int64_t bytes;                /* payload, whatever the path */
    int32_t source_rank, tag;     /* the envelope, for a receive whose MPI status is not kept */
    uint32_t node_key;
    int32_t pid;
    uint64_t learn_address;       /* where the receiver may say it can attach; 0: don't */
    int32_t mailbox_fd;           /* the sender's mailbox, for the receiver to map */
    int32_t data_follows;         /* MPIX_ZCOPY_MPI: the data is the next message (send.c),
                                     MPIX_ZCOPY_FOLLOWS_* */
    uint64_t mailbox_address;     /* where the sender maps it (a receiver that could not
                                     map it still ends the message, by process_vm_writev) */
    /* MPIX_ZCOPY_RTS only */
    int32_t slot;                 /* the message's slot in it */
    int32_t help_offered;         /* the sender would copy a part */
    int32_t piped;                /* the sender packs the data into its slot's pipe (pipe.c) */
    int32_t unused;
    mpix_zcopy_layout_ref data;   /* the sender's */
    uint64_t nonce;               /* interposed messages: equal to the slot's while it is live */
} mpix_zcopy_header;

/* Reads the header at the start of a message of @length bytes received as MPI_PACKED
 * (@native: packed as it lies in memory) into *@header. Returns the bytes it took: 0
 * where @data holds no header (then *@header's magic is 0), else the header's size. */
int mpix_zcopy_header_read(mpix_zcopy_header *header, const char *data, MPI_Count length, int native, MPI_Comm comm);

/* Messages of up to MPIX_ZCOPY_RAW_MAX bytes carry no header: the sender sends them as
 * the program asked (MPI_Send with its datatype) and MPI alone puts them in the
 * receive's buffer. Larger ones carry none either unless the header has something to
 * tell the receiver (send.c): then it travels alone, padded to
 * MPIX_ZCOPY_LONE_HEADER_BYTES, in place of the data (zero-copy) or before it. So every
 * receive is posted into its own buffer as MPI_Recv would be, and tells a header from
 * data by the length MPI received, and for that one length by the content: a header
 * names its sender's rank and tag after the magic (mpix_zcopy_header_sent). The lone
 * header's length is odd and prime, so no array of numbers (2, 4, 8 bytes) has it. This
 * needs every receive to see the length MPI matched before the caller sees it complete:
 * nonblocking receives are completed by the library's own pass in MPI's waits and tests
 * (request.c), never by MPI alone. */
enum { MPIX_ZCOPY_RAW_MAX = 16384, MPIX_ZCOPY_LONE_HEADER_BYTES = 1031 };
/* A header with the room its padding takes when it travels alone. */
#define MPIX_ZCOPY_LONE_HEADER                                                                                        \
    union {                                                                                                            \
        mpix_zcopy_header header;                                                                                      \
        unsigned char header_alone[MPIX_ZCOPY_LONE_HEADER_BYTES];                                                      \
    }

/* Whether a message of @bytes goes without header, whatever the communicator's settings. */
static inline int mpix_zcopy_sends_raw(MPI_Count bytes)
{
    return bytes <= MPIX_ZCOPY_RAW_MAX;
}
/* Whether a matched message of @length bytes came without header: or, for a lone
 * header's length, whether its first bytes (mpix_zcopy_header_sent) say so. */
static inline int mpix_zcopy_length_raw(MPI_Count length)
{
    return length != MPIX_ZCOPY_LONE_HEADER_BYTES;
}
/* Whether @header, the first bytes of a message @matched (its status) of a lone header's
 * length, is one: its magic, and the sender's rank and tag that MPI matched. Data of
 * that length sent without header would have to begin with all three. */
static inline int mpix_zcopy_header_sent(const mpix_zcopy_header *header, const MPI_Status *matched)
{
    return header->magic == MPIX_ZCOPY_MAGIC && header->source_rank == matched->MPI_SOURCE &&
           header->tag == matched->MPI_TAG;
}
/* Whether a receive for @capacity bytes can take, without truncation, only messages
 * without header (shorter than a lone header), so that it may be MPI's own, request and
 * status included. */
static inline int mpix_zcopy_takes_only_raw(MPI_Count capacity)
{
    return MPIX_ZCOPY_RAW_MAX >= 0 && capacity < MPIX_ZCOPY_LONE_HEADER_BYTES;
}
/* mpix_zcopy_takes_only_raw for @count of @datatype (0 without asking MPI where no
 * message is raw). */
static inline int mpix_zcopy_receives_raw(int count, MPI_Datatype datatype, int *raw)
{
    MPI_Count type_size;
    *raw = 0;
    if (MPIX_ZCOPY_RAW_MAX < 0)
        return MPI_SUCCESS;
    int rc = PMPI_Type_size_x(datatype, &type_size);
    *raw = rc == MPI_SUCCESS && mpix_zcopy_takes_only_raw(type_size * count);
    return rc;
}
/* Whether a send of @count of @datatype goes without header (mpix_zcopy_sends_raw). */
static inline int mpix_zcopy_sends_raw_count(int count, MPI_Datatype datatype, int *raw)
{
    MPI_Count type_size;
    *raw = 0;
    if (MPIX_ZCOPY_RAW_MAX < 0)
        return MPI_SUCCESS;
    int rc = PMPI_Type_size_x(datatype, &type_size);
    *raw = rc == MPI_SUCCESS && mpix_zcopy_sends_raw(type_size * count);
    return rc;
}

/* Sends a message without header (mpix_zcopy_sends_raw) as the program asked: MPI_Send,
 * or MPI_Isend into @request (send.c). */
int mpix_zcopy_send_raw(mpix_zcopy_comm *zc, const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Request *request);
/* Whether a call for @count of @datatype on @comm may go to MPI at once, unchecked
 * (send.c), with @comm's state in *@zc and @datatype's size in *@type_size: where the
 * message goes without header either way (mpix_zcopy_sends_raw; for a receive, one that
 * can take only such messages), the call is MPI's own, which judges every argument and
 * raises what is wrong through @comm's handler, once. Checking them before as well
 * (mpix_check_transfer: a send to MPI_PROC_NULL, the communicator's size) and setting
 * up a send's state cost a ping-pong of one double near a fifth of its time with MPICH.
 * Only what must be right to ask the state and the size is looked at here, and the
 * peer's rank (@direction MPIX_SENDING or MPIX_RECEIVING): a null communicator or
 * datatype, a negative count or an unknown rank take the checked way, which names them. */
int mpix_zcopy_direct(MPI_Comm comm, int count, MPI_Datatype datatype, int peer, int direction, mpix_zcopy_comm **zc,
                      MPI_Count *type_size);

/* ---- peers that exit in the middle of a message (peer_exit.c) ------------------------ */

/* Whether process @pid has exited (a zombie too). Two or three system calls. */
int mpix_zcopy_peer_exited(pid_t pid);
/* A wait on a peer's shared memory asks whether the peer exited at most this often. */
#define MPIX_ZCOPY_EXIT_CHECK_SECONDS 10e-3
typedef struct mpix_zcopy_peer_watch {
    double checked_at;   /* 0: not yet */
} mpix_zcopy_peer_watch;
/* Called at every turn of a wait on @pid's shared memory: 1 once @pid has exited, asked
 * every MPIX_ZCOPY_EXIT_CHECK_SECONDS of the wait (the first time after one). */
int mpix_zcopy_peer_exit_check(mpix_zcopy_peer_watch *watch, pid_t pid);
/* The error (MPIX_ERRKIND_PEER) of @call whose peer, rank @peer of its communicator and
 * process @pid, exited in the middle of a message: found by a wait, or a read that failed
 * with ESRCH. */
int mpix_zcopy_peer_exit_error(const char *call, int peer, pid_t pid);

/* ---- sends and receives in steps (send.c, recv.c) ---------------------------------- */

/* One send between its start and the receiver having the data: what MPIX_Send_zcopy
 * waits on and what a request of MPIX_Isend_zcopy holds. */
typedef struct mpix_zcopy_send {
    mpix_zcopy_comm *zc;          /* NULL when the start failed before finding it */
    const void *buf;
    int dest;
    MPI_Comm comm;
    mpix_zcopy_slot *slot;        /* where the receiver ends the message; NULL: MPI does */
    int slot_index;               /* -1: none taken */
    int kind;                     /* MPIX_ZCOPY_PLAIN, _EAGER, _MPI or _RTS */
    int timed;                    /* a sample for path.c when it ends */
    int way;                      /* MPIX_ZCOPY_WAY_* */
    mpix_zcopy_shape_ref shape;   /* the learner of a send decided by its shape (entry -1: none) */
    int helped;                   /* copied the part the receiver asked for */
    int has_view;
    mpix_layout_view view;
    MPI_Request inner;            /* a nonblocking send's MPI request, until complete */
    MPI_Request data;             /* its data's, when the data follows a header (send.c) */
    double start;
    double pack_seconds;          /* what packing its data took (0: not packed) */
    int interposed;               /* the caller's MPI_Send/MPI_Isend (interposed.c) */
    char *staged;                 /* the sender's copy of the data once STAGED */
    int piping;                   /* packs into its slot's pipe (pipe.c); 2: the receiver took over */
    MPI_Count piped;              /* bytes put in the pipe so far */
    mpix_layout_cursor pipe_cursor;   /* where in the layout the next byte comes from */
    const char *call;             /* the program's call, for errors */
    unsigned long waits;          /* looks at a slot the receiver has not ended */
    mpix_zcopy_peer_watch receiver_watch;   /* whether the receiver still runs */
    /* Last, and left unset by the start, which clears only the members above: the two
     * padded headers are 2 KiB that a small send would otherwise clear on every call.
     * Their padding is cleared where a header travels alone. */
    MPIX_ZCOPY_LONE_HEADER;       /* header: a nonblocking send's lives here until done */
    union {                       /* a LEARN header, padded as it travels alone; a nonblocking
                                     send's, until inner is complete */
        mpix_zcopy_header asking;
        unsigned char asking_alone[MPIX_ZCOPY_LONE_HEADER_BYTES];
    };
} mpix_zcopy_send;

/* Chooses the path and sends the MPI message that carries the envelope (@blocking: with
 * MPI_Send, else MPI_Isend, then the send offers the receiver no help, which it could
 * not answer outside a call). Then _test until done, and _end once, whatever happened:
 * it gives back the slot and the layout and returns @rc. */
int mpix_zcopy_send_start(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, int blocking);
int mpix_zcopy_send_test(mpix_zcopy_send *send, int *done);
/* The same for a program's own MPI_Send/MPI_Isend (interposed.c): every message but a
 * large non-contiguous one to an attachable peer, and those the path choice gives to
 * MPI, is sent as the program asked, without a header (kind MPIX_ZCOPY_PLAIN, or
 * MPIX_ZCOPY_MPI); a zero-copy one sends its header alone, with a nonce, and a
 * nonblocking send's header request (@send->inner) is the program's request. _test
 * leaves that request alone; after @stage_after seconds without a receiver it copies the
 * data to a buffer of its own (STAGED) and is done, the slot staying taken until the
 * receiver has read it (mpix_zcopy_staged_reap). */
int mpix_zcopy_send_start_interposed(mpix_zcopy_send *send, const void *buf, int count, MPI_Datatype datatype,
                                     int dest, int tag, MPI_Comm comm, int blocking);
int mpix_zcopy_send_test_interposed(mpix_zcopy_send *send, double stage_after, int *done);
/* Keeps a staged send's slot and buffer until its receiver ends the message; _reap
 * frees those ended (@wait_seconds > 0: waits that long for the others, at MPI_Finalize). */
void mpix_zcopy_staged_keep(mpix_zcopy_process *process, int slot_index, char *staged);
void mpix_zcopy_staged_reap(mpix_zcopy_process *process, double wait_seconds);
int mpix_zcopy_send_end(mpix_zcopy_send *send, int rc);


/* A nonblocking receive (request.c), posted into the caller's buffer with MPI_Irecv
 * (->pending) as MPIX_Recv_zcopy receives. Once ->pending completed (@received: its
 * code, @completed: its status), mpix_zcopy_receive_landed acts on what came: data
 * without header is the receive's; a lone header is acted on, and where its data follows
 * as a message of its own, ->pending is that message's MPI_Irecv, and _landed is called
 * again once it completed. Done when it returns with ->pending MPI_REQUEST_NULL, @status
 * filled. @receiving must stay put meanwhile. */
typedef struct mpix_zcopy_receiving {
    MPIX_ZCOPY_LONE_HEADER;
    int source, tag;       /* the receive's, as posted */
    int in_place;          /* posted into the buffer (settings.receives_in_place) */
    int unmatched;         /* matched first, it took a question (MPIX_ZCOPY_LEARN): match again */
    MPI_Status matched;    /* the message's envelope: of its header, where it has one */
    MPI_Request pending;
    int data_posted;       /* pending is the receive of the data after a lone header */
    char *packed;          /* that data, packed by the sender, until unpacked */
    MPI_Count data_bytes;  /* its length, once received (-1: none received) */
    MPI_Count type_size;   /* of the receive's datatype */
    int length, fits;
    int raised;            /* the error returned came from MPI's own call on the communicator,
                              whose handler MPI ran: mpix does not run it again */
    const char *call;      /* the program's call, for errors */
} mpix_zcopy_receiving;
int mpix_zcopy_receive_landed(mpix_zcopy_comm *zc, mpix_zcopy_receiving *receiving, int received,
                              const MPI_Status *completed, void *buf, int count, MPI_Datatype datatype,
                              MPI_Comm comm, MPI_Status *status);
/* Where the MPI refuses a message that ends inside an element of the receive's datatype
 * (a lone header into a buffer of MPI_DOUBLE_INT: MPICH 4.0 reports MPI_ERR_TRUNCATE and
 * runs the communicator's error handler), a receive is matched first (MPI_Mprobe, or
 * MPI_Improbe in the pass) and the message MPI matched (@message, its status @matched)
 * received here: a lone header into the header's room and acted on, anything else into
 * @buf. @start_only: what would wait is started into receiving->pending instead, to be
 * completed through mpix_zcopy_receive_landed. */
int mpix_zcopy_receive_matched(mpix_zcopy_comm *zc, mpix_zcopy_receiving *receiving, MPI_Message *message,
                               const MPI_Status *matched, void *buf, int count, MPI_Datatype datatype, MPI_Comm comm,
                               int start_only, MPI_Status *status);
/* Whether a receive may be posted into the caller's buffer whatever comes
 * (settings.receives_in_place): whether MPI receives a message that ends inside an
 * element of the datatype without an error. Open MPI 4.1 does; MPICH 4.0 (ch4:ucx)
 * reports MPI_ERR_TRUNCATE between processes, though not from a process to itself, so
 * no self-test tells: known for Open MPI, assumed not for any other MPI. */
int mpix_zcopy_receives_part_elements(int *accepts);

/* Whether @header, found in a received message of exactly its size, is a live
 * interposed zero-copy message of rank @source of @zc's communicator (its magic, this
 * node, and a nonce equal to its slot's). */
int mpix_zcopy_header_is_live(mpix_zcopy_comm *zc, int source, const mpix_zcopy_header *header);
/* Reads the zero-copy message @header announces into @buf and ends it for the sender;
 * MPI_ERR_TRUNCATE when it is longer than @count elements of @datatype. @may_ask_help:
 * whether to ask a sender that offered to copy a part: not from inside a send's wait,
 * where two processes each receiving the other's message would wait for each other's
 * help. @call: the program's receive (MPI_Recv, MPI_Irecv, ...), which an error names. */
int mpix_zcopy_receive_header(mpix_zcopy_comm *zc, void *buf, int count, MPI_Datatype datatype, int source,
                              const mpix_zcopy_header *header, MPI_Comm comm, int may_ask_help, const char *call);
/* What a receiver does with a header before its data: answer a sender that asks whether
 * this process can read its memory (rank @source of @zc's communicator). */
void mpix_zcopy_receive_learn(mpix_zcopy_comm *zc, int source, const mpix_zcopy_header *header);
/* Ends a timed inline message for its sender once its data is in place (@rc: whether it
 * arrived whole); nothing for an untimed one. */
void mpix_zcopy_receive_end_inline(mpix_zcopy_comm *zc, const mpix_zcopy_header *header, int rc);

/* ---- probes (probe.c) -------------------------------------------------------------------- */

/* Whether a probe of @zc's communicator holds messages no receive has taken yet: every
 * receive then looks there first (mpix_zcopy_probed_receive). */
static inline int mpix_zcopy_probed_waiting(mpix_zcopy_comm *zc)
{
    return atomic_load_explicit(&zc->probed_count, memory_order_acquire) > 0;
}
/* Takes the oldest message a probe received that matches @source and @tag (wildcards
 * allowed) into @buf, as a receive of @count of @datatype would (*@taken 0: none there).
 * *@raised as receive_finish sets it. The caller has checked the call as MPI_Recv would
 * (the datatype, the tag): a call MPI rejects must leave the message kept. @call: the
 * program's, which an error names. */
int mpix_zcopy_probed_receive(mpix_zcopy_comm *zc, int source, int tag, void *buf, int count, MPI_Datatype datatype,
                              MPI_Comm comm, MPI_Status *status, int *taken, int *raised, const char *call);
/* Frees the messages no receive took (with their communicator's state). */
void mpix_zcopy_probed_free(mpix_zcopy_comm *zc);
/* The probe of MPIX_Probe_zcopy (@blocking) and MPIX_Iprobe_zcopy (@call names it in
 * errors). With @taken non-NULL, a matched probe's: the message found is taken, a kept
 * one as *@taken (off the stash), one left to MPI (no header) as MPI's handle *@message
 * (MPI_MESSAGE_NO_PROC for MPI_PROC_NULL). Errors are raised. */
int mpix_zcopy_probe(const char *call, int source, int tag, MPI_Comm comm, int blocking, int *flag,
                     MPI_Status *status, struct mpix_zcopy_probed **taken, MPI_Message *message);
/* Receives the kept message @probed into @buf as mpix_zcopy_probed_receive does, and
 * frees it. */
int mpix_zcopy_probed_deliver(mpix_zcopy_comm *zc, struct mpix_zcopy_probed *probed, void *buf, int count,
                              MPI_Datatype datatype, MPI_Comm comm, MPI_Status *status, int *raised,
                              const char *call);
/* The data's length of the kept message @probed, as its probe reported it. */
MPI_Count mpix_zcopy_probed_bytes(const struct mpix_zcopy_probed *probed);
/* Hands a matched message's @data (@bytes of it, malloc'ed; consumed) to the program
 * (mprobe.c): sent to this process on a private communicator and matched there, so that
 * *@message is a handle of MPI's own; its receive reports @envelope's source and tag and
 * its errors belong to @comm. */
int mpix_zcopy_handover_give(mpix_zcopy_process *process, char *data, MPI_Count bytes, const MPI_Status *envelope,
                             MPI_Comm comm, MPI_Message *message);
/* 1 when *@message is a hand-over's: received into @buf (*@message MPI_MESSAGE_NULL),
 * @status filled with its envelope, *@comm its communicator and *@rc the receive's error,
 * not raised; 0 for a handle of MPI's, untouched. */
int mpix_zcopy_handover_receive(MPI_Message *message, void *buf, int count, MPI_Datatype datatype, MPI_Status *status,
                                MPI_Comm *comm, int *rc);
/* Frees the matched probes' hand-over state (mprobe.c), with the process's. */
void mpix_zcopy_handover_destroy(mpix_zcopy_process *process);
/* A nonblocking receive complete at once, with @status and the error MPI_Wait reports
 * (@error), as *@handle (request.c). */
int mpix_zcopy_irecv_complete(MPI_Request *handle, const MPI_Status *status, int error);
/* Receives a message that a probe received as MPI_PACKED (@packed, @length bytes, its
 * envelope in @matched; @raw: it has no header) into @buf, as a receive that had matched
 * it would (recv.c); errors name @call. */
int mpix_zcopy_receive_stashed(mpix_zcopy_comm *zc, const MPI_Status *matched, const char *packed, int length,
                               int raw, void *buf, int count, MPI_Datatype datatype, MPI_Comm comm,
                               MPI_Status *status, int *raised, const char *call);
/* Waits until no nonblocking receive posted before could take a message from @source
 * with @tag (mpix_zcopy_requests_overlap), making MPI's progress meanwhile (request.c). */
void mpix_zcopy_wait_earlier_receives(mpix_zcopy_comm *zc, int source, int tag);

/* ---- nonblocking calls (request.c) --------------------------------------------------- */

/* Drops one hold on an object several owners share (@references counts them): 1 when it
 * was the last, and the caller then ends and frees the object. A request's owners are
 * MPI, until it calls the generalized request's free function, which MPICH does at
 * MPI_Request_free even before the request is complete, and the library, until the
 * request is through. */
static inline int mpix_zcopy_release_last(_Atomic int *references)
{
    return atomic_fetch_sub_explicit(references, 1, memory_order_acq_rel) == 1;
}

/* Whether one message could match both envelopes (wildcards allowed). */
static inline int mpix_zcopy_envelopes_overlap(int source_a, int tag_a, int source_b, int tag_b)
{
    return (source_a == MPI_ANY_SOURCE || source_b == MPI_ANY_SOURCE || source_a == source_b) &&
           (tag_a == MPI_ANY_TAG || tag_b == MPI_ANY_TAG || tag_a == tag_b);
}

/* Whether a receive of MPIX_Irecv_zcopy on @zc that has not yet matched a message could
 * match one from @source with @tag (wildcards allowed on both sides): a blocking receive
 * waits for those first, as MPI matches posted receives in order. */
int mpix_zcopy_requests_overlap(mpix_zcopy_comm *zc, int source, int tag);
/* Stops the progress thread, failing what it still holds (at MPI_Finalize). */
typedef struct mpix_zcopy_progress mpix_zcopy_progress;
void mpix_zcopy_progress_destroy(mpix_zcopy_progress *progress);
/* A nonblocking call of @zc is through: frees its datatype of its own (*@owned, unless
 * MPI_DATATYPE_NULL), that failure into *@error if it holds none, and completes its
 * generalized @request, after which the caller's MPI_Wait may free it. */
void mpix_zcopy_request_done(mpix_zcopy_comm *zc, MPI_Request request, MPI_Datatype *owned, int *error);
/* Where no thread drives the pending requests (MPICH: MPI_Test and MPI_Wait* do), one
 * pass over them, for a call of this process that waits for a peer meanwhile. */
void mpix_zcopy_progress_poke(mpix_zcopy_process *process);
/* MPI_Send for data that may wait for its receiver: where MPI runs no pass over this
 * process's pending requests while it waits (MPICH) and some are pending, MPI_Isend and
 * passes until it is done, so that a receive this process posted before (which MPICH's
 * zcopy matches in a pass) takes its peer's message while the peer waits for this one
 * in turn: a ring of ranks posting MPIX_Irecv_zcopy, then sending with blocking calls. */
int mpix_zcopy_blocking_send(mpix_zcopy_process *process, const void *buf, int count, MPI_Datatype datatype, int dest,
                             int tag, MPI_Comm comm);

/* ---- mailboxes (mailbox.c) --------------------------------------------------------- */

/* One zero-copy message's hand-shake, in the sender's mailbox, which the receiver maps:
 * the receiver writes @state (and, asking for help, @receiver_pid, @split, @receiver
 * first); the sender writes @finished. With help, the sender copies type-map bytes
 * [split, bytes) into the receiver's layout with process_vm_writev while the receiver
 * reads [0, split): two cores each copy a part of the one copy. */
struct mpix_zcopy_slot {
    _Alignas(64) _Atomic int32_t taken; /* a send of this process owns the slot */
    _Atomic int32_t state;              /* PENDING, HELP, then DONE or ABANDONED */
    _Atomic int32_t finished;           /* the sender's part: PENDING, DONE or ABANDONED */
    int32_t receiver_pid;
    int64_t split;
    mpix_zcopy_layout_ref receiver;
    _Atomic uint64_t nonce;             /* an interposed message's, 0 otherwise */
    uint64_t staged_address;            /* STAGED: the data, type-map order, in the sender */
    /* A piped message (pipe.c): type-map bytes the sender has claimed for the pipe
     * (negative, -1 - n: the receiver read the message from byte n on itself), put in it,
     * and those the receiver has taken out of it. */
    _Alignas(64) _Atomic int64_t reserved;
    _Atomic int64_t produced;
    _Alignas(64) _Atomic int64_t consumed;
};

enum { MPIX_ZCOPY_SLOTS = 64 };
/* Messages that ask a peer whether it can attach to this process, before they stop: a
 * peer that could answers the first one it receives. */
enum { MPIX_ZCOPY_LEARN_ASKS = 4 };   /* sends in flight at once per process (threads) */

int mpix_zcopy_mailbox_create(mpix_zcopy_process *process);
void mpix_zcopy_mailbox_destroy(mpix_zcopy_process *process);
/* A free slot among the first slots_in_use of this process's mailbox, or -1 when every
 * one is in use or there is no mailbox. */
int mpix_zcopy_slot_take(mpix_zcopy_process *process);
void mpix_zcopy_slot_release(mpix_zcopy_process *process, int index);
/* Process @pid's mailbox (its memfd @fd), mapped on first use; NULL when it cannot be. */
mpix_zcopy_slot *mpix_zcopy_peer_mailbox(mpix_zcopy_process *process, pid_t pid, int fd);

/* ---- pipes (pipe.c) ------------------------------------------------------------------ */

/* A zero-copy message's data can also go through a pipe of the sender's slot: the
 * sender packs it there (memcpy along its layout) while the receiver unpacks what is
 * there into its own, in chunks. Where the kernel's copy between processes is slow
 * against memcpy (mpix_zcopy_pipes_pay), that is faster than the kernel's one copy. */
enum { MPIX_ZCOPY_PIPES = 8 };                   /* slots with a pipe: the first ones */
enum { MPIX_ZCOPY_PIPE_BYTES = 1 << 20 };        /* a pipe */
/* What one step puts in or takes out: on the 2-core test VM 16 KiB chunks moved MILC's
 * face as fast as 32 or 64 KiB ones and NAS MG's y-face 4-8% faster, 128 KiB ones 10-15%
 * slower (fewer steps overlap); a pipe as long as the message lets the sender put it all
 * in while the receiver is not running: with pipes of 128 and 256 KiB the minutes when
 * the two ranks do not run at once took MILC from 2.7x MPI's to 1.0x. */
enum { MPIX_ZCOPY_PIPE_CHUNK = 16 << 10 };
/* Slot @index's pipe in @mailbox (this process's or a mapped peer's); NULL for a slot
 * without one. */
char *mpix_zcopy_pipe_of(mpix_zcopy_slot *mailbox, int index);
/* Whether a zero-copy send of @layout on @zc goes through a pipe: forced
 * (MPIX_ZCOPY_METHOD=piped, or another method: no; MPIX_ZCOPY_PIPES), or where its
 * blocks average less than 32 KiB and this machine's kernel copies at less than a third
 * of memcpy's rate (copy.c, measured once with the kernel's rates). */
int mpix_zcopy_pipes_pay(mpix_zcopy_comm *zc, const mpix_layout *layout);
/* This machine's kernel copy rate (bytes/ns), measured at the first need of the process
 * (copy.c). */
double mpix_zcopy_kernel_bytes_per_ns(mpix_zcopy_process *process);
/* A blocking send's data put in its slot's pipe: _open readies the slot, _fill packs
 * what the pipe has room for (nothing more once the receiver took the rest over);
 * @send->piped counts what it packed. */
void mpix_zcopy_pipe_open(mpix_zcopy_send *send);
void mpix_zcopy_pipe_fill(mpix_zcopy_send *send);
/* Takes the @bytes of a piped message out of @slot's pipe in @mailbox into @buf along
 * @local, as the sender puts them in. Returns @bytes, or the type-map byte from which the
 * receiver must read the rest itself: it takes over where the sender put nothing in for
 * MPIX_ZCOPY_STALL_SECONDS (the sender may be in a call that waits for this
 * process, such as a progress pass of MPI's that drains another pipe), or where the
 * pipe runs slower than @kernel_bytes_per_ns, the kernel's copy. -1 where the sender,
 * process @sender, exited before it put in what it claimed. */
MPI_Count mpix_zcopy_pipe_drain(mpix_zcopy_slot *mailbox, int slot, char *buf, const mpix_layout *local,
                                MPI_Count bytes, double kernel_bytes_per_ns, pid_t sender);
/* How long a receiver waits for a sender that neither fills its pipe nor takes a request
 * for help before it reads the rest itself. */
#define MPIX_ZCOPY_STALL_SECONDS 100e-6

/* A peer's layout named by @ref: inline, agreed by a global id, remembered under
 * (@peer, id), or read from process @pid (and then remembered). When it is used once
 * only it lands in @scratch; mpix_zcopy_peer_layout_release frees that. @call: the
 * program's, which an error names (a peer gone: MPIX_ERRKIND_PEER). */
int mpix_zcopy_peer_layout(mpix_zcopy_comm *zc, int peer, pid_t pid, const mpix_zcopy_layout_ref *ref,
                           mpix_layout *scratch, mpix_layout **layout, const char *call);

/* The same in two steps: _find answers 1 with a layout known without reading (0 if it
 * must be read); _read reads it, and with @along copies the head of the message while
 * it reads: *along->error gets the copy's errno-style result. */
typedef struct mpix_zcopy_copy_along {
    char *local_base;
    const mpix_layout *local;
    MPI_Count bytes;      /* type-map bytes [0, bytes) */
    int *error;
} mpix_zcopy_copy_along;
int mpix_zcopy_peer_layout_find(mpix_zcopy_comm *zc, int peer, const mpix_zcopy_layout_ref *ref,
                                mpix_layout *scratch, mpix_layout **layout);
int mpix_zcopy_peer_layout_read(mpix_zcopy_comm *zc, int peer, pid_t pid, const mpix_zcopy_layout_ref *ref,
                                mpix_layout *scratch, mpix_layout **layout, const mpix_zcopy_copy_along *along,
                                const char *call);
void mpix_zcopy_peer_layout_release(mpix_layout *scratch, const mpix_zcopy_layout_ref *ref);

/* Fills @ref for this process's @view of @buf. */
void mpix_zcopy_layout_ref_set(mpix_zcopy_layout_ref *ref, const void *buf, int count, const mpix_layout_view *view,
                               MPI_Comm comm);

/* ---- huge pages for reused buffers (collapse.c) ------------------------------------ */

/* Counts a sight of each 2 MiB unit wholly inside @layout's extent at @buf that holds
 * message bytes (every such unit where the layout has more than 4 blocks a unit), and
 * folds the units due (their copies have cost a fold, refold, deferred by the kernel)
 * into huge pages (MADV_COLLAPSE), unless MPIX_ZCOPY_COLLAPSE is off or the extent holds
 * more units than MPIX_ZCOPY_COLLAPSE_UNITS. O(extent / 2 MiB), plus O(blocks) where blocks are few; the
 * first fold of a unit copies it. */
void mpix_zcopy_collapse(mpix_zcopy_comm *zc, const void *buf, const mpix_layout *layout);

/* Folds @unit (a 2 MiB unit number) now and records what the kernel said in the sights
 * table and @zc's statistics; @folded: a refold; @due: the sight it was due at, which a
 * deferral sets it back to. One madvise. */
void mpix_zcopy_fold_unit(mpix_zcopy_comm *zc, uintptr_t unit, int folded, uint64_t due);

/* The folding thread (folder.c). */
typedef struct mpix_zcopy_folder mpix_zcopy_folder;
int mpix_zcopy_folder_create(mpix_zcopy_folder **folder);
/* Queues @unit for the thread, started at the first post: 1 queued, 0 the queue is full,
 * -1 there is no thread (it could not be started). O(1). */
int mpix_zcopy_folder_post(mpix_zcopy_folder *folder, mpix_zcopy_comm *zc, uintptr_t unit, int folded, uint64_t due);
/* Stops and joins the thread; jobs not run are dropped. NULL: nothing. */
void mpix_zcopy_folder_destroy(mpix_zcopy_folder *folder);

/* ---- packing (pack.c) ------------------------------------------------------------- */

/* @count of @datatype at @buf packed by MPI_Pack into a buffer taken from @scratch
 * (*@packed: give it back there), *@length bytes; MPIX_ERRKIND_UNSUPPORTED for more than
 * INT_MAX bytes. MPI_BOTTOM allowed. */
int mpix_zcopy_pack(const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm, mpix_scratch *scratch,
                    char **packed, int *length);
/* The first @bytes type-map bytes of @count of @datatype at @buf (MPI_BOTTOM allowed;
 * @bytes at most their size) set from @data, which holds them in type-map order, as a
 * receive of that many bytes sets them: a last element only partly (the rest of it is
 * packed first and unpacked again, unchanged); or (_pack_head) copied into @data. */
int mpix_zcopy_unpack_bytes(const char *data, MPI_Count bytes, void *buf, int count, MPI_Datatype datatype,
                            MPI_Comm comm);
int mpix_zcopy_pack_head(void *data, MPI_Count bytes, const void *buf, int count, MPI_Datatype datatype,
                         MPI_Comm comm);
/* Whether MPI_Pack writes data as it lies in memory (Debian's Open MPI 4.1 does; the
 * format is the MPI's to choose), so that small messages may be
 * packed and unpacked with memcpy: MPI_Pack, MPI_Unpack and MPI_Pack_size build a
 * convertor each (10-24 ns each with Open MPI 4.1, against 3 ns for a copy of 200
 * bytes: bench/results/zcopy-pack-calls-openmpi-1rank.txt), and a message of one
 * double took five. Asked once a process (a double, an
 * int and bytes packed on MPI_COMM_SELF). */
int mpix_zcopy_packs_natively(int *native);
/* Where @count of @datatype (@type_size bytes each) are one run of bytes, its start from
 * the buffer (the true lower bound) in *@offset; else -1. O(1). */
int mpix_zcopy_one_run(MPI_Datatype datatype, int count, MPI_Count type_size, MPI_Aint *offset);
/* MPI_Unpack of @count of @datatype (@bytes in all; not at MPI_BOTTOM): a memcpy where
 * @run is the data's offset as one run (mpix_zcopy_one_run, for an MPI that packs
 * natively; -1 for MPI's own call). An error names what does not fit. */
int mpix_zcopy_unpack_from(const char *packed, int length, int *position, void *buf, int count,
                           MPI_Datatype datatype, MPI_Count bytes, MPI_Aint run, MPI_Comm comm);
/* @length bytes received as MPI_PACKED at @packed, unpacked into @count of @datatype at
 * @buf (MPI_BOTTOM allowed) as a receive of the message with the datatype sets them: a
 * last element only partly. More bytes than the elements hold are an error. */
int mpix_zcopy_unpack_received(const char *packed, int length, void *buf, int count, MPI_Datatype datatype,
                               MPI_Comm comm);
/* Receives the next message from @source with @tag as MPI_PACKED, into a buffer taken
 * from @scratch, and unpacks @count of @datatype from it into @buf (MPI_BOTTOM allowed). */
int mpix_zcopy_receive_unpacked(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                mpix_scratch *scratch);

/* ---- cross-memory copy (copy.c) ----------------------------------------------------- */

/* Copy type-map bytes [@first, @first + @bytes) from the sender's layout (at
 * @remote_base in process @pid) into this process's layout (at @local_base): kernel
 * iovecs for large blocks, coalesced spans staged in @zc's scratch for small ones.
 * errno-style result: 0 or an errno. */
int mpix_zcopy_pull(mpix_zcopy_comm *zc, pid_t pid, uint64_t remote_base, mpix_layout *remote,
                    char *local_base, const mpix_layout *local, MPI_Count first, MPI_Count bytes);

/* The sender's part: type-map bytes [@first, @first + @bytes) of this process's layout
 * written into the receiver's (at @remote_base in process @pid), one iovec per block. */
int mpix_zcopy_push(pid_t pid, uint64_t remote_base, const mpix_layout *remote, const char *local_base,
                    const mpix_layout *local, MPI_Count first, MPI_Count bytes);

/* Where to split a message of @bytes between the receiver (reading @remote, the sender's
 * layout, into @local) and the sender (writing into @local), so both parts take as
 * long; @bytes when the sender's part would be too small to pay for the hand-over. */
MPI_Count mpix_zcopy_split(mpix_zcopy_comm *zc, mpix_layout *remote, mpix_layout *local, MPI_Count bytes);

/* The costs of @layout with spans bridging gaps up to @gap_limit: O(blocks) the first
 * time, then remembered on the layout. */
const mpix_zcopy_costs *mpix_zcopy_costs_of(mpix_layout *layout, MPI_Aint gap_limit);

/* Write/read a few bytes of another process (a directory entry, a layout, a slot's
 * state when its mailbox cannot be mapped). 0 or an errno. */
int mpix_zcopy_write_remote(pid_t pid, uint64_t address, const void *data, size_t length);
int mpix_zcopy_read_remote(pid_t pid, uint64_t address, void *data, size_t length);

#endif
