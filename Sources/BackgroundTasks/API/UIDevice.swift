import DeviceConditions
import Foundation
import Synchronization

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
    public static var current: UIDevice { AppContext.resolve().device }

    /// Posted when the battery level changes, on iOS. Never posted here (nothing watches the
    /// battery for the app): read ``batteryLevel`` when it matters.
    public static let batteryLevelDidChangeNotification = Notification.Name("UIDeviceBatteryLevelDidChangeNotification")
    /// Posted when the battery state changes, on iOS. Never posted here: read ``batteryState``.
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
    }

    private let readBattery: @Sendable () -> BatteryReading
    private let monitoring = Mutex(false)

    /// A device whose battery `readBattery` reads, when asked.
    init(readBattery: @escaping @Sendable () -> BatteryReading) {
        self.readBattery = readBattery
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
        switch readBattery().state {
        case .discharging: return .unplugged
        case .charging: return .charging
        case .full: return .full
        case .unknown, .noBattery: return .unknown
        }
    }

    /// Whether the device runs apps in the background (Apple: `isMultitaskingSupported`):
    /// `true`, as on every device iOS 13 runs on (code that checks it before
    /// `beginBackgroundTask` goes on).
    public var isMultitaskingSupported: Bool { true }
}

extension UIDeviceBatteryState: @retroactive CustomStringConvertible {
    /// The state's name as Swift spells it (`"charging"`; `"state 7"` for a value without one).
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .unplugged: "unplugged"
        case .charging: "charging"
        case .full: "full"
        default: "state \(rawValue)"
        }
    }
}
