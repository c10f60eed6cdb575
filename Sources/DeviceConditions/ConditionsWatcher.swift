import Dispatch
import Foundation

/// Keeps a ``DeviceReading`` current without polling what the kernel announces:
///
/// - a ``KernelEventMonitor`` event re-reads just the parts it concerns (power on a
///   power-supply uevent, network on rtnetlink, thermal on a thermal uevent), after a short
///   ``settleDelay`` that folds a burst (link up, address, route) into one read;
/// - a timer every ``sampleInterval`` (30 s, the ceiling for slow readings in docs/system.md, "Properties") re-reads the
///   parts no event announces (``LinuxConditionsReader/Parts/sampled``: battery level,
///   Low Power Mode, thermal, idleness, CPU pressure), plus any part whose socket could not
///   be opened, and only while `shouldSample()` says something depends on conditions, so an
///   idle scheduler reads nothing;
/// - after each re-read, `onReading` gets the whole reading; the caller decides whether
///   the conditions changed.
///
/// Everything runs on ``queue``, a serial queue; the reading is confined to it.
public final class ConditionsWatcher: @unchecked Sendable {
    // @unchecked: `reading`, `pending` and `flushScheduled` are touched only on `queue`;
    // `events`, `timer` and `problems` are set once, in init, before any handler can run.

    /// What is read.
    public let reader: LinuxConditionsReader
    /// Where events, samples and `onReading` run.
    public let queue: DispatchQueue
    /// How often slow values are sampled while something depends on them.
    public let sampleInterval: TimeInterval
    /// How long after an event the re-read waits for the rest of a burst.
    public let settleDelay: TimeInterval
    /// Why kernel events are (partly) unavailable; empty when both sockets opened or
    /// events were not asked for. Set once, in init.
    public private(set) var problems: [String] = []

    private let now: @Sendable () -> Date
    private let shouldSample: @Sendable () -> Bool
    private let onReading: @Sendable (DeviceReading) -> Void
    private var reading: DeviceReading
    private var pending: LinuxConditionsReader.Parts = []
    private var flushScheduled = false
    private var events: KernelEventMonitor?
    private var timer: (any DispatchSourceTimer)?

    /// Reads once now and starts watching.
    /// - Parameters:
    ///   - kernelEvents: open the netlink sockets (tests pass `false` and call
    ///     ``kernelChanged(_:)`` themselves).
    ///   - sampling: start the sampling timer (tests pass `false` and call ``sample()``).
    ///   - now: the clock for idleness (terminal activity is measured against it).
    ///   - shouldSample: whether anything depends on conditions right now.
    ///   - onReading: called on ``queue`` after every re-read.
    public init(
        reader: LinuxConditionsReader,
        queue: DispatchQueue = DispatchQueue(label: "bgtask.conditions"),
        sampleInterval: TimeInterval = 30,
        settleDelay: TimeInterval = 0.2,
        kernelEvents: Bool = true,
        sampling: Bool = true,
        now: @escaping @Sendable () -> Date = { Date() },
        shouldSample: @escaping @Sendable () -> Bool,
        onReading: @escaping @Sendable (DeviceReading) -> Void
    ) {
        self.reader = reader
        self.queue = queue
        self.sampleInterval = sampleInterval
        self.settleDelay = settleDelay
        self.now = now
        self.shouldSample = shouldSample
        self.onReading = onReading
        self.reading = reader.reading(now: now())

        if kernelEvents {
            let opened = KernelEventMonitor(queue: queue) { [weak self] changes in self?.kernelChanged(changes) }
            problems = opened.problems
            events = opened.watching.isEmpty ? nil : opened
        }

        if sampling {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + sampleInterval, repeating: sampleInterval, leeway: .seconds(1))
            timer.setEventHandler { [weak self] in self?.sampleOnQueue() }
            timer.activate()
            self.timer = timer
        }
    }

    /// What the kernel monitor watches (empty without kernel events).
    public var watching: KernelEventMonitor.Changes { events?.watching ?? [] }

    /// The parts the timer samples: ``LinuxConditionsReader/Parts/sampled``, plus the
    /// network when no rtnetlink socket announces its changes.
    public var sampledParts: LinuxConditionsReader.Parts {
        watching.contains(.network) ? .sampled : LinuxConditionsReader.Parts.sampled.union(.network)
    }

    /// The latest reading (waits for the queue; do not call from it).
    public var current: DeviceReading { queue.sync { reading } }

    /// Something changed: re-read the parts concerned after ``settleDelay``. Called by the
    /// kernel monitor; tests call it to stand in for an event.
    public func kernelChanged(_ changes: KernelEventMonitor.Changes) {
        var parts: LinuxConditionsReader.Parts = []
        if changes.contains(.power) { parts.insert(.power) }
        if changes.contains(.network) { parts.insert(.network) }
        if changes.contains(.thermal) { parts.insert(.thermal) }
        guard !parts.isEmpty else { return }
        let due = parts
        queue.async { [self] in
            pending.formUnion(due)
            guard !flushScheduled else { return }
            flushScheduled = true
            queue.asyncAfter(deadline: .now() + settleDelay) { [self] in
                let due = pending
                pending = []
                flushScheduled = false
                refresh(due)
            }
        }
    }

    /// One tick of the sampling timer: re-reads ``sampledParts`` if `shouldSample()`.
    public func sample() {
        queue.async { [self] in sampleOnQueue() }
    }

    private func sampleOnQueue() {
        guard shouldSample() else { return }
        refresh(sampledParts)
    }

    private func refresh(_ parts: LinuxConditionsReader.Parts) {
        reader.refresh(&reading, parts: parts, now: now())
        onReading(reading)
    }

    /// Stops the timer and closes the sockets. Idempotent.
    public func cancel() {
        if let timer, !timer.isCancelled { timer.cancel() }
        events?.cancel()
    }

    deinit { cancel() }
}
