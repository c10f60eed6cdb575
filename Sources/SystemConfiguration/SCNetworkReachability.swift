// `import SystemConfiguration` for network reachability, as analytics SDKs and HTTP libraries
// check it before a transfer and watch it for changes (the seventeenth outside probe: five
// SDKs). The answers are the package's `NWPathMonitor`'s, the same reading of the machine's
// interfaces and routes (or of a simulated device's network): docs/porting.md, "Network
// reachability".
import Dispatch
@_exported import FoundationCompat
import Glibc
import Network

// `import SystemConfiguration` brings Foundation, as Apple's module does, and what Apple's
// Foundation brings beside it.

/// What a reachability target's network allows (Apple's SystemConfiguration:
/// `SCNetworkReachabilityFlags`, with Apple's raw values).
///
/// Here a target is ``reachable`` when the machine has a usable default route (a path monitor's
/// `.satisfied`), with ``isWWAN`` when the interface traffic goes over is cellular; the other
/// flags are never set (Linux brings up no link on demand and asks the user nothing).
public struct SCNetworkReachabilityFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Reachable through a transient connection (PPP).
    public static let transientConnection = SCNetworkReachabilityFlags(rawValue: 1 << 0)
    /// Reachable with the current configuration.
    public static let reachable = SCNetworkReachabilityFlags(rawValue: 1 << 1)
    /// A connection must be established first.
    public static let connectionRequired = SCNetworkReachabilityFlags(rawValue: 1 << 2)
    /// A connection is established when traffic is sent.
    public static let connectionOnTraffic = SCNetworkReachabilityFlags(rawValue: 1 << 3)
    /// The user must act (a password) before a connection.
    public static let interventionRequired = SCNetworkReachabilityFlags(rawValue: 1 << 4)
    /// A connection is established on demand.
    public static let connectionOnDemand = SCNetworkReachabilityFlags(rawValue: 1 << 5)
    /// The target is an address of this machine.
    public static let isLocalAddress = SCNetworkReachabilityFlags(rawValue: 1 << 16)
    /// Traffic to the target goes through no gateway.
    public static let isDirect = SCNetworkReachabilityFlags(rawValue: 1 << 17)
    /// Reachable over a cellular connection (Apple: iOS only).
    public static let isWWAN = SCNetworkReachabilityFlags(rawValue: 1 << 18)
    /// Apple's older name of ``connectionOnTraffic``.
    public static let connectionAutomatic = SCNetworkReachabilityFlags(rawValue: 1 << 3)
}

/// What ``SCNetworkReachabilitySetCallback(_:_:_:)`` hands its callback (Apple's
/// SystemConfiguration: `SCNetworkReachabilityContext`): `info` is given to the callback;
/// `retain` is called with it when the context is set and `release` when it is replaced or the
/// target goes. `copyDescription` is kept and not called.
public struct SCNetworkReachabilityContext {
    /// 0, as Apple's.
    public var version: Int
    /// The app's pointer for its callback.
    public var info: UnsafeMutableRawPointer?
    /// Retains `info`, returning what to keep.
    public var retain: (@convention(c) (UnsafeRawPointer) -> UnsafeRawPointer)?
    /// Releases what `retain` returned.
    public var release: (@convention(c) (UnsafeRawPointer) -> Void)?
    /// Describes `info` (Apple's returns a `CFString`, which Linux's Swift has not: here an
    /// `NSString`, and a Swift closure, since a class is no C type without the Objective-C
    /// runtime).
    public var copyDescription: ((UnsafeRawPointer) -> Unmanaged<NSString>)?

    /// An empty context.
    public init() {
        version = 0
    }

    /// A context of these parts.
    public init(version: Int, info: UnsafeMutableRawPointer?, retain: (@convention(c) (UnsafeRawPointer) -> UnsafeRawPointer)?,
                release: (@convention(c) (UnsafeRawPointer) -> Void)?, copyDescription: ((UnsafeRawPointer) -> Unmanaged<NSString>)?) {
        self.version = version
        self.info = info
        self.retain = retain
        self.release = release
        self.copyDescription = copyDescription
    }
}

/// The function a target calls when its flags change (Apple's SystemConfiguration:
/// `SCNetworkReachabilityCallBack`, a C function). A Swift function type here: a class (the
/// target) is no C type without the Objective-C runtime. A closure or function written for
/// Apple's, which captures nothing, is one.
public typealias SCNetworkReachabilityCallBack = (SCNetworkReachability, SCNetworkReachabilityFlags, UnsafeMutableRawPointer?) -> Void

/// A network target whose reachability an app asks about and watches (Apple's
/// SystemConfiguration: `SCNetworkReachability`, made by
/// ``SCNetworkReachabilityCreateWithName(_:_:)`` or
/// ``SCNetworkReachabilityCreateWithAddress(_:_:)``).
///
/// Every target answers about the network as a whole: it is ``SCNetworkReachabilityFlags/reachable``
/// when a path monitor would be satisfied (an interface other than the loopback is up with a
/// usable default route; for an app the simulator models, its device's network), whatever
/// host or address it names: a name is not looked up, and an address on the local network
/// reads unreachable without a default route. Its paths come from where the app that made it
/// is (the machine, or a simulated device), read as `NWPathMonitor` reads them.
public final class SCNetworkReachability: Hashable, @unchecked Sendable {
    // @unchecked: every stored property but `state` and `readerStarted` is set in init and
    // never changed; `state` is only read and written while `lock` is held, `readerStarted`
    // while `readerLock` is.

