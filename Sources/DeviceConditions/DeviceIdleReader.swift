#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SchedulerCore

/// One logind session, from its file `<run>/systemd/sessions/<id>`.
public struct LogindSession: Hashable, Sendable {
    /// The session id (the file name).
    public var id: String
    /// `ACTIVE=1`: the session is in the foreground of its seat.
    public var active: Bool
    /// `REMOTE=1`: an SSH or other remote login.
    public var remote: Bool
    /// `TYPE=`: `tty`, `x11`, `wayland`, `mir`, `unspecified`.
    public var type: String?
    /// `CLASS=`: `user`, `greeter`, `lock-screen`, `background`...
    public var sessionClass: String?
    /// `SEAT=`, when the session sits at a seat.
    public var seat: String?

    /// Creates a session description.
    public init(id: String, active: Bool, remote: Bool = false, type: String? = nil, sessionClass: String? = nil, seat: String? = nil) {
        self.id = id
        self.active = active
        self.remote = remote
        self.type = type
        self.sessionClass = sessionClass
        self.seat = seat
    }

    /// Parses logind's environment-style session file.
    public init(id: String, fileText: String) {
        func value(_ key: String) -> String? { SysfsFile.keyValue(fileText, key: key) }
        self.init(
            id: id,
            active: value("ACTIVE") == "1" || value("STATE") == "active",
            remote: value("REMOTE") == "1",
            type: value("TYPE"),
            sessionClass: value("CLASS"),
            seat: value("SEAT").flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    /// A graphical session: its input never touches a terminal device.
    public var isGraphical: Bool { ["x11", "wayland", "mir"].contains(type ?? "") }
}

/// The last activity on one terminal device.
public struct TerminalActivity: Hashable, Sendable {
    /// The device path (`/dev/pts/3`).
    public var path: String
    /// The later of its access and modification times: the kernel stamps a terminal when
    /// it is read from (input) or written to (output), which is what `w` shows as idle time.
    public var lastActivity: Date

    /// Creates an activity record.
    public init(path: String, lastActivity: Date) {
        self.path = path
        self.lastActivity = lastActivity
    }
}

/// Reads whether the user is using the device ("in use") or not ("idle").
///
/// logind knows best, but its `IdleHint` and `LockedHint` are D-Bus properties only: its
/// session files under `<run>/systemd/sessions/` carry `ACTIVE`, `STATE`, `REMOTE`, `TYPE`,
/// `CLASS`, `SEAT` and `TTY`, never the hints. So, in order:
///
/// 1. the override file `<state directory>/device-idle`, containing `idle` or `in-use`
///    (a screen locker's lock and unlock hooks can write it, which gives graphical desktops
///    a real signal);
/// 2. an active local logind session of class `greeter` or `lock-screen` (nobody logged in
///    at the seat, or the seat is locked): idle;
/// 3. terminal activity: the newest access or modification time of `<dev>/pts/N` and
///    `<dev>/ttyN`. Within ``threshold`` (default 5 minutes) of `now`: in use; else idle.
///    Remote (SSH) terminals count too: someone is working on the machine;
/// 4. neither sessions nor terminals (a server, a container): idle.
///
/// A graphical session's keyboard and mouse touch no terminal, so without the override a
/// desktop is judged by its terminals only; the source says so when a graphical session is
/// active. Classification is pure (``classify(override:sessions:terminals:now:threshold:)``):
/// `now` is always given, never read from the clock here.
public struct DeviceIdleReader: Sendable {
    /// Where `/run` is.
    public var runRoot: URL
    /// Where `/dev` is.
    public var devRoot: URL
    /// The directory holding the `device-idle` override, if any.
    public var stateDirectory: URL?
    /// How recent terminal activity must be to count as "in use".
    public var threshold: TimeInterval

    /// The default ``threshold``: 5 minutes, a common screen-blank delay.
    public static let defaultThreshold: TimeInterval = 300
    /// The name of the override file in the state directory.
    public static let overrideFileName = "device-idle"

    /// Reads under the given roots.
    public init(runRoot: URL, devRoot: URL, stateDirectory: URL?, threshold: TimeInterval = DeviceIdleReader.defaultThreshold) {
        self.runRoot = runRoot
        self.devRoot = devRoot
        self.stateDirectory = stateDirectory
        self.threshold = threshold
    }

    /// Reads the files and classifies at `now`.
    public func read(now: Date) -> SourcedValue<Bool> {
        Self.classify(override: overrideValue(), sessions: sessions(), terminals: terminals(), now: now, threshold: threshold)
    }

    /// The override file's verdict (`true` idle), with its source; a file with other
    /// content is reported and ignored.
    func overrideValue() -> SourcedValue<Bool?>? {
        guard let stateDirectory else { return nil }
        let url = stateDirectory.appendingPathComponent(Self.overrideFileName)
        let contents = SysfsFile.contents(of: url)
        guard let text = contents.text else {
            // A FIFO or directory in its place is named rather than waited on or skipped silently.
            if case .unreadable(let why) = contents { return SourcedValue(nil, source: "ignored \(url.path): cannot be read (\(why))") }
            return nil
        }
        switch text.lowercased() {
        case "idle": return SourcedValue(true, source: "override \(url.path) is \"idle\"")
        case "in-use": return SourcedValue(false, source: "override \(url.path) is \"in-use\"")
        default: return SourcedValue(nil, source: "ignored \(url.path): \(SysfsFile.quoted(text)) is not idle or in-use")
        }
    }

    /// The logind sessions from their files.
    public func sessions() -> [LogindSession] {
        let directory = runRoot.appendingPathComponent("systemd/sessions")
        return SysfsFile.entries(directory).compactMap { name in
            // logind keeps a `<id>.ref` FIFO beside each session file.
            guard !name.hasSuffix(".ref"), let text = SysfsFile.contents(of: directory.appendingPathComponent(name)).text else { return nil }
            return LogindSession(id: name, fileText: text)
        }
    }

    /// The terminals under the dev root with their last activity.
    public func terminals() -> [TerminalActivity] {
        var devices: [URL] = []
        let pts = devRoot.appendingPathComponent("pts")
        for name in SysfsFile.entries(pts) where !name.isEmpty && name.allSatisfy(\.isNumber) {
            devices.append(pts.appendingPathComponent(name))
        }
        for name in SysfsFile.entries(devRoot) where name.hasPrefix("tty") {
            let number = name.dropFirst(3)
            if !number.isEmpty, number.allSatisfy(\.isNumber) { devices.append(devRoot.appendingPathComponent(name)) }
        }
        return devices.compactMap { url in
            var info = stat()
            guard stat(url.path, &info) == 0 else { return nil }
            func date(_ time: timespec) -> Date {
                Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
            }
            return TerminalActivity(path: url.path, lastActivity: max(date(info.st_atim), date(info.st_mtim)))
        }
    }

    /// The verdict (`true` = idle) from what was read, at `now`.
    public static func classify(
        override: SourcedValue<Bool?>?,
        sessions: [LogindSession],
        terminals: [TerminalActivity],
        now: Date,
        threshold: TimeInterval
    ) -> SourcedValue<Bool> {
        var notes: [String] = []
        if let override {
            if let value = override.value { return SourcedValue(value, source: override.source) }
            notes.append(override.source)
        }
        let local = sessions.filter { $0.active && !$0.remote }
        if let gate = local.first(where: { ["greeter", "lock-screen"].contains($0.sessionClass ?? "") }) {
            return SourcedValue(true, source: "logind session \(gate.id) (\(gate.sessionClass ?? "")) is active\(gate.seat.map { " on \($0)" } ?? "")" + suffix(notes))
        }
        let thresholdText = "threshold \(Int(threshold)) s"
        // A terminal stamped well after now (the clock set back since: an RTC or NTP step)
        // would read as in use until then, holding idle-only work that long: passed over,
        // said. A minute of slack for clocks that disagree slightly.
        let stampedAhead = terminals.filter { $0.lastActivity.timeIntervalSince(now) > Self.futureActivitySlack }
        if let ahead = stampedAhead.max(by: { $0.lastActivity < $1.lastActivity }) {
            notes.append("\(CountText.counted(stampedAhead.count, "terminal")) stamped ahead of the clock passed over (\(ahead.path) \(DurationText.spoken(ahead.lastActivity.timeIntervalSince(now))) ahead: the clock was set back)")
        }
        let terminals = terminals.filter { $0.lastActivity.timeIntervalSince(now) <= Self.futureActivitySlack }
        if let newest = terminals.max(by: { $0.lastActivity < $1.lastActivity }) {
            let age = max(0, now.timeIntervalSince(newest.lastActivity))
            if age <= threshold {
                return SourcedValue(false, source: "\(newest.path) active \(DurationText.spoken(age)) ago (\(thresholdText))" + suffix(notes))
            }
            notes.insert("newest terminal activity \(newest.path) \(DurationText.spoken(age)) ago (\(thresholdText))", at: 0)
            if let graphical = local.first(where: \.isGraphical) {
                notes.append("logind session \(graphical.id) (\(graphical.type ?? "")) is active, but its idle and lock hints are on D-Bus only: graphical input is not seen")
            }
            return SourcedValue(true, source: notes.joined(separator: "; "))
        }
        if let graphical = local.first(where: \.isGraphical) {
            notes.insert("no terminals; logind session \(graphical.id) (\(graphical.type ?? "")) is active, but its idle and lock hints are on D-Bus only", at: 0)
            return SourcedValue(true, source: SysfsFile.unknown(notes.joined(separator: "; ") + "; assumed idle"))
        }
        let why = sessions.isEmpty ? "no logind sessions and no terminals (a server)" : "no local active session and no terminals"
        return SourcedValue(true, source: why + suffix(notes))
    }

    /// How far ahead of the clock a terminal's activity may be stamped and still count.
    static let futureActivitySlack: TimeInterval = 60

    private static func suffix(_ notes: [String]) -> String {
        notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")
    }
}
