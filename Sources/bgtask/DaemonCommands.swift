import BackgroundTasks
import DaemonProtocol
import Foundation
import PostgreSQLStore
import SchedulerStore
import SchedulerCore

/// The commands that talk to bgtaskd (docs/cli.md), from one table: the parser, `--help`
/// and the CLI reference come from ``DaemonCommand/table``.
struct DaemonCommand: Equatable {
    /// What one command takes and asks.
    struct Spec: Sendable {
        /// The command's name.
        var name: String
        /// Its positional arguments, for the synopsis (`<app>`, `[app]`).
        var arguments: [String]
        /// Its own options, for the synopsis (besides `--json`, `--socket`, `--help`).
        var options: [String] = []
        /// One line saying what it does.
        var summary: String
        /// Whether it reads (and so takes `--json`).
        var reads: Bool
        /// Builds the request from the positional arguments and the options' values.
        var request: @Sendable (_ positional: [String], _ options: [String: String]) -> Result<AdminRequest, UsageError>

        /// `name <app> [--json]`: the synopsis line.
        var synopsis: String {
            ([name] + arguments + options + (reads ? ["[--json]"] : []) + ["[--socket PATH]"]).joined(separator: " ")
        }

        /// How many positional arguments it needs at least and at most: every argument but
        /// a bracketed one (`[app]`) is required, a literal word (`background-refresh`) too.
        var arity: ClosedRange<Int> {
            let required = arguments.filter { !$0.hasPrefix("[") }.count
            return required...arguments.count
        }
    }

    /// The command.
    var name: String
    /// The request it sends.
    var request: AdminRequest
    /// `--json`.
    var json = false
    /// `--socket PATH`.
    var socket: String?
    /// `--store URL` (`pending` only): the store replicas share, read instead of bgtaskd.
    var store: String?
    /// `--help`.
    var help = false

    private static func app(_ text: String) -> Result<AppID, UsageError> {
        OptionValue.app(text, for: "<app>")
    }

    /// A task identifier argument: one no request can have (empty, over 255 bytes, or with
    /// a control character: `CommandLineValue.taskIdentifier`) is a usage error, not a
    /// question bgtaskd answers with the text echoed.
    private static func task(_ text: String) -> Result<String, UsageError> {
        OptionValue.taskIdentifier(text, for: "<identifier>")
    }

