import BackgroundTasks
import BackgroundTasksTesting
import CFoundationHooks
import Foundation
import SchedulerCore
import Testing

/// The C functions through which FoundationCompat's `ProcessInfo` asks BackgroundTasks
/// (Sources/CFoundationHooks, Sources/BackgroundTasks/API/FoundationHooks.swift): linked in
/// this process, and answering through their C declarations as the device says (the header's
/// types and the `@_cdecl` functions' agree).
@Suite struct FoundationHooksTests {
    static let start = Date(timeIntervalSince1970: 1_796_083_200)

    @Test func theHooksAreLinkedAndAnswerThroughTheirCDeclarations() throws {
        #expect(bgtask_foundation_hooks_linked())
        let device = try SimulatedDevice(start: Self.start, conditions: Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5, lowPowerMode: true, thermalState: .serious))
        let app = AppID("com.example.hooks")
        let context = device.install(app: app, manifest: AppManifest(appID: app, permittedIdentifiers: [], backgroundModes: [], source: "test")) {}
        context.withCurrent {
            #expect(bgtask_foundation_low_power_mode())
            #expect(bgtask_foundation_thermal_state() == ProcessInfo.ThermalState.serious.rawValue)
            #expect(ProcessInfo.processInfo.isLowPowerModeEnabled && ProcessInfo.processInfo.thermalState == .serious)
        }
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, thermalState: .critical))
        context.withCurrent {
            #expect(!bgtask_foundation_low_power_mode())
            #expect(bgtask_foundation_thermal_state() == ProcessInfo.ThermalState.critical.rawValue)
        }
    }
    // performExpiringActivity through its hook: AssertionTests (the block unexpired, and
    // expired at once when no time can be granted).
}
