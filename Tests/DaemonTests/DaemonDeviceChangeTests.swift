#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// The device's change notifications reach an app under bgtaskd (docs/porting.md, the
/// device's rows): the daemon's scheduler sees the device change and tells the connected
/// app (`AppPush.deviceConditions`), which posts `UIDevice`'s and `ProcessInfo`'s
/// notifications. The machine is a fake sysfs tree both processes read.
extension DaemonProcessTests {
    @Suite struct DeviceChanges {
        static let app = "com.example.careful"
        static let refresh = "com.example.careful.refresh"

        /// Writes the fake battery: `capacity` percent, `status` as sysfs says it.
        static func battery(in sys: String, capacity: Int, status: String) throws {
            let directory = sys + "/class/power_supply/BAT0"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (file, value) in ["type": "Battery", "present": "1", "scope": "System", "status": status, "capacity": "\(capacity)"] {
                try Data((value + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/" + file))
            }
        }

        @Test("a change bgtaskd's scheduler sees is posted by the app the user has open, with what UIDevice reads then; the same reading again posts nothing")
        func aChangeTheDaemonSeesIsPostedByTheApp() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let sys = harness.root + "/machine/sys"
            try Self.battery(in: sys, capacity: 80, status: "Discharging")
            let environment = harness.environment.merging(["BGTASK_SYS_ROOT": sys]) { $1 }
            try await harness.startDaemon(environment: environment)
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh], arguments: [])
            let process = try harness.spawn(harness.testApp, ["--events", harness.eventsPath(Self.app), "--device-changes", "--register", Self.refresh],
                                            environment: harness.handEnvironment(Self.app).merging(["BGTASK_SYS_ROOT": sys]) { $1 }, name: "careful")
            defer { process.signal(SIGKILL) }
            #expect(await harness.waitForEvent(Self.app, "finished-launching") != nil, "\(harness.events(Self.app)); \(process.standardError)")
            #expect(harness.events(Self.app).contains("launched \(process.pid) daemon"), "\(harness.events(Self.app))")
            // The daemon heard the launch (and told the app how the device is) before the
            // device changes: otherwise the change would be the app's starting point.
            #expect(try await harness.poll(timeout: .seconds(10)) { try await harness.appState(Self.app) == "ready" })

            // The battery drops a percent; `bgtask conditions` makes the daemon read it now
            // (its own look comes every 30 s, and only while work depends on the device).
            try Self.battery(in: sys, capacity: 79, status: "Discharging")
            #expect(try await harness.bgtask("conditions").status == 0)
            let level = await harness.waitForEvent(Self.app, "device-change UIDeviceBatteryLevelDidChangeNotification")
            #expect(level == "device-change UIDeviceBatteryLevelDidChangeNotification battery=79 state=1 lowPower=false thermal=0",
                    "\(harness.events(Self.app)); \(process.standardError)")

            // Plugged in: charging (state 2) at 80 %.
            try Self.battery(in: sys, capacity: 80, status: "Charging")
            #expect(try await harness.bgtask("conditions").status == 0)
            #expect(await harness.waitForEvent(Self.app, "device-change UIDeviceBatteryStateDidChangeNotification battery=80 state=2") != nil,
                    "\(harness.events(Self.app)); \(process.standardError)")
            #expect(await harness.poll(timeout: .seconds(10)) { harness.events(Self.app).filter { $0.hasPrefix("device-change") }.count == 3 })

            // Nothing changed: nothing is posted (the app's first word from the daemon after
            // its launch was not a change either).
            #expect(try await harness.bgtask("conditions").status == 0)
            // A further change, so the test knows the one before was handled (no sleeping).
            try Self.battery(in: sys, capacity: 81, status: "Charging")
            #expect(try await harness.bgtask("conditions").status == 0)
            #expect(await harness.waitForEvent(Self.app, "device-change UIDeviceBatteryLevelDidChangeNotification battery=81") != nil)
            let changes = harness.events(Self.app).filter { $0.hasPrefix("device-change") }
            #expect(changes == [
                "device-change UIDeviceBatteryLevelDidChangeNotification battery=79 state=1 lowPower=false thermal=0",
                "device-change UIDeviceBatteryStateDidChangeNotification battery=80 state=2 lowPower=false thermal=0",
                "device-change UIDeviceBatteryLevelDidChangeNotification battery=80 state=2 lowPower=false thermal=0",
                "device-change UIDeviceBatteryLevelDidChangeNotification battery=81 state=2 lowPower=false thermal=0",
            ], "\(changes)")
        }

        @Test("a process bgtaskd froze hears of a change made meanwhile when it is thawed for its next run, once")
        func aFrozenProcessHearsTheChangeWhenThawed() async throws {
            let harness = try DaemonHarness()
            defer { harness.cleanUp() }
            let sys = harness.root + "/machine/sys"
            try Self.battery(in: sys, capacity: 80, status: "Discharging")
            try await harness.startDaemon(environment: harness.environment.merging(["BGTASK_SYS_ROOT": sys]) { $1 })
            let cleanup = Self.app + ".cleanup"
            // Launched by the daemon for the refresh, the app submits its clean-up (run later).
            try await harness.installTestApp(Self.app, identifiers: [Self.refresh, cleanup],
                                             arguments: ["--device-changes", "--register", Self.refresh, "--register", cleanup, "--submit-processing", cleanup])
            try await Launching.submitByHand(harness, app: Self.app, identifier: Self.refresh)
            #expect(try await harness.bgtask("run", Self.app, Self.refresh).status == 0)
            #expect(await harness.waitForEvent(Self.app, "completed \(Self.refresh) true") != nil, "\(harness.events(Self.app))")
            #expect(await harness.waitForEvent(Self.app, "submitted \(cleanup)") != nil, "\(harness.events(Self.app))")
            #expect(try await harness.poll(timeout: .seconds(5)) { try await harness.appState(Self.app) == "suspended" })

            // Two changes while it is frozen: only the latest reaches it, after the thaw.
            try Self.battery(in: sys, capacity: 79, status: "Discharging")
            #expect(try await harness.bgtask("conditions").status == 0)
            try Self.battery(in: sys, capacity: 78, status: "Discharging")
            #expect(try await harness.bgtask("conditions").status == 0)
            #expect(try await harness.bgtask("run", Self.app, cleanup).status == 0)
            #expect(await harness.waitForEvent(Self.app, "completed \(cleanup) true") != nil, "\(harness.events(Self.app))")
            // Its own reading is the machine's (a process bgtaskd starts is given no fake
            // tree): what is checked is the notifications. The user opens it (it is not
            // frozen again) and plugs the device in: heard at once, and by then whatever
            // the thaw brought has been heard.
            #expect(try await harness.bgtask("open", Self.app).status == 0)
            try Self.battery(in: sys, capacity: 78, status: "Charging")
            #expect(try await harness.bgtask("conditions").status == 0)
            #expect(await harness.waitForEvent(Self.app, "device-change UIDeviceBatteryStateDidChangeNotification") != nil, "\(harness.events(Self.app))")
            let changes = harness.events(Self.app).filter { $0.hasPrefix("device-change") }.map { $0.split(separator: " ")[1] }
            #expect(changes == ["UIDeviceBatteryLevelDidChangeNotification", "UIDeviceBatteryStateDidChangeNotification"],
                    "the latest level once after the thaw (not 79 then 78), then the state: \(changes)")
        }
    }
}
