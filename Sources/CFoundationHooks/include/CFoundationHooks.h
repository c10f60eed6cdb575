// The hooks through which the package's BackgroundTasks answers the ProcessInfo questions
// FoundationCompat declares for files that import Foundation alone (docs/porting.md, "Files
// that import Foundation alone"). Imported by FoundationCompat without re-export: an app's
// files never see these names.
#ifndef CFOUNDATIONHOOKS_H
#define CFOUNDATIONHOOKS_H

#include <stdbool.h>

// The hooks. BackgroundTasks defines them (`@_cdecl`, Sources/BackgroundTasks/API/
// FoundationHooks.swift); FoundationCompat, which BackgroundTasks depends on and so cannot
// call, refers to them weakly: in a process that links BackgroundTasks (every app, since its
// `@main` type imports UIKit, SwiftUI or BackgroundTasks) they are its functions, found by
// the linker; in one that does not, they are null and FoundationCompat answers as a device
// without power management would. No registration is needed, so a library asking before the
// app's scheduler exists gets the device's answer too.

/// The device's thermal state as the app's scheduler reads it (an NSProcessInfoThermalState).
long bgtask_foundation_thermal_state(void) __attribute__((weak));
/// Whether Low Power Mode is on, as the app's scheduler reads it.
bool bgtask_foundation_low_power_mode(void) __attribute__((weak));
/// `performExpiringActivity(withReason:using:)`: `activity` is a retained
/// `ExpiringActivity` (FoundationCompat), whose ownership the callee takes.
void bgtask_foundation_perform_expiring_activity(const char *reason, void *activity) __attribute__((weak));

/// Whether this process links BackgroundTasks' hooks (all three come together).
static inline bool bgtask_foundation_hooks_linked(void) {
    return &bgtask_foundation_thermal_state != 0 && &bgtask_foundation_low_power_mode != 0 && &bgtask_foundation_perform_expiring_activity != 0;
}

#endif
