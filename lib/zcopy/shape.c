/* SPDX-License-Identifier: BSD-3-Clause */
/* The shape of a datatype: what MPI tells of it without copying its constructors (the
 * top combiner and its argument counts, the size and both extents). The content key
 * (type_key.c) needs MPI_Type_get_contents, which in Open MPI duplicates every inner
 * datatype: for a struct of hindexed types built afresh at every exchange (LAMMPS) that
 * costs a fifth of building the type again, for a message that goes through MPI anyway
 * because its blocks are too small for kernel copies. A shape once found that
 * fragmented sends later datatypes of the same shape through MPI without the key. Two
 * layouts of one shape are alike in every figure the path depends on but their block
 * sizes; a wrong guess costs speed, never correctness, since MPI delivers either way. */
#include "zcopy.h"

#include <pthread.h>
#include <string.h>

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

/* Under shapes_lock. */
static int known(const mpix_zcopy_process *process, const mpix_type_shape *shape)
{
    for (int i = 0; i < process->fragmented_shape_count; i++)
        if (memcmp(&process->fragmented_shapes[i], shape, sizeof *shape) == 0)
            return 1;
    return 0;
}

int mpix_zcopy_shape_fragmented(mpix_zcopy_process *process, const mpix_type_shape *shape)
{
    if (shape->combiner == MPI_COMBINER_NAMED)
        return 0;
    pthread_mutex_lock(&shapes_lock);
    int found = known(process, shape);
    pthread_mutex_unlock(&shapes_lock);
    return found;
}

void mpix_zcopy_shape_remember_fragmented(mpix_zcopy_process *process, const mpix_type_shape *shape)
{
    if (shape->combiner == MPI_COMBINER_NAMED)
        return;
    pthread_mutex_lock(&shapes_lock);
    if (!known(process, shape)) {
        /* A ring: the oldest shape makes room, so a program's current shapes stay. */
        process->fragmented_shapes[process->next_fragmented_shape] = *shape;
        process->next_fragmented_shape = (process->next_fragmented_shape + 1) % MPIX_ZCOPY_SHAPES;
        if (process->fragmented_shape_count < MPIX_ZCOPY_SHAPES)
            process->fragmented_shape_count++;
    }
    pthread_mutex_unlock(&shapes_lock);
}
