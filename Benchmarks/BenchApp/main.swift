// bgtask-bench-app: the app bgtask-bench installs with bgtaskd to measure the daemon
// (docs/testing.md, "Benchmarks"). Written as an app developer would, against the public
// API only; what it measures it writes down with the wall clock (CLOCK_REALTIME), which
// the daemon's run log uses too, so the two processes' instants compare directly.
//
//   bgtask-bench-app serve --record FILE --identifier ID [--expire | --ignore-expiration]
//       Launched by bgtaskd (its manifest's BGTaskLaunchArguments). Appends "main ID NANOS"
//       (the instant its main code began) to FILE, and registers a refresh handler for ID. The handler first appends "start ID NANOS" to FILE, then
//       resubmits ID for two hours from now (as a real app reschedules its refresh) and
//       completes; with --expire it does not complete but waits for its expiration
//       handler, which appends "expired ID NANOS" and completes. With --ignore-expiration
//       neither completes (the expiration handler only appends "expired ID NANOS"), so
//       bgtaskd terminates the run; a SIGTERM handler reads the clock, and a thread of its
//       own then appends "sigterm ID NANOS" and exits 0 at once.
//   bgtask-bench-app submit --seconds S
//       Started by bgtask-bench (BGTASK_DAEMON_SOCKET and BGTASK_MANIFEST set). Prints
//       "ready", waits for a line on standard input, then submits processing requests
//       (its manifest's identifiers in turn, none due for two hours) one after the other
//       for S seconds, each acknowledged by the daemon once durable, and prints
//       "done COUNT FIRST_NANOS LAST_NANOS ERRORS P50_NANOS P99_NANOS", the last two the
//       round trip of one acknowledged submit (CLOCK_MONOTONIC around each call).
//   bgtask-bench-app idle-embedded --state-dir DIR --pending N
//       Started by bgtask-bench with no daemon: the embedded scheduler on its state in
//       DIR, its pending limit for processing requests raised to N. Registers a handler for
//       the first N identifiers of $BGTASK_MANIFEST, handles SIGTERM as a server under a
//       process supervisor does, finishes launching (active, as a process the user or its
//       supervisor started), submits one processing request for each (none due for two
//       hours), prints "ready COUNT" (COUNT the pending requests the API reports) and idles
//       in dispatchMain().
import BackgroundTasks
import Foundation
import Synchronization
import SchedulerCore

func fail(_ message: String) -> Never {
    try? FileHandle.standardError.write(contentsOf: Data("bgtask-bench-app: \(message)\n".utf8))
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
    try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}

/// CLOCK_MONOTONIC in nanoseconds (durations measured inside the app).
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// When the process reached its first line (for the launch breakdown: spawn and loading
/// before it, the API's set-up, the daemon's hello and the hand-over after it).
let enteredMain = realtimeNanoseconds()
var arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("missing mode: serve, submit or idle-embedded") }
arguments.removeFirst()
var recordPath: String?
var identifier: String?
var expire = false
var ignoreExpiration = false
var seconds: Double = 1
var stateDirectory: String?
var pending = 0
while !arguments.isEmpty {
    let option = arguments.removeFirst()
    switch option {
    case "--expire":
        expire = true
    case "--ignore-expiration":
        ignoreExpiration = true
    case "--record", "--identifier", "--seconds", "--state-dir", "--pending":
        guard let value = arguments.first else { fail("\(option) needs a value") }
        arguments.removeFirst()
        if option == "--record" { recordPath = value }
        if option == "--identifier" { identifier = value }
        if option == "--state-dir" { stateDirectory = value }
        if option == "--seconds" {
            guard let number = Double(value), number.isFinite, number > 0, number <= 3600 else { fail("--seconds must be a number from 0 to 3600, got '\(value)'") }
            seconds = number
        }
        if option == "--pending" {
            guard let number = Int(value), (1...100_000).contains(number) else { fail("--pending must be a whole number from 1 to 100000, got '\(value)'") }
            pending = number
        }
    default:
        fail("unknown option '\(option)'")
    }
}
if expire && ignoreExpiration { fail("--expire and --ignore-expiration exclude each other") }

