/// Which of the standard policies judge, and the defaults their tunables start from
/// (docs/policies.md, "Profiles").
///
/// The phone's rules are wrong for a service: nobody opens a server, so a usage prediction
/// only delays its work; a per-app launch interval throttles a job queue; "the device is in
/// use" means nothing on a machine that is always serving. The server profile leaves those
/// out and gates processing by CPU pressure and the concurrency cap.
public enum PolicyProfile: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Every standard policy, with the phone's defaults (the default profile).
    case phone
    /// For services: no usage prediction, per-app rate limit, device-in-use, herd
    /// spreading or per-app energy budget; processing needs no idle device and is held by
    /// CPU pressure; launches are not coalesced and processing does not wait to share a
    /// wake (a server does not sleep).
    case server

    /// The names of the standard policies this profile leaves out.
    public var excludedPolicies: Set<String> {
        switch self {
        case .phone: []
        case .server: ["app-usage", "rate-limit", "device-in-use", "herd-spreading", "energy-budget"]
        }
    }

    /// Whether the policy named `name` judges under this profile.
    public func includes(_ name: String) -> Bool { !excludedPolicies.contains(name) }

    /// The tunables' defaults under this profile (a policy file's keys override them).
    public var defaults: PolicyConfiguration {
        var configuration = PolicyConfiguration()
        configuration.profile = self
        switch self {
        case .phone:
            break
        case .server:
            configuration.processingRequiresIdleDevice = false
            configuration.minimumLaunchInterval = 0
            configuration.herdSpreadWindow = 0
            configuration.herdSpreadWindowBeforeLaunch = 0
            configuration.coalescingTolerance = 0
            configuration.wakeSharingWindow = 0
        }
        return configuration
    }

    /// The profile's name, as `BGTASK_POLICY` and a policy file's `profile` key spell it.
    public var description: String { rawValue }
}
