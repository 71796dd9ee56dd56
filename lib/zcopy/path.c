/* SPDX-License-Identifier: BSD-3-Clause */
/* Which way a large message to an attachable peer goes: zero-copy, or MPI with the
 * datatype, packed, or packed and unpacked (pack.c). Forced by MPIX_ZCOPY_METHOD; one of
 * the MPI ways for a layout the cost model finds too fragmented for kernel copies;
 * otherwise learnt per shape of datatype (shape.c) from the sender's own sends, because
 * MPI's datatype engine varies by MPI and machine more than a model can follow.
 *
 * Learning goes by duels: a burst of BURST sends each way in turn, the first send of
 * each burst untimed. The first send after a change of way runs cold (on the
 * development VM a zero-copy send right after MPI sends took 40-55 us where back-to-back
 * ones took 21 us, NAS MG y-face), and it also absorbs most of a layout's first-send
 * costs (NAS MG y-face by zero-copy: 231 us, then 129, 72, 69, where later sends take
 * 66), so the first duel is timed like the others. Duels follow one another until each
 * way has FIRST_SAMPLES timed sends and one is CLEAR times faster, or else until each
 * has SAMPLES; a way's figure is the median of its last SAMPLES, and the fastest one is
 * taken for a period of sends, which opens with a duel (but the first: its figures are
 * fresh). Only duels are timed, so all figures come from the same minutes: this VM's
 * speed drifts by 1.5x over minutes, and a figure of the taken way renewed at every send
 * against one of the other way from long ago flips the choice on a drift (single samples
 * taken between sends of the other way settled on MPI where zero-copy was 1.4-1.6x
 * faster). The period keeps what the other ways' bursts cost to 1/EXPLORE_SHARE of the
 * time: where the other way is 4.5x slower (NAS MG y-face, MPI 11-12 us a round trip
 * against zero-copy's 50-66 us on the development VM) a period of 64 sends would lose a
 * fifth of the time to exploring; where the ways are close it explores every PERIOD_MIN
 * sends, to follow a drift. Where what a way costs depends on the peer's own learner
 * (a program's own sends, whose receiver unpacks only once its own sends of the shape
 * go packed, interposed.c), a period is also at most twice the last one,
 * and PERIOD_MIN after learning or a change of way, since the first figures are taken
 * before the peers settled: under libmpix-pmpi.so with MPICH, NAS MG's x-face exchanged
 * by MPI_Sendrecv, first decisions took the datatype over packed sends timed before the
 * peer unpacked, for periods of 269-335 sends, and 4 of 8 runs stayed at 534-666 us an
 * exchange where both ranks packing take 110-120; with periods growing from PERIOD_MIN,
 * 8 of 8 got there. Elsewhere a duel against a way 2-5 times slower every PERIOD_MIN
 * sends cost the bench's large-block ping-pongs 5-20% (a vector of 16 KiB blocks:
 * Open MPI 1.86-1.95x of MPI against 1.98-2.23x, MPICH 3.24-3.55x against 3.45-4.37x). */
#include "zcopy.h"

enum { BURST = 4, FIRST_SAMPLES = 3, EXPLORE_SHARE = 64, PERIOD_MIN = 64, PERIOD_MAX = 4096 };
static const double CLEAR = 1.5;

/* MPI's datatype engine must beat both kernel copies by more than the model's error, a
 * quarter, since on a tie the single copy leaves the sender's core and cache free. */
/* The cheaper kernel copy of @layout, in nanoseconds. */
static double kernel_ns(const mpix_zcopy_comm *zc, mpix_layout *layout)
{
    const mpix_zcopy_costs *costs = mpix_zcopy_costs_of(layout, zc->settings.coalesce_bytes);
    return costs->direct < costs->staged ? costs->direct : costs->staged;
}

int mpix_zcopy_too_fragmented(const mpix_zcopy_comm *zc, mpix_layout *layout)
{
    return 1.25 * mpix_zcopy_costs_of(layout, zc->settings.coalesce_bytes)->mpi < kernel_ns(zc, layout);
}

