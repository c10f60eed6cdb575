// The connectivity monitor many iOS apps keep beside their background refresh (Swift 5
// mode, warnings as errors): an `ObservableObject` singleton over `NWPathMonitor`, published
// on the main queue, and a refresh handler that checks the current path before fetching.
import BackgroundTasks
import Network

/// The app's view of the network.
public final class ConnectivityMonitor: ObservableObject {
    /// How the device is connected.
    public enum ConnectionType {
        case wifi, cellular, ethernet, unknown
    }

    /// The app's one monitor.
    public static let shared = ConnectivityMonitor()

    private let monitor = NWPathMonitor()
    private let queue = DispatchQueue(label: "NetworkMonitor")

    /// Whether the network can be used.
    @Published public private(set) var isConnected = true
    /// Whether the network costs the user.
    @Published public private(set) var isExpensive = false
    /// How the device is connected.
    @Published public private(set) var connectionType: ConnectionType = .unknown

    private init() {
        monitor.pathUpdateHandler = { [weak self] path in
            DispatchQueue.main.async {
                self?.isConnected = path.status == .satisfied
                self?.isExpensive = path.isExpensive
                self?.connectionType = ConnectivityMonitor.connectionType(of: path)
            }
        }
        monitor.start(queue: queue)
    }

    deinit { monitor.cancel() }

    /// The kind of link a path uses, as the app names it.
    public static func connectionType(of path: NWPath) -> ConnectionType {
        if path.usesInterfaceType(.wifi) {
            return .wifi
        } else if path.usesInterfaceType(.cellular) {
            return .cellular
        } else if path.usesInterfaceType(.wiredEthernet) {
            return .ethernet
        }
        return .unknown
    }

    /// What the status is called in the app's log.
    public static func describe(_ status: NWPath.Status) -> String {
        switch status {
        case .satisfied: return "online"
        case .unsatisfied: return "offline"
        case .requiresConnection: return "waiting"
        @unknown default: return "unknown"
        }
    }

    /// A refresh handler that fetches only on an unmetered network, as apps that respect
    /// their users' data plans write it: a monitor of its own, whose first path decides.
    public static func handleRefresh(_ task: BGAppRefreshTask, fetch: @escaping (@escaping (Bool) -> Void) -> Void) {
        let monitor = NWPathMonitor()
        monitor.pathUpdateHandler = { path in
            monitor.cancel()
            guard path.status == .satisfied, !path.isExpensive, !path.isConstrained else {
                task.setTaskCompleted(success: true)
                return
            }
            fetch { success in task.setTaskCompleted(success: success) }
        }
        monitor.start(queue: DispatchQueue(label: "refresh.network"))
    }
}
