/* SPDX-License-Identifier: BSD-3-Clause */
/* The shape of a datatype: what MPI tells of it without copying its constructors (the
 * top combiner and its argument counts, the size and both extents). The content key
 * (type_key.c) needs MPI_Type_get_contents, which in Open MPI duplicates every inner
 * datatype: for a struct of hindexed types built afresh at every exchange (LAMMPS) that
 * costs a fifth of building the type again, for a message that goes through MPI anyway
 * because its blocks are too small for kernel copies. So the sender learns its way per
 * shape: a datatype whose shape's sends go through MPI goes without the key, and only a
 * zero-copy send, which needs the layout, builds it (memoized by content). Two layouts
 * of one shape are alike in every figure the path depends on but their block sizes; a
 * wrong guess costs speed, never correctness, since MPI delivers either way. In a
 * throwaway ping-pong of WRF's y-halo (a struct of three vectors, built afresh for every
 * three messages), the key cost 0.5 us a message on Open MPI (zero-copy forced off: 0.98
 * of MPI_Send's time, through MPI with the key: 0.91-0.92).
 *
 * A shape changes with the sizes: an exchange whose element count changes at every call
 * (LAMMPS sends the atoms that left the box) has a new shape each time. So a datatype
 * whose blocks are evidently tiny goes through MPI on its envelopes alone: an
 * indexed-family type of at least EVIDENT_BLOCKS blocks of at most EVIDENT_BLOCK_BYTES
 * on average, or a struct of few members that are all such types. A throwaway program
 * sending a LAMMPS-like struct of five hindexed-block types at MPI_BOTTOM with a new
 * atom count each time took 424 us a message through the key, flattening and cost
 * model, against 27 us for MPI_Send; 29 us with the envelopes and the alike shapes.
 *
 * A shape found too fragmented for kernel copies learns among MPI's ways only (the
 * datatype, packed, or packed and unpacked: pack.c, path.c); the others between
 * zero-copy and the datatype, and among all four once zero-copy lost a decision. */
#include "zcopy.h"
#include "common/datatype.h"
#include "mpix_config.h"

#include <pthread.h>
#include <string.h>

enum { EVIDENT_BLOCKS = 256, EVIDENT_BLOCK_BYTES = 32, EVIDENT_STRUCT_MEMBERS = 16 };

static pthread_mutex_t shapes_lock = PTHREAD_MUTEX_INITIALIZER;

int mpix_type_shape_of(MPI_Datatype type, int count, mpix_type_shape *shape)
{
    memset(shape, 0, sizeof *shape);   /* compared bytewise, padding included */
    int rc = PMPI_Type_get_envelope(type, &shape->integers, &shape->addresses, &shape->datatypes, &shape->combiner);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_size_x(type, &shape->size);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_true_extent_x(type, &shape->true_lb, &shape->true_extent);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_extent_x(type, &shape->lb, &shape->extent);
    shape->count = count;
    return rc;
}

/* The blocks of an indexed-family type as its envelope counts them (before adjacent
 * ones merge); 0 for the other combiners. */
static MPI_Aint indexed_blocks(int integers, int addresses, int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_BLOCK:
        return addresses;
    case MPI_COMBINER_INDEXED_BLOCK:
        return integers - 2;
    case MPI_COMBINER_INDEXED:
        return (integers - 1) / 2;
    default:
        return 0;
    }
}

static int evident(MPI_Datatype type, int members_left, int *result);

