import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization
import SchedulerCore

/// A fixed instant for tests (2026-12-01 00:00 UTC).
let testStart = Date(timeIntervalSince1970: 1_796_083_200)

let refreshID = "com.example.test.refresh"
let processingID = "com.example.test.processing"
let testApp = AppID("com.example.test")

/// A manifest that permits one refresh, one processing and ten numbered processing tasks.
let testManifest = AppManifest(
    appID: testApp,
    permittedIdentifiers: [refreshID, processingID] + (0..<12).map { "com.example.test.p\($0)" } + ["com.example.test.export.*"],
    backgroundModes: ["fetch", "processing"],
    source: "test manifest"
)

/// A device at `testStart` with the test app installed; `launch` runs as its
/// `didFinishLaunching`.
func makeDevice(
    configuration: SchedulerConfiguration = .init(),
    assertions: AssertionConfiguration = .init(),
    conditions: Conditions = .favorable,
    policies: PolicySet = .foundation,
    launch: () -> Void = {}
) throws -> (SimulatedDevice, BGAppContext) {
    // The foundation's rules unless a test asks for the full policy set.
    let device = try SimulatedDevice(start: testStart, configuration: configuration, assertions: assertions, conditions: conditions, policies: policies)
    let context = device.install(app: testApp, manifest: testManifest, didFinishLaunching: launch)
    return (device, context)
}

/// Submits `request` as the app whose context is `context`.
func submit(_ request: BGTaskRequest, in context: BGAppContext) throws {
    try context.withCurrent { try BGTaskScheduler.shared.submit(request) }
}

/// A refresh request `delay` seconds from now, computed from the wall clock as iOS code
/// does (the simulated device translates it to the same offset from virtual now).
func refresh(after delay: TimeInterval, identifier: String = refreshID) -> BGAppRefreshTaskRequest {
    let request = BGAppRefreshTaskRequest(identifier: identifier)
    request.earliestBeginDate = Date(timeIntervalSinceNow: delay)
    return request
}

/// A Mutex behind a reference, for values main-actor handlers share with the test (a
/// local `Mutex` cannot be captured by a closure of another isolation).
final class LockedBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}
