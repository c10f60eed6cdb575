// Signposts as iOS code writes them around background work (docs/porting.md, "Logging"):
// `OSSignposter` (iOS 15) and the older `os_signpost`. Linux has no Instruments to draw
// them: each signpost is a debug-level line of its log (written with `BGTASK_LOG=debug`), and
// the end of an interval says how long it took, so the interval a background task spends
// is there to read. Apple's runtime checks (an interval ended twice, or under another name)
// are error-level lines, as Apple's production builds attach an error to the interval.

import Dispatch
import Foundation
import Synchronization

/// A signpost's identifier (Apple: `os_signpost_id_t`).
public typealias os_signpost_id_t = UInt64

/// What pairs a signposted interval's begin and end (Apple: `OSSignpostID`).
public struct OSSignpostID: Hashable, Comparable, Sendable {
    /// The identifier's value.
    public let rawValue: os_signpost_id_t

    /// An identifier of `value`.
    public init(_ value: os_signpost_id_t) { rawValue = value }

    /// A new identifier, unique in the process (for `log`).
    public init(log: OSLog) { rawValue = Self.next() }

    /// The identifier of `object` (its address), the same for every call with it.
    public init(log: OSLog, object: AnyObject) {
        rawValue = os_signpost_id_t(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()))
    }

    /// For intervals of which one at a time is in flight (Apple's value).
    public static let exclusive = OSSignpostID(0xEEEE_B0B5_B2B2_EEEE)
    /// An identifier that matches nothing.
    public static let invalid = OSSignpostID(~0)
    /// The null identifier.
    public static let null = OSSignpostID(0)

    public static func < (lhs: OSSignpostID, rhs: OSSignpostID) -> Bool { lhs.rawValue < rhs.rawValue }

    private static let counter = Atomic<UInt64>(0)
    private static func next() -> os_signpost_id_t {
        counter.add(1, ordering: .relaxed).newValue
    }
}

/// The message a signpost carries (Apple: `SignpostMetadata`, written as an interpolated
/// string with each value's privacy, as a `Logger` message).
public typealias SignpostMetadata = OSLogMessage

/// A signposted interval in flight, from its begin to its end (Apple:
/// `OSSignpostIntervalState`): its identifier, its name and when it began.
public final class OSSignpostIntervalState: Codable, Sendable {
    /// The interval's identifier.
    let signpostID: os_signpost_id_t
    /// The name it began with (`nil` when recreated from an identifier).
    let name: String?
    /// When it began, on the monotonic clock (`nil` when recreated).
    let beganNanoseconds: UInt64?
    /// Whether its end came already (an interval ends once).
    private let ended = Atomic<Bool>(false)

    init(id: OSSignpostID, name: String?, beganNanoseconds: UInt64?) {
        signpostID = id.rawValue
        self.name = name
        self.beganNanoseconds = beganNanoseconds
    }

    /// A state for ending an interval begun with `id` (another process's, or one whose
    /// state was not kept): its name and duration are not checked or known.
    public static func beginState(id: OSSignpostID) -> OSSignpostIntervalState {
        OSSignpostIntervalState(id: id, name: nil, beganNanoseconds: nil)
    }

    /// Marks the end; `false` when it had ended already.
    func end() -> Bool { !ended.exchange(true, ordering: .relaxed) }

    private enum CodingKeys: String, CodingKey { case signpostID, name, beganNanoseconds }

    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signpostID = try container.decode(os_signpost_id_t.self, forKey: .signpostID)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        beganNanoseconds = try container.decodeIfPresent(UInt64.self, forKey: .beganNanoseconds)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(signpostID, forKey: .signpostID)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(beganNanoseconds, forKey: .beganNanoseconds)
    }
}

/// Marks points of interest and intervals of an app's work (Apple: `OSSignposter`, iOS 15):
/// here, debug-level lines of its log, an interval's end with its duration.
public struct OSSignposter: Sendable {
    let log: OSLog