    /// The manifest path `install` sends: bgtaskd reads the file in its own process, so a
    /// path that means something else there is made the caller's here. A relative path is
    /// made absolute (the daemon's working directory is not the caller's); one through the
    /// caller's own process (`/proc/self/...`, `/dev/stdin`, `/dev/fd/N`) is resolved to
    /// what it leads to; and one that leads, for the caller, to something other than a
    /// regular file (a pipe, a terminal, a directory) is refused here, naming what it is.
    /// Other symbolic links are sent as they are: an installation through a link (to a
    /// release's directory) follows the link when the daemon reads it again.
    static func manifestPathForTheDaemon(_ path: String) -> Result<String, UsageError> {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        // "/proc//self" and "/dev/../proc/self" are the caller's too: empty components dropped,
        // then "." and ".." resolved.
        let components = absolute.split(separator: "/", omittingEmptySubsequences: true)
        let normalized = URL(fileURLWithPath: "/" + components.joined(separator: "/")).standardized.path
        let throughTheCaller = ["/proc/self/", "/proc/thread-self/", "/dev/fd/", "/dev/stdin", "/dev/stdout", "/dev/stderr"]
            .contains { normalized.hasPrefix($0) }
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            // Missing: the daemon says so; but one of the caller's own descriptors it would
            // read as its own.
            if throughTheCaller { return .failure(UsageError(message: "install: \(path) cannot be read: \(systemErrorText(errno))")) }
            return .success(absolute)
        }
        if let kind = BoundedFile.nonRegularKind(info.st_mode) {
            return .failure(UsageError(message: "install: \(path) is \(kind), not a manifest file"))
        }
        guard throughTheCaller else { return .success(absolute) }
        // A file with no path of its own (deleted, or in memory) cannot be handed over by path.
        guard let real = realpath(absolute, nil) else {
            return .failure(UsageError(message: "install: \(path) has no path bgtaskd could read (\(systemErrorText(errno))); name the manifest's file"))
        }
        defer { free(real) }
        let resolved = String(cString: real)
        guard resolved.hasPrefix("/"), !resolved.hasPrefix("/proc/"), FileManager.default.fileExists(atPath: resolved) else {
            return .failure(UsageError(message: "install: \(path) has no path bgtaskd could read (it leads to \(resolved)); name the manifest's file"))
        }
        return .success(resolved)
    }

    /// Every daemon command.
    static let table: [Spec] = [
        Spec(name: "status", arguments: [], summary: "whether bgtaskd runs, its socket, state, apps, pending and running counts", reads: true) { _, _ in .success(.status) },
        Spec(name: "apps", arguments: [], summary: "the installed apps, their executables and where each one's process is: notRunning, starting (spawned for a run, or connected and not yet launched), ready (connected: running, in the foreground or with a run in progress), suspended (frozen by the daemon) or ending (told to quit), with its pid", reads: true) { _, _ in .success(.apps) },
        Spec(name: "install", arguments: ["<manifest>"], summary: "install (or reinstall) the app described by an Info.plist-style manifest (property list or JSON)", reads: false) { positional, _ in
            manifestPathForTheDaemon(positional[0]).map { .install(manifestPath: $0) }
        },
        Spec(name: "uninstall", arguments: ["<app>"], summary: "remove the app, its pending requests, settings and checkpoints (its run history stays)", reads: false) { positional, _ in
            app(positional[0]).map { .uninstall(app: $0) }
        },
        Spec(name: "pending", arguments: ["[app]"], options: ["[--store URL]"], summary: "the pending requests, of one app or of all; with --store URL (or BGTASK_STORE_URL, unless --socket is given), those of the store replicas share on PostgreSQL", reads: true) { positional, _ in
            guard let first = positional.first else { return .success(.pending(app: nil)) }
            return app(first).map { .pending(app: $0) }
        },
        Spec(name: "run", arguments: ["<app>", "<identifier>"], summary: "launch a pending request now, starting the app if it is not running, whatever holds it (the app force-quit, its Background App Refresh off, a throttle, the device's conditions, an earliest begin date to come), as Apple's simulate launch does; `bgtask why` says what would have held it", reads: false) { positional, _ in
            app(positional[0]).flatMap { app in task(positional[1]).map { .run(app: app, identifier: $0) } }
        },
        Spec(name: "expire", arguments: ["<app>", "<identifier>"], summary: "expire the task's run in progress now (Apple's simulate expiration)", reads: false) { positional, _ in
            app(positional[0]).flatMap { app in task(positional[1]).map { .expire(app: app, identifier: $0) } }
        },
        Spec(name: "settings", arguments: ["<app>", "background-refresh", "<on|off>"], summary: "turn the app's Background App Refresh switch on or off", reads: false) { positional, _ in
            guard positional[1] == "background-refresh" else {
                return .failure(UsageError(message: "settings knows only background-refresh, got '\(positional[1])'"))
            }
            guard ["on", "off"].contains(positional[2]) else {
                return .failure(UsageError(message: "background-refresh must be on or off, got '\(positional[2])'"))
            }
            return app(positional[0]).map { .setBackgroundRefresh(app: $0, enabled: positional[2] == "on") }
        },
        Spec(name: "open", arguments: ["<app>"], summary: "the user opens the app: foreground, a use for prediction, lifts a force-quit", reads: false) { positional, _ in
            app(positional[0]).map { .open(app: $0) }
        },
        Spec(name: "background", arguments: ["<app>"], summary: "the app moves to the background", reads: false) { positional, _ in
            app(positional[0]).map { .background(app: $0) }
        },
        Spec(name: "force-quit", arguments: ["<app>"], summary: "end the app; no background launches until it is opened again", reads: false) { positional, _ in
            app(positional[0]).map { .forceQuit(app: $0) }
        },
        Spec(name: "push", arguments: ["<app>"], options: ["[--payload JSON]"], summary: "a remote wake (silent push): the app's remote-notification handler runs for a refresh-sized window; at most 3 per app per hour", reads: false) { positional, options in
            app(positional[0]).map { .push(app: $0, payload: options["--payload"]) }
        },
        Spec(name: "respond", arguments: ["<app>", "<notification>"], options: ["[--action ID]", "[--text TEXT]"], summary: "the user responds to one of the app's delivered notifications (the app is started for it when it is not running): a tap (the default action: the app comes to the foreground), --action dismiss, or one of its category's actions (--text for a text-input action); its delegate's didReceive runs", reads: false) { positional, options in
            app(positional[0]).flatMap { app in
                let action = options["--action"].map { $0 == "dismiss" ? NotificationResponseRequest.dismissAction : $0 } ?? NotificationResponseRequest.defaultAction
                let response = NotificationResponseRequest(notification: positional[1], action: action, text: options["--text"])
                if let problem = response.problem { return .failure(UsageError(message: "respond: \(problem)")) }
                return .success(.respond(app: app, response: response))
            }
        },
    ]

    /// The usage lines of every daemon command (part of `bgtask --help`).
    static var usage: String {
        table.map(usage(of:)).joined(separator: "\n")
    }

    /// The usage lines of one daemon command: its synopsis and what it does.
    static func usage(of spec: Spec) -> String {
        "  \(spec.synopsis)\n" + wrap(spec.summary, indent: 20)
    }

    private static func wrap(_ text: String, indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.count + word.count + 1 > 88 - indent, !line.isEmpty {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        let pad = String(repeating: " ", count: indent)
        return lines.map { pad + $0 }.joined(separator: "\n")
    }

    /// The spec named `name`, if it is a daemon command.
    static func spec(named name: String) -> Spec? { table.first { $0.name == name } }

    /// Reads the value of the `--socket` at `index` (which is advanced past it) into
    /// `socket`, the same way in every command that asks bgtaskd (these and `why`,
    /// `conditions`, `policy`): a socket path, given once. The usage error, if any.
    static func readSocket(_ arguments: [String], at index: inout Int, into socket: inout String?) -> UsageError? {
        guard socket == nil else { return UsageError(message: "--socket given more than once") }
        switch OptionValue.take(arguments, at: &index, for: "--socket", what: "a socket path") {
        case .success(let value): socket = value
        case .failure(let error): return error
        }
        return nil
    }

    /// Parses the arguments after the command's name.
    static func parse(_ spec: Spec, _ arguments: [String]) -> Result<DaemonCommand, UsageError> {
        var positional: [String] = []
        var values: [String: String] = [:]
        var command = DaemonCommand(name: spec.name, request: .status)
        var index = 0
        let takesPayload = spec.options.contains { $0.contains("--payload") }
        // An option given twice is refused (docs/cli.md), not the later one silently taken.
        var given: Set<String> = []
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--"), argument != "--help", !given.insert(argument).inserted {
                return .failure(UsageError(message: "\(argument) given more than once"))
            }
            switch argument {
            case "--":
                // The end of the options: the rest are arguments (a manifest named `--json`).
                for rest in arguments[(index + 1)...] {
                    if let error = OptionValue.positional(rest, what: "an argument", command: spec.name) { return .failure(error) }
                    positional.append(rest)
                }
                index = arguments.count
                continue
            case "--help", "-h":
                command.help = true
                return .success(command)
            case "--json":
                guard spec.reads else { return .failure(UsageError(message: "\(spec.name) prints no report; --json is for read commands")) }
                command.json = true
            case "--socket":
                if let error = readSocket(arguments, at: &index, into: &command.socket) { return .failure(error) }
            case "--store" where spec.name == "pending":
                switch OptionValue.take(arguments, at: &index, for: argument, what: "a PostgreSQL address (postgresql://...)") {
                case .success(let value): command.store = value
                case .failure(let error): return .failure(error)
                }
            case "--payload" where takesPayload:
                // A JSON object may start with anything but "--"; OptionValue refuses those.
                switch OptionValue.take(arguments, at: &index, for: argument, what: "a JSON object") {
                case .success(let value):
                    if let problem = RemoteWake.payloadProblem(value) {
                        return .failure(UsageError(message: "--payload: \(problem)"))
                    }
                    values[argument] = value
                case .failure(let error): return .failure(error)
                }
            case "--action" where spec.name == "respond", "--text" where spec.name == "respond":
                switch OptionValue.take(arguments, at: &index, for: argument, what: argument == "--action" ? "an action identifier" : "a text") {
                case .success(let value): values[argument] = value
                case .failure(let error): return .failure(error)
                }
            default:
                guard !argument.hasPrefix("--") else { return .failure(UsageError(message: "unknown option for \(spec.name): '\(argument)'")) }
                if let error = OptionValue.positional(argument, what: "an argument", command: spec.name) { return .failure(error) }
                positional.append(argument)
            }
            index += 1
        }
        guard spec.arity.contains(positional.count) else {
            if spec.arguments.isEmpty {
                return .failure(UsageError(message: "\(spec.name) takes no arguments, got '\(positional[0])'"))
            }
            return .failure(UsageError(message: "\(spec.name) takes \(spec.arguments.joined(separator: " ")), got \(positional.count) argument(s)"))
        }
        return spec.request(positional, values).map { request in
            command.request = request
            return command
        }
    }

    /// What running a command printed, and its exit status.
    struct Outcome: Equatable {
        var output: String
        var error: String
        var status: Int32

        /// This outcome with `warnings` said first on standard error: those about a value the
        /// user set that is not used (`XDG_RUNTIME_DIR=run is not an absolute path; ignored`),
        /// not the everyday ones (`XDG_RUNTIME_DIR is not set`).
        func warning(_ warnings: [String]) -> Outcome {
            let said = warnings.filter { $0.hasSuffix("; ignored") }.map { "bgtask: warning: \($0)\n" }
            return Outcome(output: output, error: said.joined() + error, status: status)
        }
    }

    /// Sends the command to the daemon (at `--socket`, else the default path from
    /// `environment`) and renders the reply. Read commands answer from the state directory,
    /// read-only, when no daemon runs.
    static func run(_ command: DaemonCommand, environment: [String: String]) -> Outcome {
        if command.help, let spec = spec(named: command.name) {
            return Outcome(output: "usage: bgtask \(spec.synopsis)\n\n\(wrap(spec.summary, indent: 2))\n", error: "", status: 0)
        }
        if case .pending(let app) = command.request,
           let address = SharedStoreAddress.chosen(given: command.store, otherPlaceGiven: command.socket != nil, otherPlace: "--socket PATH", environment: environment) {
            return sharedPending(app: app, address: address, json: command.json)
        }
        // The socket alone: the state directory (from HOME) is needed only to read the
        // store when no daemon answers, so a daemon named with --socket answers without HOME.
        var warnings: [String] = []
        let socketPath: String
        do {
            socketPath = try DaemonPaths.socketPath(environment: environment, socketOverride: command.socket, uid: getuid(), warnings: &warnings)
        } catch {
            return failure(error, command: command.name)
        }
        do {
            return render(try ask(command.request, socket: socketPath), json: command.json, command: command.name).warning(warnings)
        } catch let error as ConnectError where error.isNoDaemon {
            guard let stateDirectory = try? DaemonPaths.stateDirectory(environment: environment, stateOverride: nil, warnings: &warnings) else {
                return failure(error, command: command.name).warning(warnings)
            }
            return (offline(command, stateDirectory: stateDirectory) ?? failure(error, command: command.name)).warning(warnings)
        } catch {
            return failure(error, command: command.name).warning(warnings)
        }
    }

    /// The outcome of a command bgtaskd could not answer: the error (a ``ConnectError``, or
    /// the ``DaemonFailure`` the call ended with), with how to start a daemon when none runs.
    static func failure(_ error: any Error, command: String) -> Outcome {
        let hint = (error as? ConnectError)?.isNoDaemon == true ? "; start it with `bgtaskd &` (or `systemctl --user start bgtaskd.socket`, see docs/daemon.md)" : ""
        return Outcome(output: "", error: "bgtask \(command): \(error)\(hint)\n", status: 1)
    }

    /// Connects to the daemon at `socket` as the administrator, sends `request` and returns
    /// its reply. Throws the ``ConnectError`` (no daemon...) or the ``DaemonFailure``.
    static func ask(_ request: AdminRequest, socket: String, connectTimeout: Duration = .seconds(5)) throws -> Reply {
        let link = try MessageLink.connect(path: socket, timeout: connectTimeout)
        defer { link.close() }
        guard case .welcome = try link.call(.hello(Hello(role: .admin))) else {
            throw DaemonFailure(.notPermitted, "bgtaskd at \(socket) did not accept this administrator connection")
        }
        return try link.call(.admin(request), timeout: .seconds(30))
    }

    static func render(_ reply: Reply, json: Bool, command: String) -> Outcome {
        switch reply {
        case .done(let line):
            return Outcome(output: line.map { $0 + "\n" } ?? "", error: "", status: 0)
        case .failed(let failure):
            return Outcome(output: "", error: "bgtask \(command): \(failure.message)\n", status: 1)
        case .report(let text, let jsonText):
            // What --json promises is JSON: a reply that is not (a broken or foreign daemon)
            // is a failure, not output a script would choke on after exit 0.
            if json, (try? JSONSerialization.jsonObject(with: Data(jsonText.utf8), options: [.fragmentsAllowed])) == nil {
                return Outcome(output: "", error: "bgtask \(command): bgtaskd's answer is not valid JSON; nothing is printed\n", status: 1)
            }
            return Outcome(output: json ? jsonText : text, error: "", status: 0)
        case .pending(let answered):
            // Continued processing ignores its earliest begin date (the engine and the stores
            // do): neither judged nor shown, in text or JSON.
            let requests = answered.map { request -> PendingRequest in
                var shown = request
                if shown.kind == .continuedProcessing { shown.earliestBeginDate = nil }
                return shown
            }
            // A date no calendar shows (a foreign daemon's, a row another program wrote) would
            // be printed as a made-up one, and differently in text and JSON: refused, named.
            if let problem = outOfRangeDate(in: requests) {
                return Outcome(output: "", error: "bgtask \(command): bgtaskd's answer holds \(problem); nothing is printed\n", status: 1)
            }
            return Outcome(output: json ? pendingJSON(requests) : pendingText(requests), error: "", status: 0)
        case .welcome, .flag, .data, .names:
            return Outcome(output: "", error: "bgtask \(command): unexpected reply from bgtaskd\n", status: 1)
        }
    }

    /// The first date of `requests` out of any calendar's range (``DateText/rangeProblem(_:)``),
    /// named with its request and field; `nil` when every date can be shown.
    static func outOfRangeDate(in requests: [PendingRequest]) -> String? {
        for request in requests {
            let dates: [(String, Date?)] = [("earliestBeginDate", request.earliestBeginDate), ("submittedAt", request.submittedAt)]
            for case let (field, date?) in dates {
                if let problem = DateText.rangeProblem(date) { return "a date out of range (\(field) of \(request.key): \(problem))" }
            }
        }
        return nil
    }

    static func pendingText(_ requests: [PendingRequest]) -> String {
        guard !requests.isEmpty else { return "no request is pending\n" }
        return requests.map { request in
            "\(request.app)  \(request.identifier)  \(request.kind)  earliest \(request.earliestBeginDate.map(RunLogFormat.time) ?? "now")  submitted \(RunLogFormat.time(request.submittedAt))"
        }.joined(separator: "\n") + "\n"
    }

    static func pendingJSON(_ requests: [PendingRequest]) -> String { ReportJSON.text(requests, fallback: "[]") }

    /// `pending` from the store replicas share (`--store URL`, else `BGTASK_STORE_URL`).
    static func sharedPending(app: AppID?, address: SharedStoreAddress, json: Bool) -> Outcome {
        do {
            let requests = try address.reading { try $0.pendingRequests(app: app) }
            return Outcome(output: json ? pendingJSON(requests) : pendingText(requests), error: "", status: 0)
        } catch {
            return Outcome(output: "", error: "bgtask pending: \((error as? StoreError)?.message ?? "\(error)")\n", status: 1)
        }
    }

    /// `apps` and `pending` from the daemon's store, read-only, when it is not running.
    static func offline(_ command: DaemonCommand, stateDirectory: String) -> Outcome? {
        let database = URL(fileURLWithPath: stateDirectory).appendingPathComponent("scheduler.sqlite")
        // Nothing there, in a directory that could hold it: a fresh account. A link leading
        // nowhere, a directory in the store's place or a state directory that is a file is
        // read below and named (it said "nothing is installed").
        guard !SchedulerStore.isAbsent(at: database) else {
            // No daemon has kept state here (a fresh account): nothing is installed or
            // pending with it, which is the answer, as from an empty store. Not for a
            // daemon named with --socket: a mistyped path must not read as "nothing".
            guard command.socket == nil else { return nil }
            let note = "bgtaskd is not running and has kept no state here (no \(database.path)): nothing is installed with it\n"
            switch command.request {
            case .apps: return Outcome(output: command.json ? ReportJSON.text([InstalledAppRow](), fallback: "[]") : InstalledAppRow.text([]), error: note, status: 0)
            case .pending: return Outcome(output: command.json ? pendingJSON([]) : pendingText([]), error: note, status: 0)
            default: return nil
            }
        }
        let note = "bgtaskd is not running; read from \(database.path)\n"
            + CorruptStoreQuarantine.setAside(besides: database.path)
                .map { CorruptStoreQuarantine.setAsideWarning(at: $0, consequence: "what could not be read back from it is not in this one") }.joined()
        do {
            let store = try SchedulerStore.openForReading(at: database)
            switch command.request {
            case .apps:
                // The daemon's rows, as they are with no daemon: nothing runs, the switch and
                // the pending requests as stored.
                let pending = try store.pendingRequests()
                let switches = try store.appSettings(named: AppSettingName.backgroundRefresh)
                let rows = try store.installedApps().apps.sorted { $0.app < $1.app }.map { installed in
                    InstalledAppRow(
                        app: installed.app.rawValue, executable: installed.executable, manifest: installed.manifestPath,
                        state: "notRunning", pid: nil, pending: pending.filter { $0.app == installed.app }.count, running: 0,
                        backgroundRefresh: switches[installed.app] != "off")
                }
                return Outcome(output: command.json ? ReportJSON.text(rows, fallback: "[]") : InstalledAppRow.text(rows), error: note, status: 0)
            case .pending(let app):
                let requests = try store.pendingRequests().filter { app == nil || $0.app == app }.sorted { $0.key < $1.key }
                return Outcome(output: command.json ? pendingJSON(requests) : pendingText(requests), error: note, status: 0)
            default:
                return nil
            }
        } catch {
            return Outcome(output: "", error: "bgtask \(command.name): bgtaskd is not running, and its store could not be read: \(error)\n", status: 1)
        }
    }
}

