// bgtask-daemon-testapp: an app written as iOS code (bootstrap, launch, register in
// didFinishLaunching, finishLaunching, dispatchMain) for the daemon's end-to-end tests
// (Tests/DaemonTests, docs/testing.md). Installed with bgtaskd, its manifest's
// BGTaskLaunchArguments choose what its handlers do; run by hand (no daemon), the same
// code uses the embedded scheduler. It appends one line per event to the --events file,
// so tests poll that file instead of sleeping:
//
//   launched <pid> <daemon|embedded>    the scheduler context is up (and linked or not)
//   registered <id> <true|false>        register(forTaskWithIdentifier:) returned
//   finished-launching                  finishLaunching() returned
//   launch-state <active|not active>    the application's state then (active when the
//                                       user started it, or bgtaskd did for a tap)
//   launch-response <id> <action>|none  (--respond-delegate) the scene connection options'
//                                       notification response
//   submitted <id> | submit-failed <id> <error>
//   simulated <id> | simulate-failed <id> <error>
//   handler <id> <pid>                  a launch handler started
//   completed <id> <true|false>         the handler called setTaskCompleted
//   expired <id>                        the expiration handler ran
//   remote-notification <keys>          the remote-notification handler ran (a push)
//   notification-added <id> | notification-failed <id> <error>
//   delivered <ids> badge <n|none>      (--notifications) the delivered list and the badge
//   sigterm                             SIGTERM arrived (with --ignore-sigterm)
//   state <state>                       the application's lifecycle state changed
//   device-change <notification> battery=<percent|-> state=<n> lowPower=<b> thermal=<n>
//                                       (--device-changes) a change notification and what
//                                       ProcessInfo and UIDevice say when it is heard
//
// usage: bgtask-daemon-testapp --events FILE [--behaviour B] [--register ID]...
//        [--submit ID]... [--submit-processing ID]... [--submit-continued ID]... [--submit-after S]
//        [--simulate-launch ID] [--unknown ID] [--work S] [--ignore-sigterm]
//        [--rounds N] [--exit-after-launch] [--state DIR] [--submit-on-signal ID]
//        [--cancel-on-signal ID] [--launch-seconds S]
//
//   B: complete (default: completes after --work seconds), hang (never completes; its
//      expiration handler completes), ignore-expiration (never completes, not even when
//      expired), crash (aborts in the handler), exit-before-register (exits with status 3
//      before registering), stall-before-launch (never touches the API: never connects)
//   --submit ID: a refresh request, earliest begin --submit-after seconds from now (3600)
//   --rounds N: submit the --submit-processing requests N times over (later ones replace)
//   --submit-continued ID: a continued-processing request (title "Export", the default
//      strategy: queued behind the cap), submitted after the others; its handler (the
//      registration of a `prefix.*` wildcard) reports one unit of progress of one at its
//      completion (behaviour complete) or none (hang)
//   --exit-after-launch: exit 0 once the submissions and the simulated launch are done
//   --unknown ID: the manifest given in code also permits ID (the installed one does
//      not); the app registers and submits it, sets a retry policy for it, and records
//      what the scheduler said.
//   --submit-on-signal ID: on each SIGUSR1, submits a refresh request for ID (earliest
//      begin --submit-after seconds from then) and records submitted/submit-failed.
//   --cancel-on-signal ID: on each SIGUSR2, cancels the request for ID and records
//      `cancelled <id>` once cancel returned.
//   --launch-seconds S: handles SIGTERM from launch() on, as the example app does, then
//      takes S seconds in its launch code (records `launching`) before registering.
//   --fill-checkpoints: saves checkpoints of 262,044 bytes until one is refused (at most
//      100), records `checkpoints-saved N` and `checkpoint-refused <error>`, and tries an
//      empty key (`checkpoint-empty-key <error>`).
//   --notify-after S: asks for notifications (alert, sound, badge) and adds the request
//      "reminder" (title Reminder, body "Time to read", badge 7) firing S seconds later;
//      with --notify-in-handler, from the first launch handler instead, before it completes.
//   --notifications: records the delivered notifications' identifiers and the badge once
//      launched (`delivered reminder badge 7`; `delivered - badge none` when none).
//   --device-changes: monitors the battery and records ProcessInfo's and UIDevice's change
//      notifications (observed in didFinishLaunching, as apps do).
//   --respond-delegate: sets the notification center's delegate in didFinishLaunching and a
//      category "reminder" (the reminder's) with a background action "snooze" and a text
//      action "reply"; the delegate records `responded <id> <action>[ text=<t>] state=<s>`
//      (the application's state when it is told) before it calls its completion handler.
import BackgroundTasks
import Foundation
import UserNotifications

