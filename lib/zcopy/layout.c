/* SPDX-License-Identifier: BSD-3-Clause */
/* Flattening a datatype into (offset, length) blocks by decoding its constructors with
 * MPI_Type_get_envelope/MPI_Type_get_contents. Each constructor's child is flattened
 * once and then replicated, so the cost is proportional to the resulting block count,
 * whatever the nesting depth. Blocks stay in type-map order: the k-th byte of a message
 * is the k-th byte of this list on both sides. */
#include "zcopy.h"
#include "common/error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int mpix_layout_append(mpix_layout *layout, MPI_Aint offset, MPI_Aint length)
{
    if (length == 0)
        return MPI_SUCCESS;
    layout->bytes += length;
    layout->costed_gap_limit = -1;
    if (layout->nblocks == 0 || offset < layout->lowest)
        layout->lowest = offset;
    if (layout->nblocks == 0 || offset + length > layout->highest)
        layout->highest = offset + length;
    if (layout->nblocks > 0) {
        mpix_block *last = &layout->blocks[layout->nblocks - 1];
        if (last->offset + last->length == offset) {
            last->length += length;
            return MPI_SUCCESS;
        }
    }
    if (layout->nblocks == layout->capacity) {
        MPI_Aint capacity = layout->capacity ? 2 * layout->capacity : 8;
        mpix_block *blocks = realloc(layout->blocks, capacity * sizeof *blocks);
        if (!blocks)
            return MPI_ERR_NO_MEM;
        layout->blocks = blocks;
        layout->capacity = capacity;
    }
    layout->blocks[layout->nblocks++] = (mpix_block){ offset, length };
    return MPI_SUCCESS;
}

void mpix_layout_free(mpix_layout *layout)
{
    free(layout->blocks);
    memset(layout, 0, sizeof *layout);
}

/* @count copies of @child, the i-th at @displacement + i * @stride. Copies of a dense
 * child (one block as long as the stride) join into one block at once: a vector of
 * 16 KiB of MPI_BYTE is 256 appends, not four million. */
static int append_repeated(mpix_layout *out, const mpix_layout *child, MPI_Aint displacement, MPI_Aint count,
                           MPI_Aint stride)
{
    if (count > 0 && child->nblocks == 1 && child->blocks[0].length == stride)
        return mpix_layout_append(out, displacement + child->blocks[0].offset, count * stride);
    for (MPI_Aint i = 0; i < count; i++)
        for (MPI_Aint b = 0; b < child->nblocks; b++) {
            int rc = mpix_layout_append(out, displacement + i * stride + child->blocks[b].offset,
                                        child->blocks[b].length);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    return MPI_SUCCESS;
}

int mpix_layout_repeat(const mpix_layout *element, MPI_Aint count, MPI_Aint extent, mpix_layout *out)
{
    memset(out, 0, sizeof *out);
    return append_repeated(out, element, 0, count, extent);   /* a contiguous element: one block */
}

/* Predefined types: contiguous, except the MINLOC/MAXLOC pairs, whose padding follows
 * the C struct of the pair. */
static int named_layout(MPI_Datatype type, mpix_layout *out)
{
    int size;
    MPI_Aint lb, extent;
    int rc = PMPI_Type_size(type, &size);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_extent(type, &lb, &extent);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size == extent)
        return mpix_layout_append(out, lb, size);
#define PAIR(mpi_type, c_type)                                                                              \
    if (type == mpi_type) {                                                                                 \
        struct pair { c_type value; int index; };                                                           \
        rc = mpix_layout_append(out, offsetof(struct pair, value), sizeof(c_type));                         \
        return rc != MPI_SUCCESS ? rc : mpix_layout_append(out, offsetof(struct pair, index), sizeof(int)); \
    }
    PAIR(MPI_FLOAT_INT, float)
    PAIR(MPI_DOUBLE_INT, double)
    PAIR(MPI_LONG_INT, long)
    PAIR(MPI_SHORT_INT, short)
    PAIR(MPI_LONG_DOUBLE_INT, long double)
#undef PAIR
    return mpix_error(MPIX_ERRKIND_DATATYPE, "zcopy: predefined datatype of size %d and extent %ld has no known layout",
                      size, (long)extent);
}

static MPI_Aint extent_of(MPI_Datatype type)
{
    MPI_Aint lb, extent;
    /* Only called on types the envelope query has accepted. */
    return PMPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS ? extent : 0;
}

