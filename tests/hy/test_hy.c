/* SPDX-License-Identifier: BSD-3-Clause */
/* Hybrid collectives against MPI, bit for bit: allgather, bcast from every root,
 * allreduce for every predefined (op, datatype) pair MPI defines plus user operations,
 * on MPI_COMM_WORLD and on reversed and interleaved communicators (non-block placement
 * when the split makes several nodes), odd counts, and 1000 back-to-back calls. The
 * split unit comes from MPIX_HY_SPLIT (set per test in meson.build). Data are small
 * integers (also in floating types), so any reduction order gives the same bits. */
#include <mpix/mpix.h>
#include "mpix_test.h"
#if MPIX_TEST_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#endif

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static int world_rank, world_size, full_matrix;

typedef struct type_case {
    MPI_Datatype type;
    const char *name;
    int kind;        /* 0 integer, 1 floating, 2 logical, 3 complex, 4 byte, 5 pair */
    size_t size;     /* bytes of one element as stored */
    size_t compared; /* significant bytes compared per element (long double: 10) */
} type_case;

typedef struct pair_int { int value, index; } pair_int;
typedef struct pair_float { float value; int index; } pair_float;
typedef struct pair_double { double value; int index; } pair_double;
typedef struct pair_long { long value; int index; } pair_long;
typedef struct pair_short { short value; int index; } pair_short;
typedef struct pair_long_double { long double value; int index; } pair_long_double;

#define T(type, ctype, kind) { type, #type, kind, sizeof(ctype), sizeof(ctype) }
/* A value-index pair: its trailing padding is no part of the result (MPI leaves it as it
 * finds it, and so may mpix where results travel between nodes by MPI). */
#define P(type, ctype) { type, #type, 5, sizeof(ctype), offsetof(ctype, index) + sizeof(int) }
static type_case types[] = {
    T(MPI_INT, int, 0), T(MPI_LONG, long, 0), T(MPI_SHORT, short, 0), T(MPI_UNSIGNED_SHORT, unsigned short, 0),
    T(MPI_UNSIGNED, unsigned, 0), T(MPI_UNSIGNED_LONG, unsigned long, 0), T(MPI_LONG_LONG, long long, 0),
    T(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0), T(MPI_SIGNED_CHAR, signed char, 0),
    T(MPI_UNSIGNED_CHAR, unsigned char, 0), T(MPI_INT8_T, int8_t, 0), T(MPI_INT16_T, int16_t, 0),
    T(MPI_INT32_T, int32_t, 0), T(MPI_INT64_T, int64_t, 0), T(MPI_UINT8_T, uint8_t, 0),
    T(MPI_UINT16_T, uint16_t, 0), T(MPI_UINT32_T, uint32_t, 0), T(MPI_UINT64_T, uint64_t, 0),
    T(MPI_AINT, MPI_Aint, 0), T(MPI_OFFSET, MPI_Offset, 0), T(MPI_COUNT, MPI_Count, 0),
    T(MPI_FLOAT, float, 1), T(MPI_DOUBLE, double, 1),
    { MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 1, sizeof(long double), 10 },
    T(MPI_C_BOOL, bool, 2),
    T(MPI_C_FLOAT_COMPLEX, float complex, 3), T(MPI_C_DOUBLE_COMPLEX, double complex, 3),
    T(MPI_BYTE, unsigned char, 4),
    P(MPI_2INT, pair_int), P(MPI_FLOAT_INT, pair_float), P(MPI_DOUBLE_INT, pair_double),
    P(MPI_LONG_INT, pair_long), P(MPI_SHORT_INT, pair_short),
};
#undef T
#undef P

typedef struct op_case {
    MPI_Op op;
    const char *name;
    unsigned kinds; /* bit k: valid for type kind k (MPI-3.1 §5.9.2) */
} op_case;

