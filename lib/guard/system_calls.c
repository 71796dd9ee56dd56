/* SPDX-License-Identifier: BSD-3-Clause */
/* System calls given a buffer a guarded transfer still needs. A program may write a
 * received buffer to a file the moment MPI_Recv returns, or read a file into a buffer
 * the moment MPI_Send returns; but guard may still hold the receive's pages closed, or
 * the send's read-only, and the kernel does not fault on them as the program's own
 * loads and stores do: it fails the call with EFAULT. The C library's functions that
 * hand a program's buffer to the kernel are therefore interposed: the transfers that
 * need the buffer's bytes are finished first, as the blocking calls would have finished
 * them (mpix_interpose_guard_release: nothing unless guard has transfers in flight, and
 * only on the program's thread outside guard's own MPI calls), then the real function
 * runs. stdio's fread and fwrite are among them: a large one goes to the kernel from
 * inside the C library, past read and write. The real functions are the next
 * definitions after this object's (dlsym RTLD_NEXT: the C library's).
 *
 * Built into libmpix, libmpix-guard.so and libmpix-pmpi.so, as release.c is. */
/* Each function under its own name: no 64-bit file offset renaming, no fortified
 * inline forms, no stdio macros in place of the functions defined here. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#include "libc_wrapper.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#undef fread_unlocked
#undef fwrite_unlocked

/* The buffer goes by its address: its bytes are the kernel's to read or write, not
 * these functions' (the compiler takes read's buffer as written only). Asked only while
 * guard has transfers in flight. */
static void finish_range(uintptr_t address, size_t bytes)
{
    if (!address || !bytes)
        return;
    /* A length past the end of the address space (the kernel refuses it) stops there. */
    size_t room = UINTPTR_MAX - address;
    mpix_interpose_guard_release((const void *)address, bytes < room ? bytes : room);
}

static void finish_bytes(uintptr_t address, size_t bytes)
{
    if (GUARD_BUSY())
        finish_range(address, bytes);
}

/* stdio's items of @size bytes: their product, or all the address space past @buffer. */
static size_t items_bytes(size_t size, size_t count)
{
    size_t bytes;
    return __builtin_mul_overflow(size, count, &bytes) ? SIZE_MAX : bytes;
}

static void finish_vector(const struct iovec *vector, int count)
{
    if (!vector || !GUARD_BUSY())
        return;
    for (int i = 0; i < count; i++)
        finish_range((uintptr_t)vector[i].iov_base, vector[i].iov_len);
}

static void finish_message(const struct msghdr *message)
{
    if (message)
        finish_vector(message->msg_iov, (int)message->msg_iovlen);
}

/* The real function @name of type @type, looked up at its first call. */
#define NEXT(type, name)                                                                    \
    static _Atomic(void *) next_##name;                                                     \
    static type *real_##name(void) { return (type *)mpix_next_definition(#name, &next_##name); }

/* A wrapper of @name (@result, @params, called with @args) that first finishes the
 * guarded transfers needing what @finish names. */
