import Foundation
import FoundationCompat

// BackgroundTasks' answers to the ProcessInfo questions FoundationCompat declares for files
// that import Foundation alone (Sources/FoundationCompat/ProcessInfoPower.swift): defined
// under the C names CFoundationHooks declares weakly, so the linker joins them to
// FoundationCompat's calls in every process that links this module, with no registration
// (CFoundationHooks declares them weakly; BackgroundTasksTests checks the two agree).

/// The running app's device's power management, or the machine's when no app context exists
/// yet: asked from any thread (a library's check before heavy work), it must not make the
/// process's scheduler, which would close `EmbeddedScheduler.bootstrap`.
private func currentPower() -> UIDevice.PowerReading {
    BGAppContext.resolveExisting()?.device.power ?? UIDevice.power()()
}

/// `ProcessInfo.processInfo.thermalState`'s answer, as an `NSProcessInfoThermalState`.
@_cdecl("bgtask_foundation_thermal_state")
package func foundationThermalState() -> Int {
    let state: ProcessInfo.ThermalState = switch currentPower().thermalState {
    case .nominal: .nominal
    case .fair: .fair
    case .serious: .serious
    case .critical: .critical
    }
    return state.rawValue
}

/// `ProcessInfo.processInfo.isLowPowerModeEnabled`'s answer.
@_cdecl("bgtask_foundation_low_power_mode")
package func foundationLowPowerMode() -> Bool {
    currentPower().lowPowerMode
}

/// `performExpiringActivity(withReason:using:)`: `activity` is a retained
/// `ExpiringActivity`, whose ownership this takes.
@_cdecl("bgtask_foundation_perform_expiring_activity")
package func foundationPerformExpiringActivity(_ reason: UnsafePointer<CChar>?, _ activity: UnsafeMutableRawPointer?) {
    guard let activity else { return }
    let block = Unmanaged<ExpiringActivity>.fromOpaque(activity).takeRetainedValue().block
    BGApplication.shared.performExpiringActivity(reason: reason.map { String(cString: $0) } ?? "", block: block)
}