static op_case ops[] = {
    { MPI_MAX, "MPI_MAX", 1u << 0 | 1u << 1 }, { MPI_MIN, "MPI_MIN", 1u << 0 | 1u << 1 },
    { MPI_SUM, "MPI_SUM", 1u << 0 | 1u << 1 | 1u << 3 }, { MPI_PROD, "MPI_PROD", 1u << 0 | 1u << 1 | 1u << 3 },
    { MPI_LAND, "MPI_LAND", 1u << 0 | 1u << 2 }, { MPI_LOR, "MPI_LOR", 1u << 0 | 1u << 2 },
    { MPI_LXOR, "MPI_LXOR", 1u << 0 | 1u << 2 }, { MPI_BAND, "MPI_BAND", 1u << 0 | 1u << 4 },
    { MPI_BOR, "MPI_BOR", 1u << 0 | 1u << 4 }, { MPI_BXOR, "MPI_BXOR", 1u << 0 | 1u << 4 },
    { MPI_MAXLOC, "MPI_MAXLOC", 1u << 5 }, { MPI_MINLOC, "MPI_MINLOC", 1u << 5 },
};

/* Small values per (rank, index): products stay small, sums exact in every type. */
static void fill(const type_case *t, void *buffer, int count, int rank, int seed, int for_product)
{
    memset(buffer, 0, t->size * count);
    for (int i = 0; i < count; i++) {
        int v = for_product ? 1 + ((rank + i + seed) % 3 == 0) : (rank * 7 + i * 3 + seed) % 11;
        char *e = (char *)buffer + i * t->size;
        if (t->type == MPI_FLOAT) *(float *)e = v;
        else if (t->type == MPI_DOUBLE) *(double *)e = v;
        else if (t->type == MPI_LONG_DOUBLE) *(long double *)e = v;
        else if (t->type == MPI_C_BOOL) *(bool *)e = v & 1;
        else if (t->type == MPI_C_FLOAT_COMPLEX) *(float complex *)e = v + (v % 3) * I;
        else if (t->type == MPI_C_DOUBLE_COMPLEX) *(double complex *)e = v + (v % 3) * I;
        else if (t->type == MPI_2INT) *(pair_int *)e = (pair_int){ v, rank };
        else if (t->type == MPI_FLOAT_INT) *(pair_float *)e = (pair_float){ (float)v, rank };
        else if (t->type == MPI_DOUBLE_INT) *(pair_double *)e = (pair_double){ v, rank };
        else if (t->type == MPI_LONG_INT) *(pair_long *)e = (pair_long){ v, rank };
        else if (t->type == MPI_SHORT_INT) *(pair_short *)e = (pair_short){ (short)v, rank };
        else /* integers and bytes: the low bytes hold v */
            memcpy(e, &(long long){ v }, t->size < sizeof(long long) ? t->size : sizeof(long long));
    }
}

static int same(const type_case *t, const void *a, const void *b, int count)
{
    for (int i = 0; i < count; i++) {
        const char *x = (const char *)a + i * t->size, *y = (const char *)b + i * t->size;
        if (t->type == MPI_SHORT_INT) { /* padding between value and index */
            const pair_short *p = (const void *)x, *q = (const void *)y;
            if (p->value != q->value || p->index != q->index)
                return 0;
        } else if (memcmp(x, y, t->compared) != 0) {
            return 0;
        }
    }
    return 1;
}

/* A user-defined commutative operation (elementwise sum of ints) and a non-commutative
 * one (keeps the left operand: the result is rank 0's input). */
static void user_sum(void *in, void *inout, int *length, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *length; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void user_first(void *in, void *inout, int *length, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *length; i++)
        ((int *)inout)[i] = ((int *)in)[i];
}

static void check_allreduce(MPI_Comm comm, MPI_Comm hy, const type_case *t, MPI_Op op, const char *op_name, int count)
{
    int rank;
    void *slot, *result;
    MPI_Win win;
    MPI_Comm_rank(comm, &rank);
    char *input = malloc(t->size * count + 1), *expected = malloc(t->size * count + 1);
    int rc = MPIX_Hy_allreduce_create(hy, count, t->type, op, &slot, &result, &win);
    CHECK(rc == MPI_SUCCESS, "allreduce_create %s %s: %s", op_name, t->name, mpix_test_error_string(rc));
    for (int seed = 0; seed < 2 && rc == MPI_SUCCESS; seed++) {
        fill(t, input, count, rank, seed, op == MPI_PROD);
        memset(expected, 0, t->size * count);
        MPI_Allreduce(input, expected, count, t->type, op, comm);
        if (seed == 1) /* in place: the input written into the slot first */
            memcpy(slot, input, t->size * count);
        rc = MPIX_Hy_allreduce(seed == 1 ? MPI_IN_PLACE : input, win);
        CHECK(rc == MPI_SUCCESS && same(t, expected, result, count), "allreduce %s %s count %d%s differs", op_name,
              t->name, count, seed ? " (in place)" : "");
    }
    if (rc == MPI_SUCCESS)
        MPIX_Hy_free(&win);
    free(input);
    free(expected);
}