/* One element of a row-major or column-major box: the odometer visits @counts[d]
 * indices per dimension (through @index_of, which maps the i-th visited index of
 * dimension d to an array index) with the fastest dimension innermost. Where
 * @consecutive, every dimension's indices follow one another (a subarray), so the whole
 * of the fastest dimension is one run, found without asking for each index: asked
 * element by element, a subarray of 4096 rows of 127 complex numbers took 0.28 ms of
 * each side's first message of the layout. */
typedef MPI_Aint (*index_fn)(const void *context, int dimension, MPI_Aint i);

static int append_box(mpix_layout *out, const mpix_layout *child, MPI_Aint child_extent, int ndims,
                      const int *array_sizes, const MPI_Aint *counts, int order, index_fn index_of,
                      const void *context, int consecutive)
{
    MPI_Aint stride[ndims], position[ndims];
    int fastest = order == MPI_ORDER_C ? ndims - 1 : 0, step = order == MPI_ORDER_C ? -1 : 1;
    for (int d = fastest, previous = -1; d >= 0 && d < ndims; previous = d, d += step)
        stride[d] = previous < 0 ? child_extent : stride[previous] * array_sizes[previous];
    for (int d = 0; d < ndims; d++) {
        if (counts[d] == 0)
            return MPI_SUCCESS;
        position[d] = 0;
    }
    /* The odometer turns the slower dimensions; along the fastest one, each run of
     * consecutive indices is one append_repeated (one block for a dense child). */
    for (;;) {
        MPI_Aint base = 0;
        for (int d = 0; d < ndims; d++)
            if (d != fastest)
                base += index_of(context, d, position[d]) * stride[d];
        for (MPI_Aint i = 0, run; i < counts[fastest]; i += run) {
            MPI_Aint first = index_of(context, fastest, i);
            if (consecutive)
                run = counts[fastest];
            else
                for (run = 1; i + run < counts[fastest] && index_of(context, fastest, i + run) == first + run; run++)
                    ;
            int rc = append_repeated(out, child, base + first * stride[fastest], run, stride[fastest]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        int d = fastest + step;
        while (d >= 0 && d < ndims && ++position[d] == counts[d]) {
            position[d] = 0;
            d += step;
        }
        if (d < 0 || d >= ndims)
            return MPI_SUCCESS;
    }
}

static MPI_Aint subarray_index(const void *context, int d, MPI_Aint i) { return ((const int *)context)[d] + i; }

static int subarray_layout(const int *ints, const mpix_layout *child, MPI_Aint child_extent, mpix_layout *out)
{
    int ndims = ints[0];
    const int *sizes = ints + 1, *subsizes = sizes + ndims, *starts = subsizes + ndims;
    MPI_Aint counts[ndims];
    for (int d = 0; d < ndims; d++)
        counts[d] = subsizes[d];
    return append_box(out, child, child_extent, ndims, sizes, counts, ints[1 + 3 * ndims], subarray_index, starts, 1);
}

/* The global indices a process owns in one dimension of a darray, in increasing order
 * (MPI-3.1 §4.1.4: block, cyclic(k), or none; default arguments as there). */
typedef struct darray_dimension {
    MPI_Aint count, *index;
} darray_dimension;

static MPI_Aint darray_index(const void *context, int d, MPI_Aint i)
{
    return ((const darray_dimension *)context)[d].index[i];
}

static int darray_owned(int gsize, int distrib, int darg, int psize, int coordinate, darray_dimension *dim)
{
    dim->count = 0;
    dim->index = malloc((gsize > 0 ? gsize : 1) * sizeof *dim->index);
    if (!dim->index)
        return MPI_ERR_NO_MEM;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        for (int g = 0; g < gsize; g++)
            dim->index[dim->count++] = g;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int block = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        for (MPI_Aint g = (MPI_Aint)coordinate * block; g < gsize && g < (MPI_Aint)(coordinate + 1) * block; g++)
            dim->index[dim->count++] = g;
    } else {
        int block = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        for (MPI_Aint start = (MPI_Aint)coordinate * block; start < gsize; start += (MPI_Aint)psize * block)
            for (MPI_Aint g = start; g < gsize && g < start + block; g++)
                dim->index[dim->count++] = g;
    }
    return MPI_SUCCESS;
}

static int darray_layout(const int *ints, const mpix_layout *child, MPI_Aint child_extent, mpix_layout *out)
{
    int rank = ints[1], ndims = ints[2];
    const int *gsizes = ints + 3, *distribs = gsizes + ndims, *dargs = distribs + ndims, *psizes = dargs + ndims;
    int order = psizes[ndims];
    darray_dimension dims[ndims];
    MPI_Aint counts[ndims];
    int rc = MPI_SUCCESS, remaining = rank;
    memset(dims, 0, sizeof dims);
    /* The process grid is row-major whatever the array order. */
    for (int d = ndims - 1; d >= 0 && rc == MPI_SUCCESS; d--) {
        rc = darray_owned(gsizes[d], distribs[d], dargs[d], psizes[d], remaining % psizes[d], &dims[d]);
        remaining /= psizes[d];
        counts[d] = dims[d].count;
    }
    if (rc == MPI_SUCCESS)
        rc = append_box(out, child, child_extent, ndims, gsizes, counts, order, darray_index, dims, 0);
    for (int d = 0; d < ndims; d++)
        free(dims[d].index);
    return rc;
}

/* The constructors whose children all share one old type (every one but struct). */
static int single_child_layout(int combiner, const mpix_type_contents *c, const mpix_layout *child, MPI_Aint child_extent,
                               mpix_layout *out)
{
    const int *ints = c->ints;
    const MPI_Aint *addresses = c->addresses;
    int rc = MPI_SUCCESS;
    switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* only the extent changes, and the parent reads that itself */
        return append_repeated(out, child, 0, 1, 0);
    case MPI_COMBINER_CONTIGUOUS:
        return append_repeated(out, child, 0, ints[0], child_extent);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = combiner == MPI_COMBINER_VECTOR ? ints[2] * child_extent : addresses[0];
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; i++)
            rc = append_repeated(out, child, i * stride, ints[1], child_extent);
        return rc;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; i++) {
            MPI_Aint at = combiner == MPI_COMBINER_INDEXED ? ints[1 + ints[0] + i] * child_extent : addresses[i];
            rc = append_repeated(out, child, at, ints[1 + i], child_extent);
        }
        return rc;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; i++) {
            MPI_Aint at = combiner == MPI_COMBINER_INDEXED_BLOCK ? ints[2 + i] * child_extent : addresses[i];
            rc = append_repeated(out, child, at, ints[1], child_extent);
        }
        return rc;
    case MPI_COMBINER_SUBARRAY:
        return subarray_layout(ints, child, child_extent, out);
    case MPI_COMBINER_DARRAY:
        return darray_layout(ints, child, child_extent, out);
    default:
        return mpix_error(MPIX_ERRKIND_DATATYPE, "zcopy: datatype combiner %d is not supported", combiner);
    }
}

