#ifndef CLINUX_SOCKET_H
#define CLINUX_SOCKET_H

#include <stdint.h>
#include <stddef.h>

/// The credentials of the process at the other end of the connected Unix socket `fd`, as
/// the kernel recorded them at connect() (`SO_PEERCRED`; `struct ucred` is hidden from
/// Swift behind _GNU_SOURCE). Returns 0, or -1 with errno set.
int clinux_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid);

/// Names the calling thread (at most 15 bytes are kept; prctl PR_SET_NAME), for ps and
/// perf: a new thread otherwise carries its creator's name. 0, or -1 with errno set.
int clinux_set_thread_name(const char *name);

/// Starts a detached thread running `body(context)` with a stack of `stack_size` bytes.
/// Returns 0, or the error number pthread_create gave (EAGAIN when the process or user is
/// out of threads): unlike Foundation's Thread.start, a thread that could not start is
/// reported, not ignored. The thread starts with every asynchronous signal blocked (faults
/// excepted), as libdispatch's threads do, so that it never takes a process signal.
int clinux_start_thread(void *(*body)(void *), void *context, size_t stack_size);

/// Gives the heap's free memory back to the system (glibc's `malloc_trim(0)`, which Swift's
/// Glibc module does not declare). Returns 1 when memory was released, else 0.
int clinux_release_free_memory(void);

#endif
