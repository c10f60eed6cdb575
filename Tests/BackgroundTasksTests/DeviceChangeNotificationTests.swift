import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// `ProcessInfo`'s and `UIDevice`'s change notifications, posted as the simulated device
/// changes, at its virtual instants.
@Suite struct DeviceChangeNotificationTests {
    static let start = Date(timeIntervalSince1970: 1_796_083_200)

    @Test func theDevicesChangesArePostedToTheAppAsIOSPostsThem() async throws {
        let onBattery = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.80, batteryState: .discharging)
        let device = try SimulatedDevice(start: Self.start, conditions: onBattery)
        let app = AppID("com.example.careful")
        let heard = Mutex<[String]>([])
        var observers: [any NSObjectProtocol] = []
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [], source: "test")) {
            UIDevice.current.isBatteryMonitoringEnabled = true
            let names: [Notification.Name] = [
                .NSProcessInfoPowerStateDidChange, ProcessInfo.thermalStateDidChangeNotification,
                UIDevice.batteryStateDidChangeNotification, UIDevice.batteryLevelDidChangeNotification,
            ]
            for name in names {
                // Other tests' devices post ProcessInfo's notifications in this process too:
                // a `queue: nil` observer runs with the posting app's context, so it keeps its own.
                let observer = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                    guard BGAppContext.current?.app == app else { return }
                    let at = Int(device.clock.now().timeIntervalSince(Self.start))
                    heard.withLock { $0.append("\(at) \(note.name.rawValue)") }
                }
                observers.append(observer)
            }
        }
        // The user has the app open: it runs (a backgrounded app is suspended after 5 s).
        context.application.enterForeground()
        var hot = onBattery
        hot.lowPowerMode = true
        device.setConditions(hot, at: Self.start + 100)
        hot.thermalState = .serious
        device.setConditions(hot, at: Self.start + 200)
        // Less than a percent: no level notification.
        hot.batteryLevel = 0.795
        device.setConditions(hot, at: Self.start + 300)
        hot.batteryLevel = 0.78
        hot.externalPower = true
        hot.batteryState = .charging
        device.setConditions(hot, at: Self.start + 400)
        // The same again: nothing.
        device.setConditions(hot, at: Self.start + 500)
        // One percent, which floating point does not make 0.01 (0.57 - 0.56).
        hot.batteryLevel = 0.57
        device.setConditions(hot, at: Self.start + 550)
        hot.batteryLevel = 0.56
        device.setConditions(hot, at: Self.start + 560)
        await device.run(for: 600)
        #expect(heard.withLock { $0 } == [
            "100 NSProcessInfoPowerStateDidChangeNotification",
            "200 NSProcessInfoThermalStateDidChangeNotification",
            "400 UIDeviceBatteryStateDidChangeNotification",
            "400 UIDeviceBatteryLevelDidChangeNotification",
            "550 UIDeviceBatteryLevelDidChangeNotification",
            "560 UIDeviceBatteryLevelDidChangeNotification",
        ])
        // A suspended app is told when it runs again, once per kind of change.
        heard.withLock { $0 = [] }
        context.application.enterBackground()
        await device.run(for: 10)
        #expect(context.application.lifecycleState == .suspended)
        hot.lowPowerMode = false
        device.setConditions(hot, at: Self.start + 700)
        hot.lowPowerMode = true
        device.setConditions(hot, at: Self.start + 710)
        hot.thermalState = .fair
        device.setConditions(hot, at: Self.start + 720)
        await device.run(for: 190)
        #expect(heard.withLock { $0 }.isEmpty, "nothing runs in a suspended app")
        context.application.enterForeground()
        await device.run(for: 10)
        #expect(heard.withLock { $0 } == [
            "800 NSProcessInfoPowerStateDidChangeNotification",
            "800 NSProcessInfoThermalStateDidChangeNotification",
        ])
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }
}
