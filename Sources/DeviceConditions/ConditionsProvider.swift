import SchedulerCore
import Synchronization

/// Something that reads the device conditions the engine consults.
public protocol ConditionsProvider: Sendable {
    /// The conditions now. Never throws: what cannot be read takes the documented default.
    func read() -> Conditions
}

/// Conditions set by hand: for tests, the simulator, and machines where reading the
/// device makes no sense.
public final class FixedConditions: ConditionsProvider {
    private let current: Mutex<Conditions>

    /// Starts with `conditions`.
    public init(_ conditions: Conditions = .favorable) {
        current = Mutex(conditions)
    }

    /// The conditions last set.
    public func read() -> Conditions { current.withLock { $0 } }

    /// Changes the conditions returned from now on.
    public func set(_ conditions: Conditions) {
        current.withLock { $0 = conditions }
    }
}
