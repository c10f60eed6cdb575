#ifndef CLINUX_ACCEPT_H
#define CLINUX_ACCEPT_H

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC): the accepted socket is
/// non-blocking and close-on-exec from its first instant (Glibc declares accept4 only
/// under _GNU_SOURCE, which Swift's Glibc module does not define). Returns the descriptor,
/// or -1 with errno set.
int clinux_accept_nonblocking(int fd);

#endif
