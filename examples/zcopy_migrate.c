/* SPDX-License-Identifier: BSD-3-Clause */
/* Particle migration with messages the receiver sizes by a probe.
 *
 * The ranks share a periodic line [0, ranks); each owns the particles in its unit of it.
 * Every step each particle moves by its velocity; those that left go to the neighbour
 * they moved to. The sender picks them out of its array with an indexed-block datatype
 * of a particle struct, built for this one send and freed after it (how many leave
 * changes every step), so they are not packed by hand; the receiver learns how many
 * arrive from MPIX_Probe_zcopy, whose status counts the data as MPI_Get_count reads it
 * (MPI_Probe would count zcopy's header too), and receives them at the end of its array.
 * The program checks that no particle is lost and that every particle sits in its
 * owner's unit. Run: mpirun -np 2 zcopy_migrate [particles per rank] [steps] */
#include <mpix/mpix.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct particle {
    double position, velocity;
    long id;
} particle;

static MPI_Datatype particle_type(void)
{
    int lengths[3] = { 1, 1, 1 };
    MPI_Aint offsets[3] = { offsetof(particle, position), offsetof(particle, velocity), offsetof(particle, id) };
    MPI_Datatype types[3] = { MPI_DOUBLE, MPI_DOUBLE, MPI_LONG }, type, resized;
    MPI_Type_create_struct(3, lengths, offsets, types, &type);
    MPI_Type_create_resized(type, 0, sizeof(particle), &resized);
    MPI_Type_free(&type);
    MPI_Type_commit(&resized);
    return resized;
}

/* Sends the particles that left towards @neighbour (@direction -1 or +1) and drops them
 * from the array once sent; returns the request of the send. */
static void send_leaving(particle *particles, int count, int *leaving, int *leaving_count, int lower, int direction,
                         int neighbour, MPI_Datatype particle_mpi, MPI_Request *request)
{
    *leaving_count = 0;
    for (int i = 0; i < count; i++) {
        double unit = floor(particles[i].position);
        if ((direction < 0 && unit < lower) || (direction > 0 && unit > lower))
            leaving[(*leaving_count)++] = i;
    }
    MPI_Datatype selected;
    MPI_Type_create_indexed_block(*leaving_count, 1, leaving, particle_mpi, &selected);
    MPI_Type_commit(&selected);
    MPIX_Isend_zcopy(particles, 1, selected, neighbour, direction > 0, MPI_COMM_WORLD, request);
    MPI_Type_free(&selected); /* the send keeps what it needs */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int per_rank = argc > 1 ? atoi(argv[1]) : 20000, steps = argc > 2 ? atoi(argv[2]) : 20;
    int capacity = per_rank * ranks, count = per_rank;
    particle *particles = malloc(capacity * sizeof *particles);
    int *low = malloc(capacity * sizeof *low), *high = malloc(capacity * sizeof *high);
    srand(rank + 1);
    for (int i = 0; i < count; i++)
        particles[i] = (particle){ rank + (i + 0.5) / count, (rand() / (double)RAND_MAX - 0.5) * 0.02,
                                   (long)rank * per_rank + i };
    MPI_Datatype particle_mpi = particle_type();
    int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks, errors = 0;
    for (int step = 0; step < steps; step++) {
        for (int i = 0; i < count; i++)
            particles[i].position += particles[i].velocity;
        MPI_Request sends[2];
        int low_count, high_count;
        send_leaving(particles, count, low, &low_count, rank, -1, left, particle_mpi, &sends[0]);
        send_leaving(particles, count, high, &high_count, rank, +1, right, particle_mpi, &sends[1]);
        /* From each neighbour: as many as its probe says. Ranks on a ring of two are each
         * other's both neighbours: the tag tells the two messages apart. */
        particle *arrived = malloc(capacity * sizeof *arrived);
        int arrived_count = 0;
        for (int from = 0; from < 2; from++) {
            MPI_Status status;
            int incoming;
            MPIX_Probe_zcopy(from == 0 ? left : right, from == 0, MPI_COMM_WORLD, &status);
            MPI_Get_count(&status, particle_mpi, &incoming);
            MPIX_Recv_zcopy(arrived + arrived_count, incoming, particle_mpi, status.MPI_SOURCE, status.MPI_TAG,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            arrived_count += incoming;
        }
        MPI_Status send_statuses[2];
        MPI_Waitall(2, sends, send_statuses);
        /* Keep those that stayed, then append the arrivals (positions wrapped). */
        int kept = 0;
        for (int i = 0; i < count; i++) {
            double unit = floor(particles[i].position);
            if (unit == rank)
                particles[kept++] = particles[i];
        }
        for (int i = 0; i < arrived_count; i++) {
            particle p = arrived[i];
            p.position = fmod(p.position + ranks, ranks);
            particles[kept++] = p;
        }
        count = kept;
        free(arrived);
    }
    long total = count, all = 0;
    for (int i = 0; i < count; i++)
        errors += floor(particles[i].position) != rank;
    MPI_Allreduce(&total, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all != (long)per_rank * ranks)
        errors++;
    if (rank == 0)
        printf("zcopy_migrate: %ld particles on %d ranks after %d steps, %s\n", all, ranks, steps,
               errors ? "WRONG" : "all in their owner's unit");
    MPI_Type_free(&particle_mpi);
    free(particles);
    free(low);
    free(high);
    MPI_Finalize();
    return errors != 0;
}
