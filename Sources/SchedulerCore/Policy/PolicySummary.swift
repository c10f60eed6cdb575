import Foundation

extension PolicyConfiguration {
    /// The configuration in words, as `bgtask policy` prints it (the same text whether
    /// bgtaskd answers or the tool reads a file); `source` says where it came from
    /// ("defaults", a file path, "bgtaskd (pid 12): /etc/bgtask/policy.json").
    public func summary(source: String) -> String {
        // Numbers as set, never rounded away (a starvation guard of 10 s is not "0 h").
        func shown(_ value: Double) -> String { String(format: "%.10g", value) }
        let guardText = maximumDeferral.truncatingRemainder(dividingBy: 3600) == 0 ? "\(shown(maximumDeferral / 3600)) h" : "\(shown(maximumDeferral)) s"
        var lines = ["policy configuration version \(version), profile \(profile) (\(source))"]
        lines.append("  threshold \(threshold); runs due within \(shown(coalescingTolerance)) s of a wake start in it; processing waits up to \(shown(wakeSharingWindow)) s for a wake already planned")
        lines.append("  policies, in the order `why` lists them (weight):")
        for name in PolicySet.names where profile.includes(name) {
            lines.append("    \(name) (\(weight(of: name)))")
        }
        if !profile.excludedPolicies.isEmpty {
            lines.append("  left out by the \(profile) profile: \(PolicySet.names.filter { !profile.includes($0) }.joined(separator: ", "))")
        }
        lines.append("  critical battery \(shown(criticalBatteryLevel * 100)) %; low power mode holds \(lowPowerModeBlocks.map(\.rawValue).joined(separator: ", "))")
        lines.append("  thermal: processing waits from \(thermalDefersProcessingAt), refresh from \(thermalDefersRefreshAt), running work expires from \(thermalExpiresAt)")
        lines.append("  processing needs an idle device: \(processingRequiresIdleDevice); CPU pressure limit \(shown(processingCPUPressureLimit * 100)) %")
        lines.append("  energy budget \(shown(energyBudgetPerAppPerDay)) J per app per day; launches of one app at least \(shown(minimumLaunchInterval)) s apart")
        lines.append("  herd spreading over \(shown(herdSpreadWindow)) s after a shared trigger (\(shown(herdSpreadWindowBeforeLaunch)) s for a refresh whose app is likely to be opened soon); starvation guard after \(guardText)")
        lines.append("  see docs/policies.md for each policy's input and rationale")
        return lines.joined(separator: "\n") + "\n"
    }
}
