/* SPDX-License-Identifier: BSD-3-Clause */
/* Which way a large message to an attachable peer goes: zero-copy or MPI with the
 * datatype. Forced by MPIX_ZCOPY_METHOD; MPI for a layout the cost model finds too
 * fragmented for kernel copies; otherwise learnt per memoized layout from the sender's
 * own sends, because MPI's datatype engine varies by MPI and machine more than a model
 * can follow.
 *
 * Learning goes by duels: a burst of BURST sends one way, then one the other, the first
 * send of each burst untimed. The first send after a change of way runs cold (on the
 * development VM a zero-copy send right after MPI sends took 40-55 us where back-to-back
 * ones took 21 us, NAS MG y-face), and it also absorbs most of a layout's first-send
 * costs (NAS MG y-face by zero-copy: 231 us, then 129, 72, 69, where later sends take
 * 66), so the first duel is timed like the others. Duels follow one another until each
 * way has FIRST_SAMPLES timed sends and one is CLEAR times faster, or else until each
 * has SAMPLES; a way's figure is the median of its last SAMPLES, and the faster one is
 * taken for a period of sends, which opens with a duel (but the first: its figures are
 * fresh). Only duels are timed, so both figures come from the same minutes: this VM's
 * speed drifts by 1.5x over minutes, and a figure of the taken way renewed at every send
 * against one of the other way from long ago flips the choice on a drift (single samples
 * taken between sends of the other way settled on MPI where zero-copy was 1.4-1.6x
 * faster). The period keeps what the other way's burst costs to 1/EXPLORE_SHARE of the
 * time: where the other way is 4.5x slower (NAS MG y-face, MPI 11-12 us a round trip
 * against zero-copy's 50-66 us on the development VM) a period of 64 sends would lose a
 * fifth of the time to exploring; where the ways are close it explores every PERIOD_MIN
 * sends, to follow a drift. */
#include "zcopy.h"

enum { BURST = 4, FIRST_SAMPLES = 3, EXPLORE_SHARE = 64, PERIOD_MIN = 64, PERIOD_MAX = 4096 };
static const double CLEAR = 1.5;

/* MPI's datatype engine must beat both kernel copies by more than the model's error, a
 * quarter, since on a tie the single copy leaves the sender's core and cache free. */
int mpix_zcopy_too_fragmented(const mpix_zcopy_comm *zc, mpix_layout *layout)
{
    const mpix_zcopy_costs *costs = mpix_zcopy_costs_of(layout, zc->coalesce_bytes);
    return 1.25 * costs->mpi < (costs->direct < costs->staged ? costs->direct : costs->staged);
}

/* The median of the ring's samples (the upper one of an even count). */
static double median_of(const mpix_path_samples *samples)
{
    double sorted[MPIX_PATH_SAMPLES];
    int count = samples->count < MPIX_PATH_SAMPLES ? samples->count : MPIX_PATH_SAMPLES;
    for (int i = 0; i < count; i++) {
        int at = i;
        while (at > 0 && sorted[at - 1] > samples->seconds[i]) {
            sorted[at] = sorted[at - 1];
            at--;
        }
        sorted[at] = samples->seconds[i];
    }
    return sorted[count / 2];
}

int mpix_zcopy_choose_path(mpix_zcopy_comm *zc, const mpix_layout_view *view, int *timed)
{
    mpix_layout *layout = view->layout;
    *timed = 0;
    if (zc->method != MPIX_ZCOPY_METHOD_AUTO)
        return MPIX_ZCOPY_RTS;
    if (mpix_zcopy_too_fragmented(zc, layout)) {
        zc->stats.sent_fragmented++;
        return MPIX_ZCOPY_MPI;
    }
    if (!view->id)
        return MPIX_ZCOPY_RTS;   /* a layout made for this call only: nothing to learn on */
    mpix_path_samples *zcopy = &layout->zcopy_samples, *mpi = &layout->mpi_samples;
    int phase = layout->phase;
    if (phase == 0) {
        int was_learning = layout->period == 2 * BURST;
        int known = zcopy->count >= FIRST_SAMPLES && mpi->count >= FIRST_SAMPLES;
        double zcopy_time = known ? median_of(zcopy) : 0, mpi_time = known ? median_of(mpi) : 0;
        double fast = zcopy_time < mpi_time ? zcopy_time : mpi_time, slow = zcopy_time + mpi_time - fast;
        int full = zcopy->count >= MPIX_PATH_SAMPLES && mpi->count >= MPIX_PATH_SAMPLES;
        int learning = !known || (slow < CLEAR * fast && !full);
        if (learning) {
            layout->period = 2 * BURST;   /* duels back to back, the way with fewer samples first */
            layout->taken = zcopy->count <= mpi->count ? MPIX_ZCOPY_MPI : MPIX_ZCOPY_RTS; /* duel the other first */
        } else {
            layout->taken = mpi_time < zcopy_time ? MPIX_ZCOPY_MPI : MPIX_ZCOPY_RTS;
            /* The other way's burst costs BURST * (slow / fast - 1) sends of the taken
             * way: a period of EXPLORE_SHARE times that keeps it to its share. */
            double period = fast > 0 ? 2 * BURST + BURST * (slow / fast - 1) * EXPLORE_SHARE : PERIOD_MIN;
            layout->period = period < PERIOD_MIN ? PERIOD_MIN : period > PERIOD_MAX ? PERIOD_MAX : (int)period;
            if (was_learning) {   /* both figures are fresh: the first period has no duel */
                phase = 2 * BURST;
                layout->period += 2 * BURST;
            }
        }
    }
    layout->phase = phase + 1 == layout->period ? 0 : phase + 1;
    int other = layout->taken == MPIX_ZCOPY_MPI ? MPIX_ZCOPY_RTS : MPIX_ZCOPY_MPI;
    *timed = phase < 2 * BURST && phase % BURST != 0;
    if (phase < BURST)
        return other;
    if (layout->taken == MPIX_ZCOPY_MPI && layout->period > 2 * BURST) /* decided, not learning */
        zc->stats.sent_slower++;
    return layout->taken;
}

void mpix_zcopy_path_sample(mpix_layout *layout, int kind, double seconds)
{
    mpix_path_samples *samples = kind == MPIX_ZCOPY_RTS ? &layout->zcopy_samples : &layout->mpi_samples;
    samples->seconds[samples->count++ % MPIX_PATH_SAMPLES] = seconds;
}