#define WRAP(result, name, params, args, finish)                                            \
    typedef result name##_function params;                                                  \
    NEXT(name##_function, name)                                                             \
    EXPORTED result name params                                                             \
    {                                                                                       \
        finish;                                                                             \
        return real_##name() args;                                                          \
    }

WRAP(ssize_t, read, (int fd, void *buf, size_t count), (fd, buf, count), finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, write, (int fd, const void *buf, size_t count), (fd, buf, count), finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, pread, (int fd, void *buf, size_t count, off_t offset), (fd, buf, count, offset),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, pwrite, (int fd, const void *buf, size_t count, off_t offset), (fd, buf, count, offset),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, pread64, (int fd, void *buf, size_t count, off64_t offset), (fd, buf, count, offset),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, pwrite64, (int fd, const void *buf, size_t count, off64_t offset), (fd, buf, count, offset),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, readv, (int fd, const struct iovec *iov, int count), (fd, iov, count), finish_vector(iov, count))
WRAP(ssize_t, writev, (int fd, const struct iovec *iov, int count), (fd, iov, count), finish_vector(iov, count))
WRAP(ssize_t, preadv, (int fd, const struct iovec *iov, int count, off_t offset), (fd, iov, count, offset),
     finish_vector(iov, count))
WRAP(ssize_t, pwritev, (int fd, const struct iovec *iov, int count, off_t offset), (fd, iov, count, offset),
     finish_vector(iov, count))
WRAP(ssize_t, preadv64, (int fd, const struct iovec *iov, int count, off64_t offset), (fd, iov, count, offset),
     finish_vector(iov, count))
WRAP(ssize_t, pwritev64, (int fd, const struct iovec *iov, int count, off64_t offset), (fd, iov, count, offset),
     finish_vector(iov, count))
WRAP(ssize_t, preadv2, (int fd, const struct iovec *iov, int count, off_t offset, int flags),
     (fd, iov, count, offset, flags), finish_vector(iov, count))
WRAP(ssize_t, pwritev2, (int fd, const struct iovec *iov, int count, off_t offset, int flags),
     (fd, iov, count, offset, flags), finish_vector(iov, count))
WRAP(ssize_t, recv, (int fd, void *buf, size_t count, int flags), (fd, buf, count, flags),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, send, (int fd, const void *buf, size_t count, int flags), (fd, buf, count, flags),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, recvfrom, (int fd, void *buf, size_t count, int flags, __SOCKADDR_ARG from, socklen_t *length),
     (fd, buf, count, flags, from, length), finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, sendto, (int fd, const void *buf, size_t count, int flags, __CONST_SOCKADDR_ARG to, socklen_t length),
     (fd, buf, count, flags, to, length), finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, recvmsg, (int fd, struct msghdr *message, int flags), (fd, message, flags), finish_message(message))
WRAP(ssize_t, sendmsg, (int fd, const struct msghdr *message, int flags), (fd, message, flags),
     finish_message(message))
WRAP(size_t, fread, (void *buf, size_t size, size_t count, FILE *stream), (buf, size, count, stream),
     finish_bytes((uintptr_t)buf, items_bytes(size, count)))
WRAP(size_t, fwrite, (const void *buf, size_t size, size_t count, FILE *stream), (buf, size, count, stream),
     finish_bytes((uintptr_t)buf, items_bytes(size, count)))
WRAP(size_t, fread_unlocked, (void *buf, size_t size, size_t count, FILE *stream), (buf, size, count, stream),
     finish_bytes((uintptr_t)buf, items_bytes(size, count)))
WRAP(size_t, fwrite_unlocked, (const void *buf, size_t size, size_t count, FILE *stream), (buf, size, count, stream),
     finish_bytes((uintptr_t)buf, items_bytes(size, count)))
/* _FORTIFY_SOURCE's checked forms, which programs built with it call instead. */
WRAP(ssize_t, __read_chk, (int fd, void *buf, size_t count, size_t room), (fd, buf, count, room),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, __pread_chk, (int fd, void *buf, size_t count, off_t offset, size_t room), (fd, buf, count, offset, room),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, __pread64_chk, (int fd, void *buf, size_t count, off64_t offset, size_t room),
     (fd, buf, count, offset, room), finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, __recv_chk, (int fd, void *buf, size_t count, size_t room, int flags), (fd, buf, count, room, flags),
     finish_bytes((uintptr_t)buf, count))
WRAP(ssize_t, __recvfrom_chk,
     (int fd, void *buf, size_t count, size_t room, int flags, __SOCKADDR_ARG from, socklen_t *length),
     (fd, buf, count, room, flags, from, length), finish_bytes((uintptr_t)buf, count))
WRAP(size_t, __fread_chk, (void *buf, size_t room, size_t size, size_t count, FILE *stream),
     (buf, room, size, count, stream), finish_bytes((uintptr_t)buf, items_bytes(size, count)))
WRAP(size_t, __fread_unlocked_chk, (void *buf, size_t room, size_t size, size_t count, FILE *stream),
     (buf, room, size, count, stream), finish_bytes((uintptr_t)buf, items_bytes(size, count)))
