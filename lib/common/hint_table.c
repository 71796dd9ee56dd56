/* SPDX-License-Identifier: BSD-3-Clause */
/* Every setting mpix reads, in one place. The table fixes the syntax, the default and
 * who the setting is for; what a value does is the module's. `mpix-settings` prints it,
 * and the settings tables of the documentation are its output (tests check they match). */
#include "hint.h"

#include <stddef.h>

#define USER MPIX_HINT_FOR_USERS
#define TESTING MPIX_HINT_FOR_TESTING
#define WINDOW "window (MPIX_Win_allocate, MPIX_Win_allocate_shared, MPIX_Alloc_mem)"
#define BYTES_MAX 4.6e18

static const mpix_hint_spec hint_table[MPIX_HINT_COUNT] = {
    [MPIX_HINT_VERBOSE] = { "mpix_verbose", "MPIX_VERBOSE", "window, MPIX_Hy_comm_create", "common", USER,
                            MPIX_HINT_TYPE_BOOL, NULL, 0, 0, "false",
                            "print, once per object, the settings in force and the path chosen" },
    [MPIX_HINT_VIRTUAL_NODE_RANKS] = { "mpix_virtual_node_ranks", "MPIX_VIRTUAL_NODE_RANKS", NULL, "common", TESTING,
                                       MPIX_HINT_TYPE_INTEGER, NULL, 0, 1 << 30, "0",
                                       "k > 0: treat each k consecutive world ranks of a node as a node of their own "
                                       "(hy's split when mpix_hy_split is not given, zcopy's same-node check)" },
    [MPIX_HINT_ALLOC_TYPE] = { "alloc_type", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_KEYWORD,
                               "memory|storage", 0, 0, "memory", "storage maps the window onto a file or block device" },
    [MPIX_HINT_STORAGE_FILENAME] = { "storage_alloc_filename", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_STRING,
                                     NULL, 0, 0, NULL, "file or block device of the window; required with alloc_type=storage" },
    [MPIX_HINT_STORAGE_OFFSET] = { "storage_alloc_offset", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_INTEGER,
                                   NULL, 0, BYTES_MAX, "0", "byte offset of the window in the file" },
    [MPIX_HINT_STORAGE_FACTOR] = { "storage_alloc_factor", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_NUMBER,
                                   "auto", 0, 1, "0",
                                   "fraction of the window kept in memory, the rest on storage; auto: this rank's fair "
                                   "share of the node's memory" },
    [MPIX_HINT_STORAGE_ORDER] = { "storage_alloc_order", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_KEYWORD,
                                  "memory_first|storage_first", 0, 0, "memory_first",
                                  "which part of a combined window comes first in its address range" },
    [MPIX_HINT_STORAGE_UNLINK] = { "storage_alloc_unlink", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_BOOL, NULL,
                                   0, 0, "false", "remove the file when the window is freed" },
    [MPIX_HINT_STORAGE_DISCARD] = { "storage_alloc_discard", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_BOOL,
                                    NULL, 0, 0, "false", "skip the final write-back when the window is freed" },
    [MPIX_HINT_ACCESS_STYLE] = { "access_style", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_KEYWORD_LIST,
                                 "read_once|write_once|read_mostly|write_mostly|sequential|reverse_sequential|random",
                                 0, 0, NULL, "MPI-IO's access pattern hint: read-ahead and tracking follow it" },
    [MPIX_HINT_FILE_PERM] = { "file_perm", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_MODE, NULL, 0, 0777,
                              "0600", "permission bits of a file the window creates" },
    [MPIX_HINT_STRIPING_FACTOR] = { "striping_factor", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_INTEGER, NULL,
                                    1, 65536, NULL, "MPI-IO's striping hint, checked and reported; no striping file system is driven" },
    [MPIX_HINT_STRIPING_UNIT] = { "striping_unit", NULL, WINDOW, "storage", USER, MPIX_HINT_TYPE_INTEGER, NULL, 1,
                                  BYTES_MAX, NULL, "MPI-IO's striping hint, checked and reported" },
    [MPIX_HINT_STORAGE_NODE_MEMORY] = { "mpix_storage_node_memory", "MPIX_STORAGE_NODE_MEMORY", WINDOW, "storage",
                                        USER, MPIX_HINT_TYPE_INTEGER, NULL, 0, BYTES_MAX, NULL,
                                        "bytes the node offers to storage_alloc_factor=auto (default: available "
                                        "memory within the job's cgroup limit)" },
    [MPIX_HINT_STORAGE_TRACKING] = { "mpix_storage_tracking", "MPIX_STORAGE_TRACKING", WINDOW, "storage", USER,
                                     MPIX_HINT_TYPE_KEYWORD, "auto|page|huge", 0, 0, "auto",
                                     "dirty tracking per 4 KiB page, per 2 MiB, or chosen at each sync from what changed" },
    [MPIX_HINT_STORAGE_HUGE_PERCENT] = { "mpix_storage_huge_percent", "MPIX_STORAGE_HUGE_PERCENT", WINDOW, "storage",
                                         USER, MPIX_HINT_TYPE_NUMBER, NULL, 0, 100, "6",
                                         "share of pages changed (percent) from which auto tracking works per 2 MiB" },
    [MPIX_HINT_STORAGE_SYNC] = { "mpix_storage_sync", "MPIX_STORAGE_SYNC", WINDOW, "storage", USER,
                                 MPIX_HINT_TYPE_KEYWORD, "auto|log|in_place", 0, 0, "auto",
                                 "how a sync reaches the file: a redo log (consistent across crashes) or written "
                                 "back in place; auto: the log for windows that fit in memory" },
    [MPIX_HINT_STORAGE_LOG_CHANGES] = { "mpix_storage_log_changes", "MPIX_STORAGE_LOG_CHANGES", WINDOW, "storage",
                                        USER, MPIX_HINT_TYPE_KEYWORD, "auto|written|digest", 0, 0, "auto",
                                        "how a logged sync finds changed pages: the pages the kernel saw written, or a "
                                        "digest of every page; auto: written unless device-pinned memory could be "
                                        "written behind the kernel's back" },
    [MPIX_HINT_STORAGE_STORE_FAULT_NS] = { "mpix_storage_store_fault_ns", "MPIX_STORAGE_STORE_FAULT_NS", NULL,
                                           "storage", TESTING, MPIX_HINT_TYPE_INTEGER, NULL, 0, 1000000, "0",
                                           "nanoseconds the first store into a tracked page costs, as logged syncs "
                                           "choose between tracking written pages and reading every page (0: "
                                           "measured by the process)" },
    [MPIX_HINT_SPIN_POLLS] = { "mpix_spin_polls", "MPIX_SPIN_POLLS", "window (MPIX_Win_allocate_shared)", "spin", USER,
                               MPIX_HINT_TYPE_INTEGER, NULL, 0, 1e9, "2000",
                               "polls before a spin wait sleeps on a futex (0: at once)" },
    [MPIX_HINT_HY_SPLIT] = { "mpix_hy_split", "MPIX_HY_SPLIT", "MPIX_Hy_comm_create", "hy", USER,
                             MPIX_HINT_TYPE_INTEGER, "node|numa|socket", 1, 1 << 30, "node",
                             "the unit that shares one copy: node, NUMA domain, package, or k consecutive ranks" },
    [MPIX_HINT_HY_SMALL_BYTES] = { "mpix_hy_small_bytes", "MPIX_HY_SMALL_BYTES", NULL, "hy", USER,
                                   MPIX_HINT_TYPE_INTEGER, NULL, 0, 1 << 30, "2048",
                                   "largest allreduce vector (bytes) on the barrier-free path (0: off)" },
    [MPIX_HINT_HY_SMALL_NODES] = { "mpix_hy_small_nodes", "MPIX_HY_SMALL_NODES", NULL, "hy", TESTING,
                                   MPIX_HINT_TYPE_KEYWORD, "auto|trade|leaders|every", 0, 0, "auto",
                                   "small allreduce across nodes: the node sums traded by the nodes' processes "
                                   "(auto: by every process where nodes are equal and at most 3, for Wrapper_* only "
                                   "where every machine is oversubscribed; otherwise by one pair per pair of nodes "
                                   "where each trades with at most 2 nodes and no machine is oversubscribed; trade: "
                                   "one pair per pair of nodes, even oversubscribed; every: by every process on equal "
                                   "nodes, at most 3), or the leaders' MPI_Allreduce" },
    [MPIX_HINT_ZCOPY] = { "mpix_zcopy", "MPIX_ZCOPY", NULL, "zcopy", USER, MPIX_HINT_TYPE_BOOL, NULL, 0, 0, "true",
                          "false sends every zcopy message through plain MPI" },
    [MPIX_HINT_ZCOPY_EAGER_BYTES] = { "mpix_zcopy_eager_bytes", "MPIX_ZCOPY_EAGER_BYTES", NULL, "zcopy", USER,
                                      MPIX_HINT_TYPE_INTEGER, NULL, 0, 1 << 30, "16384",
                                      "largest message (bytes) always sent through MPI, never zero-copy (with MPICH, messages "
                                      "of up to 16 KiB always are, without a header)" },
    [MPIX_HINT_ZCOPY_COALESCE_BYTES] = { "mpix_zcopy_coalesce_bytes", "MPIX_ZCOPY_COALESCE_BYTES", NULL, "zcopy", USER,
                                         MPIX_HINT_TYPE_INTEGER, NULL, 0, 1 << 30, "4096",
                                         "largest gap (bytes) a staged span reads across (0: no spans)" },
    [MPIX_HINT_ZCOPY_SPLIT_BYTES] = { "mpix_zcopy_split_bytes", "MPIX_ZCOPY_SPLIT_BYTES", NULL, "zcopy", USER,
                                      MPIX_HINT_TYPE_INTEGER, NULL, 0, BYTES_MAX, "65536",
                                      "smallest zero-copy message (bytes) the sender helps copy (0: never)" },
    [MPIX_HINT_ZCOPY_COLLAPSE] = { "mpix_zcopy_collapse", "MPIX_ZCOPY_COLLAPSE", NULL, "zcopy", USER,
                                   MPIX_HINT_TYPE_BOOL, NULL, 0, 0, "true",
                                   "fold reused message buffers into huge pages (MADV_COLLAPSE)" },
    [MPIX_HINT_ZCOPY_PACK_BY_COPY] = { "mpix_zcopy_pack_by_copy", "MPIX_ZCOPY_PACK_BY_COPY", NULL, "zcopy", TESTING,
                                       MPIX_HINT_TYPE_BOOL, NULL, 0, 0, "true",
                                       "false: small messages packed and unpacked by MPI_Pack and MPI_Unpack even "
                                       "where the MPI packs data as it lies in memory (then a memcpy does)" },
    [MPIX_HINT_ZCOPY_PIPES] = { "mpix_zcopy_pipes", "MPIX_ZCOPY_PIPES", NULL, "zcopy", TESTING, MPIX_HINT_TYPE_KEYWORD,
                                "auto|on|off", 0, 0, "auto",
                                "whether blocking zero-copy sends put their data through a pipe the receiver "
                                "unpacks (two memcpys) instead of the kernel's copy; auto: where this machine's "
                                "kernel copies run at less than a third of memcpy's speed" },
    [MPIX_HINT_ZCOPY_PTRACER] = { "mpix_zcopy_ptracer", "MPIX_ZCOPY_PTRACER", NULL, "zcopy", USER,
                                  MPIX_HINT_TYPE_BOOL, NULL, 0, 0, "false",
                                  "prctl(PR_SET_PTRACER_ANY) where Yama's ptrace_scope=1 blocks cross-process reads "
                                  "(a security trade-off)" },
    [MPIX_HINT_ZCOPY_METHOD] = { "mpix_zcopy_method", "MPIX_ZCOPY_METHOD", NULL, "zcopy", TESTING,
                                 MPIX_HINT_TYPE_KEYWORD, "auto|direct|staged|datatype|packed|unpacked|piped", 0, 0, "auto",
                                 "force one way for large messages: a kernel-copy method (even for fragmented "
                                 "layouts), or MPI with the datatype, packed by the sender, or also unpacked by "
                                 "the receiver, or zero-copy's way through the sender's pipe (blocking sends)" },
    [MPIX_HINT_ZCOPY_PROGRESS] = { "mpix_zcopy_progress", "MPIX_ZCOPY_PROGRESS", NULL, "zcopy", TESTING,
                                   MPIX_HINT_TYPE_KEYWORD, "auto|thread", 0, 0, "auto",
                                   "who completes MPIX_Isend_zcopy/MPIX_Irecv_zcopy requests: auto, MPI's own "
                                   "progress where the MPI allows it; thread, a progress thread" },
    [MPIX_HINT_ZCOPY_ATTACH] = { "mpix_zcopy_attach", "MPIX_ZCOPY_ATTACH", NULL, "zcopy", TESTING,
                                 MPIX_HINT_TYPE_KEYWORD, "probe|refuse|refuse_push", 0, 0, "probe",
                                 "refuse: answer attach probes as a refusing kernel would; refuse_push: fail the "
                                 "sender's part of split copies" },
    [MPIX_HINT_ZCOPY_SLOTS] = { "mpix_zcopy_slots", "MPIX_ZCOPY_SLOTS", NULL, "zcopy", TESTING, MPIX_HINT_TYPE_INTEGER,
                                NULL, 1, 64, "64",
                                "mailbox slots a process's sends may take at once; a send finding none goes through MPI" },
    [MPIX_HINT_ZCOPY_FOLD_SIGHT] = { "mpix_zcopy_fold_sight", "MPIX_ZCOPY_FOLD_SIGHT", NULL, "zcopy", TESTING,
                                     MPIX_HINT_TYPE_INTEGER, NULL, 0, 255, "0",
                                     "the sight of a reused 2 MiB unit at which it is first folded into a huge page "
                                     "(0: when its copies have cost what a fold costs, measured)" },
    [MPIX_HINT_ZCOPY_FOLD_CALL_US] = { "mpix_zcopy_fold_call_us", "MPIX_ZCOPY_FOLD_CALL_US", NULL, "zcopy", TESTING,
                                       MPIX_HINT_TYPE_INTEGER, NULL, 0, 1000000, "1000",
                                       "microseconds one call may go on folding units due after its first fold (0: "
                                       "no limit but the 16 units a call)" },
    [MPIX_HINT_ZCOPY_KERNEL_IOVEC_NS] = { "mpix_zcopy_kernel_iovec_ns", "MPIX_ZCOPY_KERNEL_IOVEC_NS", NULL, "zcopy",
                                          TESTING, MPIX_HINT_TYPE_INTEGER, NULL, 0, 1000000, "0",
                                          "nanoseconds the kernel charges per iovec of a copy between processes, as "
                                          "nonblocking sends price zero-copy and a new layout's first duel is ordered "
                                          "(0: measured by the process)" },
    [MPIX_HINT_ZCOPY_MPI_BYTES_PER_NS] = { "mpix_zcopy_mpi_bytes_per_ns", "MPIX_ZCOPY_MPI_BYTES_PER_NS", NULL,
                                           "zcopy", TESTING, MPIX_HINT_TYPE_INTEGER, NULL, 0, 1000000, "0",
                                           "bytes a nanosecond MPI's two copies of a message are priced at, as "
                                           "nonblocking sends price zero-copy and a new layout's first duel is "
                                           "ordered (0: from the copy rates the process measures)" },
    [MPIX_HINT_ZCOPY_PULL_DELAY_US] = { "mpix_zcopy_pull_delay_us", "MPIX_ZCOPY_PULL_DELAY_US", NULL, "zcopy",
                                        TESTING, MPIX_HINT_TYPE_INTEGER, NULL, 0, 1000000, "0",
                                        "microseconds each zero-copy receive waits before it copies, as on a machine "
                                        "whose kernel copies lose to MPI's ways" },
    [MPIX_HINT_ZCOPY_FOLD_THREAD] = { "mpix_zcopy_fold_thread", "MPIX_ZCOPY_FOLD_THREAD", NULL, "zcopy", USER,
                                      MPIX_HINT_TYPE_BOOL, NULL, 0, 0, "true",
                                      "fold buffers into huge pages on a thread of the process's own (false: in the "
                                      "call that finds a unit due, which then waits for the kernel)" },
    [MPIX_HINT_GUARD] = { "mpix_guard", "MPIX_GUARD", NULL, "guard", USER, MPIX_HINT_TYPE_BOOL, NULL, 0, 0, "true",
                          "false makes every guarded call the blocking MPI call" },
    [MPIX_HINT_GUARD_COPY_BYTES] = { "mpix_guard_copy_bytes", "MPIX_GUARD_COPY_BYTES", NULL, "guard", USER,
                                     MPIX_HINT_TYPE_INTEGER, NULL, 0, 1 << 30, "65536",
                                     "largest send (bytes) copied instead of protected in place" },
    [MPIX_HINT_GUARD_CHAIN] = { "mpix_guard_chain", "MPIX_GUARD_CHAIN", NULL, "guard", USER, MPIX_HINT_TYPE_BOOL,
                                NULL, 0, 0, "true", "complete chains of calls as a unit, learned chains at their last call" },
    [MPIX_HINT_GUARD_POLL_NS] = { "mpix_guard_poll_ns", "MPIX_GUARD_POLL_NS", NULL, "guard", USER,
                                  MPIX_HINT_TYPE_INTEGER, NULL, 0, 1e9, NULL,
                                  "ns a receive is polled before its pages are protected (default: twice the running "
                                  "cost of the protection calls; 0: never poll)" },
    [MPIX_HINT_GUARD_CHECK] = { "mpix_guard_check", "MPIX_GUARD_CHECK", NULL, "guard", TESTING, MPIX_HINT_TYPE_BOOL,
                                NULL, 0, 0, "false",
                                "after every guarded call and fault, compare each page guard has protected with what "
                                "the transfers in flight need (/proc/self/maps) and abort on a difference" },
    [MPIX_HINT_PMPI] = { "mpix_pmpi", "MPIX_PMPI", NULL, "pmpi", USER, MPIX_HINT_TYPE_KEYWORD_LIST,
                         "storage|guard|zcopy|none", 0, 0, NULL,
                         "what a preloaded interposition library does to the program's MPI calls (default: storage "
                         "for libmpix-pmpi.so, guard for libmpix-guard.so; zcopy only in libmpix-pmpi.so, and "
                         "not with guard)" },
    [MPIX_HINT_STORAGE_DEFAULT_HINTS] = { "mpix_storage_default_hints", "MPIX_STORAGE_DEFAULT_HINTS", NULL, "pmpi",
                                          USER, MPIX_HINT_TYPE_STRING, NULL, 0, 0, NULL,
                                          "key=value;... hints that libmpix-pmpi.so adds to every MPI_Win_allocate and "
                                          "MPI_Win_allocate_shared whose info lacks them (%r: rank in "
                                          "MPI_COMM_WORLD, %w: the process's window number)" },
};

const mpix_hint_spec *mpix_hint_spec_of(mpix_hint_id id) { return &hint_table[id]; }
