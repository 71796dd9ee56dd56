/* SPDX-License-Identifier: BSD-3-Clause */
/* Preloaded by tools/vcluster into MPICH jobs: UCX keeps progressing while MPI_Finalize
 * waits in the PMI barrier that follows the UCX disconnect.
 *
 * MPICH 4.0's UCX netmod, in MPI_Finalize, disconnects every endpoint, progresses UCX
 * until its own disconnects complete, then waits in a PMI barrier, and only after it
 * destroys its UCX worker. UCX 1.13 flushes a TCP endpoint that has sent anything with a
 * request the peer must answer (a zero-length put and its acknowledgement). A rank whose
 * own disconnects completed sits in the PMI barrier without progressing UCX, and its
 * sockets stay open; a flush request another rank sends it then is never answered, and
 * the job hangs after the program's last line. Measured on two virtual nodes: one run in
 * 30 to 200 with one rank a node, about one in four with two (a rank that never sent to a
 * peer has nothing to flush towards it and may leave early). Later MPICH leave out that
 * barrier (pmodels/mpich#6596), so a rank that is done destroys its worker and the
 * sockets' close ends the peers' flushes.
 *
 * Here, from the first ucp_disconnect_nb of the process until its workers are destroyed,
 * a blocking read on the PMI descriptor (Hydra hands it in PMI_FD) waits for its data
 * while progressing every UCX worker of the process: the barrier still completes only
 * when every rank is in it, and until then every rank answers its peers' flushes. The
 * only reads MPICH makes there are the PMI barrier's. Without PMI_FD (another launcher, a
 * singleton) nothing changes; with an MPICH that has no such barrier, nothing is read
 * between the disconnect and the worker's destruction. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* UCX's declarations, handles as opaque pointers and statuses as int (UCX's enum), so
 * that this file builds without UCX's headers. */
typedef void *ucp_worker_h;
int ucp_worker_create(void *context, const void *params, ucp_worker_h *worker);
void ucp_worker_destroy(ucp_worker_h worker);
void *ucp_disconnect_nb(void *endpoint);

enum { max_workers = 64 };
static ucp_worker_h workers[max_workers];
static int worker_count;
static int disconnecting;

static void *next_symbol(const char *name)
{
    void *symbol = dlsym(RTLD_NEXT, name);
    if (symbol == NULL) {
        fprintf(stderr, "vcluster: %s called, but no later library defines it\n", name);
        abort();
    }
    return symbol;
}

int ucp_worker_create(void *context, const void *params, ucp_worker_h *worker)
{
    static int (*create)(void *, const void *, ucp_worker_h *);
    if (create == NULL)
        create = (int (*)(void *, const void *, ucp_worker_h *))next_symbol("ucp_worker_create");
    int status = create(context, params, worker);
    if (status == 0 && worker_count < max_workers)
        workers[worker_count++] = *worker;
    return status;
}

void ucp_worker_destroy(ucp_worker_h worker)
{
    static void (*destroy)(ucp_worker_h);
    if (destroy == NULL)
        destroy = (void (*)(ucp_worker_h))next_symbol("ucp_worker_destroy");
    for (int index = 0; index < worker_count; index++) {
        if (workers[index] == worker) {
            workers[index] = workers[--worker_count];
            break;
        }
    }
    if (worker_count == 0)
        disconnecting = 0;
    destroy(worker);
}

void *ucp_disconnect_nb(void *endpoint)
{
    static void *(*disconnect)(void *);
    if (disconnect == NULL)
        disconnect = (void *(*)(void *))next_symbol("ucp_disconnect_nb");
    disconnecting = 1;
    return disconnect(endpoint);
}

static int pmi_descriptor(void)
{
    static int descriptor = -2;
    if (descriptor == -2) {
        const char *text = getenv("PMI_FD");
        char *end = NULL;
        long value = text != NULL ? strtol(text, &end, 10) : -1;
        descriptor = (text != NULL && *text != '\0' && *end == '\0' && value >= 0) ? (int)value : -1;
    }
    return descriptor;
}

ssize_t read(int fd, void *buffer, size_t count)
{
    static ssize_t (*next_read)(int, void *, size_t);
    if (next_read == NULL)
        next_read = (ssize_t (*)(int, void *, size_t))next_symbol("read");
    if (disconnecting && worker_count > 0 && fd == pmi_descriptor()) {
        static unsigned (*progress)(ucp_worker_h);
        if (progress == NULL)
            progress = (unsigned (*)(ucp_worker_h))next_symbol("ucp_worker_progress");
        struct pollfd waiting = {.fd = fd, .events = POLLIN};
        while (poll(&waiting, 1, 0) == 0) {
            for (int index = 0; index < worker_count; index++)
                progress(workers[index]);
        }
    }
    return next_read(fd, buffer, count);
}