int mpix_layout_of_element(MPI_Datatype type, mpix_layout *element)
{
    int ni, na, nt, combiner, rc;
    mpix_type_contents c;
    memset(element, 0, sizeof *element);
    rc = PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    switch (combiner) {
    case MPI_COMBINER_NAMED:
        return named_layout(type, element);
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER: {
        int size;
        rc = PMPI_Type_size(type, &size);
        return rc != MPI_SUCCESS ? rc : mpix_layout_append(element, 0, size);
    }
    }
    rc = mpix_type_contents_get(type, ni, na, nt, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (combiner == MPI_COMBINER_STRUCT) {
        for (int i = 0; i < c.ints[0] && rc == MPI_SUCCESS; i++) {
            mpix_layout child;
            rc = mpix_layout_of_element(c.types[i], &child);
            if (rc == MPI_SUCCESS)
                rc = append_repeated(element, &child, c.addresses[i], c.ints[1 + i], extent_of(c.types[i]));
            mpix_layout_free(&child);
        }
    } else {
        mpix_layout child;
        rc = mpix_layout_of_element(c.types[0], &child);
        if (rc == MPI_SUCCESS)
            rc = single_child_layout(combiner, &c, &child, extent_of(c.types[0]), element);
        mpix_layout_free(&child);
    }
    (void)mpix_type_contents_free(&c); /* the flattening's own error is the one to report */
    if (rc != MPI_SUCCESS)
        mpix_layout_free(element);
    return rc;
}
