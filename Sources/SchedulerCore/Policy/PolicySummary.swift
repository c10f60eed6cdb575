import Foundation

extension PolicyConfiguration {
    /// The configuration in words, as `bgtask policy` prints it (the same text whether
    /// bgtaskd answers or the tool reads a file); `source` says where it came from
    /// ("defaults", a file path, "bgtaskd (pid 12): /etc/bgtask/policy.json").
    public func summary(source: String) -> String {
        var lines = ["policy configuration version \(version), profile \(profile) (\(source))"]
        lines.append("  threshold \(threshold); runs due within \(Int(saturating: coalescingTolerance)) s of a wake start in it; processing waits up to \(Int(saturating: wakeSharingWindow)) s for a wake already planned")
        lines.append("  policies, in the order `why` lists them (weight):")
        for name in PolicySet.names where profile.includes(name) {
            lines.append("    \(name) (\(weight(of: name)))")
        }
        if !profile.excludedPolicies.isEmpty {
            lines.append("  left out by the \(profile) profile: \(PolicySet.names.filter { !profile.includes($0) }.joined(separator: ", "))")
        }
        lines.append("  critical battery \(Int(saturating: criticalBatteryLevel * 100)) %; low power mode holds \(lowPowerModeBlocks.map(\.rawValue).joined(separator: ", "))")
        lines.append("  thermal: processing waits from \(thermalDefersProcessingAt), refresh from \(thermalDefersRefreshAt), running work expires from \(thermalExpiresAt)")
        lines.append("  processing needs an idle device: \(processingRequiresIdleDevice); CPU pressure limit \(Int(saturating: processingCPUPressureLimit * 100)) %")
        lines.append("  energy budget \(Int(saturating: energyBudgetPerAppPerDay)) J per app per day; launches of one app at least \(Int(saturating: minimumLaunchInterval)) s apart")
        lines.append("  herd spreading over \(Int(saturating: herdSpreadWindow)) s after a shared trigger (\(Int(saturating: herdSpreadWindowBeforeLaunch)) s for a refresh whose app is likely to be opened soon); starvation guard after \(Int(saturating: maximumDeferral / 3600)) h")
        lines.append("  see docs/policies.md for each policy's input and rationale")
        return lines.joined(separator: "\n") + "\n"
    }
}
