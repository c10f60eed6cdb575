import BackgroundTasks
import DeviceConditions
import Dispatch
import Foundation
import SchedulerCore
import Synchronization

/// Where a monitor's paths come from, chosen when the monitor is made:
/// - an app the simulator models (an app context that is not the process's own): the
///   simulated device's network, from its conditions, told of changes through the app
///   context's `observeConditions`, its handlers run as the app's work on the driver's
///   (virtual) clock;
/// - otherwise the machine's: interfaces and routes read from sysfs and procfs
///   (``NetworkReader/readPath()``, under `BGTASK_SYS_ROOT` and the other roots as the
///   scheduler reads them), re-read when rtnetlink announces a link, address or route change.
enum PathSource: Sendable {
    case machine(NetworkReader)
    case device(BGAppContext)

    /// The source for a monitor made by the code that runs now.
    static func current() -> PathSource {
        if let context = BGAppContext.resolveExisting(), !context.isProcessApp { return .device(context) }
        return .machine(LinuxConditionsReader().networkReader)
    }

    /// The path's facts now.
    func read() -> NetworkPathReading {
        switch self {
        case .machine(let reader): return reader.readPath()
        case .device(let context): return Self.reading(of: context.deviceConditions)
        }
    }

    /// What a simulated device's conditions say of its network: nothing when it is offline;
    /// otherwise one link, cellular (`pdp_ip0`) when the network is metered, Wi-Fi (`en0`)
    /// when not, with IPv4 and a name server, as the scenario schema has no more to say.
    static func reading(of conditions: Conditions) -> NetworkPathReading {
        guard conditions.networkAvailable else { return .offline }
        let cellular = conditions.networkMetered == true
        let link = NetworkPathInterface(name: cellular ? "pdp_ip0" : "en0", index: cellular ? 2 : 1,
                                        kind: cellular ? .cellular : .wifi, ipv4: true, ipv6: false, gateways: [])
        return NetworkPathReading(interfaces: [link], dns: true, metered: conditions.networkMetered)
    }

    /// Starts calling `changed` whenever the path may have changed, until the watch is
    /// cancelled.
    func watch(_ changed: @escaping @Sendable () -> Void) -> PathWatch {
        switch self {
        case .machine:
            return .kernel(KernelPathWatch(changed))
        case .device(let context):
            return .device(context.observeConditions { _ in changed() })
        }
    }

    /// Runs `body` (which calls app code) on `queue`: for a modelled app as its work on the
    /// driver's clock, so the simulator settles only after it; otherwise as a plain block.
    func deliver(on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
        switch self {
        case .machine: queue.async(execute: body)
        case .device(let context): context.performAppWork(on: queue, body)
        }
    }
}

/// A watch on a ``PathSource``.
enum PathWatch: Sendable {
    case kernel(KernelPathWatch)
    case device(ConditionsObservation)

    /// Runs `body` in the order the watch's own calls run: on the kernel watch's serial
    /// queue (so a first evaluation and the kernel's announcements never overtake each
    /// other), or at once for a device, whose changes the simulator already serializes.
    func serially(_ body: () -> Void) {
        switch self {
        case .kernel(let watch): watch.queue.sync(execute: body)
        case .device: body()
        }
    }

    /// Stops the calls.
    func cancel() {
        switch self {
        case .kernel(let watch): watch.cancel()
        case .device(let observation): observation.cancel()
        }
    }
}

/// The machine's watch: an rtnetlink subscription (``KernelEventMonitor``), or where netlink
/// cannot be opened (a sandbox), a look every 30 seconds instead. After each announcement
/// the path is looked at again 2 seconds later, once: a name server and NetworkManager's
/// metered setting are files written after the route they go with, and no netlink message
/// says when.
final class KernelPathWatch: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and never changed; the kernel
    // monitor and the timer are Dispatch sources, which are safe to cancel from any thread.

    /// How often the path is looked at when the kernel cannot announce changes.
    static let fallbackInterval: DispatchTimeInterval = .seconds(30)

    /// How long after an announcement the second look comes.
    static let settleDelay: DispatchTimeInterval = .seconds(2)

    /// Where announcements, looks and the first evaluation run, one at a time.
    let queue = DispatchQueue(label: "bgtask.network.path")
    private let monitor: KernelEventMonitor
    private let timer: (any DispatchSourceTimer)?

    init(_ changed: @escaping @Sendable () -> Void) {
        // Touched on `queue` only: whether a second look is already planned.
        let settling = Mutex(false)
        let queue = queue
        monitor = KernelEventMonitor(queue: queue, kinds: .network) { changes in
            guard changes.contains(.network) else { return }
            changed()
            let plan = settling.withLock { planned in
                defer { planned = true }
                return !planned
            }
            guard plan else { return }
            queue.asyncAfter(deadline: .now() + Self.settleDelay) {
                settling.withLock { $0 = false }
                changed()
            }
        }
        if monitor.watching.contains(.network) {
            timer = nil
        } else {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.fallbackInterval, repeating: Self.fallbackInterval)
            timer.setEventHandler(handler: changed)
            timer.resume()
            self.timer = timer
        }
    }

    func cancel() {
        monitor.cancel()
        timer?.cancel()
    }
}
