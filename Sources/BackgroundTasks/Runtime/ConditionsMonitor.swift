import Dispatch
import DeviceConditions
import Foundation

/// Feeds the real-time driver the device's conditions.
///
/// With the Linux reader, change events come from the kernel (a ``ConditionsWatcher``:
/// netlink uevents for power supplies, rtnetlink for links, addresses and routes), and the
/// values no event announces (battery level, Low Power Mode, thermal state, idleness, CPU
/// pressure) are sampled at most every 30 s and only while `driver.dependsOnConditions`, so
/// an idle process reads nothing. Where the sockets cannot be opened (a sandbox), the
/// network joins the sampled values and a note goes to the driver's log.
///
/// Any other provider (``FixedConditions``, a test double) is sampled every 30 s while the
/// driver depends on conditions, as before.
enum ConditionsMonitor {
    /// The sampling period: the ceiling for slow readings (docs/system.md, "Properties").
    static let interval: TimeInterval = 30

    static func start(_ provider: any ConditionsProvider, driver: SchedulerDriver) {
        if let reader = provider as? LinuxConditionsReader {
            startWatching(reader, driver: driver)
        } else {
            startSampling(provider, driver: driver)
        }
    }

    private static func startWatching(_ reader: LinuxConditionsReader, driver: SchedulerDriver) {
        let watcher = ConditionsWatcher(
            reader: reader,
            sampleInterval: interval,
            shouldSample: { [weak driver] in driver?.dependsOnConditions ?? false },
            onReading: { [weak driver] reading in
                guard let driver else { return }
                let conditions = reading.conditions
                if conditions != driver.conditions { driver.conditionsChanged(conditions) }
            }
        )
        if !watcher.problems.isEmpty {
            driver.log.record(DiagnosticMessage(
                .info, app: nil,
                "device change events unavailable (\(watcher.problems.joined(separator: "; "))); sampling \(watcher.sampledParts.contains(.network) ? "network and " : "")power every \(Int(interval)) s while a request depends on them"
            ))
        }
        // The driver read the conditions once before this monitor existed; publish the
        // watcher's first reading if the device changed in between.
        let first = watcher.current.conditions
        if first != driver.conditions { driver.conditionsChanged(first) }
        driver.retain(watcher)
    }

    private static func startSampling(_ provider: any ConditionsProvider, driver: SchedulerDriver) {
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "bgtask.conditions"))
        source.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        source.setEventHandler { [weak driver] in
            guard let driver, driver.dependsOnConditions else { return }
            let conditions = provider.read()
            if conditions != driver.conditions { driver.conditionsChanged(conditions) }
        }
        source.activate()
        driver.retain(source as AnyObject)
    }
}
