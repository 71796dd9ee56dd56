/* SPDX-License-Identifier: BSD-3-Clause */
/* The single copy of a zero-copy message: from the sender's layout, in the sender's
 * address space, into the receiver's layout. The receiver reads; for a large message the
 * sender writes a tail part meanwhile, so two cores share the one copy. The kernel's
 * price is per remote iovec (it pins the pages of each one), so large blocks go as iovec
 * lists, while runs of small blocks separated by small gaps are read as one span into a
 * staging buffer and scattered with memcpy (docs/PERFORMANCE.md has the measurements
 * behind the default thresholds). */
#include "zcopy.h"
#include "mpix_config.h"
#include "common/relax.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/uio.h>

enum { IOV_BATCH = 1024 };       /* UIO_MAXIOV */
enum { SPAN_PIECES = 4096 };

typedef mpix_layout_cursor cursor;

static MPI_Aint cursor_left(const cursor *c) { return c->blocks[c->index].length - c->used; }
static MPI_Aint cursor_offset(const cursor *c) { return c->blocks[c->index].offset + c->used; }

static void cursor_advance(cursor *c, MPI_Aint length)
{
    c->used += length;
    if (c->used == c->blocks[c->index].length) {
        c->index++;
        c->used = 0;
    }
}

static MPI_Aint min3(MPI_Aint a, MPI_Aint b, MPI_Aint c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }

/* Skips @bytes of the layout: where a part of the message starts. */
static void cursor_skip(cursor *c, MPI_Count bytes)
{
    while (bytes > 0 && c->index < c->count) {
        MPI_Aint length = cursor_left(c) < bytes ? cursor_left(c) : bytes;
        cursor_advance(c, length);
        bytes -= length;
    }
}

void mpix_layout_cursor_at(mpix_layout_cursor *c, const mpix_layout *layout, MPI_Count first)
{
    *c = (mpix_layout_cursor){ layout->blocks, layout->nblocks, 0, 0 };
    cursor_skip(c, first);
}

void mpix_layout_gather(mpix_layout_cursor *c, const char *base, char *to, MPI_Count bytes)
{
    while (bytes > 0 && c->index < c->count) {
        MPI_Aint length = cursor_left(c) < bytes ? cursor_left(c) : (MPI_Aint)bytes;
        memcpy(to, base + cursor_offset(c), length);
        cursor_advance(c, length);
        to += length;
        bytes -= length;
    }
}

void mpix_layout_scatter(mpix_layout_cursor *c, char *base, const char *from, MPI_Count bytes)
{
    while (bytes > 0 && c->index < c->count) {
        MPI_Aint length = cursor_left(c) < bytes ? cursor_left(c) : (MPI_Aint)bytes;
        memcpy(base + cursor_offset(c), from, length);
        cursor_advance(c, length);
        from += length;
        bytes -= length;
    }
}

/* process_vm_readv or process_vm_writev: one signature, the direction of the copy. */
typedef ssize_t (*cross_copy_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *, unsigned long,
                                 unsigned long);

static int copy_batch(cross_copy_fn copy, pid_t pid, struct iovec *local, int nlocal, struct iovec *remote,
                      int nremote, size_t bytes)
{
    ssize_t done = copy(pid, local, nlocal, remote, nremote, 0);
    if (done < 0)
        return errno;
    return (size_t)done == bytes ? 0 : EFAULT;
}

/* Whether [address, ...) continues the last entry of an iovec list. */
static int continues(const struct iovec *iov, int n, const char *address)
{
    return n > 0 && (const char *)iov[n - 1].iov_base + iov[n - 1].iov_len == address;
}

static void iov_add(struct iovec *iov, int *n, char *address, size_t length)
{
    if (continues(iov, *n, address))
        iov[*n - 1].iov_len += length;
    else
        iov[(*n)++] = (struct iovec){ address, length };
}

int mpix_zcopy_write_remote(pid_t pid, uint64_t address, const void *data, size_t length)
{
    struct iovec local = { (void *)data, length }, remote = { (void *)(uintptr_t)address, length };
    return copy_batch(process_vm_writev, pid, &local, 1, &remote, 1, length);
}

int mpix_zcopy_read_remote(pid_t pid, uint64_t address, void *data, size_t length)
{
    struct iovec local = { data, length }, remote = { (void *)(uintptr_t)address, length };
    return copy_batch(process_vm_readv, pid, &local, 1, &remote, 1, length);
}

