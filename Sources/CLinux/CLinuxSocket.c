#define _GNU_SOURCE
#include <sys/socket.h>
#include <errno.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <stddef.h>
#include <malloc.h>
#include "CLinuxSocket.h"

int clinux_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof(credentials)) { errno = EPROTO; return -1; }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int clinux_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

int clinux_start_thread(void *(*body)(void *), void *context, size_t stack_size) {
    pthread_attr_t attributes;
    int code = pthread_attr_init(&attributes);
    if (code != 0) return code;
    code = pthread_attr_setstacksize(&attributes, stack_size);
    if (code == 0) code = pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    if (code == 0) code = pthread_create(&thread, &attributes, body, context);
    pthread_attr_destroy(&attributes);
    return code;
}

int clinux_release_free_memory(void) {
    return malloc_trim(0);
}
