// What FoundationCompat declares at C level, and re-exports, for files that import Foundation
// alone: ProcessInfo's thermal state, an open C enum as Apple's (so a `switch` written for iOS
// compiles the same: docs/porting.md, "Enums in switch"). The hooks behind ProcessInfo's power
// answers are CFoundationHooks', which nothing re-exports.
#ifndef CFOUNDATIONTYPES_H
#define CFOUNDATIONTYPES_H

/// How hot the device runs (Apple: `ProcessInfo.ThermalState`, `NSProcessInfoThermalState`).
typedef enum __attribute__((enum_extensibility(open))) NSProcessInfoThermalState : long {
    /// Within normal limits.
    NSProcessInfoThermalStateNominal = 0,
    /// Slightly elevated.
    NSProcessInfoThermalStateFair = 1,
    /// High: the system cuts background work.
    NSProcessInfoThermalStateSerious = 2,
    /// Critical: the system stops what it can.
    NSProcessInfoThermalStateCritical = 3,
} NSProcessInfoThermalState;

#endif
