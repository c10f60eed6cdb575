/// A device condition that a request can require (SPEC §2: processing requests add
/// `requiresNetworkConnectivity` and `requiresExternalPower`).
public enum RequiredCondition: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The device is on external power (or has no battery at all).
    case externalPower = "external-power"
    /// The network is available.
    case network

    public var description: String { rawValue }
}

/// A snapshot of the device conditions the engine consults. Later issues add battery
/// level, low power mode, thermal state and idleness; the engine only reads what it needs.
public struct Conditions: Hashable, Sendable, Codable, CustomStringConvertible {
    /// On external power, or no system battery.
    public var externalPower: Bool
    /// Some interface is up with a global address and a default route.
    public var networkAvailable: Bool

    /// Creates a snapshot.
    public init(externalPower: Bool, networkAvailable: Bool) {
        self.externalPower = externalPower
        self.networkAvailable = networkAvailable
    }

    /// Whether `condition` holds in this snapshot.
    public func satisfies(_ condition: RequiredCondition) -> Bool {
        switch condition {
        case .externalPower: return externalPower
        case .network: return networkAvailable
        }
    }

    /// The first of `conditions` that does not hold, or `nil` when all hold.
    public func firstUnmet(of conditions: [RequiredCondition]) -> RequiredCondition? {
        conditions.first { !satisfies($0) }
    }

    /// A plugged-in, connected device: what a desktop or server usually is.
    public static let favorable = Conditions(externalPower: true, networkAvailable: true)

    public var description: String {
        "power=\(externalPower ? "external" : "battery") network=\(networkAvailable ? "up" : "down")"
    }
}
