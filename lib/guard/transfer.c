/* SPDX-License-Identifier: BSD-3-Clause */
/* Starting guarded transfers, ordering the ones whose memory overlaps as the blocking
 * program would, and retiring them: receives unpacked into the user's buffer, pages
 * given back. Every wait here is for a transfer an earlier call started, which the
 * blocking program had already finished by now, so none can deadlock where it did not. */
#include "guard.h"
#include "exposed.h"
#include "common/datatype.h"
#include "common/error.h"

#include <stdlib.h>
#include <unistd.h>
#include <string.h>

enum { BATCH = 64 };

int mpix_guard_span(const mpix_guard_state *state, const void *buf, int count, MPI_Datatype datatype,
                    uintptr_t *byte_lo, uintptr_t *byte_hi, uintptr_t *page_lo, uintptr_t *page_hi)
{
    MPI_Aint true_lb, true_extent, lb, extent;
    int rc = PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (rc != MPI_SUCCESS)
        return rc;
    *byte_lo = *byte_hi = *page_lo = *page_hi = 0;
    if (count == 0 || true_extent == 0)
        return MPI_SUCCESS;
    MPI_Aint stride = (MPI_Aint)(count - 1) * extent;
    MPI_Aint lo = true_lb + (stride < 0 ? stride : 0);
    MPI_Aint hi = true_lb + true_extent + (stride > 0 ? stride : 0);
    *byte_lo = (uintptr_t)buf + (uintptr_t)lo;
    *byte_hi = (uintptr_t)buf + (uintptr_t)hi;
    *page_lo = *byte_lo & ~(state->page_size - 1);
    *page_hi = (*byte_hi + state->page_size - 1) & ~(state->page_size - 1);
    return MPI_SUCCESS;
}

int mpix_guard_select_all(const mpix_guard_transfer *transfer, const void *context)
{
    (void)transfer, (void)context;
    return 1;
}

int mpix_guard_select_pages(const mpix_guard_transfer *transfer, const void *context)
{
    const mpix_guard_range *range = context;
    return mpix_guard_ranges_meet(transfer->byte_lo, transfer->byte_hi, range->lo, range->hi) ||
           mpix_guard_ranges_meet(transfer->page_lo, transfer->page_hi, range->lo, range->hi);
}

static int select_done(const mpix_guard_transfer *transfer, const void *context)
{
    (void)context;
    return transfer->done;
}

static int select_must_complete(const mpix_guard_transfer *transfer, const void *context)
{
    (void)context;
    return transfer->must_complete;
}

/* A receive must land after earlier transfers of the same bytes, and cannot make pages
 * inaccessible that an in-place send is still being read from. */
static int select_before_recv(const mpix_guard_transfer *t, const void *context)
{
    const mpix_guard_transfer *incoming = context;
    if (t->kind == MPIX_GUARD_SEND_COPY)
        return 0;
    return mpix_guard_ranges_meet(t->byte_lo, t->byte_hi, incoming->byte_lo, incoming->byte_hi) ||
           (t->kind == MPIX_GUARD_SEND_INPLACE &&
            mpix_guard_ranges_meet(t->page_lo, t->page_hi, incoming->page_lo, incoming->page_hi));
}

/* A send must see what earlier receives put into its bytes. */
static int select_before_send(const mpix_guard_transfer *t, const void *context)
{
    const mpix_guard_transfer *incoming = context;
    return t->kind == MPIX_GUARD_RECV &&
           mpix_guard_ranges_meet(t->byte_lo, t->byte_hi, incoming->byte_lo, incoming->byte_hi);
}

