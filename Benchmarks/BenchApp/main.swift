// bgtask-bench-app: the app bgtask-bench installs with bgtaskd to measure the daemon
// (docs/testing.md, "Benchmarks"). Written as an app developer would, against the public
// API only; what it measures it writes down with the wall clock (CLOCK_REALTIME), which
// the daemon's run log uses too, so the two processes' instants compare directly.
//
//   bgtask-bench-app serve --record FILE --identifier ID [--expire]
//       Launched by bgtaskd (its manifest's BGTaskLaunchArguments). Appends "main ID NANOS"
//       (the instant its main code began) to FILE, and registers a refresh handler for ID. The handler first appends "start ID NANOS" to FILE, then
//       resubmits ID for two hours from now (as a real app reschedules its refresh) and
//       completes; with --expire it does not complete but waits for its expiration
//       handler, which appends "expired ID NANOS" and completes.
//   bgtask-bench-app submit --seconds S
//       Started by bgtask-bench (BGTASK_DAEMON_SOCKET and BGTASK_MANIFEST set). Prints
//       "ready", waits for a line on standard input, then submits processing requests
//       (its manifest's identifiers in turn, none due for two hours) one after the other
//       for S seconds, each acknowledged by the daemon once durable, and prints
//       "done COUNT FIRST_NANOS LAST_NANOS ERRORS".
import BackgroundTasks
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bgtask-bench-app: \(message)\n".utf8))
    exit(64)
}

/// CLOCK_REALTIME in nanoseconds since 1970.
func realtimeNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// Appends one line to the record file with a single write (O_APPEND: lines never interleave).
struct RecordFile: Sendable {
    let descriptor: Int32

    init(path: String) {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor < 0 { fail("cannot open the record file \(path): errno \(errno)") }
    }

    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// When the process reached its first line (for the launch breakdown: spawn and loading
/// before it, the API's set-up, the daemon's hello and the hand-over after it).
let enteredMain = realtimeNanoseconds()
var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("missing mode: serve or submit") }
arguments.removeFirst()
var recordPath: String?
var identifier: String?
var expire = false
var seconds: Double = 1
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    switch option {
    case "--expire":
        expire = true
    case "--record", "--identifier", "--seconds":
        guard let value = arguments.first else { fail("\(option) needs a value") }
        arguments.removeFirst()
        if option == "--record" { recordPath = value }
        if option == "--identifier" { identifier = value }
        if option == "--seconds" {
            guard let number = Double(value), number.isFinite, number > 0, number <= 3600 else { fail("--seconds must be a number from 0 to 3600, got '\(value)'") }
            seconds = number
        }
    default:
        fail("unknown option '\(option)'")
    }
}

do {
    // The manifest comes from $BGTASK_MANIFEST (set by bgtaskd, or by bgtask-bench).
    try EmbeddedScheduler.bootstrap(.init())
} catch {
    FileHandle.standardError.write(Data("bgtask-bench-app: \(error)\n".utf8))
    exit(1)
}

let application = UIApplication.shared
switch mode {
case "serve":
    guard let recordPath, let identifier else { fail("serve needs --record FILE and --identifier ID") }
    let record = RecordFile(path: recordPath)
    record.append("main \(identifier) \(enteredMain)")
    let expires = expire
    application.launch()
    BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
        record.append("start \(identifier) \(realtimeNanoseconds())")
        let next = BGAppRefreshTaskRequest(identifier: identifier)
        next.earliestBeginDate = Date(timeIntervalSinceNow: 7200)
        do {
            try BGTaskScheduler.shared.submit(next)
        } catch {
            record.append("error \(identifier) resubmit: \(error)")
        }
        if expires {
            task.expirationHandler = {
                record.append("expired \(identifier) \(realtimeNanoseconds())")
                task.setTaskCompleted(success: false)
            }
        } else {
            task.setTaskCompleted(success: true)
        }
    }
    application.finishLaunching()
    dispatchMain()
case "submit":
    application.launch()
    let identifiers = AppManifestIdentifiers.processing()
    guard !identifiers.isEmpty else { fail("the manifest permits no identifier to submit") }
    // A handler for each (as submit requires); nothing here is due for two hours.
    for identifier in identifiers {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            task.setTaskCompleted(success: true)
        }
    }
    application.finishLaunching()
    say("ready")
    _ = readLine()
    var count = 0
    var errors = 0
    var firstError: String?
    let first = realtimeNanoseconds()
    let end = first + Int64(seconds * 1e9)
    var last = first
    while last < end {
        let request = BGProcessingTaskRequest(identifier: identifiers[count % identifiers.count])
        request.earliestBeginDate = Date(timeIntervalSinceNow: 7200)
        do {
            try BGTaskScheduler.shared.submit(request)
            count += 1
        } catch {
            errors += 1
            if firstError == nil { firstError = "\(error)" }
            if errors > 100 { break }
        }
        last = realtimeNanoseconds()
    }
    say("done \(count) \(first) \(last) \(errors)")
    if let firstError { FileHandle.standardError.write(Data("bgtask-bench-app: first submit error: \(firstError)\n".utf8)) }
    exit(0)
default:
    fail("unknown mode '\(mode)': serve or submit")
}

/// The identifiers the app's manifest permits, read from `$BGTASK_MANIFEST`.
enum AppManifestIdentifiers {
    static func processing() -> [String] {
        guard let path = ProcessInfo.processInfo.environment["BGTASK_MANIFEST"],
              let manifest = try? AppManifest.load(contentsOf: URL(fileURLWithPath: path)) else { return [] }
        return manifest.permittedIdentifiers.sorted()
    }
}