    /// A callback's context, its `info` retained by the context's `retain`; released when
    /// the last holder lets go: the target, and each callout in progress, which holds it
    /// until the callback returns (as Apple's retains `info` around each callout), so a
    /// callback never gets an `info` another thread released meanwhile (an app's
    /// `stopListening` from its `deinit`).
    private final class HeldContext: @unchecked Sendable {
        // @unchecked: set in init, never changed; `release` is the app's to make thread-safe,
        // as Apple's requires.
        let context: SCNetworkReachabilityContext

        init(_ context: SCNetworkReachabilityContext) {
            var kept = context
            if let info = kept.info, let retain = kept.retain {
                kept.info = UnsafeMutableRawPointer(mutating: retain(info))
            }
            self.context = kept
        }

        deinit {
            if let info = context.info { context.release?(info) }
        }
    }

    private struct State {
        var callback: SCNetworkReachabilityCallBack?
        var context: HeldContext?
        /// The monitor scheduled on the app's queue, while there is one. Its handler holds
        /// the target, so a scheduled target lives until it is unscheduled, as Apple's.
        var scheduled: NWPathMonitor?
        /// The flags last reported (or found when the queue was set): a callback is made when
        /// they change. Nil for a target made by name until its first callback, as Apple's
        /// gives such a target at least one.
        var reported: SCNetworkReachabilityFlags?
    }

    /// Read for the flags while no queue is set; made when the target is, so it reads where
    /// the app that made the target is.
    private let reader: NWPathMonitor
    /// Where `reader` hands its paths (nothing there: it is read, not listened to).
    private let readerQueue = DispatchQueue(label: "bgtask.systemconfiguration.reader")
    /// Whether `reader` was started; held while it starts, so that a second caller waits for
    /// the first evaluation rather than reading a path not yet evaluated.
    private let readerLock = NSLock()
    private var readerStarted = false
    /// Whether the target was made for a host name (``SCNetworkReachabilityCreateWithName(_:_:)``).
    private let madeByName: Bool
    private let lock = NSLock()
    private var state = State()

    init(madeByName: Bool) {
        reader = NWPathMonitor()
        self.madeByName = madeByName
    }

    deinit {
        // Unscheduled by now (a scheduled target is held by its monitor); the context's
        // release comes with `state`.
        reader.cancel()
    }

    /// The flags a path gives.
    static func flags(of path: NWPath) -> SCNetworkReachabilityFlags {
        guard path.status == .satisfied else { return [] }
        return path.usesInterfaceType(.cellular) ? [.reachable, .isWWAN] : .reachable
    }

    /// The flags now: from the scheduled monitor, else from the reader (started the first time).
    func currentFlags() -> SCNetworkReachabilityFlags {
        if let scheduled = lock.withLock({ state.scheduled }) { return Self.flags(of: scheduled.currentPath) }
        // A started monitor's path is evaluated when `start` returns, and kept current after.
        readerLock.withLock {
            if !readerStarted {
                reader.start(queue: readerQueue)
                readerStarted = true
            }
        }
        return Self.flags(of: reader.currentPath)
    }

    func setCallback(_ callback: SCNetworkReachabilityCallBack?, _ context: SCNetworkReachabilityContext?) {
        let held = callback == nil ? nil : HeldContext(context ?? SCNetworkReachabilityContext())
        // The previous context is released outside the lock, when the last holder lets go.
        let previous = lock.withLock { () -> HeldContext? in
            defer {
                state.callback = callback
                state.context = held
            }
            return state.context
        }
        _ = previous
    }

    func setQueue(_ queue: DispatchQueue?) -> Bool {
        guard let queue else {
            let scheduled = lock.withLock { () -> NWPathMonitor? in
                defer { state.scheduled = nil }
                return state.scheduled
            }
            // Its handler holds the target: letting it go lets the target go.
            scheduled?.pathUpdateHandler = nil
            scheduled?.cancel()
            return true
        }
        return lock.withLock {
            // As Apple's: a target is on one queue at a time (set nil first to move it).
            guard state.scheduled == nil else { return false }
            let monitor = NWPathMonitor(sameSourceAs: reader)
            monitor.pathUpdateHandler = { [weak monitor] path in
                guard let monitor else { return }
                self.handOver(Self.flags(of: path), from: monitor)
            }
            // The first path is evaluated before `start` returns, and handed over on `queue`
            // after this lock is let go: for a target made by address it is the starting
            // point, not a change; a target made by name gets it as its first callback.
            monitor.start(queue: queue)
            state.scheduled = monitor
            state.reported = madeByName ? nil : Self.flags(of: monitor.currentPath)
            return true
        }
    }