/* Allreduces from a send buffer back to back, inputs changing every call, mixed with an
 * in-place call every 7th: a process that returns first writes the next call's inputs
 * (into the slots below 8 KiB, partly into the result above) while the others may still
 * read this call's result. Values are integers in doubles: every order of summing gives
 * the same bits. */
static void check_allreduce_rounds(MPI_Comm comm, MPI_Comm hy, int count, int rounds, const char *label)
{
    int rank, size, wrong = 0;
    double *slot, *result, *input = malloc(sizeof(double) * count);
    MPI_Win win;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int rc = MPIX_Hy_allreduce_create(hy, count, MPI_DOUBLE, MPI_SUM, &slot, &result, &win);
    CHECK(rc == MPI_SUCCESS, "%s: allreduce_create of %d doubles: %s", label, count, mpix_test_error_string(rc));
    for (int round = 0; round < rounds && rc == MPI_SUCCESS; round++) {
        int in_place = round % 7 == 6;
        double *into = in_place ? slot : input;
        for (int i = 0; i < count; i++)
            into[i] = (double)(rank * 1000 + round * 7 + i % 13);
        rc = MPIX_Hy_allreduce(in_place ? MPI_IN_PLACE : input, win);
        for (int i = 0; i < count; i++) /* sum over ranks r of r*1000 + round*7 + i%13 */
            wrong += result[i] != 1000.0 * size * (size - 1) / 2 + (double)size * (round * 7 + i % 13);
    }
    CHECK(rc == MPI_SUCCESS && wrong == 0, "%s: %d wrong elements in %d back-to-back allreduces of %d doubles",
          label, wrong, rounds, count);
    if (rc == MPI_SUCCESS)
        MPIX_Hy_free(&win);
    free(input);
}

static void run(MPI_Comm comm, const char *label)
{
    int rank, size, node, nodes;
    MPI_Comm hy, node_comm, bridge;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CHECK(MPIX_Hy_comm_create(comm, MPI_INFO_NULL, &hy) == MPI_SUCCESS, "%s: hy_comm_create", label);
    MPIX_Hy_comm_query(hy, &node_comm, &bridge, &node, &nodes);
    CHECK(node >= 0 && node < nodes && nodes <= size, "%s: node %d of %d", label, node, nodes);

    /* Allgather, odd count, 1000 calls back to back (20 checked against MPI). */
    enum { COUNT = 3 };
    int mine[COUNT], *expected = malloc(sizeof(int) * COUNT * size), *result;
    MPI_Win win;
    CHECK(MPIX_Hy_allgather_create(hy, COUNT, MPI_INT, &result, &win) == MPI_SUCCESS, "%s: allgather_create", label);
    int wrong = 0, rounds = full_matrix ? 1000 : 50;
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < COUNT; i++)
            mine[i] = rank * 1000 + round * 10 + i;
        MPIX_Hy_allgather(mine, win);
        if (round % 50 == 0) {
            MPI_Allgather(mine, COUNT, MPI_INT, expected, COUNT, MPI_INT, comm);
            wrong += memcmp(expected, result, sizeof(int) * COUNT * size) != 0;
        } else {
            for (int r = 0; r < size; r++)
                wrong += result[r * COUNT + 2] != r * 1000 + round * 10 + 2;
        }
    }
    CHECK(wrong == 0, "%s: allgather differed in %d of %d rounds", label, wrong, rounds);
    /* The numa split keeps a domain's buffer in that domain's memory (libnuma). */
    const char *split = getenv("MPIX_HY_SPLIT");
#if MPIX_TEST_HAVE_NUMA
    int buffer_node = -1, cpu = sched_getcpu();
    if (split && strcmp(split, "numa") == 0 && numa_available() >= 0 && cpu >= 0 &&
        get_mempolicy(&buffer_node, NULL, 0, result, MPOL_F_NODE | MPOL_F_ADDR) == 0)
        CHECK(buffer_node == numa_node_of_cpu(cpu), "%s: node buffer on NUMA node %d, this process on %d", label,
              buffer_node, numa_node_of_cpu(cpu));
