/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI program without mpix that installs SIGSEGV handlers of its own once it is
 * running, as crash reporters and libraries that start late do: after its first exchange
 * it installs one with sigaction, later another with signal, and uses the second to
 * recover (siglongjmp) from touching a page it protected itself; at the end it puts back
 * the handler it found. Every step it sends 1 MiB to its right neighbour, receives from
 * its left one and reads what arrived at once. It checks the data, that signal and
 * sigaction report the handler it installed before, that its handler never ran except
 * for its own page, and that it ran there.
 * Run plain, under LD_PRELOAD=libmpix-guard.so and built with -include
 * mpix/guard_inject.h (tests/guard/preload_check.sh), it must print the same: with guard
 * the received arrays are still protected when the reads begin, and those faults are
 * guard's, not the program's. */
#include <mpi.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { COUNT = 1 << 18, STEPS = 8 };

static int rank, failures;
static volatile sig_atomic_t crash_reports, own_page_faults;
static sigjmp_buf recover;

static void report_crash(int signo)
{
    (void)signo;
    crash_reports++;
    const char message[] = "plain_signals: the program's crash handler ran\n";
    (void)!write(2, message, sizeof message - 1);
    _exit(3);
}

static void recover_own_page(int signo)
{
    (void)signo;
    own_page_faults++;
    siglongjmp(recover, 1);
}

static void check(int condition, const char *what)
{
    if (!condition && failures++ < 10)
        fprintf(stderr, "rank %d: %s\n", rank, what);
}

int main(int argc, char **argv)
{
    int ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int right = (rank + 1) % ranks, left = (rank + ranks - 1) % ranks;
    int *sent = malloc(COUNT * sizeof(int)), *received = malloc(COUNT * sizeof(int));
    struct sigaction found, crash_action, queried;
    long long sum = 0;

    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < COUNT; i++)
            sent[i] = step * 1000 + rank + i % 101;
        MPI_Sendrecv(sent, COUNT, MPI_INT, right, step, received, COUNT, MPI_INT, left, step, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (step == 1) {   /* after the first exchange: a crash reporter */
            memset(&crash_action, 0, sizeof crash_action);
            crash_action.sa_handler = report_crash;
            sigemptyset(&crash_action.sa_mask);
            check(sigaction(SIGSEGV, &crash_action, &found) == 0, "sigaction failed");
            check(sigaction(SIGSEGV, NULL, &queried) == 0 && queried.sa_handler == report_crash,
                  "sigaction does not report the handler just installed");
        }
        if (step == 4)     /* later, with signal(): the handler before is the crash reporter */
            check(signal(SIGSEGV, recover_own_page) == report_crash, "signal does not return the handler before");
        for (int i = 0; i < COUNT; i++) {   /* read at once: guard's page, not a crash */
            check(received[i] == step * 1000 + left + i % 101, "wrong data");
            sum += received[i];
        }
    }

    /* A fault of the program's own: its handler must get it. */
    long page = sysconf(_SC_PAGESIZE);
    volatile char *own = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(recover, 1) == 0)
        own[0] = 1;
    check(own_page_faults == 1, "the program's handler did not get the fault on its own page");
    munmap((void *)own, page);
    check(sigaction(SIGSEGV, &found, NULL) == 0, "putting back the first handler failed");
    check(crash_reports == 0, "the crash handler ran");

    long long total;
    int all_failures;
    MPI_Reduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("signals: %d ranks, sum %lld, %d failures\n", ranks, total, all_failures);
    free(received);
    free(sent);
    MPI_Finalize();
    return all_failures != 0;
}
