import Foundation
import Synchronization
import SchedulerCore

/// One message of the scheduler about an app: a warning (`setTaskCompleted` twice), an
/// error (a store that cannot be written), or a note for the timeline.
public struct BGDiagnosticMessage: Hashable, Sendable, CustomStringConvertible {
    /// How serious the message is.
    public enum Level: String, Hashable, Sendable, Comparable, CaseIterable {
        /// Detail for whoever debugs the scheduler (bgtaskd with `BGTASK_LOG=debug`).
        case debug
        /// Something worth knowing that went as it should.
        case info
        /// Something unexpected the scheduler worked around.
        case warning
        /// Something that failed.
        case error

        private var rank: Int {
            switch self {
            case .debug: 0
            case .info: 1
            case .warning: 2
            case .error: 3
            }
        }
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// How serious.
    public var level: Level
    /// The app concerned, if any.
    public var app: AppID?
    /// What happened, naming the identifier concerned.
    public var text: String

    /// Creates a message.
    public init(_ level: Level, app: AppID?, _ text: String) {
        self.level = level
        self.app = app
        self.text = text
    }

    public var description: String { described(by: "bgtask") }

    /// `program level [app]: text`: the message as `program` writes it (bgtaskd names
    /// itself; an app's embedded scheduler says `bgtask`).
    public func described(by program: String) -> String {
        "\(program) \(level.rawValue)\(app.map { " [\($0)]" } ?? ""): \(text)"
    }
}

/// Where diagnostics go: standard error by default; tests and the simulator collect them.
public final class BGDiagnosticLog: Sendable {
    private let sink: @Sendable (BGDiagnosticMessage) -> Void
    private let collected = Mutex<[BGDiagnosticMessage]>([])
    private let keeps: Bool

    /// Writes messages at `minimumLevel` and above to standard error, each line beginning
    /// with `program` (`bgtask` for an app's scheduler; bgtaskd's own lines say `bgtaskd`).
    public static func standardError(minimumLevel: BGDiagnosticMessage.Level = .warning, program: String = "bgtask") -> BGDiagnosticLog {
        BGDiagnosticLog { message in
            guard message.level >= minimumLevel else { return }
            StandardStream.writeError(line(of: message, program: program) + "\n")
        }
    }

    /// `message` as one line of standard error (without its line end). A message may quote
    /// what an app or a file said: shown, never obeyed (control characters escaped); and one
    /// message is one line (a quoted SQLite error spans several: its line ends are written
    /// `\n`), as log readers and the journal split records at line ends.
    static func line(of message: BGDiagnosticMessage, program: String = "bgtask") -> String {
        StandardStream.oneLine(message.described(by: program))
    }

    /// Keeps every message in memory (see ``messages``) and forwards nothing.
    public static func collecting() -> BGDiagnosticLog { BGDiagnosticLog(keeps: true) { _ in } }

    /// Sends every message to `sink`.
    public init(sink: @escaping @Sendable (BGDiagnosticMessage) -> Void) {
        self.sink = sink
        self.keeps = false
    }

    private init(keeps: Bool, sink: @escaping @Sendable (BGDiagnosticMessage) -> Void) {
        self.sink = sink
        self.keeps = keeps
    }

    /// Records one message.
    public func record(_ message: BGDiagnosticMessage) {
        if keeps { collected.withLock { $0.append(message) } }
        sink(message)
    }

    /// Shorthand for ``record(_:)``.
    public func callAsFunction(_ level: BGDiagnosticMessage.Level, app: AppID?, _ text: String) {
        record(BGDiagnosticMessage(level, app: app, text))
    }

    /// The messages kept by a ``collecting()`` log.
    public var messages: [BGDiagnosticMessage] { collected.withLock { $0 } }
}
