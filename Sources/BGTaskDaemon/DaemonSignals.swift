#if canImport(Glibc)
import Glibc
#endif
import BackgroundTasks
import Dispatch
import Synchronization

/// bgtaskd's SIGTERM, SIGINT and SIGHUP, taken from the first moment of start-up
/// (docs/daemon.md, "Stopping").
///
/// ``install()`` blocks the three signals in the calling thread, which must be the main
/// thread before any other thread exists (every thread created later inherits the mask), and
/// creates Dispatch signal sources for them, waiting until libdispatch has registered them
/// (`SignalWatch`: from then on its handler, not the default action, meets a signal on any
/// thread; the sources hand what they read to the main queue). A blocked signal stays pending
/// until the source reads it (libdispatch reads signals through a `signalfd` on Linux), so a
/// signal that arrives while the daemon starts, while it says "ready", or while a source is
/// still being registered, is neither lost nor fatal: it is handled once the main queue runs.
/// Setting the signals to `SIG_IGN` instead, as bgtaskd did, loses one that arrives before the
/// source is registered, and one before `SIG_IGN` kills with the default action.
///
/// The sources act only once ``deliver(to:)`` named the daemon; a signal that arrived before
/// is acted on then. (bgtaskd's `main` names the daemon before the main queue, where the
/// sources act, first runs, so this is a guard for another caller, not a path bgtaskd takes.)
/// The app processes the daemon starts get an empty mask (docs/process-supervision.md).
public final class DaemonSignals: Sendable {
    private struct State {
        var daemon: Daemon?
        /// Signals received before there was a daemon to act on them, in order.
        var early: [Int32] = []
        /// Kept so that the sources stay registered for the daemon's life.
        var watch: SignalWatch.Watch?
        /// See ``DaemonSignals/registeredInTime``.
        var registeredInTime = true
    }

    private let state = Mutex(State())

    /// The signals handled: SIGTERM and SIGINT stop the daemon, SIGHUP reloads its policy.
    public static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    private init() {}

    /// Blocks ``handled`` and starts watching them. Call it first thing in `main`, before
    /// anything else starts a thread.
    public static func install() -> DaemonSignals {
        let signals = DaemonSignals()
        // The sources live on a queue of their own so that their registration can be waited
        // for here, on the main thread. dispatchMain() later parks the main thread in
        // sigsuspend with an empty mask, so a signal that came while a source was still
        // unregistered (a loaded machine delays the manager thread) ended the daemon with
        // the default action.
        let watch = SignalWatch.start(handled, on: signalQueue, keepBlocked: true) { [signals] number in
            // Acted on from the main queue, which runs only once the daemon has started.
            DispatchQueue.main.async { signals.received(number) }
        }
        signals.state.withLock {
            $0.watch = watch
            $0.registeredInTime = watch.registeredInTime
        }
        return signals
    }

    /// Whether libdispatch registered every source within `SignalWatch.registrationTimeout`: when not,
    /// a signal that comes before it does may still end the daemon with its default action.
    public var registeredInTime: Bool { state.withLock { $0.registeredInTime } }

    /// Where the signal sources' handlers run before they hand a signal to the main queue.
    private static let signalQueue = DispatchQueue(label: "bgtaskd.signals")

    /// From now on the signals act on `daemon`; one that came before acts now (on the main queue).
    public func deliver(to daemon: Daemon) {
        let early = state.withLock { state -> [Int32] in
            state.daemon = daemon
            defer { state.early = [] }
            return state.early
        }
        guard !early.isEmpty else { return }
        DispatchQueue.main.async { for number in early { Self.act(number, on: daemon) } }
    }

    private func received(_ number: Int32) {
        let daemon = state.withLock { state -> Daemon? in
            if state.daemon == nil { state.early.append(number) }
            return state.daemon
        }
        if let daemon { Self.act(number, on: daemon) }
    }

    private static func act(_ number: Int32, on daemon: Daemon) {
        if number == SIGHUP {
            daemon.reloadPolicy()
        } else {
            daemon.stop(reason: "signal \(number)")
        }
    }
}
