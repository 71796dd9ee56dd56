/* Which way a large message to an attachable peer goes: zero-copy or MPI with the
 * datatype. Forced by MPIX_ZCOPY_METHOD; MPI for a layout the cost model finds too
 * fragmented for kernel copies; otherwise learnt per memoized layout from the sender's
 * own sends, because MPI's datatype engine varies by MPI and machine more than a model
 * can follow.
 *
 * Learning: the first send each way is not timed (cold caches, layouts not yet read, a
 * peer not yet in its receive); then the ways alternate until each has SAMPLES timed
 * sends, so both see the same conditions. A way's figure is the median of its last
 * SAMPLES sends; the faster way is taken, and one send in EXPLORE takes the other for a
 * fresh sample. On the development VM the first dozens of messages of a layout run up to
 * 10x slower than later ones and both ways' times jump between runs, so figures that
 * keep being renewed, robust to single outliers either way, decide better than a trial
 * decided once (an earlier design settled on the slower way for most layouts). */
#include "zcopy.h"

enum { EXPLORE = 32 };

/* Whether MPI's datatype engine clearly beats both kernel copies for this layout: by
 * more than the model's error, a quarter, since on a tie the single copy leaves the
 * sender's core and cache free. */
static int too_fragmented(const mpix_zcopy_comm *zc, mpix_layout *layout)
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
    if (too_fragmented(zc, layout)) {
        zc->stats.sent_fragmented++;
        return MPIX_ZCOPY_MPI;
    }
    if (!view->id)
        return MPIX_ZCOPY_RTS;   /* a layout made for this call only: nothing to learn on */
    *timed = 1;
    mpix_path_samples *zcopy = &layout->zcopy_samples, *mpi = &layout->mpi_samples;
    if (zcopy->count <= MPIX_PATH_SAMPLES || mpi->count <= MPIX_PATH_SAMPLES)
        return zcopy->count <= mpi->count ? MPIX_ZCOPY_RTS : MPIX_ZCOPY_MPI;
    int faster = median_of(mpi) < median_of(zcopy) ? MPIX_ZCOPY_MPI : MPIX_ZCOPY_RTS;
    if (++layout->decided_sends % EXPLORE == 0)
        return faster == MPIX_ZCOPY_MPI ? MPIX_ZCOPY_RTS : MPIX_ZCOPY_MPI;
    if (faster == MPIX_ZCOPY_MPI) {
        zc->stats.sent_slower++;
        *timed = 0; /* a zero-copy send is timed at no cost; an MPI one needs the receiver's word */
    }
    return faster;
}

void mpix_zcopy_path_sample(mpix_layout *layout, int kind, double seconds)
{
    mpix_path_samples *samples = kind == MPIX_ZCOPY_RTS ? &layout->zcopy_samples : &layout->mpi_samples;
    if (samples->count > 0) /* the first is untimed */
        samples->seconds[(samples->count - 1) % MPIX_PATH_SAMPLES] = seconds;
    samples->count++;
}
