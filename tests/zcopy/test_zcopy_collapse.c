/* SPDX-License-Identifier: BSD-3-Clause */
/* Reused message buffers folded into huge pages (collapse.c). Rank 0 sends the same
 * 2 MiB-aligned buffer three times as a vector of 32 KiB blocks whose extent holds three
 * whole 2 MiB units; rank 1 receives into one buffer of its own. The first send only
 * counts the units; the second tries to fold each of them on both sides (MADV_COLLAPSE),
 * which the test sees in the path statistics and in /proc/self/smaps; the third tries
 * only what the kernel deferred. A message whose extent holds no whole unit folds
 * nothing, a buffer marked MADV_NOHUGEPAGE is refused by the kernel (counted) and left
 * alone, a 40 MiB message is folded over two calls (at most 16 units a call; its
 * buffer lies across a 256 GiB boundary where that address is free, where a sights
 * table indexed by a mix of the unit's bits would give two of its units one entry), and a
 * message of two blocks 3 GiB apart (more units than the sight table holds) folds
 * nothing, and of a sparse layout only the units its blocks touch are counted. With
 * MPIX_ZCOPY_COLLAPSE=off (the second meson row) nothing is folded or tried. Both rows
 * force zero-copy (MPIX_ZCOPY_METHOD=direct) so that path learning cannot send through
 * MPI instead.
 *
 * Folding is best effort: a kernel without MADV_COLLAPSE (before Linux 6.1) refuses
 * every unit, and a kernel short of free huge pages (a busy CI machine) refuses some
 * (ENOMEM) or defers them (EAGAIN). So the test asserts that every unit due is tried
 * exactly once and accounted for (folded, deferred or refused), that deferred units are
 * tried again at the next sight, that smaps shows every unit counted as folded, and that
 * the bytes arrive whatever the kernel did; it says on stdout how many units the kernel
 * did not fold. The third meson row (MPIX_TEST_COLLAPSE_FAULTS=1) makes those answers
 * happen here: the test's own madvise(), which the library's calls bind to, answers
 * every fourth fold of the test's buffers with EAGAIN and every other fourth with
 * ENOMEM, without folding, and the row asserts that both were met and accounted for.
 * Those rows fold at the second sight (MPIX_ZCOPY_FOLD_SIGHT=2); the fourth row
 * (zcopy_collapse_measured) keeps the default, where a unit is folded once its copies have
 * cost what a fold costs: in a fresh process at the 23rd sight for this vector, which
 * touches 1152 of the 2040 pages of its extent (0.45 ms / (36 us * 1152 / 2040)), then at
 * a sight worked out from the folds this process timed, which may hold back the other
 * units of the same call. It sends one buffer until each of its units was tried, asserts
 * from the folds its madvise records that no unit was tried again within the 64 sights
 * of a refold but after a deferral, and that the first was tried at the 23rd sight; then
 * a second buffer likewise, whose units must be tried at their second sight or later
 * (on a loaded machine a slow first fold may put the others' sight past 64 later, and
 * refold the first meanwhile). The rows that count folds per call
 * exactly lift the time a call may go on folding (MPIX_ZCOPY_FOLD_CALL_US=0); the fifth
 * row (zcopy_collapse_time) sets it to 1 us and checks that 20 units due at once are
 * folded one or two a call, each once. Those rows fold in the calls
 * (MPIX_ZCOPY_FOLD_THREAD=false); the last (zcopy_collapse_thread) keeps the default,
 * a folding thread, and checks that the units due at the second sight are tried by a
 * thread other than the caller's (its madvise sees which), each once, while every
 * round's data arrive right; then a communicator is freed while the thread still holds
 * the 20 units of a 40 MiB message it queued. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <errno.h>
#include <stdatomic.h>
#include <mpix/mpix.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

enum { UNIT = 2 << 20, BUFFER_BYTES = 4 * UNIT, BLOCK = 32 << 10, STRIDE = 64 << 10, BLOCKS = 128 };
enum { WHOLE_UNITS = 3 };   /* the extent is 8 MiB less 32 KiB from an aligned start */

/* The test's buffers whose folds the faults row answers with errors. */
static struct {
    int on;
    unsigned long folds_asked;
    const char *start[2];
    size_t bytes[2];
} faults;

/* The folds asked of one buffer's units (the measured row), each with the sight it was
 * asked at and the kernel's answer (0 or errno). */
enum { MAX_TRIES = 64, REFOLD_SIGHTS = 64 };
typedef struct fold_try {
    const char *unit;
    int sight, error;
} fold_try;
static struct {
    const char *start;   /* the buffer watched, BUFFER_BYTES long; NULL: none */
    int sight;           /* the sight now being sent */
    int count;
    fold_try tries[MAX_TRIES];
} watched;

