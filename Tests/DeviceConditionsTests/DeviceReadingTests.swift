import DeviceConditions
import Foundation
import SchedulerCore
import Testing

@Suite struct DeviceReadingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A laptop on battery, hot, in power-saver, with a recent terminal and loaded CPUs.
    func laptop() throws -> FakeMachine {
        let machine = try FakeMachine()
        try machine.mains(online: false)
        try machine.battery(status: "Discharging", capacity: "18")
        try machine.write("var/lib/power-profiles-daemon/state.ini", "[State]\nProfile=power-saver\n")
        // Within 10 C below the passive trip: fair (at the trip it would be serious).
        try machine.thermalZone(0, millidegrees: "82000", trips: [("passive", 90), ("critical", 105)])
        try machine.wiredNetwork()
        try machine.touch("dev/pts/0", at: Self.now.addingTimeInterval(-10))
        try machine.write("proc/pressure/cpu", "some avg10=40.00 avg60=0 avg300=0 total=0")
        return machine
    }

    @Test func aLaptopReadingMapsEveryValueIntoConditions() throws {
        let machine = try laptop()
        let reading = machine.reader.reading(now: Self.now)
        let conditions = reading.conditions
        #expect(conditions.externalPower == false)
        #expect(conditions.batteryLevel == 0.18)
        #expect(conditions.batteryState == .discharging)
        #expect(conditions.lowPowerMode == true)
        #expect(conditions.thermalState == .fair)
        #expect(conditions.networkAvailable == true)
        #expect(conditions.networkMetered == nil)
        #expect(conditions.deviceIdle == false)
        #expect(conditions.cpuPressure == 0.4)
        #expect(Set(reading.sources.keys) == Set(DeviceReading.fieldNames))
    }

    /// What ProcessInfo asks (Low Power Mode, the thermal state) and UIDevice asks (the
    /// battery) read alone give what the whole reading gives (an outside probe: each
    /// `ProcessInfo.thermalState` read every condition, 1.2 ms).
    @Test func thePartsAppsAskForAloneReadAsTheWholeDoes() throws {
        let machine = try laptop()
        let power = machine.reader.readPower()
        #expect(power.lowPowerMode == true && power.thermalState == .fair)
        let battery = machine.reader.readBattery()
        #expect(battery.level == 0.18 && battery.state == .discharging)
        let fixed = FixedConditions(Conditions(externalPower: true, networkAvailable: true, lowPowerMode: true, thermalState: .serious))
        #expect(fixed.readPower().lowPowerMode == true && fixed.readPower().thermalState == .serious)
    }

    @Test func jsonHasExactlyTheDocumentedKeysWithNulls() throws {
        let machine = try FakeMachine()
        // A server: no battery (level null), no NetworkManager (metered null), no loadavg
        // (CPU pressure null).
        try machine.directory("sys/class")
        let reading = machine.reader.reading(now: Self.now)
        let data = Data(try reading.jsonString().utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == [
            "externalPower", "batteryLevel", "batteryState", "lowPowerMode", "thermalState",
            "networkAvailable", "networkMetered", "deviceIdle", "cpuPressure", "sources",
        ])
        #expect(object["externalPower"] as? Bool == true)
        #expect(object["batteryLevel"] is NSNull)
        #expect(object["networkMetered"] is NSNull)
        #expect(object["cpuPressure"] is NSNull)
        #expect(object["batteryState"] as? String == "no-battery")
        #expect(object["thermalState"] as? String == "nominal")
        let sources = try #require(object["sources"] as? [String: String])
        #expect(Set(sources.keys) == Set(DeviceReading.fieldNames))
    }

    @Test func jsonCarriesValuesAndRoundTrips() throws {
        let machine = try laptop()
        let reading = machine.reader.reading(now: Self.now)
        let text = try reading.jsonString()
        #expect(text.contains("\"thermalState\" : \"fair\""))
        #expect(text.contains("\"batteryLevel\" : 0.18"))
        let decoded = try JSONDecoder().decode(DeviceReading.self, from: Data(text.utf8))
        #expect(decoded == reading)
    }

    @Test func tablePrintsValueAndSourcePerLine() throws {
        let machine = try laptop()
        let table = machine.reader.reading(now: Self.now).table()
        let lines = table.split(separator: "\n")
        #expect(lines.count == 1 + DeviceReading.fieldNames.count)
        let battery = try #require(lines.first { $0.hasPrefix("batteryLevel") })
        #expect(battery.contains("0.18"))
        #expect(battery.contains(machine.path("sys/class/power_supply/BAT0/capacity")))
        #expect(lines.contains { $0.hasPrefix("thermalState") && $0.contains("fair") })
    }

    @Test func refreshTouchesOnlyTheRequestedParts() throws {
        let machine = try laptop()
        let reader = machine.reader
        var reading = reader.reading(now: Self.now)
        try machine.mains(online: true)
        try machine.thermalZone(0, millidegrees: "30000", trips: [("passive", 80), ("critical", 105)])
        reader.refresh(&reading, parts: .power, now: Self.now)
        #expect(reading.externalPower == true)
        #expect(reading.thermalState == .fair) // not re-read
        reader.refresh(&reading, parts: .thermal, now: Self.now)
        #expect(reading.thermalState == .nominal)
    }

    @Test func rootsComeFromTheEnvironment() {
        let roots = DeviceRoots(environment: ["BGTASK_SYS_ROOT": "/x/sys", "BGTASK_PROC_ROOT": "/x/proc", "BGTASK_RUN_ROOT": "", "BGTASK_DEV_ROOT": "/x/dev"])
        #expect(roots.sys.path == "/x/sys")
        #expect(roots.proc.path == "/x/proc")
        #expect(roots.run.path == "/run")
        #expect(roots.dev.path == "/x/dev")
        #expect(roots.varLib.path == "/var/lib")
        let reader = LinuxConditionsReader(environment: ["BGTASK_SYS_ROOT": "/y"])
        #expect(reader.roots.sys.path == "/y")
        #expect(reader.stateDirectory == nil)
    }

    @Test func theRealMachineCanBeReadWithoutCrashing() {
        // Whatever this machine is, every field gets a source.
        let reading = LinuxConditionsReader(roots: .system, environment: [:]).reading(now: Date())
        #expect(Set(reading.sources.keys) == Set(DeviceReading.fieldNames))
        if let level = reading.batteryLevel { #expect((0...1).contains(level)) }
        if let pressure = reading.cpuPressure { #expect((0...1).contains(pressure)) }
    }
}
