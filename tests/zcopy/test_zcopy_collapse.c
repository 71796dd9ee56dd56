/* Reused message buffers folded into huge pages (collapse.c). Rank 0 sends the same
 * 2 MiB-aligned buffer three times as a vector of 32 KiB blocks whose extent holds three
 * whole 2 MiB units; rank 1 receives into one buffer of its own. The first send only
 * counts the units; the second folds them on both sides (MADV_COLLAPSE), which the test
 * sees in the path statistics and in /proc/self/smaps; the third folds nothing new. A
 * message whose extent holds no whole unit folds nothing, and a buffer marked
 * MADV_NOHUGEPAGE is refused by the kernel (counted) and left alone, and a 40 MiB message
 * is folded over two calls (at most 16 units a call). With MPIX_ZCOPY_COLLAPSE=off
 * (the second meson row) nothing is folded or tried. Both rows force zero-copy
 * (MPIX_ZCOPY_METHOD=direct) so that path learning cannot send through MPI instead.
 * On a kernel without MADV_COLLAPSE (before Linux 6.1) the second send's folds must be
 * counted as refused, and the bytes must arrive all the same. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <errno.h>
#include <mpix/mpix.h>
#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

enum { UNIT = 2 << 20, BUFFER_BYTES = 4 * UNIT, BLOCK = 32 << 10, STRIDE = 64 << 10, BLOCKS = 128 };
enum { WHOLE_UNITS = 3 };   /* the extent is 8 MiB less 32 KiB from an aligned start */