    /// On the app's queue: calls the callback if `flags` differ from those last reported,
    /// outside the lock, holding the context until it returns.
    private func handOver(_ flags: SCNetworkReachabilityFlags, from monitor: NWPathMonitor) {
        let call = lock.withLock { () -> (SCNetworkReachabilityCallBack, HeldContext?)? in
            guard state.scheduled === monitor, state.reported != flags else { return nil }
            state.reported = flags
            return state.callback.map { ($0, state.context) }
        }
        guard let (callback, context) = call else { return }
        withExtendedLifetime(context) { callback(self, flags, context?.context.info) }
    }

    /// Targets are equal when they are the same target.
    public static func == (lhs: SCNetworkReachability, rhs: SCNetworkReachability) -> Bool { lhs === rhs }

    /// Hashes the target's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A target for the host `nodename` (Apple's SystemConfiguration); `nil` for an empty name
/// (``SCError()`` then reads ``kSCStatusInvalidArgument``).
/// Pass `nil` as the allocator (Linux has no Core Foundation allocators). The name is not
/// looked up: the target answers about the network as a whole (``SCNetworkReachability``).
public func SCNetworkReachabilityCreateWithName(_ allocator: AnyObject?, _ nodename: UnsafePointer<CChar>) -> SCNetworkReachability? {
    guard nodename.pointee != 0 else {
        setSCError(kSCStatusInvalidArgument)
        return nil
    }
    return SCNetworkReachability(madeByName: true)
}

/// A target for the IPv4 or IPv6 address `address` (Apple's SystemConfiguration): the
/// address 0.0.0.0, as SDKs pass it, for the default route. `nil` for an address of another
/// family (``SCError()`` then reads ``kSCStatusInvalidArgument``). Pass `nil` as the allocator.
public func SCNetworkReachabilityCreateWithAddress(_ allocator: AnyObject?, _ address: UnsafePointer<sockaddr>) -> SCNetworkReachability? {
    guard isInternetAddress(address) else {
        setSCError(kSCStatusInvalidArgument)
        return nil
    }
    return SCNetworkReachability(madeByName: false)
}

/// A target for the connection between a local and a remote IPv4 or IPv6 address (Apple's
/// SystemConfiguration), answering about the network as a whole as every target here does;
/// either address may be `nil`, not both. `nil` for two `nil`s or an address of another
/// family (``SCError()`` then reads ``kSCStatusInvalidArgument``). Pass `nil` as the allocator.
public func SCNetworkReachabilityCreateWithAddressPair(_ allocator: AnyObject?, _ localAddress: UnsafePointer<sockaddr>?,
                                                       _ remoteAddress: UnsafePointer<sockaddr>?) -> SCNetworkReachability? {
    let addresses = [localAddress, remoteAddress].compactMap { $0 }
    guard !addresses.isEmpty, addresses.allSatisfy(isInternetAddress) else {
        setSCError(kSCStatusInvalidArgument)
        return nil
    }
    return SCNetworkReachability(madeByName: false)
}

/// Whether `address` is of an IPv4 or IPv6 family, the ones a target can be made for.
private func isInternetAddress(_ address: UnsafePointer<sockaddr>) -> Bool {
    [AF_INET, AF_INET6].contains(Int32(address.pointee.sa_family))
}

/// Writes the target's flags now to `flags` (Apple's SystemConfiguration); `true`, as the
/// network can always be read (an unreadable one reads unreachable).
@discardableResult
public func SCNetworkReachabilityGetFlags(_ target: SCNetworkReachability, _ flags: UnsafeMutablePointer<SCNetworkReachabilityFlags>) -> Bool {
    flags.pointee = target.currentFlags()
    return true
}

/// Sets the function called when the target's flags change, with `context` (copied; its
/// `retain` called now, the previous context's `release` called), or with `nil` takes it away
/// (Apple's SystemConfiguration). Returns `true`. The callback is called on the queue given to
/// ``SCNetworkReachabilitySetDispatchQueue(_:_:)``, each time the flags differ from the last
/// ones (not for the flags found when the queue was set).
@discardableResult
public func SCNetworkReachabilitySetCallback(_ target: SCNetworkReachability, _ callout: SCNetworkReachabilityCallBack?,
                                             _ context: UnsafeMutablePointer<SCNetworkReachabilityContext>?) -> Bool {
    target.setCallback(callout, context?.pointee)
    return true
}

/// Starts watching the target's network, its callback called on `queue` when its flags
/// change; `nil` stops it (Apple's SystemConfiguration). `false` for a queue given to a target
/// already on one, ``SCError()`` then reading ``kSCStatusInvalidArgument`` (as Apple's: set
/// `nil` first). The changes are the kernel's announcements of
/// link, address and route changes (docs/porting.md, "Network paths"), or a simulated device's.
@discardableResult
public func SCNetworkReachabilitySetDispatchQueue(_ target: SCNetworkReachability, _ queue: DispatchQueue?) -> Bool {
    guard target.setQueue(queue) else {
        setSCError(kSCStatusInvalidArgument)
        return false
    }
    return true
}