static void note_completion(mpix_guard_state *state, mpix_guard_transfer *t, const MPI_Status *status, int rc)
{
    t->done = 1;
    t->request = MPI_REQUEST_NULL;
    if (rc != MPI_SUCCESS) {
        if (state->pending_error == MPI_SUCCESS)
            state->pending_error = rc;
        t->packed_bytes = 0;
        return;
    }
    if (t->kind == MPIX_GUARD_RECV) {
        int bytes = 0;
        if ((rc = PMPI_Get_count(status, MPI_PACKED, &bytes)) != MPI_SUCCESS && state->pending_error == MPI_SUCCESS)
            state->pending_error = rc;
        t->packed_bytes = rc != MPI_SUCCESS || bytes == MPI_UNDEFINED ? 0 : bytes;
    }
}

static void append(mpix_guard_state *state, mpix_guard_transfer *t)
{
    t->chain = state->chain;
    if (state->last)
        state->last->next = t;
    else
        state->transfers = t;
    state->last = t;
}

/* Sort key for merging page ranges. */
static int by_page_lo(const void *a, const void *b)
{
    const mpix_guard_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts @ranges and merges those that touch; returns how many are left. */
static int merge_ranges(mpix_guard_range *ranges, int n)
{
    if (n == 0)
        return 0;
    qsort(ranges, (size_t)n, sizeof *ranges, by_page_lo);
    int kept = 0;
    for (int i = 1; i < n; i++) {
        if (ranges[i].lo <= ranges[kept].hi) {
            if (ranges[i].hi > ranges[kept].hi)
                ranges[kept].hi = ranges[i].hi;
        } else {
            ranges[++kept] = ranges[i];
        }
    }
    return kept + 1;
}

/* Unpack finished receives and drop the finished transfers of @batch from the list,
 * then give their pages the protection the remaining transfers need, one mprotect per
 * run. */
static void retire(mpix_guard_state *state, mpix_guard_transfer **batch, int n)
{
    mpix_guard_range received[BATCH], sent[BATCH];
    int n_received = 0, n_sent = 0;
    for (int i = 0; i < n; i++) {
        mpix_guard_transfer *t = batch[i];
        if (t->page_lo == t->page_hi)
            continue;
        if (t->kind == MPIX_GUARD_RECV)
            received[n_received++] = (mpix_guard_range){ t->page_lo, t->page_hi };
        else
            sent[n_sent++] = (mpix_guard_range){ t->page_lo, t->page_hi };
    }
    n_received = merge_ranges(received, n_received);
    n_sent = merge_ranges(sent, n_sent);
    for (int i = 0; i < n_received; i++)
        mpix_guard_open(state, received[i].lo, received[i].hi, 1);

    for (int i = 0; i < n; i++) {
        mpix_guard_transfer *t = batch[i];
        if (t->kind == MPIX_GUARD_RECV && t->packed_bytes > 0) {
            int type_size = 0, position = 0;
            int rc = PMPI_Type_size(t->datatype, &type_size);
            int elements = type_size > 0 ? t->packed_bytes / type_size : 0;
            if (elements > t->count)
                elements = t->count;
            if (rc == MPI_SUCCESS)
                rc = PMPI_Unpack(t->shadow, t->packed_bytes, &position, t->user, elements, t->datatype, t->comm);
            if (rc != MPI_SUCCESS && state->pending_error == MPI_SUCCESS)
                state->pending_error = rc;
        }
        if (t->kind == MPIX_GUARD_RECV && !mpix_type_is_named(t->datatype)) {
            int rc = PMPI_Type_free(&t->datatype);
            if (rc != MPI_SUCCESS && state->pending_error == MPI_SUCCESS)
                state->pending_error = rc;
        }
        if (t->shadow)
            mpix_guard_shadow_put(state, t->shadow, t->shadow_capacity);
    }

    /* Unlink, keeping issue order. */
    mpix_guard_transfer **link = &state->transfers;
    state->last = NULL;
    while (*link) {
        mpix_guard_transfer *t = *link;
        int leaving = 0;
        for (int i = 0; i < n && !leaving; i++)
            leaving = batch[i] == t;
        if (leaving) {
            *link = t->next;
            mpix_guard_record_free(state, t);
        } else {
            state->last = t;
            link = &t->next;
        }
    }
    state->stats.retired += (unsigned long)n;

    for (int i = 0; i < n_received; i++)
        mpix_guard_protect(state, received[i].lo, received[i].hi, 1);
    for (int i = 0; i < n_sent; i++)
        mpix_guard_protect(state, sent[i].lo, sent[i].hi, 0);
}

void mpix_guard_complete_where(mpix_guard_state *state, mpix_guard_select *select, const void *context)
{
    for (;;) {
        mpix_guard_transfer *batch[BATCH];
        MPI_Request requests[BATCH];
        MPI_Status statuses[BATCH];
        int n = 0, waiting = 0;
        for (mpix_guard_transfer *t = state->transfers; t && n < BATCH; t = t->next) {
            if (!select(t, context))
                continue;
            batch[n++] = t;
            if (!t->done)
                requests[waiting++] = t->request;
        }
        if (n == 0)
            break;
        if (waiting > 0) {
            int rc = PMPI_Waitall(waiting, requests, statuses);
            for (int i = 0, w = 0; i < n; i++) {
                if (batch[i]->done)
                    continue;
                int transfer_rc = rc == MPI_ERR_IN_STATUS ? statuses[w].MPI_ERROR : rc;
                note_completion(state, batch[i], &statuses[w], transfer_rc);
                w++;
            }
        }
        retire(state, batch, n);
    }
}

int mpix_guard_take_error(mpix_guard_state *state)
{
    int rc = state->pending_error;
    state->pending_error = MPI_SUCCESS;
    return rc;
}

void mpix_guard_progress(mpix_guard_state *state)
{
    int finished = 0;
    for (mpix_guard_transfer *t = state->transfers; t; t = t->next) {
        /* Protected transfers of the open chain retire with their chain, in one pass
         * over its pages; anything else that has finished is retired now (a copied send
         * holds only its copy, and a chain nobody touches may never close). */
        if (t->done || (t->chain == state->chain && t->page_lo < t->page_hi))
            continue;
        int flag = 0;
        MPI_Status status;
        int rc = PMPI_Test(&t->request, &flag, &status);
        if (flag || rc != MPI_SUCCESS) {
            note_completion(state, t, &status, rc);
            finished++;
        }
    }
    if (finished)
        mpix_guard_complete_where(state, select_done, NULL);
}

void mpix_guard_settle(mpix_guard_state *state)
{
    /* Raised depth: a fault MPI takes while these complete is let through and marks
     * more transfers, which the loop then finishes too. */
    state->depth++;
    mpix_guard_take_foreign(state);
    mpix_guard_complete_where(state, select_must_complete, NULL);
    state->depth--;
}

/* Finish the earlier transfers @incoming must come after; counts them. */
static void order_after(mpix_guard_state *state, mpix_guard_select *select, const mpix_guard_transfer *incoming)
{
    unsigned long before = state->stats.retired;
    mpix_guard_complete_where(state, select, incoming);
    state->stats.conflict_waits += state->stats.retired - before;
}

/* Pack a send whose span meets inaccessible pages from a copy of the span read through
 * /proc/self/mem, leaving the pages' protection alone. 0 when that cannot be done (no
 * /proc/self/mem, or a span too large to stage), and the caller opens the pages. */
static int read_hidden(mpix_guard_state *state, const mpix_guard_transfer *span, const void *buf, int count,
                       MPI_Datatype datatype, mpix_guard_transfer *t, int packed_size, int *position, MPI_Comm comm,
                       int *rc)
{
    size_t bytes = span->byte_hi - span->byte_lo;
    char *staged;
    size_t capacity;
    if (state->self_memory < 0 || bytes > (size_t)state->copy_bytes + state->page_size ||
        mpix_guard_shadow_get(state, bytes, &staged, &capacity) != MPI_SUCCESS)
        return 0;
    int done = pread(state->self_memory, staged, bytes, (off_t)span->byte_lo) == (ssize_t)bytes;
    if (done) {
        /* The datatype's offsets from buf land at the same offsets from the staged copy. */
        const char *staged_buf = staged - (span->byte_lo - (uintptr_t)buf);
        *rc = PMPI_Pack(staged_buf, count, datatype, t->shadow, packed_size, position, comm);
    }
    mpix_guard_shadow_put(state, staged, capacity);
    return done;
}

/* What a new transfer covers and how large it packs, after the earlier transfers it
 * must come after (@select) have finished. */
static int prepare(mpix_guard_state *state, const void *buf, int count, MPI_Datatype datatype, MPI_Comm comm,
                   mpix_guard_select *select, mpix_guard_transfer *probe, int *packed_size)
{
    int rc = mpix_guard_span(state, buf, count, datatype, &probe->byte_lo, &probe->byte_hi, &probe->page_lo,
                             &probe->page_hi);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Pack_size(count, datatype, comm, packed_size);
    if (rc == MPI_SUCCESS)
        order_after(state, select, probe);
    return rc;
}

int mpix_guard_start_send(mpix_guard_state *state, const void *buf, int count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, uintptr_t avoid_lo, uintptr_t avoid_hi, int protect)
{
    mpix_guard_transfer probe = { 0 };
    int packed_size = 0;
    int rc = prepare(state, buf, count, datatype, comm, select_before_send, &probe, &packed_size);
    if (rc != MPI_SUCCESS)
        return rc;

    int hidden = mpix_guard_pages_hidden(state, probe.page_lo, probe.page_hi);
    int in_place = packed_size > state->copy_bytes && !hidden &&
                   !mpix_guard_ranges_meet(probe.page_lo, probe.page_hi, avoid_lo, avoid_hi);
    mpix_guard_transfer *t = mpix_guard_record_new(state);
    if (!t)
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "guard: no memory for another transfer record");
    *t = probe;
    t->comm = comm;
    t->count = count;
    if (in_place) {
        t->kind = MPIX_GUARD_SEND_INPLACE;
        rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, &t->request);
        if (rc != MPI_SUCCESS) {
            mpix_guard_record_free(state, t);
            return rc;
        }
        /* Memory other processes reach (exposed.h) may be written by them as soon as
         * the program tells them: such a send is finished before the call returns. */
        int exposed = mpix_guard_exposed(t->byte_lo, t->byte_hi);
        if (!protect || exposed)
            t->page_lo = t->page_hi = 0;
        append(state, t);
        /* Unprotected pages cannot guard the program's next write: then the send is
         * finished before the call returns, as the blocking call would. */
        t->must_complete |= exposed || mpix_guard_protect(state, t->page_lo, t->page_hi, 0) != 0;
        state->stats.exposed += exposed;
        state->stats.sends_in_place++;
        return MPI_SUCCESS;
    }

    /* Copied: packed, so only the bytes the datatype names are read, and sent as
     * MPI_PACKED, which any receive of the same type signature matches (MPI-3.1 §4.2). */
    t->kind = MPIX_GUARD_SEND_COPY;
    rc = mpix_guard_shadow_get(state, (size_t)packed_size, &t->shadow, &t->shadow_capacity);
    if (rc != MPI_SUCCESS) {
        mpix_guard_record_free(state, t);
        return rc;
    }
    int position = 0;
    if (hidden && read_hidden(state, &probe, buf, count, datatype, t, packed_size, &position, comm, &rc)) {
        state->stats.hidden_reads++;
    } else {
        if (hidden)
            mpix_guard_open(state, probe.page_lo, probe.page_hi, 0);
        rc = PMPI_Pack(buf, count, datatype, t->shadow, packed_size, &position, comm);
        if (hidden)
            mpix_guard_protect(state, probe.page_lo, probe.page_hi, 0);
    }
    t->page_lo = t->page_hi = 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(t->shadow, position, MPI_PACKED, dest, tag, comm, &t->request);
    if (rc != MPI_SUCCESS) {
        mpix_guard_shadow_put(state, t->shadow, t->shadow_capacity);
        mpix_guard_record_free(state, t);
        return rc;
    }
    append(state, t);
    state->stats.sends_copied++;
    return MPI_SUCCESS;
}

