/* SPDX-License-Identifier: BSD-3-Clause */
/* Chains: guarded calls made one after another with no touch of guarded memory between
 * them. A chain seen twice in a row with the same calls (same buffers, counts, types,
 * peers, tags and communicator, in the same order) is learned; from then on its last
 * call completes the whole chain before returning. That call gets no page protection
 * and the program takes no fault: what the blocking program would have waited for at
 * that call is waited for there, and nothing of the program runs in between, so it
 * costs no correctness whichever way the program goes next. The earlier calls of the
 * chain stay protected, because the program could touch their buffers. */
#include "guard.h"

#include <string.h>
#include <uthash.h>

uint32_t mpix_guard_call_key(const uint64_t *words, int count)
{
    unsigned key;
    HASH_JEN(words, (unsigned)(sizeof *words * (size_t)count), key);   /* uthash's Jenkins hash */
    return key;
}

int mpix_guard_chain_call(mpix_guard_state *state, uint32_t key)
{
    if (!state->chain_open) {
        state->chain++;
        state->chain_open = 1;
        state->chain_length = 0;
        state->stats.chains++;
    }
    if (state->chain_length < MPIX_GUARD_CHAIN_KEYS)
        state->chain_keys[state->chain_length] = key;
    state->chain_length++;
    return state->chain_enabled && state->learned_length > 0 && state->chain_length == state->learned_length &&
           memcmp(state->chain_keys, state->learned_keys, sizeof(uint32_t) * (size_t)state->learned_length) == 0;
}

void mpix_guard_chain_end(mpix_guard_state *state)
{
    if (!state->chain_open)
        return;
    state->chain_open = 0;
    int length = state->chain_length;
    if (length > MPIX_GUARD_CHAIN_KEYS) {
        state->previous_length = state->learned_length = 0;
        return;
    }
    size_t bytes = sizeof(uint32_t) * (size_t)length;
    if (length == state->previous_length && memcmp(state->chain_keys, state->previous_keys, bytes) == 0) {
        memcpy(state->learned_keys, state->chain_keys, bytes);
        state->learned_length = length;
    } else {
        memcpy(state->previous_keys, state->chain_keys, bytes);
        state->previous_length = length;
        if (state->learned_length != length || memcmp(state->chain_keys, state->learned_keys, bytes) != 0)
            state->learned_length = 0;
    }
}

static int select_chain(const mpix_guard_transfer *transfer, const void *chain)
{
    return transfer->chain == *(const unsigned long *)chain;
}

void mpix_guard_chain_complete(mpix_guard_state *state)
{
    unsigned long chain = state->chain;
    mpix_guard_complete_where(state, select_chain, &chain);
    state->stats.chains_completed_at_last_call++;
    mpix_guard_chain_end(state);
}
