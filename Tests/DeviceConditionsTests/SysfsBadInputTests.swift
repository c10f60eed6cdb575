#if canImport(Glibc)
import Glibc
#endif
@testable import DeviceConditions
import Foundation
import SchedulerCore
import Testing

/// Absurd values, FIFOs and oversized files where the readers expect small sysfs and state
/// files: no crash, no hang, and the culprit named in the source.
/// A hang (a blocking open, a parser loop) fails the suite instead of stopping the run.
@Suite(.timeLimit(.minutes(1))) struct SysfsBadInputTests {
    @Test(arguments: [
        ("0-3", 4), ("0-3,6,8-11", 9), ("0", 1), ("0-65535", 65_536),
        ("0-99999999999999999999", nil), ("0-9223372036854775807", nil), ("5-2", nil), ("-", nil), ("", nil),
        ("0-65536", nil), ("+1", nil), ("0,,1", nil), ("1-", nil), ("0-3,2", nil), ("0-3,0-3", nil), ("-1", nil), ("0x3", nil),
    ] as [(String, Int?)])
    func cpuListsAreRangeChecked(text: String, count: Int?) {
        #expect(CPUPressureReader.countCPUList(text) == count, "\(text)")
    }

    @Test func anAbsurdOnlineFileFallsBackToCpuinfo() throws {
        let machine = try FakeMachine()
        try machine.write("proc/loadavg", "1.00 2.00 1.00 2/100 1234")
        try machine.write("sys/devices/system/cpu/online", "0-99999999999999999999")
        try machine.write("proc/cpuinfo", "processor\t: 0\n\nprocessor\t: 1\n")
        let pressure = CPUPressureReader(procRoot: machine.roots.proc, sysRoot: machine.roots.sys).read()
        #expect(pressure.value == 0.5)
        #expect(pressure.source.contains("cpuinfo"))
    }

    @Test(arguments: ["1e308 1 1 1/1 1", "99999999999999999999999999 0 0 1/1 1", "inf 0 0", "nan 0 0"])
    func absurdLoadAveragesNeverCrash(text: String) throws {
        let machine = try FakeMachine()
        try machine.write("proc/loadavg", text)
        try machine.write("sys/devices/system/cpu/online", "0-3")
        let pressure = CPUPressureReader(procRoot: machine.roots.proc, sysRoot: machine.roots.sys).read()
        if let value = pressure.value { #expect((0...1).contains(value)) }
    }

    @Test(arguments: ["99999999999999999999", "-5", "101", "1e2", "9223372036854775807"])
    func absurdBatteryCapacitiesAreUnknown(capacity: String) throws {
        let machine = try FakeMachine()
        try machine.battery(status: "Discharging", capacity: capacity, extra: ["energy_full": "99999999999999999999"])
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.batteryLevel.value == nil)
        #expect(power.batteryLevel.source.contains("capacity"))
    }

    @Test func aFIFOAsTheIdleOverrideIsNamedWithoutBlocking() throws {
        let machine = try FakeMachine()
        try machine.directory("state")
        #expect(mkfifo(machine.path("state/\(DeviceIdleReader.overrideFileName)"), 0o600) == 0)
        let reader = DeviceIdleReader(runRoot: machine.roots.run, devRoot: machine.roots.dev, stateDirectory: machine.stateDirectory)
        let verdict = reader.read(now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(verdict.source.contains("ignored \(machine.path("state/device-idle")): cannot be read (it is a FIFO (named pipe), not a regular file)"), "\(verdict.source)")
    }

    @Test func aFIFOAsTheLowPowerOverrideIsNamedWithoutBlocking() throws {
        let machine = try FakeMachine()
        try machine.directory("state")
        #expect(mkfifo(machine.path("state/\(LowPowerModeReader.overrideFileName)"), 0o600) == 0)
        let reading = machine.reader.reading(now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(reading.sources["lowPowerMode"]?.contains("FIFO") == true, "\(reading.sources)")
    }

    @Test func anOversizedValueIsRefusedNotTruncated() throws {
        let machine = try FakeMachine()
        try machine.write("sys/class/thermal/thermal_zone0/temp", String(repeating: "4", count: SysfsFile.valueLimit + 1))
        let thermal = ThermalReader(sysRoot: machine.roots.sys).read()
        #expect(thermal.source.contains("larger than 64 KiB"), "\(thermal.source)")
    }
}