#else
    (void)split;
#endif
    MPIX_Hy_free(&win);
    free(expected);

    /* Allgather of a derived type (a strided pair of doubles) with count 0 as well. */
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &pair);
    MPI_Type_commit(&pair);
    double *pairs;
    double sent[4] = { rank, -1, rank * 2.0, -1 };
    CHECK(MPIX_Hy_allgather_create(hy, 1, pair, &pairs, &win) == MPI_SUCCESS, "%s: derived allgather", label);
    MPIX_Hy_allgather(sent, win);
    for (int r = 0; r < size; r++) {
        /* extent of the vector is 3 doubles: element r starts at 3r */
        CHECK(pairs[3 * r] == r && pairs[3 * r + 2] == 2.0 * r, "%s: derived slot %d", label, r);
    }
    MPIX_Hy_free(&win);
    MPI_Type_free(&pair);
    int *nothing;
    CHECK(MPIX_Hy_allgather_create(hy, 0, MPI_INT, &nothing, &win) == MPI_SUCCESS &&
              MPIX_Hy_allgather(mine, win) == MPI_SUCCESS,
          "%s: count 0", label);
    MPIX_Hy_free(&win);

    /* Bcast from every root, in place and not. */
    enum { BCOUNT = 5 };
    double *buffer, data[BCOUNT], reference[BCOUNT];
    CHECK(MPIX_Hy_bcast_create(hy, BCOUNT, MPI_DOUBLE, &buffer, &win) == MPI_SUCCESS, "%s: bcast_create", label);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < BCOUNT; i++)
            data[i] = reference[i] = root * 100.0 + i + (rank == root ? 0 : 0.5);
        MPI_Bcast(reference, BCOUNT, MPI_DOUBLE, root, comm);
        if (root % 2 && rank == root) {
            MPIX_Win_spin_barrier(win); /* in place: write only after the node is done reading */
            memcpy(buffer, data, sizeof data);
        } else if (root % 2) {
            MPIX_Win_spin_barrier(win);
        }
        CHECK(MPIX_Hy_bcast(root % 2 ? MPI_IN_PLACE : data, root, win) == MPI_SUCCESS, "%s: bcast", label);
        CHECK(memcmp(buffer, reference, sizeof reference) == 0, "%s: bcast from root %d differs", label, root);
    }
    /* Back to back, roots in turn: leaders' roots (arrivals, no barrier) interleaved with
     * followers' roots (barriers) on the same window; no lost wake-up, no stale data. */
    int bcast_wrong = 0, bcast_rounds = full_matrix ? 1000 : 100;
    for (int round = 0; round < bcast_rounds; round++) {
        int root = round % size;
        for (int i = 0; i < BCOUNT; i++)
            data[i] = root * 1e6 + round * 10 + i;
        CHECK(MPIX_Hy_bcast(data, root, win) == MPI_SUCCESS, "%s: bcast round %d", label, round);
        for (int i = 0; i < BCOUNT; i++)
            bcast_wrong += buffer[i] != root * 1e6 + round * 10 + i;
    }
    CHECK(bcast_wrong == 0, "%s: %d wrong elements in %d back-to-back bcasts", label, bcast_wrong, bcast_rounds);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int rc = MPIX_Hy_bcast(data, size, win);
    CHECK(rc != MPI_SUCCESS && strstr(mpix_test_error_string(rc), "root"), "%s: bad root: '%s'", label,
          mpix_test_error_string(rc));
    MPIX_Hy_free(&win);

    /* Allreduce: every valid pair on the full run, a sample otherwise. */
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            if ((ops[o].kinds >> types[t].kind) & 1u)
                if (full_matrix || (ops[o].op == MPI_SUM && types[t].type == MPI_DOUBLE) ||
                    (ops[o].op == MPI_MAXLOC && types[t].type == MPI_2INT))
                    check_allreduce(comm, hy, &types[t], ops[o].op, ops[o].name, 7);
    MPI_Op sum_op, first_op;
    MPI_Op_create(user_sum, 1, &sum_op);
    MPI_Op_create(user_first, 0, &first_op);
    check_allreduce(comm, hy, &types[0], sum_op, "user commutative sum", 1001);
    check_allreduce(comm, hy, &types[0], first_op, "user non-commutative", 4);
    check_allreduce_rounds(comm, hy, 512, full_matrix ? 1000 : 50, label);   /* 4 KiB */
    check_allreduce_rounds(comm, hy, 4096, full_matrix ? 300 : 20, label);   /* 32 KiB */
    MPI_Op_free(&sum_op);
    MPI_Op_free(&first_op);

    MPI_Comm_free(&hy);
}

