#if BGTASK_PTHREAD_MUTEX
// The ThreadSanitizer build's lock (Support/PthreadMutex.swift): it shadows
// Synchronization's `Mutex` in this module.
typealias Mutex = PthreadMutex
#endif
