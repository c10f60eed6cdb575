// `os_unfair_lock` as iOS code uses it (Apple's <os/lock.h>): a lock word the owner's thread
// id is written into, taken and released without a system call when uncontended, and a
// waiter that sleeps in the kernel with priority inheritance when contended (Linux's PI
// futexes, which keep the owner's id in the word as Apple's lock does). Misuse stops the
// program with Apple's message, as Apple's does: a recursive lock, an unlock by a thread that
// does not own the lock, a failed owner assertion. docs/porting.md, "Locks".
#ifndef BGTASK_OS_UNFAIR_LOCK_H
#define BGTASK_OS_UNFAIR_LOCK_H

#include <stdbool.h>
#include <stdint.h>

/// The lock: zero is unlocked (`os_unfair_lock()` in Swift, `OS_UNFAIR_LOCK_INIT` in C);
/// locked, the owner's thread id. Never copy a lock that may be held.
typedef struct os_unfair_lock_s {
    uint32_t _os_unfair_lock_opaque;
} os_unfair_lock, *os_unfair_lock_t;

/// An unlocked lock, for C.
#define OS_UNFAIR_LOCK_INIT ((os_unfair_lock){0})

/// Takes the lock, waiting while another thread holds it. Taking a lock the calling thread
/// holds stops the program.
void os_unfair_lock_lock(os_unfair_lock_t lock);

/// Takes the lock if nobody holds it (the calling thread included); true when taken.
bool os_unfair_lock_trylock(os_unfair_lock_t lock);

/// Releases the lock, handing it to a waiter if any. Releasing a lock the calling thread
/// does not hold stops the program.
void os_unfair_lock_unlock(os_unfair_lock_t lock);

/// Stops the program unless the calling thread holds the lock.
void os_unfair_lock_assert_owner(const os_unfair_lock *lock);

/// Stops the program if the calling thread holds the lock.
void os_unfair_lock_assert_not_owner(const os_unfair_lock *lock);

#endif