func usage(_ message: String) -> Never {
    try? FileHandle.standardError.write(contentsOf: Data("bgtask-daemon-testapp: \(message)\n".utf8))
    exit(64)
}

enum Behaviour: String, Sendable {
    case complete, hang, ignoreExpiration = "ignore-expiration", crash
    case exitBeforeRegister = "exit-before-register", stallBeforeLaunch = "stall-before-launch"
}

/// What the command line asked for.
struct Options: Sendable {
    var eventsPath = ""
    var behaviour = Behaviour.complete
    var registered: [String] = []
    var refreshSubmits: [String] = []
    var processingSubmits: [String] = []
    var continuedSubmits: [String] = []
    var submitAfter: TimeInterval = 3600
    var simulateLaunch: String?
    var unknown: String?
    var work: TimeInterval = 0
    var ignoreSigterm = false
    var exitAfterLaunch = false
    var submitRounds = 1
    var stateDirectory: URL?
    var submitOnSignal: String?
    var cancelOnSignal: String?
    var fillCheckpoints = false
    var launchSeconds: TimeInterval = 0
    var notifyAfter: TimeInterval?
    var notifyInHandler = false
    var notifications = false
    var deviceChanges = false
    var respondDelegate = false

    static func parse(_ given: [String]) -> Options {
        var options = Options()
        var arguments = given
        while !arguments.isEmpty {
            let option = arguments.removeFirst()
            if option == "--ignore-sigterm" { options.ignoreSigterm = true; continue }
            if option == "--exit-after-launch" { options.exitAfterLaunch = true; continue }
            if option == "--fill-checkpoints" { options.fillCheckpoints = true; continue }
            if option == "--notify-in-handler" { options.notifyInHandler = true; continue }
            if option == "--notifications" { options.notifications = true; continue }
            if option == "--device-changes" { options.deviceChanges = true; continue }
            if option == "--respond-delegate" { options.respondDelegate = true; continue }
            guard let value = arguments.first else { usage("\(option) needs a value") }
            arguments.removeFirst()
            func seconds() -> TimeInterval {
                guard let number = TimeInterval(value), number.isFinite, (0...86_400).contains(number) else {
                    usage("\(option) needs a number of seconds from 0 to 86400, got '\(value)'")
                }
                return number
            }
            switch option {
            case "--events": options.eventsPath = value
            case "--behaviour":
                guard let parsed = Behaviour(rawValue: value) else { usage("unknown --behaviour '\(value)'") }
                options.behaviour = parsed
            case "--register": options.registered.append(value)
            case "--submit": options.refreshSubmits.append(value)
            case "--submit-processing": options.processingSubmits.append(value)
            case "--submit-continued": options.continuedSubmits.append(value)
            case "--submit-after": options.submitAfter = seconds()
            case "--simulate-launch": options.simulateLaunch = value
            case "--unknown": options.unknown = value
            case "--work": options.work = seconds()
            case "--rounds":
                guard let rounds = Int(value), (1...100_000).contains(rounds) else { usage("--rounds needs a whole number from 1 to 100000, got '\(value)'") }
                options.submitRounds = rounds
            case "--state": options.stateDirectory = URL(fileURLWithPath: value)
            case "--submit-on-signal": options.submitOnSignal = value
            case "--cancel-on-signal": options.cancelOnSignal = value
            case "--launch-seconds": options.launchSeconds = seconds()
            case "--notify-after": options.notifyAfter = seconds()
            default: usage("unknown option '\(option)'")
            }
        }
        guard !options.eventsPath.isEmpty else { usage("--events FILE is required") }
        return options
    }
}

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))

