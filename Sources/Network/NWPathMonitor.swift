import Dispatch
import Foundation
import Synchronization

/// Watches the network and hands the app a new ``NWPath`` whenever it changes (Apple:
/// `NWPathMonitor`).
///
/// ```swift
/// let monitor = NWPathMonitor()
/// monitor.pathUpdateHandler = { path in
///     if path.status == .satisfied, !path.isExpensive { ... }
/// }
/// monitor.start(queue: DispatchQueue(label: "network"))
/// ```
///
/// As on iOS: `start(queue:)` evaluates the path and hands it to ``pathUpdateHandler`` on
/// `queue` soon after, then hands each changed path (an unchanged one is not handed again;
/// changes that come faster than the queue takes them may be handed as the latest alone);
/// ``currentPath`` is the latest; `cancel()` stops it for good (a cancelled monitor does not
/// start again). A started monitor lives until it is cancelled, even when the app keeps no
/// reference to it. The handler is called on `queue`, never under this package's locks.
///
/// Where the paths come from: the machine's interfaces and routes, re-read when the kernel
/// announces a change (rtnetlink; every 30 s where netlink is forbidden); for an app the
/// simulator models, the simulated device's network (docs/porting.md, "Network paths").
public final class NWPathMonitor: CustomDebugStringConvertible, Sendable {
    private enum Phase { case idle, started, cancelled }

    private struct State {
        var phase = Phase.idle
        var handler: (@Sendable (NWPath) -> Void)?
        var queue: DispatchQueue?
        var path = NWPath.unevaluated
        /// Readings are numbered as they begin; one older than the reading ``path`` came
        /// from is dropped, so two readings that overlap never leave the older one kept.
        var nextReading: UInt64 = 0
        var keptReading: UInt64 = 0
        /// ``path`` is numbered as it changes (0: not evaluated yet); a hand-over gives the
        /// handler the latest path if it is newer than the last one handed, so hand-overs
        /// never go back in time.
        var pathVersion: UInt64 = 0
        var handedVersion: UInt64 = 0
        var watch: PathWatch?
        var nextStream: UInt64 = 0
        var streams: [UInt64: AsyncStream<NWPath>.Continuation] = [:]
        /// Whether a sequence started the monitor: it is cancelled when its last sequence ends.
        var startedBySequence = false
    }

    private let source: PathSource
    private let required: NWInterface.InterfaceType?
    private let prohibited: [NWInterface.InterfaceType]
    private let state = Mutex(State())

    /// A monitor of every interface type.
    public convenience init() {
        self.init(source: .current(), required: nil, prohibited: [])
    }

    /// A monitor of interfaces of `requiredInterfaceType` only: its path is satisfied when
    /// such an interface can carry traffic.
    public convenience init(requiredInterfaceType: NWInterface.InterfaceType) {
        self.init(source: .current(), required: requiredInterfaceType, prohibited: [])
    }

    /// A monitor of every interface type but `prohibitedInterfaceTypes` (iOS 14).
    public convenience init(prohibitedInterfaceTypes: [NWInterface.InterfaceType]) {
        self.init(source: .current(), required: nil, prohibited: prohibitedInterfaceTypes)
    }

    /// A monitor of every interface type whose paths come from where `other`'s come from (the
    /// machine, or the simulated device of the app that made `other`): SystemConfiguration's
    /// reachability targets schedule a new one each time the app gives them a queue, reading
    /// the network the target was made in.
    package convenience init(sameSourceAs other: NWPathMonitor) {
        self.init(source: other.source, required: nil, prohibited: [])
    }

    init(source: PathSource, required: NWInterface.InterfaceType?, prohibited: [NWInterface.InterfaceType]) {
        self.source = source
        self.required = required
        self.prohibited = prohibited
    }

    /// Called on the monitor's queue with each new path. It may be set before or after
    /// `start(queue:)`; it is read when a path is handed over.
    @preconcurrency public var pathUpdateHandler: (@Sendable (NWPath) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// The latest path: unsatisfied, with no interface, until the monitor starts; then the
    /// path as last evaluated. Here the first evaluation is done when `start(queue:)`
    /// returns; iOS does not promise that, so code that must run on iOS takes the first path
    /// from the handler.
    public var currentPath: NWPath { state.withLock { $0.path } }

    /// The queue given to `start(queue:)`; `nil` before.
    public var queue: DispatchQueue? { state.withLock { $0.queue } }

    /// The monitor's type and path.
    public var debugDescription: String {
        let (phase, path) = state.withLock { ($0.phase, $0.path) }
        switch phase {
        case .idle: return "NWPathMonitor (not started)"
        case .started: return "NWPathMonitor: \(path.debugDescription)"
        case .cancelled: return "NWPathMonitor (cancelled)"
        }
    }

    /// Starts watching: evaluates the path now and hands it to ``pathUpdateHandler`` on
    /// `queue`, then each changed path. A second call, or a call after `cancel()`, does
    /// nothing.
    public func start(queue: DispatchQueue) {
        let starting = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .started
            state.queue = queue
            return true
        }
        guard starting else { return }
        // The watch holds the monitor until `cancel()` takes it away: a started monitor
        // lives on, as Apple's does.
        let watch = source.watch { self.evaluate() }
        let kept = state.withLock { state -> Bool in
            guard state.phase == .started else { return false }
            state.watch = watch
            return true
        }
        guard kept else { return watch.cancel() }
        // After the watch is in place, so a change from here on is not missed; in the watch's
        // order, so an announcement being handled cannot be overtaken by an older reading.
        watch.serially { evaluate() }
    }

