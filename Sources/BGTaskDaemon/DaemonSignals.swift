#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// bgtaskd's SIGTERM, SIGINT and SIGHUP, taken from the first moment of start-up
/// (docs/daemon.md, "Stopping").
///
/// ``install()`` blocks the three signals in the calling thread, which must be the main
/// thread before any other thread exists (every thread created later inherits the mask), and
/// creates Dispatch signal sources for them on the main queue. A blocked signal stays pending
/// until the source reads it (libdispatch reads signals through a `signalfd` on Linux), so a
/// signal that arrives while the daemon starts, while it says "ready", or while a source is
/// still being registered, is neither lost nor fatal: it is handled once the main queue runs.
/// Setting the signals to `SIG_IGN` instead, as bgtaskd did, loses one that arrives before the
/// source is registered, and one before `SIG_IGN` kills with the default action.
///
/// The sources are made here, not once the daemon exists: libdispatch registers a source
/// on its manager thread, after `activate()` returns, and the registration is what replaces
/// the signal's default action. `dispatchMain()` parks the main thread in `sigsuspend` with an
/// empty mask, so a signal still pending then, with its source not yet registered, would kill
/// the daemon (seen: with the sources made after the start, a SIGINT sent at "ready" now and
/// then ended bgtaskd with the default action).
///
/// The handlers run on the main queue, which runs only after bgtaskd's `main` has called
/// ``deliver(to:)`` (it drains nothing before `dispatchMain()`), so they always find the
/// daemon. The app processes the daemon starts get an empty mask (docs/process-supervision.md).
public final class DaemonSignals: Sendable {
    private struct State {
        /// Set by ``deliver(to:)`` before the main queue runs; held for the process's life
        /// (bgtaskd's `main` keeps no reference of its own).
        var daemon: Daemon?
        /// Kept so that they stay registered for the daemon's life.
        var sources: [SignalSourceBox] = []
    }

    private let state = Mutex(State())

    /// The signals handled: SIGTERM and SIGINT stop the daemon, SIGHUP reloads its policy.
    public static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    private init() {}

    /// Blocks ``handled`` and starts watching them. Call it first thing in `main`, before
    /// anything else starts a thread.
    public static func install() -> DaemonSignals {
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in handled { sigaddset(&mask, number) }
        // Blocked, never ignored: setting SIG_IGN would discard a pending signal (POSIX), and an
        // ignored signal that is not blocked is dropped by the kernel before signalfd sees it.
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        let signals = DaemonSignals()
        var sources: [SignalSourceBox] = []
        for number in handled {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler { [signals] in signals.received(number) }
            source.activate()
            sources.append(SignalSourceBox(source: source))
        }
        signals.state.withLock { $0.sources = sources }
        return signals
    }

    /// The signals act on `daemon`. Call it on the main thread before the main queue runs
    /// (bgtaskd's `main` does, before `dispatchMain()`).
    public func deliver(to daemon: Daemon) {
        state.withLock { $0.daemon = daemon }
    }

    private func received(_ number: Int32) {
        // Never nil: the main queue, where this runs, runs only after deliver(to:).
        guard let daemon = state.withLock({ $0.daemon }) else { return }
        if number == SIGHUP {
            daemon.reloadPolicy()
        } else {
            daemon.stop(reason: "signal \(number)")
        }
    }
}

/// A Dispatch signal source kept in locked state: sources are thread-safe, but the Linux
/// overlay does not mark them `Sendable`.
private struct SignalSourceBox: @unchecked Sendable {
    let source: any DispatchSourceSignal
}
