import DeviceConditions
import Foundation
import Testing

@Suite struct LowPowerModeTests {
    func reader(_ machine: FakeMachine, stateDirectory: Bool = true) -> LowPowerModeReader {
        LowPowerModeReader(sysRoot: machine.roots.sys, varLibRoot: machine.roots.varLib, stateDirectory: stateDirectory ? machine.stateDirectory : nil)
    }

    static let powerSaver = "[State]\nDriver=intel_pstate\nProfile=power-saver\n"
    static let balanced = "[State]\nDriver=intel_pstate\nProfile=balanced\n"

    @Test func powerProfilesDaemonPowerSaverIsOn() throws {
        let machine = try FakeMachine()
        try machine.write("var/lib/power-profiles-daemon/state.ini", Self.powerSaver)
        let mode = reader(machine).read()
        #expect(mode.value == true)
        #expect(mode.source.contains("power-profiles-daemon \(machine.path("var/lib/power-profiles-daemon/state.ini")) Profile=power-saver"))
    }

    @Test func powerProfilesDaemonWinsOverThePlatformProfile() throws {
        let machine = try FakeMachine()
        try machine.write("var/lib/power-profiles-daemon/state.ini", Self.balanced)
        try machine.write("sys/firmware/acpi/platform_profile", "low-power")
        let mode = reader(machine).read()
        #expect(mode.value == false)
        #expect(mode.source.contains("Profile=balanced"))
    }

    @Test(arguments: [("low-power", true), ("balanced", false), ("performance", false)])
    func acpiPlatformProfile(profile: String, expected: Bool) throws {
        let machine = try FakeMachine()
        try machine.write("sys/firmware/acpi/platform_profile", profile)
        let mode = reader(machine).read()
        #expect(mode.value == expected)
        #expect(mode.source.contains(machine.path("sys/firmware/acpi/platform_profile")))
    }

    @Test func overrideOnWins() throws {
        let machine = try FakeMachine()
        try machine.write("var/lib/power-profiles-daemon/state.ini", Self.balanced)
        try machine.write("state/low-power-mode", "on")
        let mode = reader(machine).read()
        #expect(mode.value == true)
        #expect(mode.source.hasPrefix("override "))
    }

    @Test func overrideOffWinsOverPowerSaver() throws {
        let machine = try FakeMachine()
        try machine.write("var/lib/power-profiles-daemon/state.ini", Self.powerSaver)
        try machine.write("sys/firmware/acpi/platform_profile", "low-power")
        try machine.write("state/low-power-mode", "off")
        let mode = reader(machine).read()
        #expect(mode.value == false)
        #expect(mode.source.contains(machine.path("state/low-power-mode")))
    }

    @Test func overrideIsIgnoredWithoutAStateDirectory() throws {
        let machine = try FakeMachine()
        try machine.write("state/low-power-mode", "on")
        let mode = reader(machine, stateDirectory: false).read()
        #expect(mode.value == false)
        #expect(mode.isUnknown)
    }

    @Test func malformedOverrideFallsThroughToTheNextSource() throws {
        let machine = try FakeMachine()
        try machine.write("state/low-power-mode", "maybe")
        try machine.write("sys/firmware/acpi/platform_profile", "low-power")
        let mode = reader(machine).read()
        #expect(mode.value == true)
        #expect(mode.source.contains("platform_profile"))
    }

    @Test func noSourceIsOffAndUnknown() throws {
        let machine = try FakeMachine()
        try machine.write("state/low-power-mode", "maybe")
        let mode = reader(machine).read()
        #expect(mode.value == false)
        #expect(mode.source.hasPrefix("unknown: no override"))
        #expect(mode.source.contains("\"maybe\", not on or off"))
    }
}