/// Appends one line with one write(2) on an O_APPEND descriptor: lines never interleave.
let events: Int32 = open(options.eventsPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
guard events >= 0 else { usage("cannot open --events \(options.eventsPath): errno \(errno)") }
@Sendable func record(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(events, $0.baseAddress, $0.count) }
}

if options.behaviour == .stallBeforeLaunch {
    record("launched \(getpid()) none")
    while true { pause() }
}

var configuration = EmbeddedScheduler.Configuration(stateDirectory: options.stateDirectory)
if let unknown = options.unknown {
    // The app believes it may use `unknown`; the daemon judges with the installed manifest.
    do {
        var manifest = try EmbeddedScheduler.loadManifest(configuration)
        manifest.permittedIdentifiers.append(unknown)
        configuration.manifest = manifest
    } catch {
        usage("cannot load the manifest: \(error)")
    }
}
do {
    try EmbeddedScheduler.bootstrap(configuration)
} catch {
    record("bootstrap-failed \(error)")
    exit(1)
}

let application = UIApplication.shared
application.launch()
// Test instrumentation (not iOS API): whether the scheduler is bgtaskd's.
record("launched \(getpid()) \(BGAppContext.resolve().driver.isLinkedToDaemon ? "daemon" : "embedded")")
application.observeState { record("state \($0)") }

if options.behaviour == .exitBeforeRegister {
    record("exiting")
    exit(3)
}
if options.launchSeconds > 0 {
    // A slow launch (registering and submitting can wait on a busy daemon): the signals
    // are handled from here, so a SIGTERM meanwhile ends the app in order (status 0).
    if !options.ignoreSigterm { application.handleTerminationSignals() }
    record("launching")
    Thread.sleep(forTimeInterval: options.launchSeconds)
}

/// Asks for notifications and adds "reminder", `after` seconds from now; returns once added.
func addReminder(after: TimeInterval) {
    let center = UNUserNotificationCenter.current()
    let done = DispatchSemaphore(value: 0)
    center.requestAuthorization(options: [.alert, .sound, .badge]) { _, _ in
        let content = UNMutableNotificationContent()
        content.title = "Reminder"
        content.body = "Time to read"
        content.badge = 7
        content.sound = .default
        if options.respondDelegate { content.categoryIdentifier = "reminder" }
        let request = UNNotificationRequest(identifier: "reminder", content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: after, repeats: false))
        center.add(request) { error in
            record(error.map { "notification-failed reminder \($0)" } ?? "notification-added reminder")
            done.signal()
        }
    }
    done.wait()
}

// didFinishLaunching: register the handlers.
func handle(_ task: BGTask) {
    let identifier = task.identifier
    record("handler \(identifier) \(getpid())")
    if options.notifyInHandler, let after = options.notifyAfter { addReminder(after: after) }
    let continued = task as? BGContinuedProcessingTask
    continued?.progress.totalUnitCount = 1
    switch options.behaviour {
    case .complete:
        task.expirationHandler = {
            record("expired \(identifier)")
            task.setTaskCompleted(success: false)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + options.work) {
            continued?.progress.completedUnitCount = 1
            // Recorded after the call: a test that signals the app once it reads this line
            // must find the completion already handed to the scheduler.
            task.setTaskCompleted(success: true)
            record("completed \(identifier) true")
        }
    case .hang:
        task.expirationHandler = {
            record("expired \(identifier)")
            task.setTaskCompleted(success: false)
            record("completed \(identifier) false")
        }
    case .ignoreExpiration:
        task.expirationHandler = { record("expired \(identifier)") }
    case .crash:
        record("crashing \(identifier)")
        abort()
    case .exitBeforeRegister, .stallBeforeLaunch:
        break
    }
}
if let unknown = options.unknown {
    // The API passes it (the code's manifest permits it); bgtaskd judges by the installed one.
    BGTaskScheduler.shared.setRetryPolicy(.fixed(60), forTaskWithIdentifier: unknown)
}
for identifier in options.registered + [options.unknown].compactMap({ $0 }) {
    let accepted = BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { handle($0) }
    record("registered \(identifier) \(accepted)")
}

