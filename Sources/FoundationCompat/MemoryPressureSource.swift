import Dispatch

// Image and data caches trim themselves when the system says memory is short, through a
// memory-pressure dispatch source (an image pipeline's cache, eight more repositories in the
// seventeenth outside probe): `DispatchSource.makeMemoryPressureSource(eventMask:queue:)`.
// Linux's Dispatch has neither the source nor its types, and Linux sends an app no memory
// warnings (docs/porting.md: `didReceiveMemoryWarningNotification` is never posted).

extension DispatchSource {
    /// The memory-pressure levels a source reports (Apple's Dispatch:
    /// `DispatchSource.MemoryPressureEvent`, with Apple's raw values).
    public struct MemoryPressureEvent: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Pressure went back to normal (`DISPATCH_MEMORYPRESSURE_NORMAL`).
        public static let normal = MemoryPressureEvent(rawValue: 0x1)
        /// Memory is short (`DISPATCH_MEMORYPRESSURE_WARN`).
        public static let warning = MemoryPressureEvent(rawValue: 0x2)
        /// Memory is critically short (`DISPATCH_MEMORYPRESSURE_CRITICAL`).
        public static let critical = MemoryPressureEvent(rawValue: 0x4)
        /// Every level.
        public static let all: MemoryPressureEvent = [.normal, .warning, .critical]
    }

    /// A source for the system's memory-pressure events (Apple's Dispatch:
    /// `makeMemoryPressureSource(eventMask:queue:)`).
    ///
    /// On Linux nothing reports memory pressure to an app, so its event handler is never
    /// called. It is a real dispatch source otherwise (a data-or source nothing merges data
    /// into), and does what the app asks of it: `setEventHandler`, `setCancelHandler` and
    /// `setRegistrationHandler`; `activate()` or `resume()` (the registration handler runs on
    /// `queue`), `suspend()`, `cancel()` (the cancel handler runs on `queue`) and
    /// `isCancelled`. Its ``DispatchSourceMemoryPressure/mask`` is `eventMask` and its
    /// ``DispatchSourceMemoryPressure/data`` is empty: no event came. Like every new dispatch
    /// source it starts inactive.
    public class func makeMemoryPressureSource(eventMask: MemoryPressureEvent, queue: DispatchQueue? = nil) -> any DispatchSourceMemoryPressure {
        let source = DispatchSource.makeUserDataOrSource(queue: queue) as! DispatchSource
        memoryPressureMasks.update(source, default: []) { $0 = eventMask }
        return source
    }
}

/// The event mask each memory-pressure source was made with (a dispatch source has no
/// storage of its own for it); the source is held weakly.
private let memoryPressureMasks = WeaklyKeyedTable<DispatchSource, DispatchSource.MemoryPressureEvent>()

/// A dispatch source for memory-pressure events (Apple's Dispatch:
/// `DispatchSourceMemoryPressure`). Only ``DispatchSource/makeMemoryPressureSource(eventMask:queue:)``'s
/// sources are such sources: Dispatch's own source protocol reaches its sources' calls through
/// `DispatchSource`, so a conformance of another type could not work.
public protocol DispatchSourceMemoryPressure: DispatchSourceProtocol {
    /// The events that came since the handler last ran (here: none).
    var data: DispatchSource.MemoryPressureEvent { get }
    /// The events the source was made to report.
    var mask: DispatchSource.MemoryPressureEvent { get }
}

extension DispatchSource: DispatchSourceMemoryPressure {
    /// The memory-pressure events that came (Apple's: the source's pending data as
    /// ``MemoryPressureEvent``); always empty for ``makeMemoryPressureSource(eventMask:queue:)``'s
    /// sources on Linux.
    public var data: DispatchSource.MemoryPressureEvent {
        MemoryPressureEvent(rawValue: (self as any DispatchSourceProtocol).data)
    }

    /// The events a memory-pressure source was made to report: its `eventMask`.
    public var mask: DispatchSource.MemoryPressureEvent {
        memoryPressureMasks.value(of: self) ?? MemoryPressureEvent(rawValue: (self as any DispatchSourceProtocol).mask)
    }
}
