import DeviceConditions
import Foundation
import Synchronization
import SchedulerCore

/// The device (Apple: `UIDevice`), for what background work asks of it: whether it may
/// multitask and how its battery is (a processing handler that checks the charge before
/// heavy work). Its battery values are read from the machine, as the scheduler reads them
/// (`/sys/class/power_supply`, docs/system.md, "On Linux"), when asked; in the simulator,
/// they are the simulated device's.
///
/// ```swift
/// UIDevice.current.isBatteryMonitoringEnabled = true
/// let plugged = [.charging, .full].contains(UIDevice.current.batteryState)
/// ```
public final class UIDevice: Sendable {
    /// `UIDevice.BatteryState`: the C enum `UIDeviceBatteryState` (CUIKitTypes), as on iOS, so
    /// a `switch` over it behaves as over Apple's imported enum (docs/porting.md).
    public typealias BatteryState = UIDeviceBatteryState

    /// The device as the running app sees it (Apple: `UIDevice.current`).
    public static var current: UIDevice { BGAppContext.resolve().device }

    /// Posted when the battery level changes by a percent or more while the app monitors its
    /// battery (``isBatteryMonitoringEnabled``), as the app's scheduler sees it change
    /// (DeviceChangeNotifications.swift).
    public static let batteryLevelDidChangeNotification = Notification.Name("UIDeviceBatteryLevelDidChangeNotification")
    /// Posted when the battery state changes while the app monitors its battery, as the app's
    /// scheduler sees it change.
    public static let batteryStateDidChangeNotification = Notification.Name("UIDeviceBatteryStateDidChangeNotification")

    /// What the battery is: its charge (0...1, `nil` when not known) and what it is doing.
    public struct BatteryReading: Sendable, Equatable {
        /// The charge, 0...1; `nil` when the machine has no battery or it cannot be read.
        public var level: Double?
        /// What the battery is doing, as the scheduler's readers tell it.
        public var state: SchedulerCore.BatteryState
        /// A reading.
        public init(level: Double?, state: SchedulerCore.BatteryState) {
            self.level = level
            self.state = state
        }
        /// The battery of `conditions`.
        public init(conditions: Conditions) {
            self.init(level: conditions.batteryLevel, state: conditions.batteryState)
        }

        /// The state as UIKit names it: discharging is `.unplugged`, full or plugged in and
        /// not charging `.full`, no battery or unreadable `.unknown`.
        var uiState: BatteryState {
            switch state {
            case .discharging: return .unplugged
            case .charging: return .charging
            case .full: return .full
            case .unknown, .noBattery: return .unknown
            }
        }
    }

    /// What the device's power management says: Low Power Mode and the thermal state
    /// (what `ProcessInfo.isLowPowerModeEnabled` and `thermalState` report).
    public struct PowerReading: Sendable, Equatable {
        /// Whether Low Power Mode is on.
        public var lowPowerMode: Bool
        /// How hot the device runs.
        public var thermalState: SchedulerCore.ThermalState
        /// A reading.
        public init(lowPowerMode: Bool, thermalState: SchedulerCore.ThermalState) {
            self.lowPowerMode = lowPowerMode
            self.thermalState = thermalState
        }
        /// The power management of `conditions`.
        public init(conditions: Conditions) {
            self.init(lowPowerMode: conditions.lowPowerMode, thermalState: conditions.thermalState)
        }
    }

    /// What the device tells an app of itself (Apple: `name`, `model`, `systemName`,
    /// `systemVersion`, `identifierForVendor`).
    public struct Identity: Sendable, Equatable {
        /// The device's name as apps see it: the generic model name, as iOS 16 and later
        /// give apps without the user-assigned-name entitlement ("iPhone"): "Linux".
        public var name: String
        /// The kind of device: "Linux" (iOS: "iPhone", "iPad").
        public var model: String
        /// The operating system's name: "Linux" (iOS: "iOS").
        public var systemName: String
        /// The operating system's version: the kernel's release as Foundation reads it,
        /// "major.minor.patch" ("6.1.0"); a simulated device says "1.0", reading nothing of
        /// the machine it runs on.
        public var systemVersion: String
        /// What ``UIDevice/identifierForVendor`` is derived from with the app's vendor: the
        /// machine's identity (`/etc/machine-id`, hashed), a simulated device's seed; `nil`
        /// when the machine has none (the identifier is then `nil`).
        public var vendorSalt: UInt64?