/* A vector of a predefined type: count blocks unless they touch. */
static int evident_vector(MPI_Datatype type, int combiner, int *result)
{
    int ints[3];
    MPI_Aint stride_bytes;
    MPI_Datatype child;
    int hvector = combiner == MPI_COMBINER_HVECTOR;
    int rc = PMPI_Type_get_contents(type, hvector ? 2 : 3, hvector ? 1 : 0, 1, ints, &stride_bytes, &child);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mpix_type_is_named(child))
        return PMPI_Type_free(&child);
    MPI_Aint lb, extent;
    int child_size;
    if ((rc = PMPI_Type_get_extent(child, &lb, &extent)) == MPI_SUCCESS && (rc = PMPI_Type_size(child, &child_size)) == MPI_SUCCESS) {
        MPI_Aint stride = hvector ? stride_bytes : (MPI_Aint)ints[2] * extent;
        int touching = stride == (MPI_Aint)ints[1] * extent;
        *result = !touching && ints[0] >= EVIDENT_BLOCKS && (MPI_Aint)ints[1] * child_size <= EVIDENT_BLOCK_BYTES;
    }
    return rc;
}

/* Whether every member of a struct of few members is evidently fragmented. */
static int evident_struct(MPI_Datatype type, int integers, int addresses, int datatypes, int *result)
{
    mpix_type_contents c;
    int rc = mpix_type_contents_get(type, integers, addresses, datatypes, &c);
    int all = rc == MPI_SUCCESS && datatypes > 0;
    for (int i = 0; i < datatypes && all; i++) {
        int member = 0;
        if (c.ints[1 + i] > 0 && (rc = evident(c.types[i], 0, &member)) != MPI_SUCCESS)
            all = 0;
        all = all && (c.ints[1 + i] == 0 || member);
    }
    int free_rc = mpix_type_contents_free(&c);
    if (rc == MPI_SUCCESS)
        rc = free_rc;
    *result = rc == MPI_SUCCESS && all;
    return rc;
}

static int evident(MPI_Datatype type, int members_left, int *result)
{
    int integers, addresses, datatypes, combiner;
    *result = 0;
    int rc = PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    if (combiner == MPI_COMBINER_STRUCT)
        return members_left > 0 && datatypes > 0 && datatypes <= members_left
                   ? evident_struct(type, integers, addresses, datatypes, result)
                   : MPI_SUCCESS;
    if (combiner == MPI_COMBINER_VECTOR || combiner == MPI_COMBINER_HVECTOR)
        return evident_vector(type, combiner, result);
    MPI_Aint blocks = indexed_blocks(integers, addresses, combiner);
    MPI_Count size;
    if (blocks < EVIDENT_BLOCKS || (rc = PMPI_Type_size_x(type, &size)) != MPI_SUCCESS)
        return rc;
    *result = size <= (MPI_Count)EVIDENT_BLOCK_BYTES * blocks;
    return MPI_SUCCESS;
}

int mpix_type_evidently_fragmented(MPI_Datatype type, int *fragmented)
{
    return evident(type, EVIDENT_STRUCT_MEMBERS, fragmented);
}

/* Whether @shape is @seen, or a struct of the same members and count within twice or
 * half its size: the same exchange with other element counts, whose members' envelopes
 * Open MPI would copy to tell (MPI_Type_get_contents duplicates them: 120 us for the
 * five hindexed-block members of the LAMMPS-like struct above). */
static int alike(const mpix_type_shape *seen, const mpix_type_shape *shape)
{
    if (memcmp(seen, shape, sizeof *shape) == 0)
        return 1;
    return shape->combiner == MPI_COMBINER_STRUCT && seen->combiner == shape->combiner &&
           seen->integers == shape->integers && seen->addresses == shape->addresses &&
           seen->datatypes == shape->datatypes && seen->count == shape->count && shape->size <= 2 * seen->size &&
           seen->size <= 2 * shape->size;
}

/* The entry holding @shape (or, for a fragmented entry, a shape alike it), or -1.
 * Under shapes_lock. */
static int known(const mpix_zcopy_process *process, const mpix_type_shape *shape)
{
    for (int i = 0; i < process->shape_count; i++) {
        const mpix_zcopy_shape_entry *entry = &process->shapes[i];
        if (entry->fragmented ? alike(&entry->shape, shape) : memcmp(&entry->shape, shape, sizeof *shape) == 0)
            return i;
    }
    return -1;
}

