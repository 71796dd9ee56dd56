/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench common: what the shared layer costs on top of the MPI call it wraps.
 * Every module reads its hints and finds its per-object state through these paths. */
#include "bench.h"
#include "common/hint.h"
#include "common/keyval.h"

#include <stdlib.h>

typedef struct hint_context {
    MPI_Info info;
} hint_context;

static void mpix_typed_hints(void *context, int iterations)
{
    hint_context *hints = context;
    mpix_hint_value value;
    for (int i = 0; i < iterations; i++) {
        mpix_hint_get(hints->info, MPIX_HINT_ALLOC_TYPE, &value);
        mpix_hint_get(hints->info, MPIX_HINT_STORAGE_FACTOR, &value);
        mpix_hint_get(hints->info, MPIX_HINT_STORAGE_OFFSET, &value);
        mpix_hint_get(hints->info, MPIX_HINT_ACCESS_STYLE, &value);
    }
}

static void raw_info_get(void *context, int iterations)
{
    hint_context *hints = context;
    char value[MPI_MAX_INFO_VAL + 1];
    int found;
    for (int i = 0; i < iterations; i++) {
        MPI_Info_get(hints->info, "alloc_type", MPI_MAX_INFO_VAL, value, &found);
        MPI_Info_get(hints->info, "storage_alloc_factor", MPI_MAX_INFO_VAL, value, &found);
        MPI_Info_get(hints->info, "storage_alloc_offset", MPI_MAX_INFO_VAL, value, &found);
        MPI_Info_get(hints->info, "access_style", MPI_MAX_INFO_VAL, value, &found);
    }
}

static int delete_state(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static mpix_keyval bench_keyval = MPIX_COMM_KEYVAL_INIT(delete_state);

typedef struct state_context {
    MPI_Comm comm;
    int raw_keyval;
} state_context;

static void mpix_state_lookup(void *context, int iterations)
{
    state_context *state = context;
    void *value;
    for (int i = 0; i < iterations; i++)
        mpix_comm_attr_get(state->comm, &bench_keyval, &value);
}

static void raw_attr_get(void *context, int iterations)
{
    state_context *state = context;
    void *value;
    int found;
    for (int i = 0; i < iterations; i++)
        MPI_Comm_get_attr(state->comm, state->raw_keyval, &value, &found);
}

int bench_common(const bench_options *options)
{
    int iterations = options->quick ? 2000 : 20000;
    hint_context hints;
    state_context state;

    MPI_Info_create(&hints.info);
    MPI_Info_set(hints.info, "alloc_type", "storage");
    MPI_Info_set(hints.info, "storage_alloc_factor", "0.5");
    MPI_Info_set(hints.info, "storage_alloc_offset", "4096");
    MPI_Info_set(hints.info, "access_style", "read_mostly,sequential");
    bench_heading(options, "common", "mpix typed, validated lookup", "raw MPI call");
    bench_stats mpix_time, raw_time;
    bench_time_pair(options, mpix_typed_hints, &hints, raw_info_get, &hints, iterations, &mpix_time, &raw_time);
    bench_row(options, "common", "4 hints: mpix_hint_get vs MPI_Info_get", 0, mpix_time, raw_time);
    MPI_Info_free(&hints.info);

    MPI_Comm_dup(options->comm, &state.comm);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &state.raw_keyval, NULL);
    MPI_Comm_set_attr(state.comm, state.raw_keyval, &state);
    mpix_comm_attr_set(state.comm, &bench_keyval, malloc(1));
    bench_time_pair(options, mpix_state_lookup, &state, raw_attr_get, &state, iterations * 10, &mpix_time,
                    &raw_time);
    bench_row(options, "common", "object state: mpix vs MPI_Comm_get_attr", 0, mpix_time, raw_time);
    MPI_Comm_free(&state.comm);
    MPI_Comm_free_keyval(&state.raw_keyval);
    return 0;
}
