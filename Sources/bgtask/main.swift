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
    let outcome = DaemonCommand.run(command, environment: ProcessInfo.processInfo.environment)
    print(outcome.output, terminator: "")
    FileHandle.standardError.write(Data(outcome.error.utf8))
    exit(outcome.status)
case .success(.why(let options)):
    // From bgtaskd's live engine when the app is installed with it (exact: eligible-since,
    // the last shared trigger, every verdict); else from the app's own store.
    if options.state == nil, options.policy == nil,
       let live = DaemonCommand.liveWhy(options, environment: ProcessInfo.processInfo.environment) {
        print(live.output, terminator: "")
        FileHandle.standardError.write(Data(live.error.utf8))
        exit(live.status)
    }
    run("why") { try WhyCommand.run(options, environment: ProcessInfo.processInfo.environment, now: Date(), conditions: LinuxConditionsReader(stateDirectory: try? EmbeddedScheduler.stateRoot()).read()) }
case .success(.conditions(let json)):
    run("conditions") { ConditionsCommand.run(json: json, reader: LinuxConditionsReader(stateDirectory: try? EmbeddedScheduler.stateRoot())) }
case .success(.policy(let json, let check)):
    run("policy") { try PolicyCommand.run(json: json, check: check) }
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