    /// A signposter for the default subsystem.
    public init() { log = .default }
    /// A signposter writing to `subsystem` and `category`.
    public init(subsystem: String, category: String) { log = OSLog(subsystem: subsystem, category: category) }
    /// A signposter writing to `subsystem` and one of the system's categories.
    public init(subsystem: String, category: OSLog.Category) { log = OSLog(subsystem: subsystem, category: category) }
    /// A signposter writing where `logger` writes.
    public init(logger: Logger) { log = logger.log }
    /// A signposter writing to `logHandle`.
    public init(logHandle: OSLog) { log = logHandle }

    /// A signposter that writes nothing.
    public static let disabled = OSSignposter(logHandle: .disabled)

    /// Whether its signposts are written (its log is enabled, and `BGTASK_LOG=debug`).
    public var isEnabled: Bool { log.isEnabled(type: .debug) }

    /// A new identifier, unique in the process.
    public func makeSignpostID() -> OSSignpostID { OSSignpostID(log: log) }
    /// The identifier of `object`.
    public func makeSignpostID(from object: AnyObject) -> OSSignpostID { OSSignpostID(log: log, object: object) }

    /// Marks a point of interest named `name`.
    public func emitEvent(_ name: StaticString, id: OSSignpostID = .exclusive) {
        write("event", name, id, message: nil)
    }

    /// Marks a point of interest named `name`, with `message`.
    public func emitEvent(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata) {
        write("event", name, id, message: message)
    }

    /// Begins an interval named `name`; end it with ``endInterval(_:_:)`` and the state.
    public func beginInterval(_ name: StaticString, id: OSSignpostID = .exclusive) -> OSSignpostIntervalState {
        begin(name, id, message: nil)
    }

    /// Begins an interval named `name`, with `message`.
    public func beginInterval(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata) -> OSSignpostIntervalState {
        begin(name, id, message: message)
    }

    /// Begins an interval that measures an animation (here as any interval).
    public func beginAnimationInterval(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata) -> OSSignpostIntervalState {
        begin(name, id, message: message)
    }

    /// Ends the interval `state` began, named `name` as it was begun.
    public func endInterval(_ name: StaticString, _ state: OSSignpostIntervalState) {
        end(name, state, message: nil)
    }

    /// Ends the interval `state` began, with `message`.
    public func endInterval(_ name: StaticString, _ state: OSSignpostIntervalState, _ message: SignpostMetadata) {
        end(name, state, message: message)
    }

    /// Runs `task` in an interval named `name`, ended however `task` returns.
    public func withIntervalSignpost<T>(_ name: StaticString, id: OSSignpostID = .exclusive, around task: () throws -> T) rethrows -> T {
        let state = begin(name, id, message: nil)
        defer { end(name, state, message: nil) }
        return try task()
    }

    /// Runs `task` in an interval named `name`, with `message` at its begin.
    public func withIntervalSignpost<T>(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata, around task: () throws -> T) rethrows -> T {
        let state = begin(name, id, message: message)
        defer { end(name, state, message: nil) }
        return try task()
    }

    private func begin(_ name: StaticString, _ id: OSSignpostID, message: SignpostMetadata?) -> OSSignpostIntervalState {
        write("begin", name, id, message: message)
        return OSSignpostIntervalState(id: id, name: "\(name)", beganNanoseconds: DispatchTime.now().uptimeNanoseconds)
    }

    private func end(_ name: StaticString, _ state: OSSignpostIntervalState, message: SignpostMetadata?) {
        let id = OSSignpostID(state.signpostID)
        guard state.end() else {
            return Signposts.check(log: log, "signpost interval \"\(name)\" (\(Signposts.text(id))) ended twice: an interval state ends one interval")
        }
        if let begun = state.name, begun != "\(name)" {
            Signposts.check(log: log, "signpost interval begun as \"\(begun)\" ended as \"\(name)\" (\(Signposts.text(id))): begin and end take the same name")
        }
        // A state decoded from another boot or machine began on another clock: no duration.
        let now = DispatchTime.now().uptimeNanoseconds
        let took = state.beganNanoseconds.flatMap { begun in
            begun <= now ? " after " + Signposts.duration(nanoseconds: now - begun) : nil
        } ?? ""
        write("end", name, id, message: message, suffix: took)
    }

