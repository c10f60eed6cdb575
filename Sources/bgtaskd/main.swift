import BGTaskDaemon
import SchedulerCore
import Dispatch
import Foundation

// bgtaskd: the per-user background task service (docs/daemon.md). Parses its flags, starts
// the daemon, and runs the main queue until SIGTERM or SIGINT (SIGHUP reads --policy again).

// SIGTERM, SIGINT and SIGHUP are blocked and watched before anything else (no thread of the
// daemon exists yet): one that arrives at any moment of the start, or right after "ready" and
// systemd's READY=1, stops the daemon gracefully (or reloads its policy) instead of being lost
// or killing it with the default action (docs/daemon.md, "Stopping").
// First of all (it starts no thread): a standard descriptor closed at start (`bgtaskd >&-`)
// would be taken by the next descriptor opened (the signals' below, the socket, the store):
// /dev/null holds its place (the log goes to standard error; with that closed too, nowhere).
_ = StandardStream.reopenClosedStandardDescriptors()
let signals = DaemonSignals.install()
if !signals.registeredInTime {
    StandardStream.writeError("bgtaskd warning: the SIGTERM, SIGINT and SIGHUP handlers were not in place within 5 s; one of these signals sent in the next moments may end bgtaskd at once, without a graceful stop\n")
}
let environment = ProcessInfo.processInfo.environment
switch CommandLineValue.processArguments().flatMap({ DaemonOptions.parse($0, environment: environment) }) {
case .failure(let error):
    StandardStream.writeError(StandardStream.terminalSafe("bgtaskd: \(error)") + "\n\n\(DaemonOptions.usage)\n")
    exit(64)
case .success(.help):
    print(DaemonOptions.usage)
    exit(0)
case .success(.run(let options)):
    // A broken pipe to a client is an error on that connection, never the daemon's end.
    signal(SIGPIPE, SIG_IGN)
    do {
        let daemon = try Daemon.start(options, environment: environment)
        signals.deliver(to: daemon)
    } catch {
        StandardStream.writeError(StandardStream.terminalSafe("bgtaskd: \(error)") + "\n")
        exit(1)
    }
    dispatchMain()
}