int mpix_zcopy_shape_find(mpix_zcopy_process *process, const mpix_type_shape *shape, mpix_zcopy_shape_ref *ref,
                          int *fragmented)
{
    ref->entry = -1;
    *fragmented = 0;
    if (shape->combiner == MPI_COMBINER_NAMED)
        return 0;
    pthread_mutex_lock(&shapes_lock);
    int entry = known(process, shape);
    if (entry >= 0) {
        *ref = (mpix_zcopy_shape_ref){ entry, process->shapes[entry].generation };
        *fragmented = process->shapes[entry].fragmented;
    }
    pthread_mutex_unlock(&shapes_lock);
    return entry >= 0;
}

int mpix_zcopy_shape_sends_packed(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed)
{
    int packed = 0;
    pthread_mutex_lock(&shapes_lock);
    if (ref->entry >= 0 && process->shapes[ref->entry].generation == ref->generation) {
        const mpix_path_learner *learner = &process->shapes[ref->entry].learners[interposed != 0];
        packed = learner->period > 0 && !learner->learning && !learner->deferred &&
                 learner->taken == MPIX_ZCOPY_WAY_PACKED;
    }
    pthread_mutex_unlock(&shapes_lock);
    return packed;
}

void mpix_zcopy_shape_remember(mpix_zcopy_process *process, const mpix_type_shape *shape, int fragmented,
                               const mpix_zcopy_prices *prices, mpix_zcopy_shape_ref *ref)
{
    ref->entry = -1;
    if (shape->combiner == MPI_COMBINER_NAMED)
        return;
    pthread_mutex_lock(&shapes_lock);
    int at = known(process, shape);
    if (at < 0) {
        /* A ring: the oldest shape makes room, so a program's current shapes stay. */
        at = process->next_shape;
        mpix_zcopy_shape_entry *entry = &process->shapes[at];
        *entry = (mpix_zcopy_shape_entry){ .shape = *shape, .generation = entry->generation + 1 };
        process->next_shape = (at + 1) % MPIX_ZCOPY_SHAPES;
        if (process->shape_count < MPIX_ZCOPY_SHAPES)
            process->shape_count++;
    }
    process->shapes[at].fragmented |= fragmented;
    if (prices && prices->kernel_ns_per_byte > 0)
        process->shapes[at].prices = *prices;
    *ref = (mpix_zcopy_shape_ref){ at, process->shapes[at].generation };
    pthread_mutex_unlock(&shapes_lock);
}

/* Whether a new shape's learner starts without packing: once two shapes of this
 * process were decided with the packed ways in their duels and neither on one of them
 * (Open MPI moves the fragmented layouts of the bench faster with the datatype, where
 * MPICH 4.0 moves them 3-3.5 times faster packed and unpacked), a new shape's first
 * DEFERRED_SENDS sends take the datatype, untimed, and packing joins its duels after
 * them: a duel's packed sends cost a program that sends a layout 20 times a quarter of
 * its time on Open MPI. Under shapes_lock. */
enum { PACKING_LOST_SHAPES = 2, DEFERRED_SENDS = 64 };

/* Shapes a process counts as lost by packing before it sends any: a prior for its first
 * layouts. Open MPI 4.1 moved every fragmented layout measured faster with its datatype
 * engine (the application and ping-pong tables, on the 2-core VM and on 16 cores), where
 * a duel's packed sends cost the first 20 round trips of a vector of 16 B blocks half
 * their speed (0.49-0.63x MPI_Send, 0.96-1.09x with this prior); MPICH 4.0 moves them
 * 3-9 times faster packed. Packing still joins a shape's duels after its first
 * DEFERRED_SENDS sends. */
#if MPIX_MPI_IS_MPICH
enum { PACKING_LOST_PRIOR = 0 };
#else
enum { PACKING_LOST_PRIOR = PACKING_LOST_SHAPES };
#endif

static int packing_deferred(const mpix_zcopy_process *process)
{
    return process->packing_decided + PACKING_LOST_PRIOR >= PACKING_LOST_SHAPES && process->packing_won == 0;
}

