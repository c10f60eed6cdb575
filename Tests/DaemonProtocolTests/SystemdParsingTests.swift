import DaemonProtocol
import Foundation
import Testing

/// docs/protocol.md, "Socket activation and notify": the variables, read from an
/// environment given explicitly.
@Suite struct SystemdParsingTests {
    @Test func noVariablesIsNotActivated() throws {
        #expect(try SystemdActivation.announcement(environment: [:], pid: 10) == SystemdActivation.Announcement.none)
        #expect(try SystemdActivation.listeningSockets(environment: ["HOME": "/h"], pid: 10).isEmpty)
    }

    @Test func variablesOfAnotherProcessAreIgnored() throws {
        let environment = ["LISTEN_PID": "99", "LISTEN_FDS": "2"]
        #expect(try SystemdActivation.announcement(environment: environment, pid: 10) == .otherProcess(pid: 99))
        #expect(try SystemdActivation.listeningSockets(environment: environment, pid: 10).isEmpty)
    }

    @Test func countAndNamesAreRead() throws {
        #expect(try SystemdActivation.announcement(environment: ["LISTEN_PID": "10", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "bgtaskd:extra"], pid: 10)
            == .descriptors(count: 2, names: ["bgtaskd", "extra"]))
        #expect(try SystemdActivation.announcement(environment: ["LISTEN_PID": "10", "LISTEN_FDS": "1"], pid: 10) == .descriptors(count: 1, names: nil))
        #expect(try SystemdActivation.announcement(environment: ["LISTEN_PID": "10", "LISTEN_FDS": "0"], pid: 10) == .descriptors(count: 0, names: nil))
    }

    @Test(arguments: [
        (["LISTEN_PID": "ten", "LISTEN_FDS": "1"], "LISTEN_PID=ten is not a process id"),
        (["LISTEN_PID": "-1", "LISTEN_FDS": "1"], "LISTEN_PID=-1 is not a process id"),
        (["LISTEN_PID": "99999999999999999999", "LISTEN_FDS": "1"], "LISTEN_PID=99999999999999999999 is not a process id"),
        (["LISTEN_PID": "10", "LISTEN_FDS": "+1"], "LISTEN_FDS=+1 is not a descriptor count"),
        (["LISTEN_PID": "10", "LISTEN_FDS": "5000"], "LISTEN_FDS=5000 is not a descriptor count (a decimal number from 0 to 4096)"),
        (["LISTEN_PID": "10", "LISTEN_FDS": "18446744073709551617"], "LISTEN_FDS=18446744073709551617 is not a descriptor count"),
        (["LISTEN_PID": "10"], "LISTEN_PID is set but LISTEN_FDS is not"),
        (["LISTEN_FDS": "1"], "LISTEN_FDS is set but LISTEN_PID is not"),
        (["LISTEN_PID": "10", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "one"], "LISTEN_FDNAMES=one names 1 descriptors but LISTEN_FDS=2"),
    ])
    func badVariablesAreNamed(environment: [String: String], message: String) {
        #expect {
            try SystemdActivation.announcement(environment: environment, pid: 10)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func notifierIsANoOpWithoutNotifySocket() throws {
        let notifier = try SystemdNotifier(environment: ["WATCHDOG_USEC": "1000000"], pid: 10)
        #expect(!notifier.isEnabled)
        #expect(notifier.watchdogInterval == nil)
        try notifier.ready(status: "ready")
        try notifier.watchdog()
        #expect(notifier.startWatchdog() == nil)
    }

    @Test func watchdogIntervalHonoursWatchdogPID() throws {
        let base = ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000"]
        #expect(try SystemdNotifier(environment: base, pid: 10).watchdogInterval == .seconds(30))
        #expect(try SystemdNotifier(environment: base.merging(["WATCHDOG_PID": "10"]) { $1 }, pid: 10).watchdogInterval == .seconds(30))
        #expect(try SystemdNotifier(environment: base.merging(["WATCHDOG_PID": "11"]) { $1 }, pid: 10).watchdogInterval == nil)
        let badPID = try SystemdNotifier(environment: base.merging(["WATCHDOG_PID": "x"]) { $1 }, pid: 10)
        #expect(badPID.watchdogInterval == nil)
        #expect(badPID.warnings.contains { $0.contains("WATCHDOG_PID=x") })
    }

    @Test(arguments: ["0", "-5", "abc", "99999999999999999999", "31536000000001"])
    func unusableWatchdogUsecIsAWarning(_ value: String) throws {
        let notifier = try SystemdNotifier(environment: ["NOTIFY_SOCKET": "@n", "WATCHDOG_USEC": value], pid: 10)
        #expect(notifier.watchdogInterval == nil)
        #expect(notifier.warnings.contains { $0.contains("WATCHDOG_USEC=\(value)") })
    }

    @Test(arguments: ["relative/notify", "@", String(repeating: "/x", count: 60)])
    func unusableNotifySocketIsAnError(_ value: String) {
        #expect {
            try SystemdNotifier(environment: ["NOTIFY_SOCKET": value], pid: 10)
        } throws: { error in
            "\(error)".contains("NOTIFY_SOCKET=\(value)")
        }
    }
}
