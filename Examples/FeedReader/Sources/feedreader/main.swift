import BackgroundTasks
import FeedReaderExample
import Foundation
import SchedulerCore

// feedreader: the example app as a real long-running process, with the scheduler
// embedded. SIGTERM (from a process supervisor) means "entering the background": the
// draft upload guarded by an assertion gets its window, then the process exits.

let usage = """
usage: feedreader serve [--state DIR] [--upload-seconds S] [--assertion-window S] [--suspend-delay S]

  --state DIR            where the scheduler keeps its SQLite state (default: $XDG_STATE_HOME/bgtask/<app>)
  --upload-seconds S     how long the draft upload takes on backgrounding (default 0.5)
  --assertion-window S   background time an assertion buys (default 30)
  --suspend-delay S      time to suspension after backgrounding without assertions (default 1)
"""

func fail(_ message: String) -> Never {
    try? FileHandle.standardError.write(contentsOf: Data("feedreader: \(message)\n\n\(usage)\n".utf8))
    exit(64)
}

func say(_ line: String) {
    // Unbuffered: a supervisor (or a test) reads these lines as they happen. The throwing
    // write, its error dropped: FileHandle.write(_:) stops the process when a write fails,
    // and under bgtaskd standard output is a log on the state's disk, which may be full
    // (an outside probe's refresh died of SIGILL there, its request never submitted again).
    try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "serve" else {
    if arguments.first == "--help" || arguments.first == "-h" { print(usage); exit(0) }
    fail(arguments.first.map { "unknown command '\($0)'" } ?? "missing command")
}
arguments.removeFirst()
var state: URL?
var uploadSeconds: TimeInterval = 0.5
var assertions = AssertionConfiguration(suspendDelay: 1)
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    guard let value = arguments.first else { fail("\(option) needs a value") }
    arguments.removeFirst()
    func seconds() -> TimeInterval {
        guard let number = TimeInterval(value), number >= 0, number.isFinite else { fail("\(option) needs a number of seconds, got '\(value)'") }
        return number
    }
    switch option {
    case "--state": state = URL(fileURLWithPath: value)
    case "--upload-seconds": uploadSeconds = seconds()
    case "--assertion-window": assertions.window = seconds()
    case "--suspend-delay": assertions.suspendDelay = seconds()
    default: fail("unknown option '\(option)'")
    }
}

do {
    try EmbeddedScheduler.bootstrap(.init(manifest: FeedReader.manifest, stateDirectory: state, assertions: assertions))
} catch {
    try? FileHandle.standardError.write(contentsOf: Data("feedreader: \(error)\n".utf8))
    exit(1)
}

let reader = FeedReader(service: LocalFeedService(uploadLatency: uploadSeconds), workClock: ContinuousClock())
let application = UIApplication.shared
application.launch()
// Before the launch code: its submissions can wait seconds on a busy bgtaskd, and a SIGTERM
// meanwhile would otherwise end the process by the signal's default (status 143).
application.handleTerminationSignals()
reader.didFinishLaunching()
application.observeState { newState in
    say("state: \(newState)")
    if newState == .background { reader.didEnterBackground() }
}
application.finishLaunching()
reader.onDraftUploaded = { say("draft uploaded") }
say("ready")
dispatchMain()