/* One iovec per block on each side (merged where they touch), in batches of IOV_BATCH. */
static int copy_direct(cross_copy_fn copy, pid_t pid, char *remote_base, cursor *remote, char *local_base,
                       cursor *local, MPI_Count bytes)
{
    struct iovec remote_iov[IOV_BATCH], local_iov[IOV_BATCH];
    int nremote = 0, nlocal = 0, rc;
    size_t batch = 0;
    while (bytes > 0) {
        MPI_Aint length = min3(cursor_left(remote), cursor_left(local), bytes);
        char *from = remote_base + cursor_offset(remote), *to = local_base + cursor_offset(local);
        if ((nremote == IOV_BATCH && !continues(remote_iov, nremote, from)) ||
            (nlocal == IOV_BATCH && !continues(local_iov, nlocal, to))) {
            if ((rc = copy_batch(copy, pid, local_iov, nlocal, remote_iov, nremote, batch)) != 0)
                return rc;
            nremote = nlocal = 0;
            batch = 0;
        }
        iov_add(remote_iov, &nremote, from, length);
        iov_add(local_iov, &nlocal, to, length);
        batch += length;
        bytes -= length;
        cursor_advance(remote, length);
        cursor_advance(local, length);
    }
    return batch > 0 ? copy_batch(copy, pid, local_iov, nlocal, remote_iov, nremote, batch) : 0;
}

typedef struct span_piece {
    MPI_Aint at, length;    /* in the staging buffer */
} span_piece;

/* Spans: consecutive remote pieces, in increasing addresses, with gaps below the
 * threshold, fitting the staging buffer; one read each, then memcpy into the local
 * layout. */
static int pull_staged(pid_t pid, char *remote_base, cursor *remote, char *local_base, cursor *local,
                       MPI_Count bytes, char *scratch, MPI_Aint scratch_bytes, MPI_Aint gap_limit)
{
    span_piece pieces[SPAN_PIECES];
    while (bytes > 0) {
        MPI_Aint start = cursor_offset(remote), end = start, taken = 0;
        int npieces = 0;
        while (bytes - taken > 0 && npieces < SPAN_PIECES && remote->index < remote->count) {
            MPI_Aint at = cursor_offset(remote);
            if (npieces > 0 && (at < end || at - end > gap_limit))
                break;
            MPI_Aint length = min3(cursor_left(remote), bytes - taken, scratch_bytes - (at - start));
            if (length <= 0)
                break;
            pieces[npieces++] = (span_piece){ at - start, length };
            end = at + length;
            taken += length;
            cursor_advance(remote, length);
        }
        struct iovec into = { scratch, (size_t)(end - start) }, from = { remote_base + start, (size_t)(end - start) };
        int rc = copy_batch(process_vm_readv, pid, &into, 1, &from, 1, end - start);
        if (rc != 0)
            return rc;
        for (int p = 0; p < npieces; p++) {
            MPI_Aint copied = 0;
            while (copied < pieces[p].length) {
                MPI_Aint length = cursor_left(local) < pieces[p].length - copied ? cursor_left(local) : pieces[p].length - copied;
                memcpy(local_base + cursor_offset(local), scratch + pieces[p].at + copied, length);
                cursor_advance(local, length);
                copied += length;
            }
        }
        bytes -= taken;
    }
    return 0;
}

/* Cost model, in nanoseconds: the kernel charges per remote iovec, a span costs the gaps
 * it reads, a staged piece its memcpy call; the MPI datatype engine costs per block and
 * per byte, more per byte for blocks below 16 KiB. The kernel and Open MPI constants are
 * fitted to mpix-bench zcopy runs on the development VM (docs/PERFORMANCE.md, "zcopy");
 * the MPICH ones to the vector table of ../shared/MEASUREMENTS.md. They only rank the
 * paths roughly: the sender's measurements per layout (path.c) have the last word. */
static const double IOV_NS = 100.0, CMA_BYTES_PER_NS = 17.0, MEMCPY_BYTES_PER_NS = 10.0, PIECE_NS = 6.0;
/* From the receiver's request until the sender copies: the sender noticing, finding the
 * receiver's layout; the receiver copies meanwhile. Measured about 1 us (a 1 MiB vector
 * ping-pong with per-step timers on the development VM). */
static const double HANDOVER_NS = 1000.0;
/* A process_vm_writev into the receiver moved the same bytes in 0.85 of the time of the
 * receiver's process_vm_readv (same run, same VM). */
