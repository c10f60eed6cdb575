@testable import DeviceConditions
import Foundation
import SchedulerCore
import Testing

@Suite struct PowerSupplyTests {
    @Test func laptopOnBatteryReportsLevelAndDischarging() throws {
        let machine = try FakeMachine()
        try machine.mains(online: false)
        try machine.battery(status: "Discharging", capacity: "57")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == false)
        #expect(power.externalPower.source.contains(machine.path("sys/class/power_supply/AC/online")))
        #expect(power.batteryLevel.value == 0.57)
        #expect(power.batteryLevel.source == machine.path("sys/class/power_supply/BAT0/capacity"))
        #expect(power.batteryState.value == .discharging)
    }

    @Test func laptopChargingIsOnExternalPower() throws {
        let machine = try FakeMachine()
        try machine.mains(online: true)
        try machine.battery(status: "Charging", capacity: "40")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == true)
        #expect(power.externalPower.source.contains("AC/online is 1"))
        #expect(power.batteryLevel.value == 0.4)
        #expect(power.batteryState.value == .charging)
    }

    @Test(arguments: ["Full", "Not charging"])
    func laptopFullOrHeldIsFull(status: String) throws {
        let machine = try FakeMachine()
        try machine.mains(online: true)
        try machine.battery(status: status, capacity: "100")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == true)
        #expect(power.batteryLevel.value == 1.0)
        #expect(power.batteryState.value == .full)
    }

    @Test func batteryStatusAloneSaysPluggedInWithoutAMainsSupply() throws {
        let machine = try FakeMachine()
        try machine.battery(status: "Charging", capacity: "80")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == true)
        #expect(power.externalPower.source.contains("BAT0/status is \"Charging\""))
    }

    @Test func usbCSupplyOnlineIsExternalPower() throws {
        let machine = try FakeMachine()
        try machine.supply("ucsi-source-psy-USBC000:001", ["type": "USB", "online": "1"])
        try machine.battery(status: "Discharging", capacity: "30")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == true)
        #expect(power.externalPower.source.contains("USBC000:001/online is 1"))
        #expect(power.batteryState.value == .discharging)
    }

    @Test func desktopWithAWirelessMouseHasNoSystemBattery() throws {
        let machine = try FakeMachine()
        try machine.supply("hidpp_battery_0", ["type": "Battery", "scope": "Device", "status": "Discharging", "capacity": "30"])
        let reading = machine.reader.reading(now: Date(timeIntervalSince1970: 1_000_000))
        #expect(reading.externalPower == true)
        #expect(reading.batteryLevel == nil)
        #expect(reading.batteryState == .noBattery)
        #expect(reading.sources["batteryLevel"]?.contains("no system battery") == true)
        #expect(reading.sources["externalPower"]?.contains("hidpp_battery_0 (scope Device)") == true)
    }

    @Test func serverWithoutPowerSupplyDirectoryIsOnExternalPower() throws {
        let machine = try FakeMachine()
        try machine.directory("sys/class")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == true)
        #expect(power.batteryLevel.value == nil)
        #expect(power.batteryState.value == .noBattery)
        #expect(power.batteryLevel.source.contains("no system battery under \(machine.path("sys/class/power_supply"))"))
    }

    @Test(arguments: [
        ("250", "is \"250\", outside 0...100"),
        ("-1", "is \"-1\", outside 0...100"),
        ("abc", "is \"abc\", not a number"),
        ("", "is empty"),
    ])
    func malformedCapacityIsUnknownWithTheFileNamed(capacity: String, expected: String) throws {
        let machine = try FakeMachine()
        try machine.mains(online: false)
        // capacity_level is present and sound: it must not be used to make up a level.
        try machine.battery(status: "Discharging", capacity: capacity, extra: ["capacity_level": "Normal"])
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.batteryLevel.value == nil)
        #expect(power.batteryLevel.isUnknown)
        #expect(power.batteryLevel.source.contains(machine.path("sys/class/power_supply/BAT0/capacity") + " " + expected))
        #expect(power.batteryState.value == .discharging)
    }

    @Test func capacityLevelIsTheFallbackOnlyWhenCapacityIsMissing() throws {
        let machine = try FakeMachine()
        try machine.battery(status: "Discharging", capacity: nil, extra: ["capacity_level": "Low"])
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.batteryLevel.value == 0.15)
        #expect(power.batteryLevel.source.contains("capacity_level is \"Low\" (approximate"))
    }

    @Test func unknownCapacityLevelIsUnknown() throws {
        let machine = try FakeMachine()
        try machine.battery(status: "Discharging", capacity: nil, extra: ["capacity_level": "Unknown"])
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.batteryLevel.value == nil)
        #expect(power.batteryLevel.source.hasPrefix("unknown: "))
    }

    @Test func unknownStatusWithoutMainsIsAssumedOnBattery() throws {
        let machine = try FakeMachine()
        try machine.battery(status: "Unknown", capacity: "50")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == false)
        #expect(power.externalPower.isUnknown)
        #expect(power.batteryState.value == .unknown)
        #expect(power.batteryState.source.contains("BAT0/status is \"Unknown\""))
    }

    @Test func twoBatteriesAreWeightedByTheirFullCharge() throws {
        let machine = try FakeMachine()
        try machine.mains(online: false)
        try machine.battery("BAT0", status: "Discharging", capacity: "50", extra: ["energy_full": "20000000"])
        try machine.battery("BAT1", status: "Full", capacity: "100", extra: ["energy_full": "60000000"])
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        let level = try #require(power.batteryLevel.value)
        #expect(abs(level - 0.875) < 1e-9)
        #expect(power.batteryState.value == .discharging)
    }

    @Test func aDischargingBatteryOutweighsAnIdleFullOne() throws {
        // An outside probe: with no mains supply listed, BAT1 full (or not charging) beside
        // BAT0 discharging read as external power, which is the machine on battery.
        for idle in ["Full", "Not charging"] {
            let machine = try FakeMachine()
            try machine.battery("BAT0", status: "Discharging", capacity: "50")
            try machine.battery("BAT1", status: idle, capacity: "100")
            let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
            #expect(power.externalPower.value == false, "\(idle): \(power.externalPower.source)")
            #expect(power.externalPower.source.contains("BAT0/status is \"Discharging\""))
            #expect(power.batteryState.value == .discharging)
        }
    }

    @Test func suppliesThatCannotBeListedAreUnknownNotADesktop() throws {
        // An outside probe: a power_supply directory in a link loop read as "no system
        // battery (treated as external power)", a confident desktop.
        let machine = try FakeMachine()
        let directory = machine.path("sys/class/power_supply")
        try FileManager.default.createDirectory(atPath: (directory as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory, withDestinationPath: directory)
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.externalPower.value == false)
        #expect(power.externalPower.source.hasPrefix("unknown: \(directory) cannot be listed: it is a symbolic link loop"), "\(power.externalPower.source)")
        #expect(power.batteryState.value == .unknown)
        // A supply whose type cannot be read may be the battery: the desktop reading is a guess.
        let other = try FakeMachine()
        try other.supply("BAT0", ["type": "", "status": "Discharging"])
        let guessed = PowerSupplyReader(sysRoot: other.roots.sys).read()
        #expect(guessed.externalPower.source.hasPrefix("unknown: no system battery"), "\(guessed.externalPower.source)")
    }

    @Test func oneUnreadableBatteryMakesTheCombinedLevelUnknown() throws {
        let machine = try FakeMachine()
        try machine.battery("BAT0", status: "Discharging", capacity: "50")
        try machine.battery("BAT1", status: "Discharging", capacity: "abc")
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.batteryLevel.value == nil)
        #expect(power.batteryLevel.source.contains("BAT1/capacity"))
    }

    @Test func anEmptyBatteryBayIsIgnored() throws {
        let machine = try FakeMachine()
        try machine.battery("BAT0", status: "Discharging", capacity: "64")
        try machine.supply("BAT1", ["type": "Battery", "present": "0", "status": "Unknown"])
        let power = PowerSupplyReader(sysRoot: machine.roots.sys).read()
        #expect(power.batteryLevel.value == 0.64)
        #expect(power.batteryState.value == .discharging)
    }
}