/* Zero-copy's first messages of a layout cost the most (its first sends also wait for
 * the receiver to read the sender's layout), and a duel gives it a burst of them even
 * where it loses by far: on the development VM (Open MPI 4.1) 20 round trips of a vector
 * of 256 B blocks took 33 ms by zcopy against 8 ms by MPI_Send, four of them 6-8 ms
 * each, the duel's zero-copy burst. A layout whose kernel copy the cost model prices
 * above that of a shape on which zero-copy lost by CLEAR (path.c) loses too: the kernel
 * charges per block, MPI's datatype engine far less. So a new shape priced at least as
 * high as the cheapest lost one (and above the costliest won one) defers zero-copy by
 * DEFERRED_SENDS sends through MPI with the datatype, after which its duels take it in
 * as ever: a wrong guess costs the speed of those sends only.
 *
 * The price is the kernel's, so a win through pipes (two memcpys, where
 * mpix_zcopy_pipes_pay) does not count as the kernel's: where pipes pay, small blocks
 * win through them at prices far above the kernel's losses (mpix-bench zcopy on a
 * 2-core VM whose kernel copied at 12 GB/s: WRF's halo and NAS MG's y-face won piped at
 * 0.12 and 0.155 ns a byte), and counted as the kernel's wins they let every
 * large-block layout duel again (the FFT transpose's 8 MiB subarray, 0.060 ns a byte,
 * after vectors of 256 KiB blocks had lost at 0.059: its zero-copy sends 0.6-1.0 ms,
 * in one run of four 6-11 ms, against 0.3 ms through MPI). A loss counts whichever way
 * zero-copy went: a deferral costs at most the speed of DEFERRED_SENDS sends. Under
 * shapes_lock. */
static int zero_copy_deferred(const mpix_zcopy_process *process, const mpix_zcopy_shape_entry *entry)
{
    double price = entry->prices.kernel_ns_per_byte;
    return price > 0 && process->zero_copy_lost_at > 0 && price >= process->zero_copy_lost_at &&
           price > process->zero_copy_won_at;
}

/* What a learner decided between zero-copy and the datatype tells of the shape's price
 * (a win only where its zero-copy sends were the kernel's). */
static void note_zero_copy(mpix_zcopy_process *process, const mpix_zcopy_shape_entry *entry,
                           const mpix_path_learner *learner)
{
    double price = entry->prices.kernel_ns_per_byte;
    if (price <= 0 || !mpix_zcopy_has_way(learner->ways, MPIX_ZCOPY_WAY_ZERO_COPY) ||
        learner->samples[MPIX_ZCOPY_WAY_ZERO_COPY].count == 0)
        return;
    if (learner->taken == MPIX_ZCOPY_WAY_ZERO_COPY) {
        if (!entry->prices.pipes && price > process->zero_copy_won_at)
            process->zero_copy_won_at = price;
    } else if (mpix_zcopy_learner_lost(learner, MPIX_ZCOPY_WAY_ZERO_COPY) &&
               (process->zero_copy_lost_at == 0 || price < process->zero_copy_lost_at))
        process->zero_copy_lost_at = price;
}

/* Whether a shape kernel copies may serve lets the packed ways into its duels now: once a
 * decision took another way over zero-copy, MPI's ways are what is left, and packing is
 * one of them. Where zero-copy wins packing can lose by far (the FFT transpose's
 * 8 MiB subarray: 1.3-1.6 ms packed, 3.2-4.2 ms packed and unpacked, against 0.7-0.9 ms,
 * Open MPI), so it waits for that loss; where zero-copy loses it can win by far (on a
 * host whose kernel copies run at 18-25 GB/s against 57-62 for a user-space memcpy, a
 * vector of 4096 rows of 1 KiB: 392 us a message packed against 754 with the datatype
 * and 3 times that zero-copy, Open MPI 4.1). Trying them costs sends of a program that
 * may send the shape only a dozen times (the FFT transpose's table, whose first duels
 * between zero-copy and the datatype, 1.1 times apart, take 16 sends), so a learner that
 * lost zero-copy by CLEAR plans afresh with them at its next send, and one that lost it
 * narrowly at its next period (where its blocks are large, mpix_zcopy_packing_cannot_pay,
 * it is counted lost without trying: it lost every such layout measured); and once
 * packing lost the first JOINED_LOST_SHAPES such
 * shapes of a process and won none (MPICH 4.0, whose datatype engine moves such layouts
 * faster than a pack and a message: priced out at the first timed packed send, each
 * costing two packed sends of 2-3 ms where zero-copy takes 0.2), it joins no more.
 * Under shapes_lock. */