        /// An identity.
        public init(name: String, model: String, systemName: String, systemVersion: String, vendorSalt: UInt64?) {
            self.name = name
            self.model = model
            self.systemName = systemName
            self.systemVersion = systemVersion
            self.vendorSalt = vendorSalt
        }

        /// This machine's: its kernel's release, and its identity (the first of
        /// `machineIDFiles` that reads, hashed; `nil` when none does: a container without
        /// one, and ``UIDevice/identifierForVendor`` is then `nil`, not a value every such
        /// machine would share).
        public static func machine(machineIDFiles: [String] = MachineID.standardFiles) -> Identity {
            let version = ProcessInfo.processInfo.operatingSystemVersion
            return linux(systemVersion: "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)",
                         vendorSalt: MachineID.read(from: machineIDFiles).map { StableHash.fnv1a("machine-id \($0)".utf8) })
        }

        /// A simulated device's: nothing read from the machine, so traces do not depend on it.
        public static func simulated(salt: UInt64) -> Identity {
            linux(systemVersion: "1.0", vendorSalt: salt)
        }

        /// A Linux machine's, with the generic names every Linux device gives.
        private static func linux(systemVersion: String, vendorSalt: UInt64?) -> Identity {
            Identity(name: "Linux", model: "Linux", systemName: "Linux", systemVersion: systemVersion, vendorSalt: vendorSalt)
        }
    }

    private let readBattery: @Sendable () -> BatteryReading
    private let readPower: @Sendable () -> PowerReading
    private let monitoring = Mutex(false)
    /// Begun and not ended orientation notification requests.
    private let orientationRequests = Mutex(0)
    private let identity: Identity
    private let app: AppID

    /// A device whose battery `readBattery` reads and whose power management `readPower`
    /// reads, when asked, as `app` sees it.
    init(app: AppID, identity: Identity, readBattery: @escaping @Sendable () -> BatteryReading, readPower: @escaping @Sendable () -> PowerReading) {
        self.app = app
        self.identity = identity
        self.readBattery = readBattery
        self.readPower = readPower
    }

    /// The device's Low Power Mode and thermal state now (``PowerReading``).
    public var power: PowerReading { readPower() }

    /// Low Power Mode and the thermal state `provider` reads when asked: by default the
    /// machine's, through the scheduler's own reader.
    static func power(of provider: any ConditionsProvider = LinuxConditionsReader()) -> @Sendable () -> PowerReading {
        { let power = provider.readPower(); return PowerReading(lowPowerMode: power.lowPowerMode, thermalState: power.thermalState) }
    }

    /// The device's name (Apple: `name`): the generic model name (``Identity/name``).
    public var name: String { identity.name }
    /// The kind of device (Apple: `model`): "Linux".
    public var model: String { identity.model }
    /// ``model``, localized (Apple: `localizedModel`): the same here.
    public var localizedModel: String { identity.model }
    /// The operating system's name (Apple: `systemName`): "Linux".
    public var systemName: String { identity.systemName }
    /// The operating system's version (Apple: `systemVersion`): see ``Identity/systemVersion``.
    public var systemVersion: String { identity.systemVersion }