double mpix_zcopy_kernel_ns_per_byte(const mpix_zcopy_comm *zc, mpix_layout *layout)
{
    return layout->bytes > 0 ? kernel_ns(zc, layout) / layout->bytes : 0;
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

static double latest_of(const mpix_path_samples *samples)
{
    return samples->seconds[(samples->count - 1) % MPIX_PATH_SAMPLES];
}

/* The way of @ways with the fastest median of FIRST_SAMPLES timed sends or more, its
 * median in *@time; the datatype, and 0, when none has them. */
static int fastest_known(const mpix_path_learner *learner, unsigned ways, double *time)
{
    int fastest = MPIX_ZCOPY_WAY_DATATYPE;
    *time = 0;
    for (int way = 0; way < MPIX_ZCOPY_WAYS; way++) {
        const mpix_path_samples *samples = &learner->samples[way];
        if (!mpix_zcopy_has_way(ways, way) || samples->count < FIRST_SAMPLES)
            continue;
        double median = median_of(samples);
        if (*time == 0 || median < *time) {
            *time = median;
            fastest = way;
        }
    }
    return fastest;
}

/* Whether @way's last timed send took CLEAR times the reference of the others: a way
 * that slow leaves the duel after one timed send, which halves what a duel costs where
 * packing loses (on Open MPI the NAS MG x-face took 153-177 us a send packed, 90 with
 * the datatype). */
static int clearly_slower(const mpix_path_learner *learner, unsigned ways, int way)
{
    const mpix_path_samples *samples = &learner->samples[way];
    double reference;
    (void)fastest_known(learner, ways & ~(1u << way), &reference);   /* the others' best */
    return samples->count > 0 && reference > 0 && latest_of(samples) > CLEAR * reference;
}

/* A duel's order: MPI's datatype way, which sends take when no other is known to be
 * faster, goes last, so that the first sends of a layout (the slowest: on Open MPI the
 * NAS MG x-face's first sends took 558, 337, 274 and 248 us with the datatype, later
 * ones 90) are charged to the others, zero-copy first (its first sends also wait for
 * the receiver to read the sender's layout); the way decided on last. But a new
 * layout whose kernel copy the cost model prices to lose (opens_with_datatype, shape.c)
 * opens with the datatype: a zero-copy burst first gave a program's first iteration
 * its four slowest sends (NAS MG's y-face of 1 KiB rows under libmpix-pmpi.so: 95-159 us
 * each against 23-31 by the datatype, on the 2-core test VM), where after datatype
 * samples zero-copy's first timed send, CLEAR times slower, ends its burst at two. */
static const int duel_order[MPIX_ZCOPY_WAYS] = { MPIX_ZCOPY_WAY_ZERO_COPY, MPIX_ZCOPY_WAY_PACKED,
                                                 MPIX_ZCOPY_WAY_UNPACKED, MPIX_ZCOPY_WAY_DATATYPE };

/* A new cycle: a duel of every way in @ways while their figures are unknown or close,
 * else the fastest way's period, opened by a duel. A way is known by FIRST_SAMPLES timed
 * sends, or by one CLEAR times slower than a known way. */
static void plan_cycle(mpix_path_learner *learner, unsigned ways, int grows_periods)
{
    double time[MPIX_ZCOPY_WAYS] = { 0 };
    int known = 1, fastest = -1, n = 0;
    for (int way = 0; way < MPIX_ZCOPY_WAYS; way++) {
        if (!mpix_zcopy_has_way(ways, way))
            continue;
        const mpix_path_samples *samples = &learner->samples[way];
        int reliable = samples->count >= FIRST_SAMPLES, slow = !reliable && clearly_slower(learner, ways, way);
        n++;
        known = known && (reliable || slow);
        time[way] = reliable ? median_of(samples) : samples->count > 0 ? latest_of(samples) : 0;
        if (time[way] > 0 && (fastest < 0 || time[way] < time[fastest]))
            fastest = way;
    }
    double second = 0;
    int full = 1;   /* every way close to the fastest has SAMPLES */
    for (int way = 0; way < MPIX_ZCOPY_WAYS && fastest >= 0; way++) {
        if (!mpix_zcopy_has_way(ways, way) || way == fastest)
            continue;
        if (second == 0 || time[way] < second)
            second = time[way];
        if (time[way] < CLEAR * time[fastest] && learner->samples[way].count < MPIX_PATH_SAMPLES)
            full = 0;
    }
    int was_learning = learner->learning, previous_taken = learner->taken;
    learner->learning = !known || (second < CLEAR * time[fastest] && !full);
    learner->ways = ways;
    /* While learning, the way a send that cannot take the planned one falls back to. */
    learner->taken = !learner->learning                       ? fastest
                     : mpix_zcopy_has_way(ways, MPIX_ZCOPY_WAY_DATATYPE) ? MPIX_ZCOPY_WAY_DATATYPE
                                                              : __builtin_ctz(ways);
    learner->duel_ways = 0;
    learner->deferred = 0;
    for (int i = 0; i < MPIX_ZCOPY_WAYS; i++)
        if (mpix_zcopy_has_way(ways, duel_order[i]) && duel_order[i] != learner->taken)
            learner->duel[learner->duel_ways++] = duel_order[i];
    learner->duel[learner->duel_ways++] = learner->taken;
    if (learner->opens_with_datatype && learner->taken == MPIX_ZCOPY_WAY_DATATYPE) {
        for (int i = learner->duel_ways - 1; i > 0; i--)
            learner->duel[i] = learner->duel[i - 1];
        learner->duel[0] = MPIX_ZCOPY_WAY_DATATYPE;
    }
    learner->opens_with_datatype = 0;
    for (int way = 0; way < MPIX_ZCOPY_WAYS; way++)
        learner->duel_start[way] = learner->samples[way].count;
    learner->phase = 0;
    learner->period = n * BURST;
    if (learner->learning)
        return;
    /* The other ways' bursts cost BURST * (time / fastest - 1) sends of the taken way
     * each: a period of EXPLORE_SHARE times that keeps them to their share. */
    double period = n * BURST;
    for (int way = 0; way < MPIX_ZCOPY_WAYS; way++)
        if (mpix_zcopy_has_way(ways, way) && way != fastest)
            period += BURST * (time[way] / time[fastest] - 1) * EXPLORE_SHARE;
    learner->period = period < PERIOD_MIN ? PERIOD_MIN : period > PERIOD_MAX ? PERIOD_MAX : (int)period;
    int longest = was_learning || previous_taken != fastest || learner->decided_period == 0
                      ? PERIOD_MIN
                      : 2 * learner->decided_period;
    if (grows_periods && learner->period > longest)
        learner->period = longest;
    learner->decided_period = learner->period;
    if (was_learning) {   /* every figure is fresh: the first period has no duel */
        learner->phase = n * BURST;
        learner->period += n * BURST;
    }
}

int mpix_zcopy_learner_choose(mpix_path_learner *learner, unsigned ways, int grows_periods, int *timed,
                              int *decided)
{
    *timed = 0;
    *decided = 0;
    if (!(ways & (ways - 1)))   /* one way (or none: the datatype) */
        return ways ? __builtin_ctz(ways) : MPIX_ZCOPY_WAY_DATATYPE;
    if (learner->phase == 0)
        plan_cycle(learner, ways, grows_periods);
    int duel_sends = learner->duel_ways * BURST;
    /* A way CLEAR times slower at its first timed send of this duel leaves it. */
    while (learner->phase < duel_sends && learner->phase % BURST >= 2) {
        int way = learner->duel[learner->phase / BURST];
        if (learner->samples[way].count <= learner->duel_start[way] || !clearly_slower(learner, learner->ways, way))
            break;
        learner->phase = (learner->phase / BURST + 1) * BURST;
    }
    if (learner->phase >= learner->period) {   /* a duel alone, ended early */
        learner->phase = 0;
        plan_cycle(learner, ways, grows_periods);
    }
    int phase = learner->phase;
    learner->phase = phase + 1 >= learner->period ? 0 : phase + 1;
    int way = phase < duel_sends ? learner->duel[phase / BURST] : learner->taken;
    double time;
    if (!mpix_zcopy_has_way(ways, way))   /* planned for ways this send cannot take: the best it can */
        return mpix_zcopy_has_way(ways, learner->taken) ? learner->taken : fastest_known(learner, ways, &time);
    *timed = phase < duel_sends && phase % BURST != 0;
    *decided = phase >= duel_sends;
    return way;
}

double mpix_zcopy_learner_fastest(const mpix_path_learner *learner, unsigned ways)
{
    double time;
    (void)fastest_known(learner, ways, &time);
    return time;
}

int mpix_zcopy_learner_lost(const mpix_path_learner *learner, int way)
{
    const mpix_path_samples *taken = &learner->samples[learner->taken], *samples = &learner->samples[way];
    if (learner->learning || way == learner->taken || taken->count < FIRST_SAMPLES || samples->count == 0)
        return 0;
    double time = samples->count >= FIRST_SAMPLES ? median_of(samples) : latest_of(samples);
    return time > CLEAR * median_of(taken);
}

void mpix_zcopy_learner_defer(mpix_path_learner *learner, int way, int sends)
{
    /* A cycle without a duel, past its phase 0 so that the next send does not plan. */
    *learner = (mpix_path_learner){ .taken = way, .phase = 1, .period = sends + 1, .deferred = 1 };
}

void mpix_zcopy_learner_sample(mpix_path_learner *learner, int way, double seconds)
{
    mpix_path_samples *samples = &learner->samples[way];
    samples->seconds[samples->count++ % MPIX_PATH_SAMPLES] = seconds;
}

int mpix_zcopy_forced_way(const mpix_zcopy_comm *zc, unsigned ways)
{
    int way;
    switch (zc->settings.method) {
    case MPIX_ZCOPY_METHOD_AUTO:
        return -1;
    case MPIX_ZCOPY_METHOD_DIRECT:
    case MPIX_ZCOPY_METHOD_STAGED:
    case MPIX_ZCOPY_METHOD_PIPED:
        way = MPIX_ZCOPY_WAY_ZERO_COPY;
        break;
    case MPIX_ZCOPY_METHOD_PACKED:
        way = MPIX_ZCOPY_WAY_PACKED;
        break;
    case MPIX_ZCOPY_METHOD_UNPACKED:
        way = MPIX_ZCOPY_WAY_UNPACKED;
        break;
    default:
        way = MPIX_ZCOPY_WAY_DATATYPE;
    }
    return mpix_zcopy_has_way(ways, way) ? way : MPIX_ZCOPY_WAY_DATATYPE;
}

int mpix_zcopy_choose_path(mpix_zcopy_comm *zc, const mpix_layout_view *view, unsigned ways, int *timed)
{
    *timed = 0;
    int forced = mpix_zcopy_forced_way(zc, ways);
    if (forced >= 0)
        return forced;
    if (mpix_zcopy_too_fragmented(zc, view->layout)) {
        zc->stats.sent_fragmented++;
        return MPIX_ZCOPY_WAY_DATATYPE;
    }
    return MPIX_ZCOPY_WAY_ZERO_COPY;
}
