import Dispatch
import DeviceConditions
import Foundation

/// Samples the device for the real-time driver and reports changes. Until the policy
/// issue brings netlink events, power and network are read every 30 s (the ceiling
/// DESIGN.md allows for slow readings), and only while a pending request or a running
/// task depends on a condition.
enum ConditionsMonitor {
    static let interval: TimeInterval = 30

    static func start(_ provider: any ConditionsProvider, driver: SchedulerDriver) {
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