enum { JOINED_LOST_SHAPES = 2 };

/* The first verdict on packing that joined @entry's duels, counted for the process. */
static void judge_packing(mpix_zcopy_process *process, mpix_zcopy_shape_entry *entry, int won)
{
    if (entry->packing_judged)
        return;
    entry->packing_judged = 1;
    won ? process->joined_won++ : process->joined_lost++;
}

static void let_packing_join(mpix_zcopy_process *process, mpix_zcopy_shape_entry *entry,
                             mpix_path_learner *learner, unsigned ways)
{
    if (entry->fragmented || entry->packing_joins || entry->packing_judged || !(ways & MPIX_ZCOPY_WAYS_PACKING) ||
        (process->joined_lost >= JOINED_LOST_SHAPES && process->joined_won == 0) || learner->learning ||
        learner->deferred || learner->period == 0 || !mpix_zcopy_has_way(learner->ways, MPIX_ZCOPY_WAY_ZERO_COPY) ||
        learner->samples[MPIX_ZCOPY_WAY_ZERO_COPY].count == 0 || learner->taken == MPIX_ZCOPY_WAY_ZERO_COPY)
        return;
    if (entry->prices.large_blocks) {   /* it would lose (mpix_zcopy_packing_cannot_pay): lost, untried */
        judge_packing(process, entry, 0);
        return;
    }
    entry->packing_joins = 1;
    if (mpix_zcopy_learner_lost(learner, MPIX_ZCOPY_WAY_ZERO_COPY))
        learner->phase = 0;
}

int mpix_zcopy_shape_way(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed, unsigned ways,
                         int *timed, int *decided, int *deferred)
{
    int way = MPIX_ZCOPY_WAY_DATATYPE;
    *timed = *decided = *deferred = 0;
    pthread_mutex_lock(&shapes_lock);
    if (ref->entry >= 0 && process->shapes[ref->entry].generation == ref->generation) {
        mpix_zcopy_shape_entry *entry = &process->shapes[ref->entry];
        mpix_path_learner *learner = &entry->learners[interposed != 0];
        unsigned offered = ways;
        if (!entry->fragmented && !entry->packing_joins)
            ways &= ~MPIX_ZCOPY_WAYS_PACKING;
        int fresh = learner->period == 0, was_learning = fresh || learner->learning, plans = learner->phase == 0;
        if (fresh && (((ways & MPIX_ZCOPY_WAYS_PACKING) && packing_deferred(process)) ||
                      (mpix_zcopy_has_way(ways, MPIX_ZCOPY_WAY_ZERO_COPY) && zero_copy_deferred(process, entry))))
            mpix_zcopy_learner_defer(learner, MPIX_ZCOPY_WAY_DATATYPE, DEFERRED_SENDS);
        else if (fresh && entry->prices.unhelped_loses)
            learner->opens_with_datatype = 1;
        way = mpix_zcopy_learner_choose(learner, ways, interposed != 0, timed, decided);
        *deferred = learner->deferred && mpix_zcopy_has_way(ways, MPIX_ZCOPY_WAY_ZERO_COPY);
        if (was_learning && !learner->learning && learner->period > 0) {
            if (entry->fragmented && (learner->ways & MPIX_ZCOPY_WAYS_PACKING)) {   /* the prior's own kind */
                process->packing_decided++;
                process->packing_won += mpix_zcopy_has_way(MPIX_ZCOPY_WAYS_PACKING, learner->taken);
            }
            note_zero_copy(process, entry, learner);
            if (entry->packing_joins && (learner->ways & MPIX_ZCOPY_WAYS_PACKING))
                judge_packing(process, entry, mpix_zcopy_has_way(MPIX_ZCOPY_WAYS_PACKING, learner->taken));
        }
        if (plans || was_learning)   /* a decision taken now */
            let_packing_join(process, entry, learner, offered);
    }
    pthread_mutex_unlock(&shapes_lock);
    return way;
}

