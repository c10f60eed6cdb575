#if canImport(Glibc)
import Glibc
#endif
import DeviceConditions
import Foundation
import SchedulerCore
import Testing

/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct ThermalTests {
    static let trips = [("active", 60), ("active", 70), ("passive", 95), ("hot", 100), ("critical", 105)]

    /// Apple's meanings: serious ("performance is reduced") from the passive trip, where the
    /// kernel throttles; critical from the hot trip; fair from the highest active trip (70,
    /// below 95 - 10) ; nominal below.
    @Test(arguments: [
        (50_000, ThermalState.nominal), (69_999, .nominal), (70_000, .fair), (94_999, .fair),
        (95_000, .serious), (99_999, .serious), (100_000, .critical), (120_000, .critical),
    ])
    func zoneWithTripsClassifiesByItsTrips(millidegrees: Int, expected: ThermalState) throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: String(millidegrees), trips: Self.trips)
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == expected)
        #expect(thermal.source.contains("thermal_zone0 (x86_pkg_temp)"))
    }

    @Test func servingAtThePassiveTripSaysTheKernelThrottles() throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: "96000", trips: [("passive", 95), ("critical", 105)])
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .serious)
        #expect(thermal.source.contains(">= 95.0 C, the passive trip: the kernel throttles"), "\(thermal.source)")
    }

    @Test(arguments: [(84_999, ThermalState.nominal), (85_000, .fair), (94_999, .fair), (95_000, .serious)])
    func withoutActiveTripsFairStartsTenDegreesBelowPassive(millidegrees: Int, expected: ThermalState) throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: String(millidegrees), trips: [("passive", 95), ("critical", 105)])
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == expected)
        if expected == .fair { #expect(thermal.source.contains("10.0 C below the passive trip 95.0 C")) }
    }

    @Test func aMissingTripFallsBackToItsAbsoluteThreshold() throws {
        let machine = try FakeMachine()
        // Only a critical trip: serious comes from the absolute 85 C (no passive trip), critical from the trip.
        try machine.thermalZone(0, millidegrees: "100000", type: "acpitz", trips: [("critical", 110)])
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .serious)
        #expect(thermal.source.contains("absolute threshold (no passive trip)"))
        let cool = try FakeMachine()
        try cool.thermalZone(0, millidegrees: "60000", type: "acpitz", trips: [("critical", 110)])
        let nominal = ThermalReader(sysRoot: cool.roots.sys).read()
        #expect(nominal.value == .nominal)
        #expect(nominal.source.contains("below 70.0 C, the absolute threshold (no active or passive trip)"))
        let hot = try FakeMachine()
        try hot.thermalZone(0, millidegrees: "110000", type: "acpitz", trips: [("critical", 110)])
        #expect(ThermalReader(sysRoot: hot.roots.sys).read().value == .critical)
    }

    @Test(arguments: [
        (49_999, ThermalState.nominal), (50_000, .fair), (84_999, .fair), (85_000, .serious), (100_000, .critical),
    ])
    func anActiveTripOnlyMovesFair(millidegrees: Int, expected: ThermalState) throws {
        let machine = try FakeMachine()
        // Fans at 50 C: fair from there; serious and critical from the absolute thresholds.
        try machine.thermalZone(0, millidegrees: String(millidegrees), trips: [("active", 50)])
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == expected)
    }

    @Test(arguments: [
        (60_000, ThermalState.nominal), (69_999, .nominal), (70_000, .fair), (85_000, .serious), (100_000, .critical),
    ])
    func zoneWithoutTripsUsesAbsoluteThresholds(millidegrees: Int, expected: ThermalState) throws {
        let machine = try FakeMachine()
        try machine.thermalZone(0, millidegrees: String(millidegrees))
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == expected)
        #expect(thermal.source.contains("absolute threshold"))
    }

    @Test(arguments: ["99999999999999999999", "-99999999999999999999", "9223372036854775807", "1e9", "NaN", "inf", "0x10"])
    func absurdTemperaturesNeverCrashAndAreIgnored(text: String) throws {
        let machine = try FakeMachine()
        try machine.write("sys/class/thermal/thermal_zone0/temp", text)
        try machine.write("sys/class/thermal/thermal_zone0/trip_point_0_type", "passive")
        try machine.write("sys/class/thermal/thermal_zone0/trip_point_0_temp", text)
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .nominal)
    }

    @Test func aFIFOAsATemperatureIsNamedWithoutBlocking() throws {
        let machine = try FakeMachine()
        try machine.directory("sys/class/thermal/thermal_zone0")
        #expect(mkfifo(machine.path("sys/class/thermal/thermal_zone0/temp"), 0o600) == 0)
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.value == .nominal)
        #expect(thermal.source.contains("thermal_zone0/temp cannot be read (it is a FIFO (named pipe), not a regular file)"), "\(thermal.source)")
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
        #expect(ThermalZoneReading(name: "z", celsius: 91, trips: [.passive: 90]).classify().state == .serious)
        #expect(ThermalZoneReading(name: "z", celsius: 81, trips: [.passive: 90]).classify().state == .fair)
        #expect(ThermalZoneReading(name: "z", celsius: 79, trips: [.passive: 90]).classify().state == .nominal)
        #expect(ThermalZoneReading(name: "z", celsius: 91).classify().state == .serious)
    }
}