@Suite struct DeviceIdleTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    func reader(_ machine: FakeMachine, threshold: TimeInterval = 300) -> DeviceIdleReader {
        DeviceIdleReader(runRoot: machine.roots.run, devRoot: machine.roots.dev, stateDirectory: machine.stateDirectory, threshold: threshold)
    }

    @Test func recentTerminalActivityMeansInUse() throws {
        let machine = try FakeMachine()
        try machine.touch("dev/tty1", at: Self.now.addingTimeInterval(-7200))
        try machine.touch("dev/pts/0", at: Self.now.addingTimeInterval(-60))
        let idle = reader(machine).read(now: Self.now)
        #expect(idle.value == false)
        #expect(idle.source.contains("\(machine.path("dev/pts/0")) active 1 min ago"))
    }

    @Test func terminalActivityOlderThanTheThresholdMeansIdle() throws {
        let machine = try FakeMachine()
        try machine.touch("dev/tty1", at: Self.now.addingTimeInterval(-7200))
        try machine.touch("dev/pts/0", at: Self.now.addingTimeInterval(-301))
        try machine.touch("dev/pts/ptmx", at: Self.now) // the multiplexer is not a terminal
        try machine.touch("dev/tty", at: Self.now) // nor is the controlling-terminal alias
        let idle = reader(machine).read(now: Self.now)
        #expect(idle.value == true)
        #expect(idle.source.contains("newest terminal activity \(machine.path("dev/pts/0")) 5 min ago"))
    }

    @Test func theThresholdIsInclusiveAndConfigurable() throws {
        let machine = try FakeMachine()
        try machine.touch("dev/pts/3", at: Self.now.addingTimeInterval(-600))
        #expect(reader(machine, threshold: 600).read(now: Self.now).value == false)
        #expect(reader(machine, threshold: 599).read(now: Self.now).value == true)
    }

    @Test func serverWithoutTerminalsOrSessionsIsIdle() throws {
        let machine = try FakeMachine()
        try machine.directory("dev")
        try machine.directory("run/systemd/sessions")
        let idle = reader(machine).read(now: Self.now)
        #expect(idle.value == true)
        #expect(idle.source.contains("no logind sessions and no terminals (a server)"))
    }

    @Test func anActiveGreeterMeansNobodyIsLoggedIn() throws {
        let machine = try FakeMachine()
        try machine.touch("dev/tty1", at: Self.now.addingTimeInterval(-10))
        try machine.write("run/systemd/sessions/c1", """
        # This is private data. Do not parse.
        UID=120
        USER=gdm
        ACTIVE=1
        IS_DISPLAY=0
        STATE=active
        REMOTE=0
        TYPE=wayland
        CLASS=greeter
        SEAT=seat0
        """)
        let idle = reader(machine).read(now: Self.now)
        #expect(idle.value == true)
        #expect(idle.source.contains("logind session c1 (greeter) is active on seat0"))
    }

    @Test func anActiveGraphicalSessionIsNotedButNotSeen() throws {
        let machine = try FakeMachine()
        try machine.touch("dev/tty2", at: Self.now.addingTimeInterval(-3600))
        try machine.write("run/systemd/sessions/2", "UID=1000\nACTIVE=1\nSTATE=active\nREMOTE=0\nTYPE=wayland\nCLASS=user\nSEAT=seat0\n")
        try machine.write("run/systemd/sessions/2.ref", "")
        let idle = reader(machine).read(now: Self.now)
        #expect(idle.value == true)
        #expect(idle.source.contains("logind session 2 (wayland) is active, but its idle and lock hints are on D-Bus only"))
    }

    @Test(arguments: [("in-use", false), ("idle", true)])
    func theOverrideWins(text: String, expected: Bool) throws {
        let machine = try FakeMachine()
        // Terminals say the opposite of the override.
        try machine.touch("dev/pts/0", at: Self.now.addingTimeInterval(expected ? -5 : -5000))
        try machine.write("state/device-idle", text)
        let idle = reader(machine).read(now: Self.now)
        #expect(idle.value == expected)
        #expect(idle.source.hasPrefix("override "))
    }

    @Test func classificationIsPure() {
        let terminal = TerminalActivity(path: "/dev/pts/1", lastActivity: Self.now.addingTimeInterval(-100))
        let inUse = DeviceIdleReader.classify(override: nil, sessions: [], terminals: [terminal], now: Self.now, threshold: 300)
        let later = DeviceIdleReader.classify(override: nil, sessions: [], terminals: [terminal], now: Self.now.addingTimeInterval(500), threshold: 300)
        #expect(inUse.value == false)
        #expect(later.value == true)
    }

    @Test func aTerminalStampedAheadOfTheClockIsPassedOver() {
        // An outside probe: a terminal touched in 2099 (the clock set back since) read as
        // "active 0 s ago" and held idle-only work until then.
        let ahead = TerminalActivity(path: "/dev/pts/0", lastActivity: Self.now.addingTimeInterval(86_400 * 365))
        let idle = DeviceIdleReader.classify(override: nil, sessions: [], terminals: [ahead], now: Self.now, threshold: 300)
        #expect(idle.value == true)
        #expect(idle.source.contains("1 terminal stamped ahead of the clock passed over (/dev/pts/0"), "\(idle.source)")
        // A few seconds ahead (clocks that disagree slightly) still counts.
        let slightly = TerminalActivity(path: "/dev/pts/1", lastActivity: Self.now.addingTimeInterval(5))
        #expect(DeviceIdleReader.classify(override: nil, sessions: [], terminals: [slightly, ahead], now: Self.now, threshold: 300).value == false)
    }
}