/* The thread row: which threads asked the kernel to fold the test's buffer. */
static struct {
    const char *start;   /* NULL: not watched */
    pid_t caller;        /* the thread that calls MPI */
    _Atomic unsigned long by_caller, by_other;
} folding;

/* Replaces the C library's madvise for this executable and the library archive linked
 * into it: everything goes to the kernel except, in the faults row, folds of the test's
 * buffers, of which the second of every four is answered EAGAIN and the fourth ENOMEM;
 * folds of the watched buffer are recorded, and in the thread row which thread asked.
 * Hidden, so the dynamic symbol table keeps naming the C library's: UCX's and Open MPI's
 * memory hooks patch the code of the madvise they find there, and would otherwise patch
 * this one out of the way. */
__attribute__((visibility("hidden"))) int madvise(void *address, size_t bytes, int advice)
{
    if (advice == MADV_COLLAPSE && folding.start && (const char *)address >= folding.start &&
        (const char *)address < folding.start + BUFFER_BYTES)
        atomic_fetch_add((pid_t)syscall(SYS_gettid) == folding.caller ? &folding.by_caller : &folding.by_other, 1);
    if (advice == MADV_COLLAPSE && watched.start && (const char *)address >= watched.start &&
        (const char *)address < watched.start + BUFFER_BYTES && watched.count < MAX_TRIES) {
        int rc = (int)syscall(SYS_madvise, address, bytes, advice), error = errno;
        watched.tries[watched.count++] = (fold_try){ (const char *)address, watched.sight,
                                                     rc == 0 ? 0 : error };
        errno = error;
        return rc;
    }
    for (int i = 0; faults.on && advice == MADV_COLLAPSE && i < 2; i++) {
        if ((const char *)address < faults.start[i] || (const char *)address >= faults.start[i] + faults.bytes[i])
            continue;
        unsigned long asked = faults.folds_asked++;
        if (asked % 4 == 1 || asked % 4 == 3) {
            errno = asked % 4 == 1 ? EAGAIN : ENOMEM;
            return -1;
        }
    }
    return (int)syscall(SYS_madvise, address, bytes, advice);
}

/* Whether this kernel folds anonymous memory on request: EINVAL is its answer to an
 * advice it does not know; ENOMEM or EAGAIN only say it could not now. */
static int kernel_folds(void)
{
    char *probe = aligned_alloc(UNIT, UNIT);
    memset(probe, 1, UNIT);
    int folds = madvise(probe, UNIT, MADV_COLLAPSE) == 0 || errno != EINVAL;
    free(probe);
    return folds;
}

/* What the kernel did with the units due between two readings of the statistics. */
typedef struct fold_counts {
    unsigned long folded, deferred, refused;
} fold_counts;

static fold_counts folds_between(zcopy_counters before, zcopy_counters after)
{
    return (fold_counts){after.collapsed_units - before.collapsed_units, after.collapse_deferred - before.collapse_deferred,
                   after.collapse_refused - before.collapse_refused};
}

static unsigned long tried(fold_counts f) { return f.folded + f.deferred + f.refused; }

/* Checks that @want_tried units were tried in @round and, where the kernel cannot fold,
 * all refused; adds what was not folded to @unfolded for the closing note. */
static void check_folds(const char *what, int round, fold_counts f, unsigned long want_tried, int kernel_can_fold,
                        fold_counts *unfolded)
{
    CHECK(tried(f) == want_tried && (kernel_can_fold || f.refused == want_tried),
          "%s round %d (kernel %s): %lu units folded, %lu deferred, %lu refused; want %lu tried", what, round,
          kernel_can_fold ? "folds" : "cannot fold", f.folded, f.deferred, f.refused, want_tried);
    unfolded->deferred += f.deferred;
    unfolded->refused += f.refused;
}

/* AnonHugePages of the mapping that holds @address, in KiB (-1: not found). */
static long huge_kib_at(const void *address)
{
    FILE *smaps = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0;
    long kib = -1;
    uintptr_t at = (uintptr_t)address;
    while (smaps && fgets(line, sizeof line, smaps)) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
            inside = start <= at && at < end;
        else if (inside && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
            break;
    }
    if (smaps)
        fclose(smaps);
    return kib;
}

static double value_at(int round, size_t i) { return round * 1e8 + (double)i; }

