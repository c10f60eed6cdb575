// Network path code in the shapes Swift 6 iOS apps write it (a reachability service over
// `for await` on the monitor, interface switches with `@unknown default`, Wi-Fi-only and
// no-cellular monitors, gateways read as endpoints), compiled here in Swift 6 language mode
// with warnings as errors; NetworkSnippetTests runs them.
import BackgroundTasks
import Network

/// What a reachability service tells its views.
struct ReachabilityStatus: Equatable, Sendable {
    var online: Bool
    var link: String
    var expensive: Bool
}

/// A service that follows the network with `for await`, iOS 17's way.
actor ReachabilityService {
    private(set) var latest: ReachabilityStatus?
    private(set) var updates = 0

    /// Follows `monitor` until it is cancelled.
    func follow(_ monitor: NWPathMonitor) async {
        for await path in monitor {
            latest = ReachabilityStatus(online: path.status == .satisfied, link: Self.link(of: path), expensive: path.isExpensive)
            updates += 1
        }
    }

    /// The link's name as the app shows it.
    static func link(of path: NWPath) -> String {
        guard let interface = path.availableInterfaces.first else { return "none" }
        switch interface.type {
        case .wifi: return "Wi-Fi"
        case .cellular: return "Cellular"
        case .wiredEthernet: return "Ethernet"
        case .loopback: return "Loopback"
        case .other: return "Other"
        @unknown default: return "Unknown"
        }
    }
}

/// The refresh's network gate: a monitor that refuses cellular, whose first path decides.
func checkNetworkWithoutCellular(_ completion: @escaping @Sendable (Bool) -> Void) {
    let monitor = NWPathMonitor(prohibitedInterfaceTypes: [.cellular])
    monitor.pathUpdateHandler = { path in
        monitor.cancel()
        completion(path.status == .satisfied)
    }
    monitor.start(queue: DispatchQueue(label: "gate"))
}

/// A Wi-Fi-only monitor whose handler hops to the main actor, as Swift 6 apps write it.
@MainActor final class WifiIndicator {
    private(set) var onWifi = false
    private let monitor = NWPathMonitor(requiredInterfaceType: .wifi)

    func start() {
        monitor.pathUpdateHandler = { [weak self] path in
            let satisfied = path.status == .satisfied
            Task { @MainActor in self?.onWifi = satisfied }
        }
        monitor.start(queue: DispatchQueue(label: "wifi"))
    }

    func stop() { monitor.cancel() }
}

/// The gateways of a path as text, the way diagnostics screens list them.
func gatewayList(_ path: NWPath) -> [String] {
    path.gateways.map { endpoint in
        switch endpoint {
        case .hostPort(let host, _):
            switch host {
            case .ipv4(let address): return "\(address)"
            case .ipv6(let address): return "\(address)"
            case .name(let name, _): return name
            @unknown default: return "?"
            }
        default:
            return endpoint.debugDescription
        }
    }
}

/// A server endpoint built as apps build them for their own checks.
let statusServer = NWEndpoint.hostPort(host: "status.example.com", port: 443)
let localGateway = IPv4Address("192.168.1.1")