    /// An identifier that is the same for every app of one vendor on this device, and
    /// differs between devices (Apple: `identifierForVendor`). The vendor is the app
    /// identifier less its last component (`com.example` for `com.example.feedreader`; an
    /// identifier of one component is its own vendor), as iOS takes it for apps not from
    /// the App Store; the device is ``Identity/vendorSalt``. Stable across launches; `nil`
    /// on a machine without an identity (iOS gives `nil` while the device is locked after a
    /// restart). Not a secret from other vendors' apps: on Linux they run as the same user
    /// and can read `/etc/machine-id` themselves.
    public var identifierForVendor: UUID? {
        guard let salt = identity.vendorSalt else { return nil }
        let components = app.rawValue.split(separator: ".", omittingEmptySubsequences: false)
        let vendor = components.count > 1 ? components.dropLast().joined(separator: ".") : app.rawValue
        let high = StableHash.fnv1a("vendor \(salt) \(vendor)".utf8)
        let low = StableHash.fnv1a("\(vendor) \(salt) vendor".utf8)
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (8 * UInt64(index)))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * UInt64(index)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4 (random-looking: nothing to decode)
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// The battery `provider` reads when asked: by default the machine's, through the
    /// scheduler's own reader (`BGTASK_SYS_ROOT` moves it, as for the scheduler).
    static func battery(of provider: any ConditionsProvider = LinuxConditionsReader()) -> @Sendable () -> BatteryReading {
        { let battery = provider.readBattery(); return BatteryReading(level: battery.level, state: battery.state) }
    }

    /// Whether the app asked for the battery's values (Apple: `isBatteryMonitoringEnabled`,
    /// `false` by default). Off, ``batteryLevel`` is -1 and ``batteryState`` `.unknown`, as
    /// on iOS.
    public var isBatteryMonitoringEnabled: Bool {
        get { monitoring.withLock { $0 } }
        set { monitoring.withLock { $0 = newValue } }
    }

    /// The charge, 0.0...1.0 (Apple: `batteryLevel`); -1.0 while monitoring is off, and on a
    /// machine without a battery or whose battery cannot be read (as the iOS Simulator
    /// reports it).
    public var batteryLevel: Float {
        guard isBatteryMonitoringEnabled, let level = readBattery().level else { return -1 }
        return Float(level)
    }

    /// What the battery is doing (Apple: `batteryState`): `.unplugged` (discharging),
    /// `.charging`, `.full` (full or not charging: plugged in); `.unknown` while monitoring is
    /// off, and on a machine without a battery (a desktop or a server: always on mains, yet
    /// it has no battery to be full) or whose battery cannot be read.
    public var batteryState: BatteryState {
        guard isBatteryMonitoringEnabled else { return .unknown }
        return readBattery().uiState
    }

    /// The kind of interface the device has (Apple: `userInterfaceIdiom`): `.unspecified`, as
    /// a Linux machine is neither a phone, a pad nor a Mac; code that branches on `.pad` takes
    /// its other branch.
    public var userInterfaceIdiom: UIUserInterfaceIdiom { Self.linuxIdiom }

    /// The idiom of every Linux device (``userInterfaceIdiom``), readable without a device:
    /// asking for `UIDevice.current` resolves the app's scheduler.
    package static let linuxIdiom = UIUserInterfaceIdiom.unspecified

    /// Posted when the device's orientation changes (Apple:
    /// `orientationDidChangeNotification`): never on Linux, which has no orientation sensor.
    public static let orientationDidChangeNotification = Notification.Name("UIDeviceOrientationDidChangeNotification")

    /// Whether the app asked for the proximity sensor (Apple: `isProximityMonitoringEnabled`).
    /// A Linux machine has none, and Apple's stays `false` when set on a device without one:
    /// so does this.
    public var isProximityMonitoringEnabled: Bool {
        get { false }
        set {}
    }

    /// Whether the proximity sensor is close to the user (Apple: `proximityState`): `false`,
    /// there being no sensor.
    public var proximityState: Bool { false }

    /// Posted when ``proximityState`` changes (Apple: `proximityStateDidChangeNotification`):
    /// never on Linux.
    public static let proximityStateDidChangeNotification = Notification.Name("UIDeviceProximityStateDidChangeNotification")

    /// How the device is held (Apple: `orientation`): `.unknown`, as iOS reports it while
    /// nothing generates orientation notifications, and always here (no sensor).
    public var orientation: UIDeviceOrientation { .unknown }

