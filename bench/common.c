/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-bench common: what the shared layer costs on top of the MPI calls it makes.
 * Every object mpix makes reads its settings (MPIX_Info_validate reads them all, as the
 * creation calls do for their module), and every call finds its object's state through
 * an attribute (MPIX_Hy_comm_query is such a lookup and nothing else). */
#include "bench.h"

#include <mpix/mpix.h>
#include <stdio.h>

typedef struct hint_context {
    MPI_Info info;
    int keys;
} hint_context;

static void validate_settings(void *context, int iterations)
{
    hint_context *hints = context;
    for (int i = 0; i < iterations; i++)
        MPIX_Info_validate(hints->info);
}

/* The floor of any lookup: one MPI_Info_get per setting mpix knows. */
static void raw_info_get(void *context, int iterations)
{
    hint_context *hints = context;
    char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
    int found;
    for (int i = 0; i < iterations; i++)
        for (int k = 0; k < hints->keys; k++) {
            snprintf(key, sizeof key, "key_%d", k);
            MPI_Info_get(hints->info, key, MPI_MAX_INFO_VAL, value, &found);
        }
}

typedef struct state_context {
    MPI_Comm hy_comm;
    int raw_keyval;
} state_context;

static void hy_query(void *context, int iterations)
{
    state_context *state = context;
    MPI_Comm node_comm, bridge_comm;
    int node, nodes;
    for (int i = 0; i < iterations; i++)
        MPIX_Hy_comm_query(state->hy_comm, &node_comm, &bridge_comm, &node, &nodes);
}

static void raw_attr_get(void *context, int iterations)
{
    state_context *state = context;
    void *value;
    int found;
    for (int i = 0; i < iterations; i++)
        MPI_Comm_get_attr(state->hy_comm, state->raw_keyval, &value, &found);
}

int bench_common(const bench_options *options)
{
    int iterations = options->quick ? 2000 : 20000;
    hint_context hints = { .keys = 33 };
    state_context state;
    char name[96];

    MPI_Info_create(&hints.info);
    MPI_Info_set(hints.info, "alloc_type", "storage");
    MPI_Info_set(hints.info, "storage_alloc_factor", "0.5");
    MPI_Info_set(hints.info, "storage_alloc_offset", "4096");
    MPI_Info_set(hints.info, "access_style", "read_mostly,sequential");
    bench_heading(options, "common", "mpix call", "raw MPI calls");
    bench_stats mpix_time, raw_time;
    bench_time_pair(options, validate_settings, &hints, raw_info_get, &hints, iterations, &mpix_time, &raw_time);
    snprintf(name, sizeof name, "every setting: MPIX_Info_validate vs %d MPI_Info_get", hints.keys);
    bench_row(options, "common", name, 0, mpix_time, raw_time);
    MPI_Info_free(&hints.info);

    MPIX_Hy_comm_create(options->comm, MPI_INFO_NULL, &state.hy_comm);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &state.raw_keyval, NULL);
    MPI_Comm_set_attr(state.hy_comm, state.raw_keyval, &state);
    bench_time_pair(options, hy_query, &state, raw_attr_get, &state, iterations * 10, &mpix_time, &raw_time);
    bench_row(options, "common", "object state: MPIX_Hy_comm_query vs MPI_Comm_get_attr", 0, mpix_time, raw_time);
    MPI_Comm_delete_attr(state.hy_comm, state.raw_keyval);
    MPI_Comm_free_keyval(&state.raw_keyval);
    MPI_Comm_free(&state.hy_comm);
    return 0;
}