/* The 40 MiB buffer, placed where that address is free so that its units straddle unit
 * 0x20000 (256 GiB): units on either side of such a boundary are the ones a sights table
 * indexed by a mix of the unit's bits gives one entry, never folded then. The kernel's
 * choice of address lands there only now and then. *@placed: mapped there. */
static char *big_buffer(size_t bytes, int *placed)
{
#ifdef MAP_FIXED_NOREPLACE
    void *at = (void *)((uintptr_t)0x1fffd * UNIT);
    void *big = mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if ((*placed = big == at))
        return big;
    if (big != MAP_FAILED)   /* a kernel before 4.17 takes the flag for a hint */
        munmap(big, bytes);
#endif
    *placed = 0;
    return aligned_alloc(UNIT, bytes);
}

static void big_buffer_free(char *big, size_t bytes, int placed)
{
    if (placed)
        munmap(big, bytes);
    else
        free(big);
}

/* Sends @buffer (rank 0) into rank 1's until every unit of both was tried, at most
 * SIGHT_MAX sights and one more per unit (a unit due at the last sight may be held back
 * a call by the time one call may fold). Checks, from the folds recorded, that each unit
 * was tried and never again within REFOLD_SIGHTS sights unless the kernel deferred it:
 * units far apart in time (the first fold, slow on a loaded machine, raises the others'
 * sight) are refolded meanwhile, which the statistics alone cannot tell from a unit tried
 * twice. The sights at which the first and the last unit were first tried (0: never). */