    /// Whether the app asked for orientation notifications (Apple:
    /// `isGeneratingDeviceOrientationNotifications`): each
    /// ``beginGeneratingDeviceOrientationNotifications()`` counts until its ``endGeneratingDeviceOrientationNotifications()``.
    /// None is posted on Linux.
    public var isGeneratingDeviceOrientationNotifications: Bool { orientationRequests.withLock { $0 > 0 } }

    /// Asks for orientation notifications (Apple: `beginGeneratingDeviceOrientationNotifications()`):
    /// counted; none comes on Linux.
    public func beginGeneratingDeviceOrientationNotifications() {
        orientationRequests.withLock { $0 += 1 }
    }

    /// Ends one ``beginGeneratingDeviceOrientationNotifications()`` (never below none).
    public func endGeneratingDeviceOrientationNotifications() {
        orientationRequests.withLock { $0 = max(0, $0 - 1) }
    }

    /// Whether the device runs apps in the background (Apple: `isMultitaskingSupported`):
    /// `true`, as on every device iOS 13 runs on (code that checks it before
    /// `beginBackgroundTask` goes on).
    public var isMultitaskingSupported: Bool { true }
}

extension UIDeviceOrientation {
    /// Upright or upside down (Apple: `isPortrait`).
    public var isPortrait: Bool { self == .portrait || self == .portraitUpsideDown }
    /// On either side (Apple: `isLandscape`).
    public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }
    /// Face up or face down (Apple: `isFlat`).
    public var isFlat: Bool { self == .faceUp || self == .faceDown }
    /// Whether an interface could be laid out so (Apple: `isValidInterfaceOrientation`):
    /// portrait or landscape.
    public var isValidInterfaceOrientation: Bool { isPortrait || isLandscape }
}

extension UIInterfaceOrientation {
    /// Portrait either way up (Apple: `isPortrait`).
    public var isPortrait: Bool { self == .portrait || self == .portraitUpsideDown }
    /// Landscape either side (Apple: `isLandscape`).
    public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }
}

// Not `CustomStringConvertible`: Apple's imported enum is not, and an app that adds the
// conformance (found in ten apps' `UIDevice+Battery.swift`) would get "redundant
// conformance", an error.
extension UIDeviceBatteryState {
    /// The state's name as Swift spells it (`"charging"`; `"state 7"` for a value without
    /// one), for this package's messages.
    var name: String {
        switch self {
        case .unknown: "unknown"
        case .unplugged: "unplugged"
        case .charging: "charging"
        case .full: "full"
        default: "state \(rawValue)"
        }
    }
}

/// The orientations an app's interface supports (Apple: `UIInterfaceOrientationMask`), for an
/// app delegate's `application(_:supportedInterfaceOrientationsFor:)` and the orientation lock
/// apps keep beside it. Linux has no screen to turn: the method is never called.
public struct UIInterfaceOrientationMask: OptionSet, Hashable, Sendable {
    /// The bits, as Apple's.
    public let rawValue: UInt
    /// A mask from its bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Portrait.
    public static let portrait = UIInterfaceOrientationMask(rawValue: 1 << 1)
    /// Landscape, home button (or bottom) on the left.
    public static let landscapeLeft = UIInterfaceOrientationMask(rawValue: 1 << 4)
    /// Landscape, home button on the right.
    public static let landscapeRight = UIInterfaceOrientationMask(rawValue: 1 << 3)
    /// Portrait, upside down.
    public static let portraitUpsideDown = UIInterfaceOrientationMask(rawValue: 1 << 2)
    /// Both landscapes.
    public static let landscape: UIInterfaceOrientationMask = [.landscapeLeft, .landscapeRight]
    /// Every orientation.
    public static let all: UIInterfaceOrientationMask = [.portrait, .landscapeLeft, .landscapeRight, .portraitUpsideDown]
    /// Every orientation but upside down.
    public static let allButUpsideDown: UIInterfaceOrientationMask = [.portrait, .landscapeLeft, .landscapeRight]
}