/// The embedded scheduler's set-up: the defaults (the manifest from $BGTASK_MANIFEST, set by
/// bgtaskd or by bgtask-bench), or for idle-embedded its own state directory, no daemon,
/// and room for `pending` processing requests (the default limit is 10 per app).
func schedulerConfiguration(mode: String, stateDirectory: String?, pending: Int) -> EmbeddedScheduler.Configuration {
    guard mode == "idle-embedded" else { return .init() }
    guard let stateDirectory, pending > 0 else { fail("idle-embedded needs --state-dir DIR and --pending N") }
    // No machine identity: its hash only spreads herds of due requests (nothing here is
    // due), and the benchmark reads nothing of the machine it need not.
    var scheduler = EmbeddedScheduler.defaultSchedulerConfiguration(machineIDFile: nil)
    scheduler.pendingLimits[.processing] = pending
    return .init(stateDirectory: URL(fileURLWithPath: stateDirectory), scheduler: scheduler, daemon: .never)
}

do {
    try EmbeddedScheduler.bootstrap(schedulerConfiguration(mode: mode, stateDirectory: stateDirectory, pending: pending))
} catch {
    try? FileHandle.standardError.write(contentsOf: Data("bgtask-bench-app: \(error)\n".utf8))
    exit(1)
}

let application = UIApplication.shared
switch mode {
case "serve":
    guard let recordPath, let identifier else { fail("serve needs --record FILE and --identifier ID") }
    let record = RecordFile(path: recordPath)
    record.append("main \(identifier) \(enteredMain)")
    let expires = expire
    let ignoresExpiration = ignoreExpiration
    if ignoresExpiration {
        // The handler reads the clock when the signal is delivered; a thread of its own,
        // woken through the pipe, writes the line (nothing a handler may not do) and exits.
        let arrivals = TerminationSignal.install()
        let waiter = Thread {
            var byte: UInt8 = 0
            while read(arrivals, &byte, 1) != 1 {}
            let arrived = Int64(TerminationSignal.arrival.pointee.tv_sec) * 1_000_000_000 + Int64(TerminationSignal.arrival.pointee.tv_nsec)
            record.append("sigterm \(identifier) \(arrived)")
            // At once, without atexit work: the line is written (write(2)), and a prompt
            // exit spares the daemon its SIGKILL.
            _exit(0)
        }
        waiter.name = "bench.sigterm"
        waiter.start()
    }
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
        } else if ignoresExpiration {
            // Never completed, not even here: the daemon terminates the run once the grace
            // period after the deadline is over.
            task.expirationHandler = {
                record.append("expired \(identifier) \(realtimeNanoseconds())")
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
    // Each acknowledged submit's round trip: the call returns once the daemon committed the
    // request durably and answered. Room for a fast machine's rate, so the loop does not
    // grow the array while it is measured.
    var roundTrips: [Double] = []
    roundTrips.reserveCapacity(Int(seconds * 20_000))
    let first = realtimeNanoseconds()
    let end = first + Int64(seconds * 1e9)
    var last = first
    while last < end {
        let request = BGProcessingTaskRequest(identifier: identifiers[count % identifiers.count])
        request.earliestBeginDate = Date(timeIntervalSinceNow: 7200)
        do {
            let called = monotonicNanoseconds()
            try BGTaskScheduler.shared.submit(request)
            roundTrips.append(Double(monotonicNanoseconds() - called))
            count += 1
        } catch {
            errors += 1
            if firstError == nil { firstError = "\(error)" }
            if errors > 100 { break }
        }
        last = realtimeNanoseconds()
    }
    // Nearest-rank percentiles, as bgtask-bench's own (EnergySummary.percentile).
    let p50 = EnergySummary.percentile(0.5, of: roundTrips) ?? 0
    let p99 = EnergySummary.percentile(0.99, of: roundTrips) ?? 0
    say("done \(count) \(first) \(last) \(errors) \(Int64(p50)) \(Int64(p99))")
    if let firstError { try? FileHandle.standardError.write(contentsOf: Data("bgtask-bench-app: first submit error: \(firstError)\n".utf8)) }
    exit(0)
case "idle-embedded":
    application.launch()
    let identifiers = Array(AppManifestIdentifiers.processing().prefix(pending))
    guard identifiers.count == pending else { fail("the manifest permits \(identifiers.count) identifiers, fewer than --pending \(pending)") }
    for identifier in identifiers {
        BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
            task.setTaskCompleted(success: true)
        }
    }
    // A long-running server under a process supervisor (README, "Using it"): SIGTERM means
    // entering the background, and it exits once its work is done.
    application.handleTerminationSignals()
    // Active: the process was started by its user or supervisor and runs until told to
    // stop. In the background with no assertion the lifecycle would suspend it after its
    // suspend delay, a state a server that keeps serving never is in.
    application.finishLaunching()
    for identifier in identifiers {
        let request = BGProcessingTaskRequest(identifier: identifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 7200)
        do {
            try BGTaskScheduler.shared.submit(request)
        } catch {
            fail("submitting \(identifier) failed: \(error)")
        }
    }
    // What the app's own API reports pending (its completion runs on the API's serial queue).
    let counted = HandedCount()
    let answered = DispatchSemaphore(value: 0)
    BGTaskScheduler.shared.getPendingTaskRequests { requests in
        counted.value.withLock { $0 = requests.count }
        answered.signal()
    }
    answered.wait()
    say("ready \(counted.value.withLock { $0 })")
    dispatchMain()
default:
    fail("unknown mode '\(mode)': serve, submit or idle-embedded")
}

