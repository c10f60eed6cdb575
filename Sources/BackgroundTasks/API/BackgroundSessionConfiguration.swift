import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// `URLSessionConfiguration.background(withIdentifier:)` and the switches iOS code sets on a
// configuration beside it (docs/porting.md, "Background URL sessions"). swift-corelibs-foundation
// marks `background(withIdentifier:)` and `waitsForConnectivity` unavailable, makes
// `sharedContainerIdentifier` read-only and has no `sessionSendsLaunchEvents` or network-access
// switches, so the usual shape of a download manager did not compile. Here it compiles and
// runs, with what Linux can do said plainly: the session's transfers run in the app's process,
// as a default session's (no system service carries them while the app is suspended or gone,
// and nothing relaunches the app when they finish); the switches are kept, readable, and
// change nothing. An available declaration is taken over Foundation's unavailable one.

extension URLSessionConfiguration {
    /// A configuration for a session identified by `identifier` (Apple:
    /// `background(withIdentifier:)`): the default configuration with ``identifier`` set,
    /// `sessionSendsLaunchEvents` on and `waitsForConnectivity` on, as Apple's background
    /// configuration has them. Its transfers run in this process while it runs (see the
    /// file's note). An empty identifier stops the program, as Apple's raises.
    public class func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        guard !identifier.isEmpty else {
            fatalError("URLSessionConfiguration.background(withIdentifier:): the identifier must not be empty")
        }
        let configuration = URLSessionConfiguration.default
        configuration.identifier = identifier
        SessionConfigurationSwitches.update(configuration) { switches in
            switches.sessionSendsLaunchEvents = true
            switches.waitsForConnectivity = true
        }
        return configuration
    }

    /// Whether the app is to be launched in the background when the session's transfers
    /// finish (Apple: `sessionSendsLaunchEvents`; `true` for a background configuration).
    /// Kept; Linux has no service that finishes transfers for an app that is not running, so
    /// nothing is launched.
    public var sessionSendsLaunchEvents: Bool {
        get { SessionConfigurationSwitches.read(self).sessionSendsLaunchEvents }
        set { SessionConfigurationSwitches.update(self) { $0.sessionSendsLaunchEvents = newValue } }
    }

    /// Whether a task waits for the network instead of failing at once (Apple:
    /// `waitsForConnectivity`). Kept; swift-corelibs-foundation's tasks fail at once when the
    /// network is down whatever it says: retry in the app, or wait with `NWPathMonitor`.
    public var waitsForConnectivity: Bool {
        get { SessionConfigurationSwitches.read(self).waitsForConnectivity }
        set { SessionConfigurationSwitches.update(self) { $0.waitsForConnectivity = newValue } }
    }

    /// Whether tasks may use an expensive network, cellular or a hotspot (Apple:
    /// `allowsExpensiveNetworkAccess`, `true` by default). Kept, not enforced: check
    /// `NWPathMonitor`'s `isExpensive` before a large transfer.
    public var allowsExpensiveNetworkAccess: Bool {
        get { SessionConfigurationSwitches.read(self).allowsExpensiveNetworkAccess }
        set { SessionConfigurationSwitches.update(self) { $0.allowsExpensiveNetworkAccess = newValue } }
    }

    /// Whether tasks may use a network in Low Data Mode (Apple:
    /// `allowsConstrainedNetworkAccess`, `true` by default). Kept, not enforced (Linux has no
    /// Low Data Mode: `NWPath.isConstrained` is always `false`).
    public var allowsConstrainedNetworkAccess: Bool {
        get { SessionConfigurationSwitches.read(self).allowsConstrainedNetworkAccess }
        set { SessionConfigurationSwitches.update(self) { $0.allowsConstrainedNetworkAccess = newValue } }
    }

    /// The oldest TLS version tasks accept (Apple: `tlsMinimumSupportedProtocolVersion`, iOS
    /// 13; `tls_protocol_version_t` is FoundationNetworking's, with Apple's cases). Kept and
    /// read back (`.TLSv12` until set), not enforced: swift-corelibs-foundation has no way to
    /// tell libcurl, whose own floor (TLS 1.2 with Debian's OpenSSL) applies.
    public var tlsMinimumSupportedProtocolVersion: tls_protocol_version_t {
        get { SessionConfigurationSwitches.read(self).tlsMinimum }
        set { SessionConfigurationSwitches.update(self) { $0.tlsMinimum = newValue } }
    }

    /// The newest TLS version tasks ask for (Apple: `tlsMaximumSupportedProtocolVersion`,
    /// iOS 13). Kept and read back (`.TLSv13` until set), not enforced, as the minimum.
    public var tlsMaximumSupportedProtocolVersion: tls_protocol_version_t {
        get { SessionConfigurationSwitches.read(self).tlsMaximum }
        set { SessionConfigurationSwitches.update(self) { $0.tlsMaximum = newValue } }
    }

    /// The app group whose container a background session downloads into (Apple:
    /// `sharedContainerIdentifier`, which an app extension must set). Kept and read back;
    /// downloads go where swift-corelibs-foundation puts them (the location its delegate
    /// call names), and the app moves them, as on iOS.
    @_disfavoredOverload
    public var sharedContainerIdentifier: String? {
        get { SessionConfigurationSwitches.read(self).sharedContainerIdentifier }
        set { SessionConfigurationSwitches.update(self) { $0.sharedContainerIdentifier = newValue } }
    }
}

/// The switches swift-corelibs-foundation's `URLSessionConfiguration` has no storage for,
/// kept per configuration object (weakly: a configuration that goes takes its switches with
/// it, and a new object at the same address does not inherit them). A configuration's copy
/// (`URLSession(configuration:)` keeps a copy) starts from the defaults, as none of them
/// changes what a session does here.
enum SessionConfigurationSwitches {
    struct Switches: Sendable {
        var sessionSendsLaunchEvents = false
        var waitsForConnectivity = false
        var allowsExpensiveNetworkAccess = true
        var allowsConstrainedNetworkAccess = true
        var sharedContainerIdentifier: String?
        var tlsMinimum = tls_protocol_version_t.TLSv12
        var tlsMaximum = tls_protocol_version_t.TLSv13
    }

    private struct Entry {
        weak var configuration: URLSessionConfiguration?
        var switches: Switches
    }

    // Entries are pruned when one is written: configurations are few and long-lived.
    private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// The switches of `configuration` (the defaults when none was set).
    static func read(_ configuration: URLSessionConfiguration) -> Switches {
        entries.withLock { entries in
            guard let entry = entries[ObjectIdentifier(configuration)], entry.configuration === configuration else { return Switches() }
            return entry.switches
        }
    }

    /// Changes the switches of `configuration`.
    static func update(_ configuration: URLSessionConfiguration, _ change: (inout Switches) -> Void) {
        entries.withLock { entries in
            let key = ObjectIdentifier(configuration)
            var switches = Switches()
            if let entry = entries[key], entry.configuration === configuration { switches = entry.switches }
            change(&switches)
            entries = entries.filter { $0.value.configuration != nil }
            entries[key] = Entry(configuration: configuration, switches: switches)
        }
    }
}