/* Bad arguments to the setup calls: an error on every process (they agree before the
 * collective allocation), never a crash or a hang, and the communicator still works. */
static void bad_arguments(MPI_Comm comm, const char *label)
{
    MPI_Comm hy;
    MPI_Win win = MPI_WIN_NULL;
    void *result, *slot;
    int rank;
    MPI_Comm_rank(comm, &rank);
    CHECK(MPIX_Hy_comm_create(comm, MPI_INFO_NULL, &hy) == MPI_SUCCESS, "%s: hy_comm_create", label);
    MPI_Comm_set_errhandler(hy, MPI_ERRORS_RETURN);
    struct {
        const char *what;
        int code;
    } calls[] = {
        { "allgather, MPI_DATATYPE_NULL", MPIX_Hy_allgather_create(hy, 4, MPI_DATATYPE_NULL, &result, &win) },
        { "allgather, NULL result", MPIX_Hy_allgather_create(hy, 4, MPI_INT, NULL, &win) },
        { "allgather, NULL win", MPIX_Hy_allgather_create(hy, 4, MPI_INT, &result, NULL) },
        { "bcast, count -1", MPIX_Hy_bcast_create(hy, -1, MPI_INT, &result, &win) },
        { "bcast, NULL buffer", MPIX_Hy_bcast_create(hy, 4, MPI_INT, NULL, &win) },
        { "allreduce, MPI_OP_NULL", MPIX_Hy_allreduce_create(hy, 4, MPI_INT, MPI_OP_NULL, &slot, &result, &win) },
        { "allreduce, NULL slot", MPIX_Hy_allreduce_create(hy, 4, MPI_INT, MPI_SUM, NULL, &result, &win) },
        /* Only one process passes the bad argument: every process must fail. */
        { "bcast, NULL buffer on rank 0 only",
          MPIX_Hy_bcast_create(hy, 4, MPI_INT, rank == 0 ? NULL : &result, &win) },
        { "allreduce, MPI_DATATYPE_NULL on rank 0 only",
          MPIX_Hy_allreduce_create(hy, 4, rank == 0 ? MPI_DATATYPE_NULL : MPI_INT, MPI_SUM, &slot, &result, &win) },
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        CHECK(calls[i].code != MPI_SUCCESS, "%s: %s returned success", label, calls[i].what);
    CHECK(win == MPI_WIN_NULL, "%s: a failed setup returned a window", label);
    MPI_Comm not_hybrid;
    MPI_Comm_dup(comm, &not_hybrid);
    MPI_Comm_set_errhandler(not_hybrid, MPI_ERRORS_RETURN);
    CHECK(MPIX_Hy_bcast_create(not_hybrid, 4, MPI_INT, &result, &win) != MPI_SUCCESS, "%s: not hybrid", label);
    MPI_Comm_free(&not_hybrid);
    int *data;
    CHECK(MPIX_Hy_bcast_create(hy, 1, MPI_INT, &data, &win) == MPI_SUCCESS, "%s: bcast after errors", label);
    if (rank == 0)
        data[0] = 42;
    MPIX_Hy_bcast(MPI_IN_PLACE, 0, win);
    CHECK(data[0] == 42, "%s: bcast after errors gives %d", label, data[0]);
    MPIX_Hy_free(&win);
    MPI_Comm_free(&hy);
}

int main(int argc, char **argv)
{
    mpix_test_start(&argc, &argv, &world_rank, &world_size);
    full_matrix = getenv("MPIX_TEST_HY_FULL") != NULL;
    run(MPI_COMM_WORLD, "world");
    MPI_Comm reversed, interleaved;
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
    run(reversed, "reversed");
    MPI_Comm_split(MPI_COMM_WORLD, 0, (world_rank % 2) * world_size + world_rank, &interleaved);
    run(interleaved, "interleaved");
    bad_arguments(MPI_COMM_WORLD, "world");
    bad_arguments(reversed, "reversed");
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&interleaved);
    return mpix_test_finish("hy");
}
