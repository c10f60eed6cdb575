#ifndef CLINUX_SOCKET_H
#define CLINUX_SOCKET_H

#include <stdint.h>

/// The credentials of the process at the other end of the connected Unix socket `fd`, as
/// the kernel recorded them at connect() (`SO_PEERCRED`; `struct ucred` is hidden from
/// Swift behind _GNU_SOURCE). Returns 0, or -1 with errno set.
int clinux_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid);

/// Names the calling thread (at most 15 bytes are kept; prctl PR_SET_NAME), for ps and
/// perf: a new thread otherwise carries its creator's name. 0, or -1 with errno set.
int clinux_set_thread_name(const char *name);

#endif