/// The identifiers the app's manifest permits, read from `$BGTASK_MANIFEST`.
enum AppManifestIdentifiers {
    static func processing() -> [String] {
        guard let path = ProcessInfo.processInfo.environment["BGTASK_MANIFEST"],
              let manifest = try? AppManifest.load(contentsOf: URL(fileURLWithPath: path)) else { return [] }
        return manifest.permittedIdentifiers.sorted()
    }
}

/// A number handed from a completion handler to the thread waiting for it.
final class HandedCount: Sendable {
    let value = Mutex(-1)
}

/// The instant SIGTERM is delivered, taken by a signal handler. Not sigwait on a thread of
/// its own: dispatchMain() leaves the main thread in sigsuspend with every signal unblocked
/// (libdispatch on Linux), so a SIGTERM blocked everywhere else is still delivered there,
/// and its default action ends the process before the waiting thread sees it.
enum TerminationSignal {
    /// Where the handler writes the instant (CLOCK_REALTIME); allocated before it is installed.
    nonisolated(unsafe) static let arrival = UnsafeMutablePointer<timespec>.allocate(capacity: 1)
    /// The pipe's write end, on which the handler says the instant is there.
    nonisolated(unsafe) static var notify: Int32 = -1

    /// Installs the handler; returns the pipe's read end, readable once SIGTERM arrived.
    static func install() -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { fail("pipe failed: errno \(errno)") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        notify = ends[1]
        arrival.initialize(to: timespec())
        var action = sigaction()
        // Only async-signal-safe calls: clock_gettime and write(2).
        action.__sigaction_handler.sa_handler = { _ in
            clock_gettime(CLOCK_REALTIME, TerminationSignal.arrival)
            var byte: UInt8 = 1
            _ = write(TerminationSignal.notify, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        guard sigaction(SIGTERM, &action, nil) == 0 else { fail("sigaction(SIGTERM) failed: errno \(errno)") }
        return ends[0]
    }
}