static const double WRITE_OVER_READ = 0.85;
#if MPIX_MPI_IS_MPICH
static const double MPI_BYTES_PER_NS = 9.0, MPI_BLOCK_NS = 6.0, MPI_SMALL_BLOCK_BYTES_PER_NS = 5.0;
#else
static const double MPI_BYTES_PER_NS = 17.0, MPI_BLOCK_NS = 3.5, MPI_SMALL_BLOCK_BYTES_PER_NS = 8.0;
#endif

const mpix_zcopy_costs *mpix_zcopy_costs_of(mpix_layout *layout, MPI_Aint gap_limit)
{
    mpix_zcopy_costs *costs = &layout->costs;
    if (layout->costed_gap_limit == gap_limit)
        return costs;
    MPI_Aint nspans = 0, span_start = 0, span_end = 0, small_bytes = 0;
    double span_bytes = 0;
    for (MPI_Aint b = 0; b < layout->nblocks; b++) {
        const mpix_block *block = &layout->blocks[b];
        MPI_Aint gap = block->offset - span_end;
        if (b == 0 || gap < 0 || gap > gap_limit ||
            block->offset + block->length - span_start > (MPI_Aint)mpix_zcopy_scratch_bytes()) {
            span_bytes += span_end - span_start;
            span_start = block->offset;
            nspans++;
        }
        span_end = block->offset + block->length;
        if (block->length < 16384)
            small_bytes += block->length;
    }
    span_bytes += span_end - span_start;
    double bytes = (double)layout->bytes;
    costs->direct = layout->nblocks * IOV_NS + bytes / CMA_BYTES_PER_NS;
    costs->staged = gap_limit > 0 ? nspans * IOV_NS + span_bytes / CMA_BYTES_PER_NS + bytes / MEMCPY_BYTES_PER_NS +
                                        layout->nblocks * PIECE_NS
                                  : 1e300;
    costs->mpi = bytes / MPI_BYTES_PER_NS + layout->nblocks * MPI_BLOCK_NS + small_bytes / MPI_SMALL_BLOCK_BYTES_PER_NS;
    layout->costed_gap_limit = gap_limit;
    return costs;
}

/* The rates mpix_zcopy_unhelped_copy_loses and mpix_zcopy_pipes_pay price with, measured
 * on this process's own memory (process_vm_readv from itself: 16 iovecs of 1 KiB, then a
 * run of 64 KiB; each the best of three), since the constants above, fitted on one
 * machine, are off by more than the margin on another: on the 2-core test VM (a PVM
 * guest) the kernel charged 260-530 ns per iovec against IOV_NS's 100. Once a process, in
 * its first large message, so kept small: the bytes land in one 16 KiB window (the
 * kernel's first write to each page of a process's memory costs it 4-14 us on that VM)
 * and come from one heap block, most often memory the program touched before. Five runs
 * of each, 64 iovecs into 64 KiB, took 270-360 us there. Left at the constants if the
 * kernel refuses. */
enum { RATE_IOVECS = 16, RATE_IOVEC_BYTES = 1024, RATE_BYTES = 65536, RATE_WINDOW_BYTES = 16384, RATE_RUNS = 3 };

static double best_of_runs(double (*run)(char *, char *), char *from, char *to)
{
    double best = 0;
    for (int i = 0; i < RATE_RUNS; i++) {
        double seconds = run(from, to);
        if (seconds < 0)
            return -1;
        if (i == 0 || seconds < best)
            best = seconds;
    }
    return best * 1e9;
}

static double read_iovecs(char *from, char *to)
{
    struct iovec local[RATE_IOVECS], remote[RATE_IOVECS];
    for (int i = 0; i < RATE_IOVECS; i++) {
        remote[i] = (struct iovec){ from + 2 * i * RATE_IOVEC_BYTES, RATE_IOVEC_BYTES };
        local[i] = (struct iovec){ to + i * RATE_IOVEC_BYTES % RATE_WINDOW_BYTES, RATE_IOVEC_BYTES };
    }
    double start = PMPI_Wtime();
    int rc = copy_batch(process_vm_readv, getpid(), local, RATE_IOVECS, remote, RATE_IOVECS,
                        RATE_IOVECS * RATE_IOVEC_BYTES);
    return rc == 0 ? PMPI_Wtime() - start : -1;
}

