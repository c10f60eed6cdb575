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

    /// How tasks use several networks at once (Apple: `multipathServiceType`, Multipath TCP;
    /// `.none` by default). Kept and read back; Linux's transfers use one path, as with `.none`.
    /// swift-corelibs-foundation marks its own unavailable, and its type too: this one's type
    /// is Apple's Objective-C name, ``NSURLSessionMultipathServiceType`` (`config.multipathServiceType
    /// = .handover` compiles; spelling `URLSessionConfiguration.MultipathServiceType` does not).
    public var multipathServiceType: NSURLSessionMultipathServiceType {
        get { SessionConfigurationSwitches.read(self).multipathServiceType }
        set { SessionConfigurationSwitches.update(self) { $0.multipathServiceType = newValue } }
    }

    /// Whether name lookups must be DNSSEC-validated (Apple: iOS 16, `false` by default). Kept
    /// and read back, not enforced: lookups are libcurl's, through the system's resolver.
    public var requiresDNSSECValidation: Bool {
        get { SessionConfigurationSwitches.read(self).requiresDNSSECValidation }
        set { SessionConfigurationSwitches.update(self) { $0.requiresDNSSECValidation = newValue } }
    }

    /// Whether tasks use the loading of before iOS 18.4 (Apple: `usesClassicLoadingMode`,
    /// `true` by default). Kept and read back: there is one way of loading here.
    public var usesClassicLoadingMode: Bool {
        get { SessionConfigurationSwitches.read(self).usesClassicLoadingMode }
        set { SessionConfigurationSwitches.update(self) { $0.usesClassicLoadingMode = newValue } }
    }

    /// The app group whose container a background session downloads into (Apple:
    /// `sharedContainerIdentifier`, which an app extension must set): settable, where
    /// swift-corelibs-foundation's is read-only, and kept. A read where FoundationNetworking
    /// is visible (any file that imports UIKit, SwiftUI or BackgroundTasks) is answered by
    /// swift-corelibs-foundation's own property, which overload resolution prefers to an
    /// extension's: `nil` (docs/porting.md, "Background URL sessions"). Downloads go where
    /// swift-corelibs-foundation puts them (the location its delegate call names), and the
    /// app moves them, as on iOS.
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
        var multipathServiceType = NSURLSessionMultipathServiceType.none
        var requiresDNSSECValidation = false
        var usesClassicLoadingMode = true
    }

    private static let table = WeaklyKeyedTable<URLSessionConfiguration, Switches>()

    /// The switches of `configuration` (the defaults when none was set).
    static func read(_ configuration: URLSessionConfiguration) -> Switches {
        table.value(of: configuration) ?? Switches()
    }

    /// Changes the switches of `configuration`.
    static func update(_ configuration: URLSessionConfiguration, _ change: (inout Switches) -> Void) {
        table.update(configuration, default: Switches()) { change(&$0) }
    }
}

extension URLSessionTask {
    /// Whether the task's delegate gets data as it comes rather than in larger pieces (Apple:
    /// `prefersIncrementalDelivery`, iOS 14.5, `true` by default). Kept and read back per task;
    /// swift-corelibs-foundation delivers as libcurl hands it.
    public var prefersIncrementalDelivery: Bool {
        get { Self.incrementalDelivery.value(of: self) ?? true }
        set { Self.incrementalDelivery.update(self, default: true) { $0 = newValue } }
    }
    private static let incrementalDelivery = WeaklyKeyedTable<URLSessionTask, Bool>()
}

/// How a session's tasks use several networks at once (Apple: `NSURLSessionMultipathServiceType`,
/// Swift's `URLSessionConfiguration.MultipathServiceType`, with Apple's raw values), the type of
/// ``Foundation/URLSessionConfiguration/multipathServiceType``.
public enum NSURLSessionMultipathServiceType: Int, Sendable, Hashable {
    /// One path (the default).
    case none = 0
    /// Another path takes over when the first fails.
    case handover = 1
    /// Another path is used when the first is slow.
    case interactive = 2
    /// Paths are used at once (Apple: for testing).
    case aggregate = 3
}
