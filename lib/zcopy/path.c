/* SPDX-License-Identifier: BSD-3-Clause */
/* Which way a large message to an attachable peer goes: zero-copy or MPI with the
 * datatype. Forced by MPIX_ZCOPY_METHOD; MPI for a layout the cost model finds too
 * fragmented for kernel copies; otherwise learnt per memoized layout from the sender's
 * own sends, because MPI's datatype engine varies by MPI and machine more than a model
 * can follow.
 *
 * Learning goes by bursts of BURST sends one way, the first untimed: the first send after
 * a change of way runs cold (on the development VM a zero-copy send right after MPI
 * sends took 40-55 us where back-to-back ones took 21 us, NAS MG y-face), so a sample
 * taken there says little about the way; the layout's first duel is not timed at all
 * (its first sends each way run up to 10x slower than later ones). Duels follow one
 * another until each way has SAMPLES timed sends; a way's figure is the median of its
 * last SAMPLES, and the faster one is taken. Then every EXPLORE sends open with a duel: a burst the other way, a burst the
 * taken way, and only duels are timed, so both figures come from the same minutes (this
 * VM's speed drifts by 1.5x over minutes, and a figure of the taken way renewed at every
 * send against one of the other way from long ago flips the choice on a drift). An
 * earlier design took single samples in between sends of the other way and settled on
 * MPI for layouts where zero-copy was 1.4-1.6x faster. */
#include "zcopy.h"

enum { EXPLORE = 64, BURST = 4 };

/* MPI's datatype engine must beat both kernel copies by more than the model's error, a
 * quarter, since on a tie the single copy leaves the sender's core and cache free. */
int mpix_zcopy_too_fragmented(const mpix_zcopy_comm *zc, mpix_layout *layout)
{
    const mpix_zcopy_costs *costs = mpix_zcopy_costs_of(layout, zc->coalesce_bytes);
    return 1.25 * costs->mpi < (costs->direct < costs->staged ? costs->direct : costs->staged);
}

/* The median of a full ring (a way is compared only once it has SAMPLES timed sends). */
static double median_of(const mpix_path_samples *samples)
{
    double sorted[MPIX_PATH_SAMPLES];
    for (int i = 0; i < MPIX_PATH_SAMPLES; i++) {
        int at = i;
        while (at > 0 && sorted[at - 1] > samples->seconds[i]) {
            sorted[at] = sorted[at - 1];
            at--;
        }
        sorted[at] = samples->seconds[i];
    }
    return sorted[MPIX_PATH_SAMPLES / 2];
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
        int learning = zcopy->count < MPIX_PATH_SAMPLES || mpi->count < MPIX_PATH_SAMPLES;
        layout->period = learning ? 2 * BURST : EXPLORE; /* learning: duels back to back */
        if (learning)
            layout->taken = zcopy->count <= mpi->count ? MPIX_ZCOPY_MPI : MPIX_ZCOPY_RTS; /* duel the other first */
        else
            layout->taken = median_of(mpi) < median_of(zcopy) ? MPIX_ZCOPY_MPI : MPIX_ZCOPY_RTS;
    }
    layout->phase = phase + 1 == layout->period ? 0 : phase + 1;
    int other = layout->taken == MPIX_ZCOPY_MPI ? MPIX_ZCOPY_RTS : MPIX_ZCOPY_MPI;
    *timed = phase < 2 * BURST && phase % BURST != 0 && layout->warmed_up;
    if (phase == 2 * BURST - 1)
        layout->warmed_up = 1; /* the layout's first duel warms it up, untimed */
    if (phase < BURST)
        return other;
    if (layout->taken == MPIX_ZCOPY_MPI && layout->period == EXPLORE) /* decided, not learning */
        zc->stats.sent_slower++;
    return layout->taken;
}

void mpix_zcopy_path_sample(mpix_layout *layout, int kind, double seconds)
{
    mpix_path_samples *samples = kind == MPIX_ZCOPY_RTS ? &layout->zcopy_samples : &layout->mpi_samples;
    samples->seconds[samples->count++ % MPIX_PATH_SAMPLES] = seconds;
}