/* One remote run into the window, again and again. */
static double read_run(char *from, char *to)
{
    struct iovec local[RATE_BYTES / RATE_WINDOW_BYTES], remote = { from, RATE_BYTES };
    for (int i = 0; i < RATE_BYTES / RATE_WINDOW_BYTES; i++)
        local[i] = (struct iovec){ to, RATE_WINDOW_BYTES };
    double start = PMPI_Wtime();
    int rc = copy_batch(process_vm_readv, getpid(), local, RATE_BYTES / RATE_WINDOW_BYTES, &remote, 1, RATE_BYTES);
    return rc == 0 ? PMPI_Wtime() - start : -1;
}

static double copy_run(char *from, char *to)
{
    double start = PMPI_Wtime();
    for (int at = 0; at < RATE_BYTES; at += RATE_WINDOW_BYTES)
        memcpy(to, from + at, RATE_WINDOW_BYTES);
    /* The copy must not be dropped or moved past the clock: its bytes are read after. */
    __asm__ volatile("" : : "r"(to) : "memory");
    return PMPI_Wtime() - start;
}

static pthread_mutex_t rates_lock = PTHREAD_MUTEX_INITIALIZER;

static void measure_rates(mpix_zcopy_process *process)
{
    char *from = malloc(RATE_BYTES + RATE_WINDOW_BYTES);
    double iovec_ns = IOV_NS, bytes_per_ns = CMA_BYTES_PER_NS;
    if (from) {
        char *to = from + RATE_BYTES;   /* the window, after the run in the same block */
        memset(from, 1, RATE_BYTES + RATE_WINDOW_BYTES);
        double iovecs = best_of_runs(read_iovecs, from, to), run = best_of_runs(read_run, from, to);
        double copied = best_of_runs(copy_run, from, to);
        if (copied > 0)
            process->memcpy_bytes_per_ns = RATE_BYTES / copied;
        if (iovecs > 0 && run > 0) {
            bytes_per_ns = RATE_BYTES / run;
            double per_iovec = (iovecs - RATE_IOVECS * RATE_IOVEC_BYTES / bytes_per_ns) / RATE_IOVECS;
            iovec_ns = per_iovec > 0 ? per_iovec : 0;
        }
    }
    free(from);
    if (process->kernel_iovec_ns == 0)   /* MPIX_ZCOPY_KERNEL_IOVEC_NS not given */
        process->kernel_iovec_ns = iovec_ns;
    process->kernel_bytes_per_ns = bytes_per_ns;
}

/* The process's rates, measured by the first caller under the lock and published by
 * rates_known: every blocking send that may pipe asks (mpix_zcopy_pipes_pay), so the
 * others read the flag alone. */
static void rates_measured(mpix_zcopy_process *process)
{
    if (atomic_load_explicit(&process->rates_known, memory_order_acquire))
        return;
    pthread_mutex_lock(&rates_lock);
    if (!atomic_load_explicit(&process->rates_known, memory_order_relaxed)) {
        measure_rates(process);
        atomic_store_explicit(&process->rates_known, 1, memory_order_release);
    }
    pthread_mutex_unlock(&rates_lock);
}

/* MPI's two copies of a message, per byte: at the kernel's rate (both copy memory the
 * cache does not hold: a memcpy of 64 KiB measured in cache ran 4.5 times faster than
 * MPI's copies on the development VM, where MILC's halo moved 5 bytes/ns through two of
 * them), or at the measured memcpy's rate over MPI_COPIES_OVER_MEMCPY, whichever is
 * faster. The second holds where the kernel's copies between processes are slow: on a
 * 2-core VM of an AMD EPYC (CPU family 26) whose kernel copied at 12-13 B/ns and memcpy
 * at 110-130, Open MPI's datatype path moved MILC's 768 KiB face in 19.7 us and 8 MiB in
 * 281 us (28-40 B/ns, a quarter of memcpy's rate) against the kernel's 61.7 and 666;
 * priced at the kernel's rate, MPI looked five times slower than that, and the
 * nonblocking halos of MILC and of the FFT transpose went zero-copy at 0.48-0.55x of
 * MPI's. MPICH 4.0's path moved the same in 105 and 1996 us there (7.5 and 4.2 B/ns,
 * 16 and 28 times below memcpy's rate: the kernel's rate is about right for it). Where
 * memcpy is slow next to the kernel (an Intel host: memcpy 19-26 B/ns, the kernel 11-15)
 * the kernel's rate stands for both. MPIX_ZCOPY_MPI_BYTES_PER_NS (testing) sets the
 * rate. */
#if MPIX_MPI_IS_MPICH
enum { MPI_COPIES_OVER_MEMCPY = 16 };
#else
enum { MPI_COPIES_OVER_MEMCPY = 4 };
#endif

