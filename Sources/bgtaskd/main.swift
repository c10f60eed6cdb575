import BGTaskDaemon
import SchedulerCore
import Dispatch
import Foundation

// bgtaskd: the per-user background task service (docs/daemon.md). Parses its flags, starts
// the daemon, and runs the main queue until SIGTERM or SIGINT (SIGHUP reads --policy again).

let environment = ProcessInfo.processInfo.environment
switch DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: environment) {
case .failure(let error):
    StandardStream.writeError(StandardStream.terminalSafe("bgtaskd: \(error)") + "\n\n\(DaemonOptions.usage)\n")
    exit(64)
case .success(.help):
    print(DaemonOptions.usage)
    exit(0)
case .success(.run(let options)):
    // A broken pipe to a client is an error on that connection, never the daemon's end;
    // a SIGHUP before its handler is installed is not the daemon's end either.
    signal(SIGPIPE, SIG_IGN)
    signal(SIGHUP, SIG_IGN)
    do {
        let daemon = try Daemon.start(options, environment: environment)
        daemon.handleTerminationSignals()
        daemon.handleReloadSignal()
    } catch {
        StandardStream.writeError(StandardStream.terminalSafe("bgtaskd: \(error)") + "\n")
        exit(1)
    }
    dispatchMain()
}
