import Foundation
@testable import SchedulerCore
import Testing

private typealias F = EngineFixtures
private let t0 = F.t0

/// The policy profiles (docs/policies.md, "Profiles"): the server profile leaves out the
/// phone's rules that make no sense for a service, and gates processing by CPU pressure.
@Suite struct PolicyProfileTests {
    private func engine(_ conditions: Conditions = .favorable, profile: PolicyProfile) -> SchedulerEngine {
        F.engine(conditions: conditions, policies: PolicySet(profile: profile))
    }

    @Test func theServerProfileLeavesOutThePhonesRules() {
        let names = PolicySet.server.policies.map(\.name)
        #expect(names == PolicySet.names.filter { !["app-usage", "rate-limit", "device-in-use", "herd-spreading", "energy-budget"].contains($0) })
        #expect(names.contains("cpu-pressure") && names.contains("concurrency") && names.contains("throttle"))
        #expect(PolicySet().policies.map(\.name) == PolicySet.names, "the phone's profile is every policy")
        let server = PolicyProfile.server.defaults
        #expect(server.profile == .server)
        #expect(server.minimumLaunchInterval == 0 && server.herdSpreadWindow == 0 && server.coalescingTolerance == 0)
        #expect(server.processingRequiresIdleDevice == false)
    }

    @Test func underTheServerProfileProcessingRunsWhileInUseAndBackToBack() throws {
        let inUse = Conditions(externalPower: true, networkAvailable: true, deviceIdle: false)
        var server = engine(inUse, profile: .server)
        let first = try #require(try F.submit(F.processing(F.processingID(0)), to: &server, at: t0).launched.first)
        _ = server.handle(.taskCompleted(first.id, success: true), at: t0 + 1)
        // No per-app launch interval: the next one starts at once.
        #expect(try F.submit(F.processing(F.processingID(1)), to: &server, at: t0 + 2).launched.count == 1)
        // The phone's profile holds the same request for an idle device.
        var phone = engine(inUse, profile: .phone)
        #expect(try F.submit(F.processing(F.processingID(0)), to: &phone, at: t0).launched.isEmpty)
    }

    @Test func underTheServerProfileCPUPressureHoldsProcessing() throws {
        let busy = Conditions(externalPower: true, networkAvailable: true, cpuPressure: 0.9)
        var server = engine(busy, profile: .server)
        #expect(try F.submit(F.processing(), to: &server, at: t0).launched.isEmpty)
        let held = server.explain(F.key(F.syncID), at: t0).evaluation?.blocking.map(\.policy) ?? []
        #expect(held == ["cpu-pressure"], "\(held)")
        let calm = EngineEffectSummary(server.handle(.conditionsChanged(Conditions(externalPower: true, networkAvailable: true, cpuPressure: 0.1)), at: t0 + 60))
        #expect(calm.launched.count == 1)
    }

    @Test func whyListsOnlyTheProfilesPolicies() throws {
        let lowPower = Conditions(externalPower: false, networkAvailable: true, lowPowerMode: true)
        var server = engine(lowPower, profile: .server)
        _ = try F.submit(F.refresh(), to: &server, at: t0)
        let listed = server.explain(F.key(F.refreshID), at: t0).evaluation?.decisions.map(\.policy) ?? []
        #expect(listed.contains("low-power-mode"), "what the device forbids still holds")
        #expect(!listed.contains("app-usage") && !listed.contains("rate-limit") && !listed.contains("device-in-use"))
    }

    @Test func aNewConfigurationWithAnotherProfileChangesWhatJudges() throws {
        let inUse = Conditions(externalPower: true, networkAvailable: true, deviceIdle: false)
        var engine = engine(inUse, profile: .phone)
        #expect(try F.submit(F.processing(), to: &engine, at: t0).launched.isEmpty)
        let switched = EngineEffectSummary(engine.setPolicyConfiguration(PolicyProfile.server.defaults, at: t0 + 1))
        #expect(switched.launched.count == 1, "the device-in-use rule no longer judges")
    }

    @Test func aPolicyFileNamesItsProfileAndOverridesItsDefaults() throws {
        let plain = try PolicyConfiguration.parse(Data(#"{"profile": "server"}"#.utf8), source: "p.json")
        #expect(plain == PolicyProfile.server.defaults)
        let tuned = try PolicyConfiguration.parse(Data(#"{"minimumLaunchInterval": 30, "profile": "server"}"#.utf8), source: "p.json")
        #expect(tuned.profile == .server && tuned.minimumLaunchInterval == 30 && tuned.herdSpreadWindow == 0)
        #expect(try PolicyConfiguration.parse(Data(#"{"threshold": 0.5}"#.utf8), source: "p.json").profile == .phone)
        for bad in [#"{"profile": "desktop"}"#, #"{"profile": 1}"#, #"{"profile": null}"#] {
            #expect(throws: PolicyConfigurationError.self) { try PolicyConfiguration.parse(Data(bad.utf8), source: "p.json") }
            do {
                _ = try PolicyConfiguration.parse(Data(bad.utf8), source: "p.json")
            } catch {
                #expect(error.key == "profile" && error.message.contains("phone, server"), "\(error)")
            }
        }
        let summary = PolicyProfile.server.defaults.summary(source: "test")
        #expect(summary.contains("profile server") && summary.contains("left out by the server profile: device-in-use"), "\(summary)")
        #expect(!summary.contains("    app-usage ("))
    }
}
