#if BGTASK_PTHREAD_MUTEX
import SchedulerCore

// The ThreadSanitizer build's lock (SchedulerCore's PthreadMutex.swift): it shadows
// Synchronization's `Mutex` in this test module too, so what tests share is seen as guarded.
typealias Mutex = PthreadMutex
#endif
