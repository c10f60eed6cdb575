@testable import BackgroundTasks
import BackgroundTasksTesting
import DaemonProtocol
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// An uplink that answers everything and keeps nothing.
private final class QuietUplink: SchedulerUplink {
    func call(_ request: AppRequest) throws(DaemonFailure) -> Reply { .done(nil) }
    func post(_ request: AppRequest) {}
    var daemonDescription: String { "a quiet uplink" }
}

/// An app under bgtaskd posts `ProcessInfo`'s and `UIDevice`'s change notifications from
/// what the daemon tells it of the device (``AppPush/deviceConditions(_:)``; docs/porting.md,
/// the device's rows).
@Suite struct LinkedDeviceChangeTests {
    @Test func theDaemonsFirstWordIsTheStartingPointAndEachChangeAfterItIsPosted() throws {
        let driver = SchedulerDriver(clock: VirtualClock(start: testStart), store: nil, log: .collecting(), meter: nil, uplink: QuietUplink())
        let context = BGAppContext(app: testApp, manifest: testManifest, driver: driver)
        let heard = Mutex<[String]>([])
        let names: [Notification.Name] = [
            .NSProcessInfoPowerStateDidChange, ProcessInfo.thermalStateDidChangeNotification,
            UIDevice.batteryStateDidChangeNotification, UIDevice.batteryLevelDidChangeNotification,
        ]
        let observers = names.map { name in
            // Other tests' apps post ProcessInfo's notifications in this process too: a
            // `queue: nil` observer runs with the posting app's context.
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard BGAppContext.current === context else { return }
                heard.withLock { $0.append(note.name.rawValue) }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        context.withCurrent {
            context.application.launch()
            UIDevice.current.isBatteryMonitoringEnabled = true
            context.application.finishLaunching()
        }
        func told(_ conditions: Conditions) -> [String] {
            heard.withLock { $0 = [] }
            driver.handle(.deviceConditions(conditions))
            context.application.waitForPostedNotifications(timeout: 10)
            return heard.withLock { $0 }
        }
        // The driver's conditions before the daemon's word are no device's (favourable):
        // the first word is how the device is, not a change.
        var device = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.42, batteryState: .discharging, lowPowerMode: true, thermalState: .fair)
        #expect(told(device) == [])
        device.lowPowerMode = false
        #expect(told(device) == ["NSProcessInfoPowerStateDidChangeNotification"])
        device.thermalState = .serious
        device.batteryLevel = 0.41
        #expect(told(device) == ["NSProcessInfoThermalStateDidChangeNotification", "UIDeviceBatteryLevelDidChangeNotification"])
        #expect(told(device) == [], "the same again")
        // A level no battery has (the daemon's word is checked like any input) is no level.
        device.batteryLevel = 7
        #expect(told(device) == [])
        device.batteryLevel = .infinity
        #expect(told(device) == [])
        device.batteryLevel = 0.30
        device.externalPower = true
        device.batteryState = .charging
        #expect(told(device) == ["UIDeviceBatteryStateDidChangeNotification", "UIDeviceBatteryLevelDidChangeNotification"])
    }
}
