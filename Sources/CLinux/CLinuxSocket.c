#define _GNU_SOURCE
#include <sys/socket.h>
#include <errno.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <stddef.h>
#include <malloc.h>
#include <signal.h>
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
    // The thread starts with every asynchronous signal blocked, as libdispatch's own threads
    // do: a process signal (SIGTERM) must never be taken by an I/O thread, where its default
    // action would end the process, or SIG_IGN drop it, before the process's signal sources
    // are registered (SignalWatch); blocked, it waits for them. Faults stay deliverable.
    sigset_t blocked, previous;
    sigfillset(&blocked);
    sigdelset(&blocked, SIGSEGV);
    sigdelset(&blocked, SIGBUS);
    sigdelset(&blocked, SIGFPE);
    sigdelset(&blocked, SIGILL);
    sigdelset(&blocked, SIGTRAP);
    sigdelset(&blocked, SIGABRT);
    sigdelset(&blocked, SIGSYS);
    pthread_t thread;
    if (code == 0) {
        pthread_sigmask(SIG_BLOCK, &blocked, &previous);
        code = pthread_create(&thread, &attributes, body, context);
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
    }
    pthread_attr_destroy(&attributes);
    return code;
}

int clinux_release_free_memory(void) {
    return malloc_trim(0);
}