// application(_:didReceiveRemoteNotification:fetchCompletionHandler:): a remote wake.
application.setRemoteNotificationHandler { userInfo, completion in
    let keys = userInfo.userInfo.keys.map { "\($0)" }.sorted().joined(separator: ",")
    record("remote-notification \(keys)")
    completion(.newData)
}

/// The notification center's delegate (--respond-delegate): records each response.
final class ResponseRecorder: NSObject, UNUserNotificationCenterDelegate, Sendable {
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse, withCompletionHandler completionHandler: @escaping () -> Void) {
        let text = (response as? UNTextInputNotificationResponse).map { " text=\($0.userText)" } ?? ""
        let state = MainActor.assumeIsolated { UIApplication.shared.applicationState }
        record("responded \(response.notification.request.identifier) \(response.actionIdentifier)\(text) state=\(state == .active ? "active" : state == .background ? "background" : "inactive")")
        completionHandler()
    }
}
/// Kept for the life of the process (the center holds its delegate weakly).
let responseRecorder = ResponseRecorder()
if options.respondDelegate {
    let center = UNUserNotificationCenter.current()
    center.setNotificationCategories([UNNotificationCategory(identifier: "reminder", actions: [
        UNNotificationAction(identifier: "snooze", title: "Snooze"),
        UNTextInputNotificationAction(identifier: "reply", title: "Reply", textInputButtonTitle: "Send", textInputPlaceholder: "Reply"),
    ], intentIdentifiers: [])])
    center.delegate = responseRecorder
}

/// Kept for the life of the process (the device's change observers).
nonisolated(unsafe) var deviceObservers: [any NSObjectProtocol] = []
if options.deviceChanges {
    UIDevice.current.isBatteryMonitoringEnabled = true
    let names: [Notification.Name] = [
        .NSProcessInfoPowerStateDidChange, ProcessInfo.thermalStateDidChangeNotification,
        UIDevice.batteryStateDidChangeNotification, UIDevice.batteryLevelDidChangeNotification,
    ]
    for name in names {
        deviceObservers.append(NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
            let device = UIDevice.current
            let level = device.batteryLevel < 0 ? "-" : String(Int((device.batteryLevel * 100).rounded()))
            record("device-change \(note.name.rawValue) battery=\(level) state=\(device.batteryState.rawValue) lowPower=\(ProcessInfo.processInfo.isLowPowerModeEnabled) thermal=\(ProcessInfo.processInfo.thermalState.rawValue)")
        })
    }
}

/// Kept for the life of the process (a released source stops delivering).
nonisolated(unsafe) var signalSources: [any DispatchSourceSignal] = []
if options.ignoreSigterm {
    signal(SIGTERM, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .main)
    source.setEventHandler { record("sigterm") }
    source.activate()
    signalSources.append(source)
} else if options.launchSeconds == 0 {
    application.handleTerminationSignals()
}
application.finishLaunching()
record("finished-launching")
record("launch-state \(MainActor.assumeIsolated { application.applicationState } == .active ? "active" : "not active")")
if options.respondDelegate {
    // What a scene delegate's connection options would carry (a tap that started the app).
    let response = MainActor.assumeIsolated { UIScene.ConnectionOptions().notificationResponse }
    record("launch-response \(response.map { "\($0.notification.request.identifier) \($0.actionIdentifier)" } ?? "none")")
}

