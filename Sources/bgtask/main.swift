import BackgroundTasks
import DeviceConditions
import Foundation

/// Prints what `body` returns, or the error on standard error with exit status 1.
func run(_ command: String, _ body: () throws -> String) {
    do {
        print(try body(), terminator: "")
    } catch {
        FileHandle.standardError.write(Data("bgtask \(command): \(error)\n".utf8))
        exit(1)
    }
}

/// Prints a daemon command's outcome and exits with its status.
func finish(_ outcome: DaemonCommand.Outcome) -> Never {
    print(outcome.output, terminator: "")
    FileHandle.standardError.write(Data(outcome.error.utf8))
    exit(outcome.status)
}

// bgtask: the command-line tool of swift-background-tasks.
switch CommandLineParser.parse(Array(CommandLine.arguments.dropFirst())) {
case .failure(let error):
    FileHandle.standardError.write(Data("bgtask: \(error.message)\n\n\(CommandLineParser.usage)\n".utf8))
    exit(64)
case .success(.help):
    print(CommandLineParser.usage)
case .success(.version):
    print("bgtask 0.1.0 (swift-background-tasks)")
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
case .success(.conditions(let json)):
    // bgtaskd's own reading when it runs (its state directory's overrides are its own);
    // else the device read here.
    if let live = DaemonCommand.live(.conditions, json: json, command: "conditions", environment: ProcessInfo.processInfo.environment) {
        finish(live)
    }
    run("conditions") { ConditionsCommand.run(json: json, reader: LinuxConditionsReader(stateDirectory: try? EmbeddedScheduler.stateRoot())) }
case .success(.policy(let json, let check)):
    // The configuration bgtaskd judges with when it runs (its --policy file or the
    // defaults), else the one BGTASK_POLICY gives an embedded app; --check FILE always
    // validates FILE here.
    if check == nil, let live = DaemonCommand.live(.policy, json: json, command: "policy", environment: ProcessInfo.processInfo.environment) {
        finish(live)
    }
    run("policy") { try PolicyCommand.run(json: json, check: check, environment: ProcessInfo.processInfo.environment) }
case .success(.log(let options)):
    run("log") { try LogCommand.run(options, environment: ProcessInfo.processInfo.environment, now: Date()) }
case .success(.energy(let options)):
    run("energy") { try EnergyCommand.run(options, environment: ProcessInfo.processInfo.environment, now: Date()) }
case .success(.simulate(let options)):
    do {
        print(try await SimulateCommand.run(options, environment: ProcessInfo.processInfo.environment), terminator: "")
    } catch {
        FileHandle.standardError.write(Data("bgtask simulate: \(error)\n".utf8))
        exit(1)
    }
case .success(.fleet(let options)):
    run("fleet") { try FleetCommand.run(options, environment: ProcessInfo.processInfo.environment) }
case .success(.demo(let days, let report)):
    do {
        print(try await Demo.run(days: days, reportPath: report ?? Demo.defaultReportPath), terminator: "")
    } catch {
        FileHandle.standardError.write(Data("bgtask demo: \(error)\n".utf8))
        exit(1)
    }
}
