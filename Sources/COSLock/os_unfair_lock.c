// os_unfair_lock over Linux's priority-inheritance futexes (include/os_unfair_lock.h). The
// word holds 0 (unlocked) or the owner's thread id, with the kernel's FUTEX_WAITERS bit set
// while a thread sleeps on it: uncontended, taking and releasing are one compare-and-swap
// each; contended, FUTEX_LOCK_PI sleeps (lending the waiter's priority to the owner) and
// FUTEX_UNLOCK_PI hands the lock to the waiter of highest priority. futex(2),
// "Priority-inheritance futexes".
#define _GNU_SOURCE
#include "os_unfair_lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/// The calling thread's id, kept per thread (a system call each time would cost every
/// uncontended lock one); forgotten in a forked child, whose thread has another id.
static __thread uint32_t cached_thread_id;
static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

static void forget_thread_id_in_child(void) { cached_thread_id = 0; }
static void install_fork_handler(void) { pthread_atfork(NULL, NULL, forget_thread_id_in_child); }

static uint32_t current_thread_id(void) {
    if (cached_thread_id == 0) {
        pthread_once(&fork_handler_once, install_fork_handler);
        cached_thread_id = (uint32_t)syscall(SYS_gettid);
    }
    return cached_thread_id;
}

/// Stops the program as Apple's libplatform does when a client misuses the lock.
__attribute__((noreturn)) static void client_bug(const char *what) {
    fprintf(stderr, "BUG IN CLIENT OF LIBPLATFORM: %s\n", what);
    fflush(stderr);
    abort();
}

/// Stops the program on a futex error no correct use of the lock can cause.
__attribute__((noreturn)) static void futex_failure(const char *operation, int error) {
    fprintf(stderr, "os_unfair_lock: %s failed: %s (the lock's memory was damaged, copied while held, or shared with another process)\n",
            operation, strerror(error));
    fflush(stderr);
    abort();
}

static long futex(uint32_t *word, int operation) {
    return syscall(SYS_futex, word, operation, 0, NULL, NULL, 0);
}

void os_unfair_lock_lock(os_unfair_lock_t lock) {
    uint32_t self = current_thread_id();
    uint32_t expected = 0;
    if (__atomic_compare_exchange_n(&lock->_os_unfair_lock_opaque, &expected, self, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
    if ((expected & FUTEX_TID_MASK) == self) client_bug("Trying to recursively lock an os_unfair_lock");
    for (;;) {
        if (futex(&lock->_os_unfair_lock_opaque, FUTEX_LOCK_PI_PRIVATE) == 0) {
            // The kernel handed the lock over: an acquiring load pairs with the releasing
            // one before FUTEX_UNLOCK_PI, so ThreadSanitizer sees the hand-over too (the
            // system call orders memory already).
            (void)__atomic_load_n(&lock->_os_unfair_lock_opaque, __ATOMIC_ACQUIRE);
            return;
        }
        switch (errno) {
        case EINTR:
        case EAGAIN:  // the owner is exiting: try again
            continue;
        case EDEADLK:
            client_bug("Trying to recursively lock an os_unfair_lock");
        case ESRCH:  // the thread id in the word is no thread's
        case EINVAL:  // the word is not a lock's
            client_bug("os_unfair_lock is corrupt, or owner thread exited without unlocking");
        default:
            futex_failure("FUTEX_LOCK_PI", errno);
        }
    }
}

bool os_unfair_lock_trylock(os_unfair_lock_t lock) {
    uint32_t expected = 0;
    return __atomic_compare_exchange_n(&lock->_os_unfair_lock_opaque, &expected, current_thread_id(), false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void os_unfair_lock_unlock(os_unfair_lock_t lock) {
    uint32_t self = current_thread_id();
    uint32_t expected = self;
    if (__atomic_compare_exchange_n(&lock->_os_unfair_lock_opaque, &expected, 0, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) return;
    if ((expected & FUTEX_TID_MASK) != self) client_bug("Unlock of an os_unfair_lock not owned by current thread");
    // Waiters (or an owner that died holding it): the kernel hands the lock over. The
    // release (an atomic no-op on the word) pairs with the next owner's acquire.
    (void)__atomic_fetch_or(&lock->_os_unfair_lock_opaque, 0, __ATOMIC_RELEASE);
    for (;;) {
        if (futex(&lock->_os_unfair_lock_opaque, FUTEX_UNLOCK_PI_PRIVATE) == 0) return;
        if (errno == EINTR) continue;
        if (errno == EPERM) client_bug("Unlock of an os_unfair_lock not owned by current thread");
        futex_failure("FUTEX_UNLOCK_PI", errno);
    }
}

void os_unfair_lock_assert_owner(const os_unfair_lock *lock) {
    if ((__atomic_load_n(&lock->_os_unfair_lock_opaque, __ATOMIC_RELAXED) & FUTEX_TID_MASK) != current_thread_id()) {
        client_bug("Assertion failed: Lock unexpectedly not owned by current thread");
    }
}

void os_unfair_lock_assert_not_owner(const os_unfair_lock *lock) {
    if ((__atomic_load_n(&lock->_os_unfair_lock_opaque, __ATOMIC_RELAXED) & FUTEX_TID_MASK) == current_thread_id()) {
        client_bug("Assertion failed: Lock unexpectedly owned by current thread");
    }
}
