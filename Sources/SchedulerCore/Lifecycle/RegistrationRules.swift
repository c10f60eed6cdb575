/// What `register(forTaskWithIdentifier:using:launchHandler:)` does with one call.
public enum RegistrationVerdict: Hashable, Sendable {
    /// Keep the handler.
    case accept
    /// Return `false`: the identifier is not permitted (the message says why).
    case notPermitted(String)
    /// Fail loudly: a programming error Apple raises an uncatchable exception for.
    case programmingError(String)
}

/// The registration rules of docs/system.md, "Register", as a pure function.
public enum RegistrationRules {
    /// Decides one registration.
    /// - Continued-processing registrations (an identifier matched only through a
    ///   `prefix.*` entry, or a wildcard identifier itself) may come after launch.
    /// - Every other registration after the app finished launching, and any second
    ///   registration of one identifier, is a programming error.
    public static func verdict(
        for identifier: String,
        manifest: AppManifest,
        hasFinishedLaunching: Bool,
        alreadyRegistered: Bool
    ) -> RegistrationVerdict {
        let isWildcardRegistration = identifier.hasSuffix(".*")
        if let problem = isWildcardRegistration
            ? TaskIdentifierRules.problem(withPermittedEntry: identifier)
            : TaskIdentifierRules.problem(with: identifier) {
            return .notPermitted("identifier rejected: \(problem)")
        }
        // By bytes and through the manifest's lookup (a set for a long list), as
        // submissions are checked: a linear scan here made registering n handlers O(n²).
        // A wildcard registration is continued processing whatever the list says.
        let listedExactly = !isWildcardRegistration && manifest.permits(identifier: identifier, allowWildcard: false)
        guard listedExactly || manifest.permits(identifier: identifier, allowWildcard: true) else {
            return .notPermitted("'\(identifier)' is not listed in BGTaskSchedulerPermittedIdentifiers of \(manifest.source ?? "the manifest")")
        }
        let continuedProcessing = isWildcardRegistration || !listedExactly
        if alreadyRegistered {
            return .programmingError("Launch handler for task with identifier '\(identifier)' has already been registered")
        }
        if hasFinishedLaunching && !continuedProcessing {
            return .programmingError("All launch handlers must be registered before application finishes launching; '\(identifier)' was registered after")
        }
        return .accept
    }
}
