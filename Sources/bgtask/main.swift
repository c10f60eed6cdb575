import BackgroundTasks
import DeviceConditions
import Foundation
import SchedulerCore

/// Writes `text` to standard output; when it cannot (a full disk, a closed pipe), says so on
/// standard error and exits 1: output that went nowhere is not a success.
func output(_ text: String, command: String) {
    // What bgtask prints may come from bgtaskd, a store or a file: shown, never obeyed.
    if let code = StandardStream.writeOutput(StandardStream.terminalSafe(text)) {
        StandardStream.writeError("bgtask\(command.isEmpty ? "" : " " + command): cannot write the output: \(systemErrorText(code))\n")
        exit(1)
    }
}

/// Prints what `body` returns, or the error on standard error with exit status 1.
func run(_ command: String, _ body: () throws -> String) {
    do {
        output(try body(), command: command)
    } catch {
        StandardStream.writeError(StandardStream.oneLine("bgtask \(command): \(error)") + "\n")
        exit(1)
    }
}

/// Writes a warning to standard error, apart from the output (which may be JSON).
func warn(_ text: String) {
    StandardStream.writeError(StandardStream.terminalSafe(text))
}

/// Prints a daemon command's outcome and exits with its status.
func finish(_ outcome: DaemonCommand.Outcome) -> Never {
    output(outcome.output, command: "")
    StandardStream.writeError(StandardStream.terminalSafe(outcome.error))
    exit(outcome.status)
}

// bgtask: the command-line tool of swift-background-tasks.
// A reader that went away (`bgtask simulate ... | head -1`) is a write that fails with EPIPE,
// said and exit 1 as for any output that cannot be written (docs/cli.md), not a death by
// SIGPIPE (exit 141, no word). bgtask starts no other program that could inherit this.
signal(SIGPIPE, SIG_IGN)
// With standard output closed (`bgtask status >&-`), a socket or file opened next would take
// its place: refused before anything is done, naming the cause.
if StandardStream.reopenClosedStandardDescriptors().contains(1) {
    StandardStream.writeError("bgtask: standard output is closed: nothing could be printed, so nothing was done\n")
    exit(1)
}
switch CommandLineValue.processArguments().flatMap(CommandLineParser.parse) {
case .failure(let error):
    StandardStream.writeError(StandardStream.oneLine("bgtask: \(error.message)") + "\n\n\(CommandLineParser.usage(afterErrorIn: Array(CommandLine.arguments.dropFirst())))\n")
    exit(64)
case .success(.help):
    output(CommandLineParser.usage + "\n", command: "help")
case .success(.commandHelp(let text)):
    output(text + "\n", command: "help")
case .success(.version):
    output("bgtask 0.1.0 (swift-background-tasks)\n", command: "version")
case .success(.daemon(let command)):
    finish(DaemonCommand.run(command, environment: ProcessInfo.processInfo.environment))
case .success(.why(let options)):
    // From bgtaskd's live engine when the app is installed with it (exact: eligible-since,
    // the last shared trigger, every verdict); else from the app's own store.
    if options.state == nil, options.policy == nil,
       let live = DaemonCommand.liveWhy(options, environment: ProcessInfo.processInfo.environment) {
        finish(live)
    }
    run("why") { try WhyCommand.run(options, environment: ProcessInfo.processInfo.environment, now: Date(), conditions: LinuxConditionsReader(stateDirectory: try? EmbeddedScheduler.stateRoot()).read()) }
case .success(.conditions(let json, let socket)):
    // bgtaskd's own reading when it runs (its state directory's overrides are its own);
    // else the device read here.
    if let live = DaemonCommand.live(.conditions, json: json, command: "conditions", socket: socket, environment: ProcessInfo.processInfo.environment) {
        finish(live)
    }
    run("conditions") { ConditionsCommand.run(json: json, reader: LinuxConditionsReader(stateDirectory: try? EmbeddedScheduler.stateRoot())) }
case .success(.policy(let json, let check, let socket)):
    // The configuration bgtaskd judges with when it runs (its --policy file or the
    // defaults), else the one BGTASK_POLICY gives an embedded app; --check FILE always
    // validates FILE here.
    if check == nil, let live = DaemonCommand.live(.policy, json: json, command: "policy", socket: socket, environment: ProcessInfo.processInfo.environment) {
        finish(live)
    }
    run("policy") { try PolicyCommand.run(json: json, check: check, environment: ProcessInfo.processInfo.environment) }
case .success(.log(let options)):
    run("log") { try LogCommand.run(options, environment: ProcessInfo.processInfo.environment, now: Date(), warn: warn) }
case .success(.energy(let options)):
    run("energy") { try EnergyCommand.run(options, environment: ProcessInfo.processInfo.environment, now: Date(), warn: warn) }
case .success(.notifications(let options)):
    run("notifications") { try NotificationsCommand.run(options, environment: ProcessInfo.processInfo.environment) }
case .success(.simulate(let options)):
    do {
        output(try await SimulateCommand.run(options, environment: ProcessInfo.processInfo.environment), command: "simulate")
    } catch {
        StandardStream.writeError(StandardStream.oneLine("bgtask simulate: \(error)") + "\n")
        exit(1)
    }
case .success(.fleet(let options)):
    run("fleet") { try FleetCommand.run(options, environment: ProcessInfo.processInfo.environment) }
case .success(.demo(let days, let report)):
    do {
        output(try await Demo.run(days: days, reportPath: report ?? Demo.defaultReportPath), command: "demo")
    } catch {
        StandardStream.writeError(StandardStream.oneLine("bgtask demo: \(error)") + "\n")
        exit(1)
    }
}
