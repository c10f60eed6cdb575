// Foundation-only files of a library module, as the thirteenth outside probe found them: a
// thermal-state monitor (an SDK's device monitors), an uploader's background session and an
// app extension's shared-container session, with no file of the module importing UIKit or
// BackgroundTasks. On iOS all of this is Foundation's; here FoundationCompat declares it
// (ProcessInfoPower.swift, BackgroundSessionConfiguration.swift, FoundationAdditions.swift),
// and the target builds with MemberImportVisibility too. Swift 5 mode, warnings as errors.
import Foundation

/// What a device monitor reports.
public enum DeviceHeat: Equatable {
    case cool, warm, hot, critical, unknown
}

/// A thermal-state and Low Power Mode monitor, as SDKs write them.
public final class DeviceWatch {
    private var observers: [NSObjectProtocol] = []
    public private(set) var changes = 0

    public init() {}

    /// The device's heat, from `ProcessInfo.ThermalState` with an `@unknown default`.
    public var heat: DeviceHeat {
        switch ProcessInfo.processInfo.thermalState {
        case .nominal: return .cool
        case .fair: return .warm
        case .serious: return .hot
        case .critical: return .critical
        @unknown default: return .unknown
        }
    }

    /// Whether heavy work should wait.
    public var shouldDefer: Bool {
        ProcessInfo.processInfo.isLowPowerModeEnabled || ProcessInfo.processInfo.thermalState.rawValue >= ProcessInfo.ThermalState.serious.rawValue
    }

    /// Starts counting the two notifications.
    public func start() {
        let center = NotificationCenter.default
        for name in [ProcessInfo.thermalStateDidChangeNotification, Notification.Name.NSProcessInfoPowerStateDidChange] {
            observers.append(center.addObserver(forName: name, object: nil, queue: nil) { [weak self] _ in self?.changes += 1 })
        }
    }

    /// Stops.
    public func stop() {
        observers.forEach(NotificationCenter.default.removeObserver)
        observers = []
    }

    /// Runs `work` as an expiring activity, telling `done` whether it expired.
    public func finish(_ reason: String, done: @escaping @Sendable (Bool) -> Void) {
        ProcessInfo.processInfo.performExpiringActivity(withReason: reason) { expired in done(expired) }
    }
}

/// An uploader's session, as an upload service sets it up.
public enum UploadSession {
    /// A background configuration with the switches an uploader sets.
    public static func configuration(identifier: String, group: String) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.sessionSendsLaunchEvents = true
        configuration.isDiscretionary = false
        configuration.allowsExpensiveNetworkAccess = true
        configuration.allowsConstrainedNetworkAccess = false
        configuration.sharedContainerIdentifier = group
        return configuration
    }

    /// The app group's shared container.
    public static func container(group: String) -> URL? {
        FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: group)
    }
}

/// The device's model identifier, as analytics SDKs read it (Darwin's `sysctlbyname`).
public enum DeviceModel {
    /// `hw.machine`: the size first, then the bytes.
    public static var identifier: String {
        var size = 0
        sysctlbyname("hw.machine", nil, &size, nil, 0)
        var machine = [CChar](repeating: 0, count: size)
        sysctlbyname("hw.machine", &machine, &size, nil, 0)
        return machine.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