    private func write(_ kind: String, _ name: StaticString, _ id: OSSignpostID, message: SignpostMetadata?, suffix: String = "") {
        Signposts.write(kind, name, id, log: log, suffix + (message.map { ": " + $0.rendered() } ?? ""))
    }
}

/// A signpost's kind (Apple: `OSSignpostType`), for ``os_signpost(_:dso:log:name:signpostID:)``.
public struct OSSignpostType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// A point of interest.
    public static let event = OSSignpostType(rawValue: 0)
    /// An interval's begin.
    public static let begin = OSSignpostType(rawValue: 1)
    /// An interval's end.
    public static let end = OSSignpostType(rawValue: 2)
}

/// Writes a signpost of `type` named `name` (Apple: `os_signpost(_:dso:log:name:signpostID:)`),
/// a debug-level line of `log`. An interval's begin and end written this way are not paired:
/// ``OSSignposter`` measures how long an interval took.
public func os_signpost(_ type: OSSignpostType, dso: UnsafeRawPointer = #dsohandle, log: OSLog, name: StaticString, signpostID: OSSignpostID = .exclusive) {
    Signposts.write(Signposts.kindName(type), name, signpostID, log: log, "")
}

/// ``os_signpost(_:dso:log:name:signpostID:)`` with a C-style format and its arguments,
/// rendered as `os_log` renders them.
public func os_signpost(_ type: OSSignpostType, dso: UnsafeRawPointer = #dsohandle, log: OSLog, name: StaticString, signpostID: OSSignpostID = .exclusive, _ format: StaticString, _ arguments: any CVarArg...) {
    Signposts.write(Signposts.kindName(type), name, signpostID, log: log, ": " + OSLogFormat.render("\(format)", arguments))
}

extension OSLog {
    /// One of the system's categories of log (Apple: `OSLog.Category`).
    public struct Category: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Signposts shown as points of interest in Instruments.
        public static let pointsOfInterest = Category(rawValue: "PointsOfInterest")
        /// Signposts enabled only while a tool traces them.
        public static let dynamicTracing = Category(rawValue: "DynamicTracing")
        /// As ``dynamicTracing``, with backtraces.
        public static let dynamicStackTracing = Category(rawValue: "DynamicStackTracing")
    }

    /// A log for `subsystem` and one of the system's categories.
    public convenience init(subsystem: String, category: Category) {
        self.init(subsystem: subsystem, category: category.rawValue)
    }

    /// Whether signposts of this log are written (Apple: `signpostsEnabled`): debug lines.
    public var signpostsEnabled: Bool { isEnabled(type: .debug) }
}

/// How signpost lines spell identifiers and durations.
enum Signposts {
    static func text(_ id: OSSignpostID) -> String {
        id == .exclusive ? "exclusive" : "id \(id.rawValue)"
    }

    static func kindName(_ type: OSSignpostType) -> String {
        switch type {
        case .begin: "begin"
        case .end: "end"
        default: "event"
        }
    }

    /// `1.234 s`, `12.3 ms`, `450 µs`.
    static func duration(nanoseconds: UInt64) -> String {
        let seconds = Double(nanoseconds) / 1e9
        if seconds >= 1 { return String(format: "%.3f s", seconds) }
        if seconds >= 0.001 { return String(format: "%.1f ms", seconds * 1e3) }
        return String(format: "%.0f µs", seconds * 1e6)
    }

    /// Writes a signpost's debug line, `signpost end "refresh" (exclusive) after 1.204 s`,
    /// `detail` (evaluated only when the line is written) after its identifier.
    static func write(_ kind: String, _ name: StaticString, _ id: OSSignpostID, log: OSLog, _ detail: @autoclosure () -> String) {
        guard log.isEnabled(type: .debug) else { return }
        LogSink.write(.debug, log: log, "signpost \(kind) \"\(name)\" (\(text(id)))\(detail())")
    }

    /// Writes one of Apple's runtime checks, an error line whatever the debug level.
    static func check(log: OSLog, _ text: String) {
        guard log.isEnabled(type: .error) else { return }
        LogSink.write(.error, log: log, text)
    }
}
