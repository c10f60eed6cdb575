import DeviceConditions
import Foundation
import SchedulerCore
import Testing

@Suite struct ThermalTests {
    static let trips = [("active", 60), ("passive", 80), ("hot", 95), ("critical", 105)]

    @Test(arguments: [
        (50_000, ThermalState.nominal), (79_999, .nominal), (80_000, .fair), (94_000, .fair),
        (95_000, .serious), (104_999, .serious), (105_000, .critical), (120_000, .critical),
    ])
    func zoneWithTripsClassifiesByItsTrips(millidegrees: Int, expected: ThermalState) throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: String(millidegrees), trips: Self.trips)
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == expected)
        #expect(thermal.source.contains("thermal_zone0 (x86_pkg_temp)"))
    }

    @Test func zoneWithOnlyACriticalTripUsesWhatItHas() throws {
        let machine = try FakeMachine()
        // 100 C would be critical by the absolute thresholds; the zone's own trip says 110.
        try machine.thermalZone(0, millidegrees: "100000", type: "acpitz", trips: [("critical", 110)])
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .nominal)
        #expect(thermal.source.contains("below its trips (critical 110.0 C)"))
    }

    @Test(arguments: [
        (60_000, ThermalState.nominal), (69_999, .nominal), (70_000, .fair), (85_000, .serious), (100_000, .critical),
    ])
    func zoneWithoutTripsUsesAbsoluteThresholds(millidegrees: Int, expected: ThermalState) throws {
        let machine = try FakeMachine()
        // An active (fan) trip is not a throttling limit: the absolute thresholds still apply.
        try machine.thermalZone(0, millidegrees: String(millidegrees), trips: [("active", 50)])
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == expected)
        #expect(thermal.source.contains("absolute threshold"))
    }

    @Test func theHottestZoneDecides() throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: "50000", type: "acpitz", trips: [("critical", 105)])
        try machine.thermalZone(1, millidegrees: "90000", type: "nvme")
        try machine.thermalZone(2, millidegrees: "40000", type: "iwlwifi")
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .serious)
        #expect(thermal.source.contains("thermal_zone1 (nvme) at 90.0 C"))
    }

    @Test func aZoneAtAbsoluteZeroIsIgnoredAndNamed() throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: "-273000")
        try machine.thermalZone(1, millidegrees: "45000")
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .nominal)
        #expect(!thermal.isUnknown)
        #expect(thermal.source.contains("ignored: \(machine.path("sys/class/thermal/thermal_zone0/temp")) is \"-273000\""))
    }

    @Test(arguments: ["250000", "-273000", "abc", ""])
    func onlyAbsurdZonesGiveNominalUnknown(millidegrees: String) throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: millidegrees)
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        // 250 C would be critical if it were believed.
        #expect(thermal.value == .nominal)
        #expect(thermal.source.hasPrefix("unknown: no usable thermal zone"))
        #expect(thermal.source.contains("thermal_zone0/temp"))
    }

    @Test func noThermalZonesAtAllIsNominalUnknown() throws {
        let machine = try FakeMachine()
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .nominal)
        #expect(thermal.source.hasPrefix("unknown: no thermal zones"))
    }

    @Test func placeholderTripsAreIgnored() throws {
        let machine = try FakeMachine()
        let zone = "sys/class/thermal/thermal_zone0"
        try machine.write("\(zone)/temp", "72000")
        try machine.write("\(zone)/trip_point_0_type", "passive")
        try machine.write("\(zone)/trip_point_0_temp", "-2147483648")
        // The only trip is a placeholder, so the absolute thresholds apply: 72 C is fair.
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .fair)
        #expect(thermal.source.contains("absolute threshold"))
    }

    @Test func classifyIsPure() {
        let zone = ThermalZoneReading(name: "z", celsius: 91, trips: [.passive: 90])
        #expect(zone.classify().state == .fair)
        #expect(ThermalZoneReading(name: "z", celsius: 91).classify().state == .serious)
    }
}