static double mpi_ns_per_byte(const mpix_zcopy_process *process)
{
    if (process->mpi_bytes_per_ns > 0)
        return 1.0 / process->mpi_bytes_per_ns;
    double at_kernel_rate = 2.0 / process->kernel_bytes_per_ns;
    if (process->memcpy_bytes_per_ns <= 0)
        return at_kernel_rate;
    double at_memcpy_rate = MPI_COPIES_OVER_MEMCPY / process->memcpy_bytes_per_ns;
    return at_memcpy_rate < at_kernel_rate ? at_memcpy_rate : at_kernel_rate;
}

/* The kernel's copy loses when it costs 1.25 times MPI's: with the kernel's rate for
 * MPI, when the average block is below about (iovec_ns - 1.25 MPI_BLOCK_NS) *
 * bytes_per_ns / 1.5 bytes (near 2 KiB on the development VM, where MILC's 24 KiB blocks
 * win by 1.8x and NAS MG's 1 KiB ones lose by 2.5x). */
int mpix_zcopy_unhelped_copy_loses(mpix_zcopy_process *process, const mpix_layout *layout)
{
    rates_measured(process);
    double kernel = layout->nblocks * process->kernel_iovec_ns + layout->bytes / process->kernel_bytes_per_ns;
    double mpi = layout->bytes * mpi_ns_per_byte(process) + layout->nblocks * MPI_BLOCK_NS;
    return 1.25 * mpi < kernel;
}

/* A packed send adds a whole copy to what MPI's datatype path does (the sender's memcpy
 * of every block before the message leaves); it pays only by sparing the datatype
 * engine's cost per block, which for blocks of 16 KiB and more is a small part of the
 * copy. Measured (mpix-bench zcopy, Open MPI 4.1, two hosts): packing and unpacking by
 * hand ran 2.4-3 times slower than the datatype for vectors of 16-256 KiB blocks and
 * MILC's 24 KiB rows, and where packing joined the MILC ping-pong's duels its first
 * packed sends took 2.1-2.7 ms (the pack buffers' first touches) against 0.07-0.1 ms for
 * the datatype's, in the program's first 20 round trips; faster than the datatype only
 * for rows of 1-1.6 KiB (NAS MG's y-face, WRF). */
enum { PACKING_BLOCKS_BELOW = 16 << 10 };

int mpix_zcopy_packing_cannot_pay(const mpix_layout *layout)
{
    return layout->nblocks > 0 && layout->bytes >= (MPI_Count)PACKING_BLOCKS_BELOW * layout->nblocks;
}

/* A pipe moves each byte twice (the sender's memcpy into it, the receiver's out), on two
 * cores at once, and its bytes cross between the cores' caches: on the 2-core test VM
 * (AMD EPYC, CPU family 25) 22-30 GB/s for MILC's face in a throwaway program whose
 * memcpy of 64 KiB ran at 57 GB/s, against 10-13 GB/s for the kernel's copy of the
 * same (11 GB/s for 64 KiB). The kernel's copy, shared by the two cores (the sender
 * helps), gets at most twice its rate; the pipe about half of memcpy's. So the pipe
 * pays where the kernel copies at less than a third of memcpy's speed. */
enum { PIPE_OVER_KERNEL = 3 };
/* Blocks of 64 KiB and more went faster by the kernel, the sender helping, from buffers
 * folded into huge pages: on the same VM a 4 MiB vector of 64 KiB blocks took 255-281 us
 * a round trip by the kernel against 381-461 through the pipe (Open MPI), 281-297
 * against 395 (MPICH); of 16 KiB blocks 414-472 against 420-506; of 4 KiB blocks
 * 761-1227 against 639-961. */
enum { PIPE_BLOCKS_BELOW = 32 << 10 };

int mpix_zcopy_pipes_pay(mpix_zcopy_comm *zc, const mpix_layout *layout)
{
    if (zc->settings.method != MPIX_ZCOPY_METHOD_AUTO)
        return zc->settings.method == MPIX_ZCOPY_METHOD_PIPED;
    if (zc->settings.pipes != MPIX_ZCOPY_PIPES_AUTO)
        return zc->settings.pipes == MPIX_ZCOPY_PIPES_ON;
    if (layout->bytes >= (MPI_Count)PIPE_BLOCKS_BELOW * layout->nblocks ||
        PMPI_Wtime() < atomic_load_explicit(&zc->process->pipes_resume_at, memory_order_relaxed))
        return 0;
    rates_measured(zc->process);
    return zc->process->memcpy_bytes_per_ns > PIPE_OVER_KERNEL * zc->process->kernel_bytes_per_ns;
}