func submit(_ request: BGTaskRequest) {
    request.earliestBeginDate = Date(timeIntervalSinceNow: options.submitAfter)
    do {
        try BGTaskScheduler.shared.submit(request)
        record("submitted \(request.identifier)")
    } catch {
        record("submit-failed \(request.identifier) \(error)")
    }
}
for identifier in options.refreshSubmits + [options.unknown].compactMap({ $0 }) { submit(BGAppRefreshTaskRequest(identifier: identifier)) }
if options.submitRounds == 1 {
    for identifier in options.processingSubmits { submit(BGProcessingTaskRequest(identifier: identifier)) }
} else {
    // Resubmits replace: round r asks for --submit-after + 10 r seconds, recorded as
    // `submitted <id> <earliest begin, whole seconds since 1970>` once submit returned.
    let base = Date().timeIntervalSince1970.rounded(.down) + options.submitAfter
    for round in 0..<options.submitRounds {
        for identifier in options.processingSubmits {
            let request = BGProcessingTaskRequest(identifier: identifier)
            let earliest = base + Double(round * 10)
            request.earliestBeginDate = Date(timeIntervalSince1970: earliest)
            do {
                try BGTaskScheduler.shared.submit(request)
                record("submitted \(identifier) \(Int(earliest))")
            } catch {
                record("submit-failed \(identifier) \(error)")
            }
        }
    }
}
for identifier in options.continuedSubmits {
    do {
        try BGTaskScheduler.shared.submit(BGContinuedProcessingTaskRequest(identifier: identifier, title: "Export", subtitle: "Starting"))
        record("submitted \(identifier)")
    } catch {
        record("submit-failed \(identifier) \(error)")
    }
}
if let simulateLaunch = options.simulateLaunch {
    do {
        try BGTaskScheduler.shared.simulateLaunch(forTaskWithIdentifier: simulateLaunch)
        record("simulated \(simulateLaunch)")
    } catch {
        record("simulate-failed \(simulateLaunch) \(error)")
    }
}
if let identifier = options.submitOnSignal {
    signal(SIGUSR1, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: DispatchQueue(label: "submit-on-signal"))
    source.setEventHandler { submit(BGAppRefreshTaskRequest(identifier: identifier)) }
    source.activate()
    signalSources.append(source)
}
if let identifier = options.cancelOnSignal {
    signal(SIGUSR2, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGUSR2, queue: DispatchQueue(label: "cancel-on-signal"))
    source.setEventHandler {
        BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: identifier)
        record("cancelled \(identifier)")
    }
    source.activate()
    signalSources.append(source)
}
if let after = options.notifyAfter, !options.notifyInHandler { addReminder(after: after) }
if options.notifications {
    let done = DispatchSemaphore(value: 0)
    UNUserNotificationCenter.current().getDeliveredNotifications { delivered in
        let identifiers = delivered.map(\.request.identifier).joined(separator: ",")
        let badge = application.applicationIconBadgeNumber
        record("delivered \(identifiers.isEmpty ? "-" : identifiers) badge \(badge == 0 ? "none" : String(badge))")
        done.signal()
    }
    done.wait()
}
if options.fillCheckpoints {
    let checkpoints = BGTaskScheduler.shared.checkpoints
    let chunk = String(repeating: "y", count: 262_044)
    var saved = 0
    do {
        while saved < 100 {
            try checkpoints.save(chunk, forKey: "chunk\(saved)")
            saved += 1
        }
    } catch {
        record("checkpoint-refused \(error)")
    }
    record("checkpoints-saved \(saved)")
    do {
        try checkpoints.save(1, forKey: "")
    } catch {
        record("checkpoint-empty-key \(error)")
    }
}
if options.exitAfterLaunch {
    // Submissions are durable when submit returns: nothing is lost by leaving now.
    record("exiting")
    exit(0)
}
dispatchMain()