    /// Stops watching for good: ``makeAsyncIterator()``'s sequences end, and the handler is
    /// let go (so one that refers to its monitor does not keep it). Called on the monitor's
    /// queue, no path is handed over after it; called elsewhere, a hand-over already under
    /// way on the queue may still finish.
    public func cancel() {
        let (watch, streams) = state.withLock { state -> (PathWatch?, [AsyncStream<NWPath>.Continuation]) in
            guard state.phase != .cancelled else { return (nil, []) }
            state.phase = .cancelled
            let taken = (state.watch, Array(state.streams.values))
            state.watch = nil
            state.streams = [:]
            state.handler = nil
            return taken
        }
        watch?.cancel()
        for stream in streams { stream.finish() }
    }

    /// Reads the path; when it changed (or is the first), keeps it and hands it over.
    func evaluate() {
        let reading = state.withLock { state -> UInt64 in
            state.nextReading += 1
            return state.nextReading
        }
        let path = NWPath(reading: source.read(), required: required, prohibited: prohibited)
        let queue = state.withLock { state -> DispatchQueue? in
            guard state.phase == .started, reading > state.keptReading else { return nil }
            state.keptReading = reading
            guard state.pathVersion == 0 || state.path != path else { return nil }
            state.path = path
            state.pathVersion += 1
            // Yielded under the lock, so sequences see paths in the order they were kept;
            // yielding resumes a waiting task elsewhere, it runs no app code here.
            for stream in state.streams.values { stream.yield(path) }
            return state.queue
        }
        guard let queue else { return }
        source.deliver(on: queue) { [self] in
            let handing = state.withLock { state -> (handler: @Sendable (NWPath) -> Void, path: NWPath)? in
                guard state.phase == .started, state.pathVersion > state.handedVersion else { return nil }
                state.handedVersion = state.pathVersion
                return state.handler.map { ($0, state.path) }
            }
            if let handing { handing.handler(handing.path) }
        }
    }

    /// Adds a sequence, giving it the current path if there is one; `nil` once cancelled.
    /// `mustStart` when nothing started the monitor: the sequence starts it (and owns that).
    fileprivate func addStream(_ continuation: AsyncStream<NWPath>.Continuation) -> (id: UInt64, mustStart: Bool)? {
        state.withLock { state in
            guard state.phase != .cancelled else { return nil }
            state.nextStream += 1
            state.streams[state.nextStream] = continuation
            if state.pathVersion > 0 { continuation.yield(state.path) }
            let mustStart = state.phase == .idle && !state.startedBySequence
            if mustStart { state.startedBySequence = true }
            return (state.nextStream, mustStart)
        }
    }

    /// A sequence ended (its loop left, its task cancelled): a monitor the sequences
    /// started is cancelled with the last of them, so a `for await` that ends leaves nothing
    /// running.
    fileprivate func removeStream(_ id: UInt64) {
        let last = state.withLock { state -> Bool in
            guard state.streams.removeValue(forKey: id) != nil else { return false }
            return state.streams.isEmpty && state.startedBySequence && state.phase == .started
        }
        if last { cancel() }
    }
}

extension NWPathMonitor: AsyncSequence {
    /// A path.
    public typealias Element = NWPath

    /// The paths of a monitor, as an asynchronous sequence (iOS 17): the current path first,
    /// then each change; it ends when the monitor is cancelled. A monitor that a sequence
    /// started (nothing called `start(queue:)` first) is cancelled when its last sequence
    /// ends.
    public struct Iterator: AsyncIteratorProtocol {
        private var base: AsyncStream<NWPath>.Iterator

        fileprivate init(_ base: AsyncStream<NWPath>.Iterator) { self.base = base }

        /// The next path; `nil` once the monitor is cancelled.
        public mutating func next() async -> NWPath? { await base.next() }
    }

    /// Starts the monitor (on a queue of its own) if it has not started, and returns an
    /// iterator over its paths: `for await path in NWPathMonitor() { ... }`.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: NWPath.self)
        if let added = addStream(continuation) {
            continuation.onTermination = { [weak self] _ in self?.removeStream(added.id) }
            if added.mustStart { start(queue: DispatchQueue(label: "NWPathMonitor")) }
        } else {
            continuation.finish()
        }
        return Iterator(stream.makeAsyncIterator())
    }
}
