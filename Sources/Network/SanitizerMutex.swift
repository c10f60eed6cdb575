#if BGTASK_PTHREAD_MUTEX
import SchedulerCore

// The ThreadSanitizer build's lock (SchedulerCore's PthreadMutex.swift): it shadows
// Synchronization's `Mutex` in this module.
typealias Mutex = PthreadMutex
#endif
