#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Termination signals read through Dispatch signal sources with no moment where one is
/// lost or ends the process by its default action (docs/daemon.md, "Stopping"; used by
/// bgtaskd and by ``BGApplication/handleTerminationSignals(exitWhenDone:)``).
///
/// On Linux, libdispatch reads a signal through a `signalfd` and installs its own handler
/// for it (which hands a signal caught by any thread to its manager thread) only when the
/// source is registered, on that manager thread, some time after `activate()` returns (long
/// on a loaded machine). Until then the signal's disposition decides: set to `SIG_IGN`, as
/// the app's signals were, the kernel drops a signal that no thread blocks (an app whose
/// SIGTERM came during its launch ran on as if never told); left at the default, the
/// process ends. So ``start(_:on:keepBlocked:handler:)`` blocks the signals in the calling
/// thread, which keeps one pending until the `signalfd` reads it (libdispatch's own threads
/// block them already, and so do the I/O threads of `clinux_start_thread`), and waits until
/// libdispatch has registered every source. Before this is called (a program's own start,
/// an app's `init`), a signal has its default action, as for any program.
package enum SignalWatch {
    /// The longest ``start(_:on:keepBlocked:handler:)`` waits for libdispatch to register its sources.
    package static let registrationTimeout: DispatchTimeInterval = .seconds(registrationTimeoutSeconds)
    /// ``registrationTimeout`` in words, for messages.
    package static let registrationTimeoutText = "\(registrationTimeoutSeconds) s"
    private static let registrationTimeoutSeconds = 5

    /// What ``start(_:on:keepBlocked:handler:)`` set up.
    package struct Watch: @unchecked Sendable {
        // Dispatch sources are thread-safe, but the Linux overlay does not mark them
        // `Sendable`; the array is never changed after `start` returns it.
        /// The sources: keep them for as long as the signals are to be handled.
        package let sources: [any DispatchSourceSignal]
        /// Whether libdispatch registered every source within ``registrationTimeout``: when
        /// not, a signal that comes before it does may still be lost or fatal.
        package let registeredInTime: Bool
    }

    /// Blocks `signals` in the calling thread (call it from the main thread, as early as
    /// possible: a thread started before and not blocking them stays exposed until the
    /// registration), makes an activated source for each on `queue` calling `handler` with
    /// the signal's number, and returns once libdispatch registered them (milliseconds; at
    /// most ``registrationTimeout``). Must not be called on `queue`, nor on a queue that
    /// `queue` waits for.
    /// - Parameter keepBlocked: whether the signals stay blocked in the calling thread once
    ///   registered. bgtaskd keeps them so (threads it starts inherit the mask, and the app
    ///   processes it starts get an empty one). An app gets its mask back, since a program
    ///   it starts with Foundation's `Process` inherits the mask of the thread that starts
    ///   it, and a helper that blocks SIGTERM cannot be stopped; once registered, the
    ///   handler meets a signal on any thread. Not registered in time (a machine stalled for
    ///   seconds), they stay blocked either way, for the process's life: a signal waits
    ///   rather than being lost or fatal, at the cost of programs started from this thread
    ///   inheriting them blocked (the caller logs it).
    package static func start(
        _ signals: [Int32], on queue: DispatchQueue, keepBlocked: Bool,
        handler: @escaping @Sendable (Int32) -> Void
    ) -> Watch {
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in signals { sigaddset(&mask, number) }
        // Blocked, never ignored: SIG_IGN would discard a pending signal (POSIX), and an
        // ignored signal that is not blocked is dropped by the kernel before signalfd sees it.
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &mask, &previous)
        let registered = DispatchGroup()
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.setEventHandler { handler(number) }
            source.activate()
            sources.append(source)
        }
        let inTime = registered.wait(timeout: .now() + registrationTimeout) == .success
        // A signal that came meanwhile is pending: unblocked, it meets libdispatch's handler.
        if inTime, !keepBlocked { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return Watch(sources: sources, registeredInTime: inTime)
    }
}
