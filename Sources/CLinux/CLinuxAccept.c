#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include "CLinuxAccept.h"

int clinux_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