static void sends_until_folded(int rank, double *buffer, MPI_Datatype vector, int first_tag, int *first, int *last)
{
    enum { SIGHT_MAX = 255 };
    size_t doubles = BUFFER_BYTES / sizeof(double);
    watched.start = (const char *)buffer;
    watched.count = 0;
    const char *units[WHOLE_UNITS];
    int units_tried = 0, more = 1;
    *first = *last = 0;
    for (int sight = 1; sight <= SIGHT_MAX + WHOLE_UNITS && more; sight++) {
        for (size_t i = 0; i < doubles; i += 512)
            buffer[i] = rank == 0 ? value_at(sight, i) : -1;
        watched.sight = sight;
        int tag = first_tag + sight;
        int rc = rank == 0 ? MPIX_Send_zcopy(buffer, 1, vector, 1, tag, MPI_COMM_WORLD)
                           : MPIX_Recv_zcopy(buffer, 1, vector, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "sight %d: %s", sight, mpix_test_error_string(rc));
        if (rank == 1)
            CHECK(buffer[512] == value_at(sight, 512), "sight %d: got %g", sight, buffer[512]);
        units_tried = 0;
        for (int t = 0; t < watched.count; t++) {
            int known = 0;
            for (int u = 0; u < units_tried && !known; u++)
                known = units[u] == watched.tries[t].unit;
            if (!known && units_tried < WHOLE_UNITS) {
                units[units_tried++] = watched.tries[t].unit;
                *first = *first ? *first : watched.tries[t].sight;
                *last = watched.tries[t].sight;
            }
        }
        int mine = units_tried < WHOLE_UNITS;   /* both ranks go on while either has units left */
        MPI_Allreduce(&mine, &more, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    }
    CHECK(units_tried == WHOLE_UNITS && watched.count < MAX_TRIES, "rank %d: %d units tried of %d (%d folds asked)",
          rank, units_tried, WHOLE_UNITS, watched.count);
    for (int t = 0; t < watched.count; t++)
        for (int earlier = 0; earlier < t; earlier++) {
            const fold_try *now = &watched.tries[t], *before = &watched.tries[earlier];
            int deferred = before->error == EAGAIN || before->error == EBUSY;
            CHECK(now->unit != before->unit || deferred || now->sight - before->sight >= REFOLD_SIGHTS,
                  "rank %d: unit %p tried at sight %d and again at %d (the kernel answered %d)", rank,
                  (const void *)now->unit, before->sight, now->sight, before->error);
        }
    watched.start = NULL;
}

/* A call goes on folding units due for MPIX_ZCOPY_FOLD_CALL_US after its first fold; this
 * row gives it 1 us, less than any fold the kernel performs, so the 20 units of a 40 MiB
 * buffer, all due at its second sight, are folded one or two a call over the next sends,
 * each exactly once (a deferred one once more), and the bytes arrive every time. */
static void time_budget_policy(int rank, char *big, int kernel_can_fold)
{
    enum { BIG_UNITS = 20, MAX_SENDS = 60 };
    unsigned long tried_so_far = 0, deferred = 0;
    int sends = 0, more = 1, calls_folding = 0;
    for (int round = 1; round <= MAX_SENDS && more; round++, sends++) {
        memset(big, rank == 0 ? round : 0, (size_t)BIG_UNITS * UNIT);
        zcopy_counters before = zcopy_stats_of(MPI_COMM_WORLD);
        int rc = rank == 0 ? MPIX_Send_zcopy(big, BIG_UNITS * UNIT, MPI_BYTE, 1, 3000 + round, MPI_COMM_WORLD)
                           : MPIX_Recv_zcopy(big, BIG_UNITS * UNIT, MPI_BYTE, 0, 3000 + round, MPI_COMM_WORLD,
                                             MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
        CHECK(big[0] == round && big[(size_t)BIG_UNITS * UNIT - 1] == round, "round %d: the 40 MiB message got %d, %d",
              round, big[0], big[(size_t)BIG_UNITS * UNIT - 1]);
        fold_counts f = folds_between(before, zcopy_stats_of(MPI_COMM_WORLD));
        if (round == 1)
            CHECK(tried(f) == 0, "round 1 tried %lu units before their second sight", tried(f));
        else if (tried_so_far < BIG_UNITS + deferred)
            CHECK(tried(f) >= 1 && (!kernel_can_fold || tried(f) <= 2),
                  "round %d: %lu units tried (%lu folded, %lu deferred, %lu refused), want 1 or 2 within the 1 us "
                  "a call may go on folding", round, tried(f), f.folded, f.deferred, f.refused);
        calls_folding += tried(f) > 0;
        tried_so_far += tried(f);
        deferred += f.deferred;
        int mine = tried_so_far < BIG_UNITS + deferred;
        MPI_Allreduce(&mine, &more, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    }
    CHECK(tried_so_far == BIG_UNITS + deferred, "rank %d: %lu folds tried over %d sends, want %d units once each and "
          "the %lu deferred once more", rank, tried_so_far, sends, BIG_UNITS, deferred);
    printf("zcopy_collapse: rank %d: 20 units due at once folded over %d calls\n", rank, calls_folding);
}

/* The default rule: folded once the copies have cost a fold (see the top of the file). */
static void measured_policy(int rank, MPI_Datatype vector)
{
    /* 4 MiB in 128 blocks over 8 MiB less 32 KiB: (1024 + 128) pages touched of 2040. */
    enum { PRIOR_SIGHT = 23 };
    double *first = aligned_alloc(UNIT, BUFFER_BYTES), *second = aligned_alloc(UNIT, BUFFER_BYTES);
    memset(first, 0, BUFFER_BYTES);
    memset(second, 0, BUFFER_BYTES);
    int first_sight, last_sight;
    sends_until_folded(rank, first, vector, 1000, &first_sight, &last_sight);
    CHECK(first_sight == PRIOR_SIGHT, "rank %d: a fresh process tried its first unit at sight %d, want %d", rank,
          first_sight, PRIOR_SIGHT);
    printf("zcopy_collapse: rank %d: first buffer's units tried at sights %d-%d\n", rank, first_sight, last_sight);
    sends_until_folded(rank, second, vector, 2000, &first_sight, &last_sight);
    CHECK(first_sight >= 2, "rank %d: the second buffer's units were tried at sight %d", rank, first_sight);
    printf("zcopy_collapse: rank %d: second buffer's units tried at sights %d-%d\n", rank, first_sight, last_sight);
    free(first);
    free(second);
}

/* One send of the vector from @buffer (rank 0, values of @round) into rank 1's
 * @buffer, whose every double is checked: the blocks' values, -1 between them. */
static void vector_round(int rank, double *buffer, MPI_Datatype vector, int round, int tag)
{
    size_t doubles = BUFFER_BYTES / sizeof(double);
    int rc;
    if (rank == 0) {
        for (size_t i = 0; i < doubles; i++)
            buffer[i] = value_at(round, i);
        rc = MPIX_Send_zcopy(buffer, 1, vector, 1, tag, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS, "send %d: %s", round, mpix_test_error_string(rc));
        return;
    }
    for (size_t i = 0; i < doubles; i++)
        buffer[i] = -1;
    rc = MPIX_Recv_zcopy(buffer, 1, vector, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "receive %d: %s", round, mpix_test_error_string(rc));
    size_t wrong = 0;
    for (size_t i = 0; i < doubles; i++) {
        int in_block = i * sizeof(double) % STRIDE < BLOCK;
        wrong += buffer[i] != (in_block ? value_at(round, i) : -1);
    }
    CHECK(wrong == 0, "round %d: %zu doubles wrong", round, wrong);
}

/* Polls the statistics for up to 10 s until the units tried since @start reach @want. */
static fold_counts folds_awaited(zcopy_counters start, unsigned long want)
{
    fold_counts f = folds_between(start, zcopy_stats_of(MPI_COMM_WORLD));
    for (int poll = 0; tried(f) < want && poll < 10000; poll++) {
        usleep(1000);
        f = folds_between(start, zcopy_stats_of(MPI_COMM_WORLD));
    }
    return f;
}

/* A communicator freed while the folding thread holds units it queued: the 40 MiB
 * message's 20 units come due at its second send, and MPI_Comm_free right after must
 * wait for them (the thread writes that communicator's statistics), not crash. */
static void freed_while_folding(int rank, char *big, size_t bytes)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int round = 1; round <= 2; round++) {
        memset(big, rank == 0 ? 10 + round : 0, bytes);
        int rc = rank == 0 ? MPIX_Send_zcopy(big, (int)bytes, MPI_BYTE, 1, round, comm)
                           : MPIX_Recv_zcopy(big, (int)bytes, MPI_BYTE, 0, round, comm, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "freed communicator, round %d: %s", round, mpix_test_error_string(rc));
        CHECK(big[0] == 10 + round && big[bytes - 1] == 10 + round, "freed communicator, round %d: got %d, %d", round,
              big[0], big[bytes - 1]);
    }
    MPI_Comm_free(&comm);
    CHECK(comm == MPI_COMM_NULL, "MPI_Comm_free left the handle");
}

/* The default, a folding thread: the units of the buffer due at its second sight are
 * tried by a thread that is not the caller's, each once (again only after a deferral),
 * while the data of every round arrive right. */
static void thread_policy(int rank, double *buffer, MPI_Datatype vector, int kernel_can_fold)
{
    folding.caller = (pid_t)syscall(SYS_gettid);
    folding.start = (const char *)buffer;
    zcopy_counters start = zcopy_stats_of(MPI_COMM_WORLD);
    fold_counts f = { 0, 0, 0 };
    unsigned long want = 0;
    for (int round = 1; round <= 3; round++) {
        vector_round(rank, buffer, vector, round, 100 + round);
        /* Sight 2 makes every unit due; sight 3 again those the kernel deferred. */
        want += round == 2 ? WHOLE_UNITS : round == 3 ? f.deferred : 0;
        f = folds_awaited(start, want);
        CHECK(tried(f) == want, "round %d: %lu units tried (%lu folded, %lu deferred, %lu refused), want %lu", round,
              tried(f), f.folded, f.deferred, f.refused, want);
    }
    unsigned long by_caller = atomic_load(&folding.by_caller), by_other = atomic_load(&folding.by_other);
    CHECK(by_caller == 0 && by_other == tried(f), "rank %d: %lu folds asked by the calling thread, %lu by another; "
          "want 0 and %lu", rank, by_caller, by_other, tried(f));
    CHECK(kernel_can_fold || f.refused == tried(f), "a kernel that cannot fold folded %lu units", f.folded);
    long kib = huge_kib_at(buffer);
    CHECK(kib >= (long)f.folded * (UNIT >> 10), "the buffer's mapping has %ld KiB in huge pages, want >= %lu", kib,
          f.folded * (UNIT >> 10));
    printf("zcopy_collapse: rank %d: %lu units folded by the folding thread, %lu deferred, %lu refused\n", rank,
           f.folded, f.deferred, f.refused);
    folding.start = NULL;
}

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    CHECK(ranks == 2, "run with 2 ranks, not %d", ranks);
    if (ranks != 2)
        return mpix_test_finish("zcopy_collapse");
    const char *setting = getenv("MPIX_ZCOPY_COLLAPSE");
    int collapse_on = !setting || strcmp(setting, "off") != 0;
    int kernel_can_fold = kernel_folds();

    MPI_Datatype vector;
    MPI_Type_vector(BLOCKS, BLOCK / sizeof(double), STRIDE / sizeof(double), MPI_DOUBLE, &vector);
    MPI_Type_commit(&vector);
    double *buffer = aligned_alloc(UNIT, BUFFER_BYTES);
    size_t doubles = BUFFER_BYTES / sizeof(double);
    enum { BIG_UNITS = 20, FOLDS_PER_CALL = 16 };
    int big_placed;
    char *big = big_buffer((size_t)BIG_UNITS * UNIT, &big_placed);
    printf("zcopy_collapse: rank %d: the 40 MiB buffer at %p%s\n", rank, (void *)big,
           big_placed ? ", across unit 0x20000" : " (the kernel's choice: 0x3fffa00000 was taken)");
    const char *faults_setting = getenv("MPIX_TEST_COLLAPSE_FAULTS");
    faults.on = faults_setting && strcmp(faults_setting, "1") == 0;
    faults.start[0] = (const char *)buffer;
    faults.bytes[0] = BUFFER_BYTES;
    faults.start[1] = big;
    faults.bytes[1] = (size_t)BIG_UNITS * UNIT;

    /* The first message to a peer goes through MPI while the peer learns it may attach. */
    char introduction[64 << 10];
    int rc = rank == 0 ? MPIX_Send_zcopy(introduction, sizeof introduction, MPI_BYTE, 1, 0, MPI_COMM_WORLD)
                       : MPIX_Recv_zcopy(introduction, sizeof introduction, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                                         MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "introduction: %s", mpix_test_error_string(rc));
    MPI_Barrier(MPI_COMM_WORLD);   /* the receiver has answered: the sender may attach */
    const char *time_setting = getenv("MPIX_TEST_COLLAPSE_TIME");
    if (collapse_on && time_setting && strcmp(time_setting, "1") == 0) {
        time_budget_policy(rank, big, kernel_can_fold);
        big_buffer_free(big, (size_t)BIG_UNITS * UNIT, big_placed);
        free(buffer);
        MPI_Type_free(&vector);
        return mpix_test_finish("zcopy_collapse");
    }
    const char *thread_setting = getenv("MPIX_TEST_COLLAPSE_THREAD");
    if (collapse_on && thread_setting && strcmp(thread_setting, "1") == 0) {
        thread_policy(rank, buffer, vector, kernel_can_fold);
        freed_while_folding(rank, big, (size_t)BIG_UNITS * UNIT);
        big_buffer_free(big, (size_t)BIG_UNITS * UNIT, big_placed);
        free(buffer);
        MPI_Type_free(&vector);
        return mpix_test_finish("zcopy_collapse");
    }
    if (collapse_on && !getenv("MPIX_ZCOPY_FOLD_SIGHT")) {
        measured_policy(rank, vector);
        big_buffer_free(big, (size_t)BIG_UNITS * UNIT, big_placed);
        free(buffer);
        MPI_Type_free(&vector);
        return mpix_test_finish("zcopy_collapse");
    }

    unsigned long folded_in_buffer = 0, deferred_before = 0;
    fold_counts unfolded = {0, 0, 0};
    for (int round = 1; round <= 3; round++) {
        zcopy_counters before = zcopy_stats_of(MPI_COMM_WORLD);
        vector_round(rank, buffer, vector, round, round);
        zcopy_counters after = zcopy_stats_of(MPI_COMM_WORLD);
        CHECK(after.sent_zero_copy + after.pulled_direct + after.pulled_staged >
                  before.sent_zero_copy + before.pulled_direct + before.pulled_staged,
              "round %d went through MPI, not zero-copy", round);
        fold_counts f = folds_between(before, after);
        unsigned long want_tried = !collapse_on ? 0 : round == 2 ? WHOLE_UNITS : round == 3 ? deferred_before : 0;
        check_folds("vector", round, f, want_tried, kernel_can_fold, &unfolded);
        folded_in_buffer += f.folded;
        deferred_before = f.deferred;
    }
    long kib = huge_kib_at(buffer);
    CHECK(kib >= (long)folded_in_buffer * (UNIT >> 10), "the buffer's mapping has %ld KiB in huge pages, want >= %lu",
          kib, folded_in_buffer * (UNIT >> 10));

    /* 1 MiB from the middle of a unit: no whole unit inside, nothing to count or fold. */
    zcopy_counters before = zcopy_stats_of(MPI_COMM_WORLD);
    char *middle = (char *)buffer + UNIT / 2;
    for (int round = 4; round <= 5; round++) {
        rc = rank == 0 ? MPIX_Send_zcopy(middle, 1 << 20, MPI_BYTE, 1, round, MPI_COMM_WORLD)
                       : MPIX_Recv_zcopy(middle, 1 << 20, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
    }
    zcopy_counters after = zcopy_stats_of(MPI_COMM_WORLD);
    check_folds("no whole unit", 5, folds_between(before, after), 0, kernel_can_fold, &unfolded);

    /* A buffer the program marked MADV_NOHUGEPAGE: the kernel refuses the fold, which is
     * counted, and the bytes arrive all the same. */
    double *unfoldable = aligned_alloc(UNIT, BUFFER_BYTES);
    madvise(unfoldable, BUFFER_BYTES, MADV_NOHUGEPAGE);
    before = zcopy_stats_of(MPI_COMM_WORLD);
    for (int round = 6; round <= 7; round++) {
        for (size_t i = 0; i < doubles; i++)
            unfoldable[i] = rank == 0 ? value_at(round, i) : -1;
        rc = rank == 0 ? MPIX_Send_zcopy(unfoldable, 1, vector, 1, round, MPI_COMM_WORLD)
                       : MPIX_Recv_zcopy(unfoldable, 1, vector, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
        if (rank == 1)
            CHECK(unfoldable[STRIDE / sizeof(double) + 1] == value_at(round, STRIDE / sizeof(double) + 1),
                  "round %d: the unfoldable buffer got %g", round, unfoldable[STRIDE / sizeof(double) + 1]);
    }
    after = zcopy_stats_of(MPI_COMM_WORLD);
    fold_counts nohuge = folds_between(before, after);
    unsigned long want_refused = collapse_on ? WHOLE_UNITS : 0;
    CHECK(nohuge.folded == 0 && nohuge.deferred == 0 && nohuge.refused == want_refused,
          "MADV_NOHUGEPAGE buffer: %lu units folded, %lu deferred, %lu refused; want %lu refused", nohuge.folded,
          nohuge.deferred, nohuge.refused, want_refused);
    if (collapse_on)
        CHECK(huge_kib_at(unfoldable) == 0, "the MADV_NOHUGEPAGE buffer has %ld KiB in huge pages",
              huge_kib_at(unfoldable));

    /* A 40 MiB message (20 whole units): the second send tries the 16 units one call may
     * fold, the third the other 4 and those the kernel deferred, at most 16 again. */
    deferred_before = 0;
    for (int round = 8; round <= 10; round++) {
        memset(big, rank == 0 ? round : 0, (size_t)BIG_UNITS * UNIT);
        before = zcopy_stats_of(MPI_COMM_WORLD);
        rc = rank == 0 ? MPIX_Send_zcopy(big, BIG_UNITS * UNIT, MPI_BYTE, 1, round, MPI_COMM_WORLD)
                       : MPIX_Recv_zcopy(big, BIG_UNITS * UNIT, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
        CHECK(big[0] == round && big[(size_t)BIG_UNITS * UNIT - 1] == round, "round %d: the 40 MiB message got %d, %d",
              round, big[0], big[(size_t)BIG_UNITS * UNIT - 1]);
        after = zcopy_stats_of(MPI_COMM_WORLD);
        fold_counts f = folds_between(before, after);
        unsigned long later = BIG_UNITS - FOLDS_PER_CALL + deferred_before;
        unsigned long want_tried = !collapse_on  ? 0
                                   : round == 9  ? FOLDS_PER_CALL
                                   : round == 10 ? (later < FOLDS_PER_CALL ? later : FOLDS_PER_CALL)
                                                 : 0;
        check_folds("40 MiB", round, f, want_tried, kernel_can_fold, &unfolded);
        deferred_before = f.deferred;
    }
    if (faults.on)
        CHECK(unfolded.deferred > 0 && unfolded.refused > 0,
              "faults row: %lu folds answered with errors, but %lu deferred and %lu refused counted",
              faults.folds_asked / 2, unfolded.deferred, unfolded.refused);
    else if (unfolded.deferred + unfolded.refused)
        printf("zcopy_collapse: rank %d: the kernel did not fold %lu of the units due (%lu deferred, %lu refused: "
               "no huge page free, or no MADV_COLLAPSE)\n",
               rank, unfolded.deferred + unfolded.refused, unfolded.deferred, unfolded.refused);

    /* Two 64 KiB blocks 3 GiB apart in a reserved, mostly untouched mapping: an extent of
     * more units than the sight table holds (1024) folds nothing, whatever the sights. */
    enum { FAR_BLOCK = 64 << 10 };
    const size_t far_offset = (size_t)3 << 30, far_bytes = far_offset + FAR_BLOCK;
    char *far = mmap(NULL, far_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(far != MAP_FAILED, "cannot reserve %zu bytes: %s", far_bytes, strerror(errno));
    if (far != MAP_FAILED) {
        int far_lengths[2] = { FAR_BLOCK, FAR_BLOCK };
        MPI_Aint far_displacements[2] = { 0, (MPI_Aint)far_offset };
        MPI_Datatype far_type;
        MPI_Type_create_hindexed(2, far_lengths, far_displacements, MPI_BYTE, &far_type);
        MPI_Type_commit(&far_type);
        for (int round = 11; round <= 13; round++) {
            memset(far, rank == 0 ? round : 0, FAR_BLOCK);
            memset(far + far_offset, rank == 0 ? round : 0, FAR_BLOCK);
            before = zcopy_stats_of(MPI_COMM_WORLD);
            rc = rank == 0 ? MPIX_Send_zcopy(far, 1, far_type, 1, round, MPI_COMM_WORLD)
                           : MPIX_Recv_zcopy(far, 1, far_type, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
            CHECK(far[0] == round && far[far_offset + FAR_BLOCK - 1] == round, "round %d: the far blocks got %d, %d",
                  round, far[0], far[far_offset + FAR_BLOCK - 1]);
            check_folds("3 GiB extent", round, folds_between(before, zcopy_stats_of(MPI_COMM_WORLD)), 0,
                        kernel_can_fold, &unfolded);
        }
        MPI_Type_free(&far_type);
        munmap(far, far_bytes);
    }

    /* A sparse layout: four blocks in a 64 MiB region whose extent holds 28 whole units.
     * Only the units a block touches are counted: a 64 KiB block across the boundary of
     * units 10 and 11, and a 4 KiB block in unit 10 listed last (after a block in unit 30),
     * which must not count unit 10's sight twice in one call; the blocks in units 1 and
     * 30 lie in the extent's partial head and tail units. The units are tried at the
     * second send and again at the 66th. */
    enum { SPARSE_UNITS = 32, SPARSE_TOUCHED = 2 };
    const size_t sparse_bytes = (size_t)(SPARSE_UNITS + 1) * UNIT;
    char *sparse_mapping = mmap(NULL, sparse_bytes, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(sparse_mapping != MAP_FAILED, "cannot reserve %zu bytes: %s", sparse_bytes, strerror(errno));
    if (sparse_mapping != MAP_FAILED) {
        char *sparse = (char *)(((uintptr_t)sparse_mapping + UNIT - 1) / UNIT * UNIT);
        int sparse_lengths[4] = { 64 << 10, 64 << 10, 64 << 10, 4 << 10 };
        MPI_Aint sparse_displacements[4] = { UNIT + (100 << 10), 11 * (MPI_Aint)UNIT - (32 << 10),
                                             30 * (MPI_Aint)UNIT + (8 << 10), 10 * (MPI_Aint)UNIT + (256 << 10) };
        MPI_Datatype sparse_type;
        MPI_Type_create_hindexed(4, sparse_lengths, sparse_displacements, MPI_BYTE, &sparse_type);
        MPI_Type_commit(&sparse_type);
        deferred_before = 0;
        unsigned long sparse_folded = 0;
        /* Sights 2, 66, 130...: the fold and its refold 64 sights later (docs/zcopy.md). */
        enum { FIRST = 14, REFOLD_SIGHTS = 64, LAST = FIRST + REFOLD_SIGHTS + 1 };
        for (int round = FIRST; round <= LAST; round++) {
            for (int b = 0; b < 4; b++)
                memset(sparse + sparse_displacements[b], rank == 0 ? round : 0, (size_t)sparse_lengths[b]);
            before = zcopy_stats_of(MPI_COMM_WORLD);
            rc = rank == 0 ? MPIX_Send_zcopy(sparse, 1, sparse_type, 1, round, MPI_COMM_WORLD)
                           : MPIX_Recv_zcopy(sparse, 1, sparse_type, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
            for (int b = 0; b < 4; b++) {
                const char *block = sparse + sparse_displacements[b];
                CHECK(block[0] == round && block[sparse_lengths[b] - 1] == round,
                      "round %d: sparse block %d got %d, %d", round, b, block[0], block[sparse_lengths[b] - 1]);
            }
            fold_counts f = folds_between(before, zcopy_stats_of(MPI_COMM_WORLD));
            unsigned long want_tried = !collapse_on                             ? 0
                                       : (round - FIRST) % REFOLD_SIGHTS == 1 ? SPARSE_TOUCHED
                                                                              : deferred_before;
            check_folds("sparse", round, f, want_tried, kernel_can_fold, &unfolded);
            if (round < FIRST + REFOLD_SIGHTS)   /* a refold folds the same units again */
                sparse_folded += f.folded;
            deferred_before = f.deferred;
        }
        kib = huge_kib_at(sparse);
        CHECK(kib >= (long)sparse_folded * (UNIT >> 10), "the sparse mapping has %ld KiB in huge pages, want >= %lu",
              kib, sparse_folded * (UNIT >> 10));
        MPI_Type_free(&sparse_type);
        munmap(sparse_mapping, sparse_bytes);
    }

    big_buffer_free(big, (size_t)BIG_UNITS * UNIT, big_placed);
    free(unfoldable);
    free(buffer);
    MPI_Type_free(&vector);
    return mpix_test_finish("zcopy_collapse");
}