extension DaemonCommand {
    /// `bgtask why` from bgtaskd, or `nil` when the app's own store is to answer (see
    /// ``live(_:json:command:socket:environment:)``).
    static func liveWhy(_ options: WhyCommand.Options, environment: [String: String]) -> Outcome? {
        live(.why(app: AppID(options.app), identifier: options.identifier), json: options.json, command: "why", socket: options.socket, environment: environment)
    }

    /// `request` answered by bgtaskd at `socket` (`--socket PATH`), else at its default
    /// socket; or `nil` when the caller is to answer itself (`conditions` and `policy` read
    /// the device and the defaults here, `why` the app's own store): no daemon runs at the
    /// default socket, or, for `why`, the app is not installed with it. A daemon named with
    /// `--socket` must answer: none running there fails (exit 1) saying how to start one, as
    /// every daemon command does, rather than answering from here unasked. So does a daemon
    /// that is there but will not answer (at its connection limit, another user's, stuck):
    /// an answer from here would not be the daemon's, and would not say so.
    static func live(_ request: AdminRequest, json: Bool, command: String, socket: String?, environment: [String: String]) -> Outcome? {
        var warnings: [String] = []
        let socketPath: String
        do {
            socketPath = try DaemonPaths.socketPath(environment: environment, socketOverride: socket, uid: getuid(), warnings: &warnings)
        } catch {
            // Without --socket: nowhere a daemon could listen, so none to ask.
            return socket == nil ? nil : failure(error, command: command)
        }
        do {
            let reply = try ask(request, socket: socketPath, connectTimeout: .seconds(2))
            if case .failed(let failure) = reply, failure.code == .notInstalled { return nil }
            return render(reply, json: json, command: command)
        } catch let error as ConnectError where error.isNoDaemon && socket == nil {
            return nil
        } catch {
            return failure(error, command: command)
        }
    }
}

extension DaemonCommand {
    /// The "Daemon commands" section of docs/cli.md, generated from ``table`` (a test checks
    /// the page against it, so the reference and `--help` cannot drift).
    static var reference: String {
        var lines = [
            "## Daemon commands",
            "",
            "Generated from the table in `Sources/bgtask/DaemonCommands.swift` (the same table as `bgtask --help`).",
            "Each takes `--socket PATH` (default `$XDG_RUNTIME_DIR/bgtaskd/socket`) and `--help`; read commands take `--json`.",
            "",
            "| command | what it does |",
            "|---|---|",
        ]
        for spec in table {
            // A pipe inside a table cell must be escaped, even in code.
            lines.append("| `bgtask \(spec.synopsis.replacingOccurrences(of: "|", with: "\\|"))` | \(spec.summary) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