double mpix_zcopy_kernel_bytes_per_ns(mpix_zcopy_process *process)
{
    rates_measured(process);
    return process->kernel_bytes_per_ns;
}

/* Whether mpix_zcopy_pull reads @remote in staged spans (else one iovec per block). */
static int reads_staged(const mpix_zcopy_comm *zc, mpix_layout *remote)
{
    if (zc->settings.method != MPIX_ZCOPY_METHOD_AUTO)
        return zc->settings.method == MPIX_ZCOPY_METHOD_STAGED;
    const mpix_zcopy_costs *costs = mpix_zcopy_costs_of(remote, zc->settings.coalesce_bytes);
    return costs->staged < costs->direct;
}

int mpix_zcopy_pull(mpix_zcopy_comm *zc, pid_t pid, uint64_t remote_base, mpix_layout *remote,
                    char *local_base, const mpix_layout *local, MPI_Count first, MPI_Count bytes)
{
    cursor from = { remote->blocks, remote->nblocks, 0, 0 }, to = { local->blocks, local->nblocks, 0, 0 };
    if (bytes == 0)
        return 0;
    if (zc->process->pull_delay_seconds > 0) {   /* testing: a machine whose kernel copies lose */
        double until = PMPI_Wtime() + zc->process->pull_delay_seconds;
        for (unsigned long poll = 0; PMPI_Wtime() < until; poll++)
            mpix_backoff(poll, MPIX_BACKOFF_SPINS);
    }
    cursor_skip(&from, first);
    cursor_skip(&to, first);
    if (!reads_staged(zc, remote)) {
        zc->stats.pulled_direct++;
        return copy_direct(process_vm_readv, pid, (char *)(uintptr_t)remote_base, &from, local_base, &to, bytes);
    }
    zc->stats.pulled_staged++;
    char *scratch = mpix_zcopy_scratch_take(zc);
    if (!scratch)
        return ENOMEM;
    int error = pull_staged(pid, (char *)(uintptr_t)remote_base, &from, local_base, &to, bytes, scratch,
                            (MPI_Aint)mpix_zcopy_scratch_bytes(), zc->settings.coalesce_bytes);
    mpix_zcopy_scratch_give(zc, scratch);
    return error;
}

int mpix_zcopy_push(pid_t pid, uint64_t remote_base, const mpix_layout *remote, const char *local_base,
                    const mpix_layout *local, MPI_Count first, MPI_Count bytes)
{
    cursor to = { remote->blocks, remote->nblocks, 0, 0 }, from = { local->blocks, local->nblocks, 0, 0 };
    if (bytes == 0)
        return 0;
    cursor_skip(&to, first);
    cursor_skip(&from, first);
    return copy_direct(process_vm_writev, pid, (char *)(uintptr_t)remote_base, &to, (char *)local_base, &from, bytes);
}

MPI_Count mpix_zcopy_split(mpix_zcopy_comm *zc, mpix_layout *remote, mpix_layout *local, MPI_Count bytes)
{
    /* Neither part smaller than a quarter of the threshold: below it the hand-over (the
     * sender noticing the request, finding this process's layout) costs more than the
     * part saves. A tiny threshold (tests) splits every zero-copy message. */
    MPI_Count min_part = zc->settings.split_bytes / 4;
    if (zc->settings.split_bytes <= 0 || bytes < zc->settings.split_bytes || bytes < 2)
        return bytes;
    /* Per byte, the receiver pays its read of the sender's blocks (direct or staged, as
     * mpix_zcopy_pull will choose) and the sender its write into the receiver's blocks
     * (direct only: a span written across the receiver's gaps would clobber them). */
    const mpix_zcopy_costs *read = mpix_zcopy_costs_of(remote, zc->settings.coalesce_bytes);
    double receiver_per_byte = (reads_staged(zc, remote) ? read->staged : read->direct) / (double)remote->bytes;
    double sender_per_byte =
        WRITE_OVER_READ * mpix_zcopy_costs_of(local, zc->settings.coalesce_bytes)->direct / (double)local->bytes;
    /* Both parts end together: split * receiver = handover + (bytes - split) * sender. */
    MPI_Count split = (MPI_Count)((HANDOVER_NS + bytes * sender_per_byte) / (receiver_per_byte + sender_per_byte));
    split = split < 1 ? 1 : split > bytes - 1 ? bytes - 1 : split;
    return split < min_part || bytes - split < min_part ? bytes : split;
}
