/* SPDX-License-Identifier: BSD-3-Clause */
/* Every MPI-3 combiner, nested types and counts 0/1/few/many: what MPIX_Recv_zcopy puts
 * in memory (gaps included) and reports in its status must be what MPI_Recv does for the
 * same MPI_Send. Pairs of ranks (0,1), (2,3), ... exchange in both directions; an odd
 * last rank sends to rank 0. MPIX_TEST_ZCOPY_EXPECT names the path the environment
 * forces, and the test checks it was taken. */
#include "mpix_test.h"
#include "zcopy_stats.h"

#include <mpix/mpix.h>
#include <stdint.h>

typedef struct layout_case {
    const char *name;
    MPI_Datatype type;
    MPI_Datatype recv_type;   /* what the receiver uses: the same, or a basic type */
    int recv_factor;          /* recv count = send count * factor */
} layout_case;

static MPI_Datatype committed(MPI_Datatype type)
{
    MPI_Type_commit(&type);
    return type;
}

static MPI_Datatype struct_type(void)
{
    int lengths[3] = { 1, 2, 3 };
    MPI_Aint displacements[3] = { 0, 8, 32 };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, type;
    MPI_Type_create_struct(3, lengths, displacements, types, &type);
    return type;
}

static int make_cases(layout_case *cases)
{
    int n = 0;
    MPI_Datatype t, inner;
#define ADD(label, datatype) cases[n++] = (layout_case){ label, datatype, MPI_DATATYPE_NULL, 0 }
    ADD("named double", MPI_DOUBLE);
    ADD("named double_int", MPI_DOUBLE_INT);
    MPI_Type_contiguous(5, MPI_INT, &t);
    ADD("contiguous", committed(t));
    MPI_Type_vector(64, 3, 7, MPI_DOUBLE, &t);
    ADD("vector", committed(t));
    cases[n - 1].recv_type = MPI_DOUBLE, cases[n - 1].recv_factor = 192;
    MPI_Type_create_hvector(32, 2, 40, MPI_FLOAT, &t);
    ADD("hvector", committed(t));
    int lengths[3] = { 3, 1, 4 }, displacements[3] = { 9, 0, 5 };
    MPI_Type_indexed(3, lengths, displacements, MPI_SHORT, &t);
    ADD("indexed, out of order", committed(t));
    MPI_Aint byte_displacements[3] = { 100, 0, 48 };
    MPI_Type_create_hindexed(3, lengths, byte_displacements, MPI_INT, &t);
    ADD("hindexed", committed(t));
    int block_displacements[3] = { 7, 0, 2 };
    MPI_Type_create_indexed_block(3, 2, block_displacements, MPI_LONG, &t);
    ADD("indexed_block", committed(t));
    MPI_Type_create_hindexed_block(3, 2, byte_displacements, MPI_INT, &t);
    ADD("hindexed_block", committed(t));
    ADD("struct with gaps", committed(struct_type()));
    int sizes[3] = { 8, 9, 10 }, subsizes[3] = { 4, 3, 5 }, starts[3] = { 1, 2, 3 };
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    ADD("subarray C", committed(t));
    cases[n - 1].recv_type = MPI_DOUBLE, cases[n - 1].recv_factor = 60;
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
    ADD("subarray Fortran", committed(t));
    int gsizes[2] = { 10, 9 }, distribs[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
        dargs[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, psizes[2] = { 2, 2 };
    MPI_Type_create_darray(4, 3, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                           MPI_DOUBLE, &t);
    ADD("darray block/cyclic(2) C", committed(t));
    int distribs_f[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE }, dargs_f[2] = { 3, MPI_DISTRIBUTE_DFLT_DARG },
        psizes_f[2] = { 3, 1 };
    MPI_Type_create_darray(3, 1, 2, gsizes, distribs_f, dargs_f, psizes_f, MPI_ORDER_FORTRAN, MPI_FLOAT, &t);
    ADD("darray cyclic(3)/none Fortran", committed(t));
    int distribs_b[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK }, dargs_b[2] = { MPI_DISTRIBUTE_DFLT_DARG, 5 };
    MPI_Type_create_darray(4, 2, 2, gsizes, distribs_b, dargs_b, psizes, MPI_ORDER_C, MPI_INT, &t);
    ADD("darray cyclic/block(5) C", committed(t));
    MPI_Type_vector(8, 1, 2, MPI_INT, &inner);
    MPI_Type_create_resized(inner, -16, 100, &t);
    MPI_Type_free(&inner);
    ADD("resized, negative lb", committed(t));
    MPI_Type_vector(16, 2, 4, MPI_DOUBLE, &inner);
    MPI_Type_dup(inner, &t);
    MPI_Type_free(&inner);
    ADD("dup", committed(t));
    /* vector of struct of indexed, inside a subarray: four levels. */
    MPI_Datatype level1, level2, level3;
    MPI_Type_indexed(3, lengths, displacements, MPI_INT, &level1);
    int struct_lengths[2] = { 2, 1 };
    MPI_Aint struct_displacements[2] = { 0, 200 };
    MPI_Datatype struct_types[2] = { level1, MPI_DOUBLE };
    MPI_Type_create_struct(2, struct_lengths, struct_displacements, struct_types, &level2);
    MPI_Type_vector(3, 2, 5, level2, &level3);
    int sizes2[2] = { 4, 3 }, subsizes2[2] = { 2, 2 }, starts2[2] = { 1, 0 };
    MPI_Type_create_subarray(2, sizes2, subsizes2, starts2, MPI_ORDER_C, level3, &t);
    MPI_Type_free(&level1);
    MPI_Type_free(&level2);
    MPI_Type_free(&level3);
    ADD("nested four deep", committed(t));
    /* Zero-copy sized layouts: small blocks (staged) and large blocks (iovecs). */
    MPI_Type_vector(2048, 16, 32, MPI_DOUBLE, &t);
    ADD("vector of 128 B blocks", committed(t));
    cases[n - 1].recv_type = MPI_DOUBLE, cases[n - 1].recv_factor = 2048 * 16;
    MPI_Type_vector(16, 2048, 4096, MPI_DOUBLE, &t);
    ADD("vector of 16 KiB blocks", committed(t));
    /* Long enough to be read in chunks behind the copy the first time. */
    MPI_Type_vector(512, 128, 256, MPI_DOUBLE, &t);
    ADD("vector of 512 blocks of 1 KiB", committed(t));
    MPI_Type_vector(512, 1, 1024, MPI_DOUBLE, &t);
    ADD("vector of isolated 8 B blocks", committed(t));
    /* Legal, and not what a layout learner expects: blocks at decreasing addresses, and a
     * send layout whose blocks overlap (each byte is sent as often as the type map names
     * it; a receive layout may not overlap, so a contiguous receive). */
    MPI_Type_vector(16, 2048, -4096, MPI_DOUBLE, &t);
    ADD("vector of 16 KiB blocks, negative stride", committed(t));
    MPI_Type_vector(8, 4096, 2048, MPI_DOUBLE, &t);
    ADD("vector of overlapping 32 KiB blocks", committed(t));
    cases[n - 1].recv_type = MPI_DOUBLE, cases[n - 1].recv_factor = 8 * 4096;
#undef ADD
    return n;
}

/* Room for @count elements of @type, with guard bytes either side: returns the buffer
 * pointer to pass to MPI (possibly inside the allocation, for negative bounds). */
typedef struct region {
    unsigned char *allocation, *buf;
    size_t size;
} region;

static region region_for(MPI_Datatype type, int count, int fill, unsigned seed)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Aint last = count > 0 ? (count - 1) * extent : 0;
    MPI_Aint low = true_lb < true_lb + last ? true_lb : true_lb + last;
    MPI_Aint high = true_lb + true_extent > true_lb + last + true_extent ? true_lb + true_extent
                                                                        : true_lb + last + true_extent;
    region r;
    r.size = (size_t)(high - low) + 128;
    r.allocation = malloc(r.size);
    r.buf = r.allocation + 64 - low;
    for (size_t i = 0; i < r.size; i++)
        r.allocation[i] = fill >= 0 ? (unsigned char)fill : (unsigned char)(i * 131u + seed * 7u + 1u);
    return r;
}

static MPI_Comm comm;

static void exchange(const layout_case *c, int count, int sender, int receiver, int rank)
{
    MPI_Datatype recv_type = c->recv_type != MPI_DATATYPE_NULL ? c->recv_type : c->type;
    int recv_count = c->recv_type != MPI_DATATYPE_NULL ? count * c->recv_factor : count;
    if (rank == sender) {
        region source = region_for(c->type, count, -1, (unsigned)count);
        MPI_Send(source.buf, count, c->type, receiver, 1, comm);
        int rc = MPIX_Send_zcopy(source.buf, count, c->type, receiver, 2, comm);
        CHECK(rc == MPI_SUCCESS, "%s x%d: MPIX_Send_zcopy: %s", c->name, count, mpix_test_error_string(rc));
        free(source.allocation);
    } else if (rank == receiver) {
        region reference = region_for(recv_type, recv_count, 0xEE, 0), result = region_for(recv_type, recv_count, 0xEE, 0);
        MPI_Status expected, got;
        MPI_Recv(reference.buf, recv_count, recv_type, sender, 1, comm, &expected);
        int rc = MPIX_Recv_zcopy(result.buf, recv_count, recv_type, sender, 2, comm, &got);
        CHECK(rc == MPI_SUCCESS, "%s x%d: MPIX_Recv_zcopy: %s", c->name, count, mpix_test_error_string(rc));
        size_t first = result.size;
        for (size_t i = 0; i < result.size; i++)
            if (result.allocation[i] != reference.allocation[i]) {
                first = i;
                break;
            }
        CHECK(first == result.size, "%s x%d from %d: byte %zu differs (got %02x, MPI_Recv put %02x)", c->name, count,
              sender, first, first < result.size ? result.allocation[first] : 0,
              first < result.size ? reference.allocation[first] : 0);
        int expected_count, got_count, expected_elements, got_elements;
        MPI_Get_count(&expected, recv_type, &expected_count);
        MPI_Get_count(&got, recv_type, &got_count);
        MPI_Get_elements(&expected, recv_type, &expected_elements);
        MPI_Get_elements(&got, recv_type, &got_elements);
        CHECK(got_count == expected_count && got_elements == expected_elements,
              "%s x%d: count %d elements %d, MPI_Recv says %d and %d", c->name, count, got_count, got_elements,
              expected_count, expected_elements);
        CHECK(got.MPI_SOURCE == sender && got.MPI_TAG == 2, "%s: status source %d tag %d", c->name, got.MPI_SOURCE,
              got.MPI_TAG);
        free(reference.allocation);
        free(result.allocation);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    layout_case cases[64];
    mpix_test_start(&argc, &argv, &rank, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int ncases = make_cases(cases);
    int partner = size == 1 ? 0 : (rank % 2 == 0 ? (rank + 1 < size ? rank + 1 : 0) : rank - 1);
    int odd_last = size % 2 == 1 && size > 1;

    for (int k = 0; k < ncases && size > 1; k++) {
        int type_size;
        MPI_Type_size(cases[k].type, &type_size);
        int counts[4] = { 0, 1, 3, 65536 / (type_size > 0 ? type_size : 1) + 1 };
        for (int i = 0; i < 4; i++) {
            /* even -> odd, then odd -> even; the odd last rank sends to 0 in a third step. */
            for (int direction = 0; direction < 2; direction++) {
                int sender = direction == 0 ? (rank % 2 == 0 ? rank : partner) : (rank % 2 == 1 ? rank : partner);
                int receiver = sender == rank ? partner : rank;
                if (!(odd_last && rank == size - 1))
                    exchange(&cases[k], counts[i], sender, receiver, rank);
            }
            if (odd_last && (rank == size - 1 || rank == 0)) {
                exchange(&cases[k], counts[i], size - 1, 0, rank);
                exchange(&cases[k], counts[i], 0, size - 1, rank);
            }
        }
    }

    if (size > 1) {
        const char *expect = getenv("MPIX_TEST_ZCOPY_EXPECT");
        const zcopy_counters counters = zcopy_stats_of(comm), *s = &counters;
        unsigned long rts = s->sent_zero_copy, mpi = s->sent_mpi;
        if (expect && !strcmp(expect, "mpi"))
            CHECK(rts == 0 && mpi > 0, "expected only the MPI path: %lu zero-copy, %lu MPI", rts, mpi);
        else if (expect && !strcmp(expect, "direct"))
            CHECK(s->pulled_staged == 0 && s->pulled_direct > 0, "staged %lu, direct %lu", s->pulled_staged,
                  s->pulled_direct);
        else if (expect && !strcmp(expect, "split"))
            CHECK(s->pulled_shared > 0 && s->pushed > 0 && s->push_refused == 0,
                  "receives with the sender's part %lu, parts written for receivers %lu, refused %lu",
                  s->pulled_shared, s->pushed, s->push_refused);
        else if (expect && !strcmp(expect, "split_refused"))
            /* The first offer to each peer is taken and refused; no more offers follow. */
            CHECK(rts > 0 && s->pulled_shared == 0 && s->pushed == 0 && s->push_refused > 0 &&
                      s->push_refused <= (unsigned long)size,
                  "zero-copy %lu, receives with the sender's part %lu, parts written %lu, refused %lu", rts,
                  s->pulled_shared, s->pushed, s->push_refused);
        else if (expect && !strcmp(expect, "piped"))
            /* Every zero-copy message through the sender's pipe; the kernel reads only the
             * rest of one whose sender stalled (another rank's message on this core). */
            CHECK(rts > 0 && s->pulled_piped > 0 && s->pulled_direct + s->pulled_staged == s->pipes_taken_over &&
                      s->pulled_shared == 0,
                  "zero-copy %lu, piped %lu, direct %lu, staged %lu, taken over %lu, shared %lu", rts,
                  s->pulled_piped, s->pulled_direct, s->pulled_staged, s->pipes_taken_over, s->pulled_shared);
        else if (expect && !strcmp(expect, "staged"))
            CHECK(s->pulled_staged > 0 && s->pulled_direct == 0, "staged %lu, direct %lu", s->pulled_staged,
                  s->pulled_direct);
        else {
            CHECK(rts > 0, "no zero-copy send happened (MPI %lu, eager %lu)", mpi, s->sent_eager);
            CHECK(s->pulled_direct > 0, "staged %lu, direct %lu", s->pulled_staged, s->pulled_direct);
            CHECK(s->sent_fragmented > 0, "the isolated 8 B blocks did not take the MPI path");
        }
        /* Long layouts are read in chunks behind the copy, somewhere: a process that read
         * a peer's receive layout while helping it already knows that peer's send layout
         * of the same datatype (one id for both), and reads nothing. */
        unsigned long pipelined = 0;
        MPI_Allreduce(&s->layouts_pipelined, &pipelined, 1, MPI_UNSIGNED_LONG, MPI_SUM, comm);
        CHECK(s->layouts_pipelined <= s->layouts_read, "layouts read %lu, of them pipelined %lu", s->layouts_read,
              s->layouts_pipelined);
        if (!expect || !strcmp(expect, "split") || !strcmp(expect, "direct") || !strcmp(expect, "staged")) {
            CHECK(pipelined > 0, "no layout was read in chunks");
        }
    }
    for (int k = 0; k < ncases; k++) {
        int ni, na, nt, combiner;
        MPI_Type_get_envelope(cases[k].type, &ni, &na, &nt, &combiner);
        if (combiner != MPI_COMBINER_NAMED)
            MPI_Type_free(&cases[k].type);
    }
    MPI_Comm_free(&comm);
    return mpix_test_finish("zcopy layouts");
}