int mpix_zcopy_shape_peek(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed, unsigned ways,
                          int *deferred, int *priced)
{
    int zero_copy = mpix_zcopy_has_way(ways, MPIX_ZCOPY_WAY_ZERO_COPY);
    int way = zero_copy ? MPIX_ZCOPY_WAY_ZERO_COPY : MPIX_ZCOPY_WAY_DATATYPE;
    *deferred = *priced = 0;
    pthread_mutex_lock(&shapes_lock);
    if (ref->entry >= 0 && process->shapes[ref->entry].generation == ref->generation) {
        const mpix_zcopy_shape_entry *entry = &process->shapes[ref->entry];
        const mpix_path_learner *learner = &entry->learners[interposed != 0];
        int decided = learner->period > 0 && !learner->learning;
        if (decided && mpix_zcopy_has_way(ways, learner->taken)) {
            way = learner->taken;   /* decided (or deferred) by the blocking sends */
            *deferred = learner->deferred && mpix_zcopy_has_way(ways, MPIX_ZCOPY_WAY_ZERO_COPY);
        } else if (zero_copy && zero_copy_deferred(process, entry)) {
            way = MPIX_ZCOPY_WAY_DATATYPE;
            *deferred = 1;
        } else if (zero_copy && entry->prices.unhelped_loses) {
            way = MPIX_ZCOPY_WAY_DATATYPE;
            *priced = 1;
        }
    }
    pthread_mutex_unlock(&shapes_lock);
    return way;
}

/* Packing that joined a shape's duels leaves them for good once a timed send's pack took
 * half what the whole send of its fastest other way takes: a packed send moves its
 * bytes twice at least (the pack, then the message), so it cannot win there, and each
 * duel's packed sends cost the program (the FFT transpose's 8 MiB subarray, Open MPI:
 * packs of 263-560 us where the datatype's sends took 517-588, packed sends 1.3-2 times
 * those, in a table that sends the shape twelve times). Only timed sends count: a
 * burst's first pack, untimed, also pays the first touch of its buffer. Under
 * shapes_lock. */
static void price_packing(mpix_zcopy_process *process, mpix_zcopy_shape_entry *entry, mpix_path_learner *learner,
                          double pack_seconds)
{
    if (entry->fragmented || !entry->packing_joins)
        return;
    double fastest = mpix_zcopy_learner_fastest(learner, learner->ways & ~MPIX_ZCOPY_WAYS_PACKING);
    if (fastest <= 0 || 2 * pack_seconds < fastest)
        return;
    entry->packing_joins = 0;
    judge_packing(process, entry, 0);
    learner->phase = 0;   /* plans afresh without them */
}

void mpix_zcopy_shape_sample(mpix_zcopy_process *process, const mpix_zcopy_shape_ref *ref, int interposed, int way,
                             double seconds, double pack_seconds)
{
    pthread_mutex_lock(&shapes_lock);
    if (ref->entry >= 0 && process->shapes[ref->entry].generation == ref->generation) {
        mpix_zcopy_shape_entry *entry = &process->shapes[ref->entry];
        mpix_path_learner *learner = &entry->learners[interposed != 0];
        mpix_zcopy_learner_sample(learner, way, seconds);
        if (pack_seconds > 0)
            price_packing(process, entry, learner, pack_seconds);
    }
    pthread_mutex_unlock(&shapes_lock);
}