/* Protecting a receive's pages and giving them back costs two mprotect calls and, when
 * the program touches them early, a fault; if the message arrives sooner than that costs,
 * waiting for it is cheaper. Polls for at most what two of guard's mprotect calls have
 * been costing (or MPIX_GUARD_POLL_NS). */
static int poll_until_done(mpix_guard_state *state, mpix_guard_transfer *t)
{
    double budget_ns = state->poll_ns >= 0 ? (double)state->poll_ns : 2 * state->mprotect_ns;
    if (budget_ns <= 0 || t->page_lo == t->page_hi)
        return 0;
    double deadline = PMPI_Wtime() + budget_ns * 1e-9;
    do {
        int flag = 0;
        MPI_Status status;
        int rc = PMPI_Test(&t->request, &flag, &status);
        if (flag || rc != MPI_SUCCESS) {
            note_completion(state, t, &status, rc);
            return 1;
        }
    } while (PMPI_Wtime() < deadline);
    return 0;
}

int mpix_guard_start_recv(mpix_guard_state *state, void *buf, int count, MPI_Datatype datatype, int source,
                          int tag, MPI_Comm comm, MPI_Message *message, int protect)
{
    mpix_guard_transfer probe = { 0 };
    int packed_size = 0;
    int rc = prepare(state, buf, count, datatype, comm, select_before_recv, &probe, &packed_size);
    if (rc != MPI_SUCCESS)
        return rc;

    mpix_guard_transfer *t = mpix_guard_record_new(state);
    if (!t)
        return mpix_error(MPIX_ERRKIND_UNSUPPORTED, "guard: no memory for another transfer record");
    *t = probe;
    t->kind = MPIX_GUARD_RECV;
    t->comm = comm;
    t->count = count;
    t->user = buf;
    t->datatype = datatype;
    /* The unpack comes after the call returned, when the program may have freed its
     * datatype: keep a duplicate of a derived one. */
    if (!mpix_type_is_named(datatype))
        rc = PMPI_Type_dup(datatype, &t->datatype);
    if (rc == MPI_SUCCESS)
        rc = mpix_guard_shadow_get(state, (size_t)packed_size, &t->shadow, &t->shadow_capacity);
    if (rc == MPI_SUCCESS)
        rc = message ? PMPI_Imrecv(t->shadow, packed_size, MPI_PACKED, message, &t->request)
                     : PMPI_Irecv(t->shadow, packed_size, MPI_PACKED, source, tag, comm, &t->request);
    if (rc != MPI_SUCCESS) {
        if (t->shadow)
            mpix_guard_shadow_put(state, t->shadow, t->shadow_capacity);
        if (t->datatype != datatype)
            (void)PMPI_Type_free(&t->datatype); /* the receive's own error is the one to report */
        mpix_guard_record_free(state, t);
        return rc;
    }
    state->stats.receives++;
    /* Memory other processes reach (exposed.h) may be read by them as soon as the
     * program tells them: such a receive is finished before the call returns. */
    int exposed = mpix_guard_exposed(t->byte_lo, t->byte_hi);
    if (exposed) {
        protect = 0;
        t->must_complete = 1;
        state->stats.exposed++;
    }
    if (protect && poll_until_done(state, t)) {
        /* The data is here already: unpack it now and leave the pages alone. */
        protect = 0;
        state->stats.receives_polled++;
    }
    if (!protect)
        t->page_lo = t->page_hi = 0;
    append(state, t);
    if (t->done)
        mpix_guard_complete_where(state, select_done, NULL);
    else
        t->must_complete |= mpix_guard_protect(state, t->page_lo, t->page_hi, 0) != 0;
    return MPI_SUCCESS;
}
