import Dispatch
import DeviceConditions
import Foundation

/// Feeds the real-time driver the device's conditions.
///
/// With the Linux reader, change events come from the kernel (a ``ConditionsWatcher``:
/// netlink uevents for power supplies, rtnetlink for links, addresses and routes), and the
/// values no event announces (battery level, Low Power Mode, thermal state, idleness, CPU
/// pressure) are sampled at most every 30 s and only while `driver.dependsOnConditions`:
/// the sampling timer is armed when the driver reports that work appeared
/// (``SchedulerDriver/onWorkChanged(_:)``) and disarmed when it went, so an idle process
/// has no timer and takes no wakeups. Where the sockets cannot be opened (a sandbox), the
/// network joins the sampled values and a note goes to the driver's log.
///
/// Any other provider (``FixedConditions``, a test double) is sampled every 30 s, armed
/// and disarmed the same way.
public enum ConditionsMonitor {
    /// The sampling period: the ceiling for slow readings (docs/system.md, "Properties").
    static let interval: TimeInterval = 30

    /// Starts feeding `driver`; `makeTimer` makes the sampling timer (tests count arms).
    /// Returns the watcher over the Linux reader, whose ``ConditionsWatcher/readEverything()``
    /// reads the device on demand as the driver's one writer (`bgtask conditions`); `nil`
    /// for any other provider.
    @discardableResult
    public static func start(_ provider: any ConditionsProvider, driver: SchedulerDriver, makeTimer: @escaping ArmedSampler.TimerFactory = ArmedSampler.dispatchTimer) -> ConditionsWatcher? {
        if let reader = provider as? LinuxConditionsReader {
            return startWatching(reader, driver: driver, makeTimer: makeTimer)
        }
        startSampling(provider, driver: driver, makeTimer: makeTimer)
        return nil
    }

    private static func startWatching(_ reader: LinuxConditionsReader, driver: SchedulerDriver, makeTimer: @escaping ArmedSampler.TimerFactory) -> ConditionsWatcher {
        let watcher = ConditionsWatcher(
            reader: reader,
            sampleInterval: interval,
            makeTimer: makeTimer,
            shouldSample: { [weak driver] in driver?.dependsOnConditions ?? false },
            onReading: { [weak driver] reading in
                guard let driver else { return }
                let conditions = reading.conditions
                if conditions != driver.conditions { driver.conditionsChanged(conditions) }
            }
        )
        if !watcher.problems.isEmpty {
            driver.log.record(BGDiagnosticMessage(
                .info, app: nil,
                "device change events unavailable (\(watcher.problems.joined(separator: "; "))); sampling \(watcher.sampledParts.contains(.network) ? "network and " : "")power every \(Int(interval)) s while a request depends on them"
            ))
        }
        // The driver read the conditions once before this monitor existed; publish the
        // watcher's first reading if the device changed in between.
        let first = watcher.current.conditions
        if first != driver.conditions { driver.conditionsChanged(first) }
        driver.onWorkChanged { [weak watcher] in watcher?.reconsiderSampling() }
        watcher.reconsiderSampling()  // work may have appeared before the listener
        driver.retain(watcher)
        return watcher
    }

    private static func startSampling(_ provider: any ConditionsProvider, driver: SchedulerDriver, makeTimer: @escaping ArmedSampler.TimerFactory) {
        let sampler = ArmedSampler(
            interval: interval,
            queue: DispatchQueue(label: "bgtask.conditions"),
            makeTimer: makeTimer,
            shouldRun: { [weak driver] in driver?.dependsOnConditions ?? false }
        ) { [weak driver] in
            guard let driver else { return }
            let conditions = provider.read()
            if conditions != driver.conditions { driver.conditionsChanged(conditions) }
        }
        driver.onWorkChanged { [weak sampler] in sampler?.reconsider() }
        sampler.reconsider()
        driver.retain(sampler)
    }
}