/* Whether this kernel folds anonymous memory on request. */
static int kernel_folds(void)
{
    char *probe = aligned_alloc(UNIT, UNIT);
    memset(probe, 1, UNIT);
    int folds = madvise(probe, UNIT, MADV_COLLAPSE) == 0;
    free(probe);
    return folds;
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

int main(int argc, char **argv)
{
    int rank, ranks;
    mpix_test_start(&argc, &argv, &rank, &ranks);
    CHECK(ranks == 2, "run with 2 ranks, not %d", ranks);
    if (ranks != 2)
        return mpix_test_finish("zcopy_collapse");
    const char *setting = getenv("MPIX_ZCOPY_COLLAPSE");
    int collapse_on = !setting || strcmp(setting, "off") != 0;
    int folds = kernel_folds();

    MPI_Datatype vector;
    MPI_Type_vector(BLOCKS, BLOCK / sizeof(double), STRIDE / sizeof(double), MPI_DOUBLE, &vector);
    MPI_Type_commit(&vector);
    double *buffer = aligned_alloc(UNIT, BUFFER_BYTES);
    size_t doubles = BUFFER_BYTES / sizeof(double);

    /* The first message to a peer goes through MPI while the peer learns it may attach. */
    char introduction[64 << 10];
    int rc = rank == 0 ? MPIX_Send_zcopy(introduction, sizeof introduction, MPI_BYTE, 1, 0, MPI_COMM_WORLD)
                       : MPIX_Recv_zcopy(introduction, sizeof introduction, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                                         MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "introduction: %s", mpix_test_error_string(rc));
    MPI_Barrier(MPI_COMM_WORLD);   /* the receiver has answered: the sender may attach */

    for (int round = 1; round <= 3; round++) {
        mpix_zcopy_stats before = zcopy_stats_of(MPI_COMM_WORLD);
        if (rank == 0) {
            for (size_t i = 0; i < doubles; i++)
                buffer[i] = value_at(round, i);
            rc = MPIX_Send_zcopy(buffer, 1, vector, 1, round, MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS, "send %d: %s", round, mpix_test_error_string(rc));
        } else {
            for (size_t i = 0; i < doubles; i++)
                buffer[i] = -1;
            rc = MPIX_Recv_zcopy(buffer, 1, vector, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS, "receive %d: %s", round, mpix_test_error_string(rc));
            size_t wrong = 0;
            for (size_t i = 0; i < doubles; i++) {
                int in_block = i * sizeof(double) % STRIDE < BLOCK;
                wrong += buffer[i] != (in_block ? value_at(round, i) : -1);
            }
            CHECK(wrong == 0, "round %d: %zu doubles wrong", round, wrong);
        }
        mpix_zcopy_stats after = zcopy_stats_of(MPI_COMM_WORLD);
        CHECK(after.sent[MPIX_ZCOPY_RTS] + after.pulled_direct + after.pulled_staged >
                  before.sent[MPIX_ZCOPY_RTS] + before.pulled_direct + before.pulled_staged,
              "round %d went through MPI, not zero-copy", round);
        unsigned long folded = after.collapsed_units - before.collapsed_units;
        unsigned long refused = after.collapse_failed - before.collapse_failed;
        unsigned long want_folded = collapse_on && folds && round == 2 ? WHOLE_UNITS : 0;
        unsigned long want_refused = collapse_on && !folds && round == 2 ? 1 : 0;
        CHECK(folded == want_folded && refused == want_refused,
              "round %d (collapse %s, kernel %s): %lu units folded, %lu folds refused; want %lu and %lu", round,
              collapse_on ? "on" : "off", folds ? "folds" : "cannot fold", folded, refused, want_folded,
              want_refused);
    }
    if (collapse_on && folds) {
        long kib = huge_kib_at(buffer);
        CHECK(kib >= WHOLE_UNITS * (UNIT >> 10), "the buffer's mapping has %ld KiB in huge pages, want >= %d", kib,
              WHOLE_UNITS * (UNIT >> 10));
    }

    /* 1 MiB from the middle of a unit: no whole unit inside, nothing to count or fold. */
    mpix_zcopy_stats before = zcopy_stats_of(MPI_COMM_WORLD);
    char *middle = (char *)buffer + UNIT / 2;
    for (int round = 4; round <= 5; round++) {
        rc = rank == 0 ? MPIX_Send_zcopy(middle, 1 << 20, MPI_BYTE, 1, round, MPI_COMM_WORLD)
                       : MPIX_Recv_zcopy(middle, 1 << 20, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
    }
    mpix_zcopy_stats after = zcopy_stats_of(MPI_COMM_WORLD);
    CHECK(after.collapsed_units == before.collapsed_units && after.collapse_failed == before.collapse_failed,
          "a message without a whole 2 MiB unit folded %lu units (%lu refused)",
          after.collapsed_units - before.collapsed_units, after.collapse_failed - before.collapse_failed);

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
    CHECK(after.collapsed_units == before.collapsed_units &&
              after.collapse_failed - before.collapse_failed == (collapse_on ? 1u : 0u),
          "MADV_NOHUGEPAGE buffer: %lu units folded, %lu folds refused; want 0 and %d",
          after.collapsed_units - before.collapsed_units, after.collapse_failed - before.collapse_failed,
          collapse_on ? 1 : 0);
    if (collapse_on)
        CHECK(huge_kib_at(unfoldable) == 0, "the MADV_NOHUGEPAGE buffer has %ld KiB in huge pages",
              huge_kib_at(unfoldable));

    /* A 40 MiB message (20 whole units): the second send folds the 16 units one call may
     * fold, the third the other 4. */
    enum { BIG_UNITS = 20, FOLDS_PER_CALL = 16 };
    char *big = aligned_alloc(UNIT, (size_t)BIG_UNITS * UNIT);
    for (int round = 8; round <= 10; round++) {
        memset(big, rank == 0 ? round : 0, (size_t)BIG_UNITS * UNIT);
        before = zcopy_stats_of(MPI_COMM_WORLD);
        rc = rank == 0 ? MPIX_Send_zcopy(big, BIG_UNITS * UNIT, MPI_BYTE, 1, round, MPI_COMM_WORLD)
                       : MPIX_Recv_zcopy(big, BIG_UNITS * UNIT, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "round %d: %s", round, mpix_test_error_string(rc));
        CHECK(big[0] == round && big[(size_t)BIG_UNITS * UNIT - 1] == round, "round %d: the 40 MiB message got %d, %d",
              round, big[0], big[(size_t)BIG_UNITS * UNIT - 1]);
        after = zcopy_stats_of(MPI_COMM_WORLD);
        unsigned long folded = after.collapsed_units - before.collapsed_units;
        unsigned long refused = after.collapse_failed - before.collapse_failed;
        unsigned long want_folded = !collapse_on || !folds ? 0
                                    : round == 9       ? FOLDS_PER_CALL
                                    : round == 10      ? BIG_UNITS - FOLDS_PER_CALL
                                                       : 0;
        unsigned long want_refused = collapse_on && !folds && round > 8 ? 1 : 0;
        CHECK(folded == want_folded && refused == want_refused,
              "40 MiB round %d: %lu units folded, %lu folds refused; want %lu and %lu", round, folded, refused,
              want_folded, want_refused);
    }

    free(big);
    free(unfoldable);
    free(buffer);
    MPI_Type_free(&vector);
    return mpix_test_finish("zcopy_collapse");
}
