/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a peer process has exited: what a wait on a peer's shared memory asks now and
 * then, since memory shared with a process that was killed stays mapped and never
 * changes again. Where the launcher keeps the job running after a rank's death
 * (mpiexec -disable-auto-cleanup with MPICH, fault-tolerant runs), a receiver waiting
 * for a sender killed in the middle of its part of a copy would wait for ever. */
#include "zcopy.h"
#include "common/error.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int mpix_zcopy_peer_exited(pid_t pid)
{
#ifdef SYS_pidfd_open
    /* A pidfd is readable once its process exited, a zombie included (kill(pid, 0)
     * still succeeds on a zombie its parent has not reaped). */
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return errno == ESRCH;
    struct pollfd exited = { .fd = fd, .events = POLLIN };
    int gone = poll(&exited, 1, 0) == 1;
    close(fd);
    return gone;
#else
    return kill(pid, 0) != 0 && errno == ESRCH;
#endif
}

int mpix_zcopy_peer_exit_check(mpix_zcopy_peer_watch *watch, pid_t pid)
{
    double now = PMPI_Wtime();
    if (watch->checked_at == 0)
        watch->checked_at = now;
    if (now - watch->checked_at < MPIX_ZCOPY_EXIT_CHECK_SECONDS)
        return 0;
    watch->checked_at = now;
    return mpix_zcopy_peer_exited(pid);
}

int mpix_zcopy_peer_exit_error(const char *call, int peer, pid_t pid)
{
    return mpix_error(MPIX_ERRKIND_PEER, "%s: rank %d (pid %d) exited in the middle of a message", call, peer, (int)pid);
}