@Suite struct CPUPressureTests {
    func reader(_ machine: FakeMachine) -> CPUPressureReader {
        CPUPressureReader(procRoot: machine.roots.proc, sysRoot: machine.roots.sys)
    }

    @Test func pressureStallInformationIsUsedFirst() throws {
        let machine = try FakeMachine()
        try machine.write("proc/pressure/cpu", "some avg10=12.50 avg60=8.06 avg300=9.18 total=183392932\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0")
        try machine.write("proc/loadavg", "3.00 2.00 1.00 2/100 1234")
        try machine.write("sys/devices/system/cpu/online", "0-3")
        let pressure = reader(machine).read()
        #expect(pressure.value == 0.125)
        #expect(pressure.source.contains(machine.path("proc/pressure/cpu")))
    }

    @Test func loadAverageOverOnlineCPUsIsTheFallback() throws {
        let machine = try FakeMachine()
        try machine.write("proc/loadavg", "3.00 2.00 1.00 2/100 1234")
        try machine.write("sys/devices/system/cpu/online", "0-3")
        let pressure = reader(machine).read()
        #expect(pressure.value == 0.75)
        #expect(pressure.source.contains("3.00 / 4 CPUs"))
    }

    @Test func loadAboveTheCPUCountIsClampedToOne() throws {
        let machine = try FakeMachine()
        try machine.write("proc/loadavg", "8.00 2.00 1.00 2/100 1234")
        try machine.write("sys/devices/system/cpu/online", "0-1,4-5")
        let pressure = reader(machine).read()
        #expect(pressure.value == 1.0)
        #expect(pressure.source.contains("clamped to 1"))
    }

    @Test func cpuinfoCountsTheCPUsWithoutTheOnlineFile() throws {
        let machine = try FakeMachine()
        try machine.write("proc/loadavg", "1.00 2.00 1.00 2/100 1234")
        try machine.write("proc/cpuinfo", "processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\nmodel name\t: x\n")
        let pressure = reader(machine).read()
        #expect(pressure.value == 0.5)
        #expect(pressure.source.contains("cpuinfo"))
    }

    @Test func implausiblePressureFallsBackToTheLoadAverage() throws {
        let machine = try FakeMachine()
        try machine.write("proc/pressure/cpu", "some avg10=150.00 avg60=0 avg300=0 total=0")
        try machine.write("proc/loadavg", "1.00 2.00 1.00 2/100 1234")
        try machine.write("sys/devices/system/cpu/online", "0-3")
        let pressure = reader(machine).read()
        #expect(pressure.value == 0.25)
        #expect(pressure.source.contains("avg10=150.00 is outside 0...100"))
    }

    @Test(arguments: ["", "abc 1 2", "-1.0 0 0"])
    func nothingUsableIsUnknown(loadavg: String) throws {
        let machine = try FakeMachine()
        try machine.write("proc/loadavg", loadavg)
        try machine.write("sys/devices/system/cpu/online", "0-3")
        let pressure = reader(machine).read()
        #expect(pressure.value == nil)
        #expect(pressure.source.hasPrefix("unknown: "))
        #expect(pressure.source.contains("loadavg"))
    }

    @Test func uncountableCPUsLeaveTheLoadAverageUnknown() throws {
        let machine = try FakeMachine()
        try machine.write("proc/loadavg", "1.00 2.00 1.00 2/100 1234")
        try machine.write("sys/devices/system/cpu/online", "garbage")
        let pressure = reader(machine).read()
        #expect(pressure.value == nil)
        #expect(pressure.source.contains("cannot be counted"))
    }
}
