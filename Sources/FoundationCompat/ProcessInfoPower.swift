// ProcessInfo's power management, as Apple's Foundation declares it: here so that a file
// (or a module: an SDK's monitoring code, a share extension) that imports Foundation alone
// compiles, as the thirteenth outside probe found two libraries written (a thermal-state
// monitor, an app extension's session setup). The answers come from the package's
// BackgroundTasks, which this module cannot import (it depends on this one): through the weak
// hooks of CFoundationHooks, defined there. A process that does not link BackgroundTasks
// answers as a device without power management would: Low Power Mode off, thermal state
// nominal, and an expiring activity that never expires.
import Dispatch
import Foundation
@_exported import CFoundationTypes
internal import CFoundationHooks

extension ProcessInfo {
    /// How hot the device runs (Apple: `ProcessInfo.ThermalState`): the C enum
    /// `NSProcessInfoThermalState` (CFoundationTypes), open as Apple's, so a `switch` written
    /// for iOS compiles the same.
    public typealias ThermalState = NSProcessInfoThermalState

    /// Whether Low Power Mode is on (Apple: `isLowPowerModeEnabled`): the running app's
    /// device's, as its scheduler reads it (the machine's power profile, docs/system.md, "On
    /// Linux"; a simulated device's own).
    public var isLowPowerModeEnabled: Bool {
        bgtask_foundation_hooks_linked() ? bgtask_foundation_low_power_mode() : false
    }

    /// How hot the device runs (Apple: `thermalState`), as the app's scheduler reads it (the
    /// machine's thermal zones; a simulated device's own).
    public var thermalState: ThermalState {
        guard bgtask_foundation_hooks_linked() else { return .nominal }
        return ThermalState(rawValue: bgtask_foundation_thermal_state()) ?? .nominal
    }

    /// Posted (object: `ProcessInfo.processInfo`) when the thermal state changes, as the app's
    /// scheduler sees it change (docs/porting.md says when).
    public static let thermalStateDidChangeNotification = Notification.Name("NSProcessInfoThermalStateDidChangeNotification")

    /// Runs `block` on a background queue with `expired == false`, guarded by a background
    /// assertion; if the process must suspend while it runs, `block` is called again with
    /// `true`; if no assertion can be taken, it is called with `true` at once (Apple:
    /// `performExpiringActivity(withReason:using:)`). Without BackgroundTasks in the process
    /// nothing suspends it: `block` runs once, with `false`.
    @preconcurrency
    public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void) {
        guard bgtask_foundation_hooks_linked() else {
            // A serial queue of its own, never `DispatchQueue.global()` (docs/daemon.md, "Idle cost").
            DispatchQueue(label: "bgtask.expiring-activity").async { block(false) }
            return
        }
        let activity = Unmanaged.passRetained(ExpiringActivity(block: block)).toOpaque()
        reason.withCString { bgtask_foundation_perform_expiring_activity($0, activity) }
    }
}

extension Notification.Name {
    /// Posted (object: `ProcessInfo.processInfo`) when Low Power Mode is turned on or off, as
    /// the app's scheduler sees it change (docs/porting.md says when).
    public static let NSProcessInfoPowerStateDidChange = Notification.Name("NSProcessInfoPowerStateDidChangeNotification")
}

/// The block of ``ProcessInfo/performExpiringActivity(withReason:using:)``, handed to
/// BackgroundTasks' hook as a retained reference (a C function takes no Swift closure).
package final class ExpiringActivity: Sendable {
    /// The app's block.
    package let block: @Sendable (Bool) -> Void
    init(block: @escaping @Sendable (Bool) -> Void) { self.block = block }
}
