import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization
import Testing
import SchedulerCore

@Suite struct AssertionTests {
    /// An outside thread probe: two threads flipping the app between background and
    /// foreground left its observers told a state it was not in (13 rounds of 30), since each
    /// change delivered its effects after releasing the lock. They are delivered in the order
    /// the changes were made now.
    @Test func lifecycleChangesFromManyThreadsReachObserversInTheOrderTheyHappened() throws {
        let (_, context) = try makeDevice()
        let application = context.application
        context.withCurrent { application.enterForeground() }
        let observed = Mutex<[ApplicationLifecycleState]>([])
        application.observeState { state in observed.withLock { $0.append(state) } }
        for round in 0..<40 {
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for flip in 0..<20 {
                    if (thread + flip) % 2 == 0 { application.enterBackground() } else { application.enterForeground() }
                }
            }
            let (last, repeats) = observed.withLock { states in
                (states.last, zip(states, states.dropFirst()).filter { $0 == $1 }.count)
            }
            #expect(last == nil || last == application.lifecycleState, "round \(round): told \(String(describing: last)), in \(application.lifecycleState)")
            #expect(repeats == 0, "round \(round): the same state told twice in a row \(repeats) times")
        }
    }

    /// A change made by an observer, while the effects of another are delivered, is
    /// delivered after them, never inside them, and nothing waits for the other.
    @Test func aChangeFromAnObserverIsDeliveredAfterTheOneItObserved() throws {
        let (_, context) = try makeDevice()
        let application = context.application
        context.withCurrent { application.enterForeground() }
        let observed = Mutex<[ApplicationLifecycleState]>([])
        application.observeState { state in
            observed.withLock { $0.append(state) }
            // Back to the foreground at once, from the observer of the background.
            if state == .background { application.enterForeground() }
        }
        application.observeState { state in observed.withLock { $0.append(state) } }
        application.enterBackground()
        #expect(observed.withLock { $0 } == [.background, .background, .active, .active], "\(observed.withLock { $0 })")
        #expect(application.lifecycleState == .active)
    }
    @Test func appWithoutAssertionsIsSuspendedFiveSecondsAfterEnteringTheBackground() async throws {
        let (device, context) = try makeDevice()
        context.withCurrent { UIApplication.shared.enterForeground() }
        #expect(context.application.applicationState == .active)
        #expect(context.application.backgroundTimeRemaining == .greatestFiniteMagnitude)
        context.withCurrent { UIApplication.shared.enterBackground() }
        await device.run(for: 4.9)
        #expect(context.application.lifecycleState == .background)
        await device.run(for: 0.2)
        #expect(context.application.lifecycleState == .suspended)
    }

    @Test func assertionBuysThirtySecondsThenExpirationThenTermination() async throws {
        let (device, context) = try makeDevice()
        // A shared reference: the handler is main-actor (as on iOS), so it cannot capture a
        // local Mutex, which lives in this task's region.
        let expiredAt = LockedBox<Date?>(nil)
        context.withCurrent {
            UIApplication.shared.enterForeground()
            _ = UIApplication.shared.beginBackgroundTask(withName: "Upload") {
                expiredAt.withLock { $0 = BGAppContext.current?.driver.clock.now() }
                // Leaks: never ends the assertion.
            }
            UIApplication.shared.enterBackground()
        }
        await device.run(for: 10)
        #expect(abs(context.application.backgroundTimeRemaining - 20) < 0.001)
        await device.run(for: 21)
        #expect(expiredAt.withLock { $0 } == testStart.addingTimeInterval(30))
        #expect(context.application.lifecycleState == .background)
        await device.run(for: 5)
        #expect(context.application.lifecycleState == .notRunning)
        let reason = device.trace.compactMap { event -> TerminationReason? in
            if case .appTerminated(_, let reason, _) = event { return reason } else { return nil }
        }.first
        #expect(reason?.code == TerminationReason.backgroundTaskNotFinishedCode)
        #expect(reason?.message.contains("Upload") == true)
    }

    /// An embedded process that nothing ended after the watchdog terminated its app runs on
    /// "not running" (no background time, `.invalid` assertions) until it shows signs of
    /// life: the user opening it, or one of its tasks starting, launches it again.
    @Test func aProcessThatOutlivesItsTerminationIsLaunchedAgainByTheUserOrATask() async throws {
        let ran = LockedBox(0)
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                ran.withLock { $0 += 1 }
                task.setTaskCompleted(success: true)
            }
        }
        // Opened, then backgrounded with an assertion never ended: the watchdog ends the app.
        func leakUntilTerminated() async {
            context.withCurrent {
                UIApplication.shared.enterForeground()
                _ = UIApplication.shared.beginBackgroundTask(withName: "Leak", expirationHandler: nil)
                UIApplication.shared.enterBackground()
            }
            await device.run(for: 36)
            #expect(context.application.lifecycleState == .notRunning)
        }
        await leakUntilTerminated()
        #expect(context.withCurrent { UIApplication.shared.beginBackgroundTask(expirationHandler: nil) } == .invalid)
        // A task of the app (due at once on this favourable device) launches it into the
        // background.
        try submit(BGAppRefreshTaskRequest(identifier: refreshID), in: context)
        await device.settle()
        #expect(ran.withLock { $0 } == 1)
        await device.run(for: 10)
        #expect(context.application.lifecycleState == .suspended, "launched for the task, then suspended as any app")
        // Leaked again, terminated again; then the user opens it.
        await leakUntilTerminated()
        context.withCurrent { UIApplication.shared.enterForeground() }
        #expect(context.application.lifecycleState == .active, "the user opened it: launched again")
        let identifier = context.withCurrent { UIApplication.shared.beginBackgroundTask(withName: "Upload", expirationHandler: nil) }
        #expect(identifier != .invalid)
        context.withCurrent { UIApplication.shared.endBackgroundTask(identifier) }
    }

    @Test func endingTheAssertionSuspendsTheApp() async throws {
        let (device, context) = try makeDevice()
        let identifier = context.withCurrent { () -> UIBackgroundTaskIdentifier in
            UIApplication.shared.enterForeground()
            let id = UIApplication.shared.beginBackgroundTask { }
            UIApplication.shared.enterBackground()
            return id
        }
        await device.run(for: 12)
        #expect(context.application.lifecycleState == .background)
        context.withCurrent { UIApplication.shared.endBackgroundTask(identifier) }
        await device.settle()
        #expect(context.application.lifecycleState == .suspended)
    }

    @Test func endBackgroundTaskErrorsNameTheIdentifier() throws {
        let (_, context) = try makeDevice()
        let application = context.application
        context.withCurrent { application.enterForeground() }
        let identifier = context.withCurrent { application.beginBackgroundTask(withName: "x") }
        #expect(throws: AssertionError(.invalidIdentifier, identifier: 0)) { try application.end(.invalid) }
        #expect(throws: AssertionError(.unknownIdentifier, identifier: 999)) { try application.end(UIBackgroundTaskIdentifier(rawValue: 999)) }
        try application.end(identifier)
        #expect(throws: AssertionError(.alreadyEnded, identifier: identifier.rawValue)) { try application.end(identifier) }
        context.withCurrent { application.endBackgroundTask(identifier) }
        let messages = context.driver.log.messages.map(\.text)
        #expect(messages.contains { $0.contains("twice") && $0.contains("\(identifier.rawValue)") })
    }

    @Test func suspendedAppGetsInvalidIdentifier() async throws {
        let (device, context) = try makeDevice()
        await device.run(for: 10)
        #expect(context.application.lifecycleState == .suspended)
        #expect(context.withCurrent { UIApplication.shared.beginBackgroundTask(expirationHandler: nil) } == .invalid)
    }

    @Test func performExpiringActivityRunsTheBlockUnexpired() async throws {
        let (device, context) = try makeDevice()
        let calls = Mutex<[Bool]>([])
        context.withCurrent {
            UIApplication.shared.enterForeground()
            ProcessInfo.processInfo.performExpiringActivity(withReason: "flush") { expired in
                calls.withLock { $0.append(expired) }
            }
        }
        await device.settle()  // the block is counted as app work until it returns
        #expect(calls.withLock { $0 } == [false])
    }

    @Test func performExpiringActivityIsCalledExpiredAtOnceWhenNoTimeCanBeGranted() async throws {
        let (device, context) = try makeDevice()
        await device.run(for: 10)
        #expect(context.application.lifecycleState == .suspended)
        let calls = Mutex<[Bool]>([])
        context.withCurrent {
            ProcessInfo.processInfo.performExpiringActivity(withReason: "flush") { expired in
                calls.withLock { $0.append(expired) }
            }
        }
        await device.settle()
        #expect(calls.withLock { $0 } == [true])
    }
}

/// An app bgtaskd launched into the background for its tasks (`BGTASK_LAUNCH=background`)
/// reports `.background`, as iOS does for a background launch.
@Suite struct BackgroundLaunchTests {
    @Test func anAppLaunchedIntoTheBackgroundIsInTheBackgroundAndKeepsItsAssertions() async throws {
        let device = try SimulatedDevice(start: testStart, policies: .foundation)
        let names = Mutex<[String]>([])
        let application = Mutex<ObjectIdentifier?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: nil, object: nil, queue: nil) { note in
            // Every app of every test posts on the default center: keep this app's.
            guard note.name.rawValue.hasPrefix("UIApplication"), let object = note.object as? BGApplication,
                  application.withLock({ $0 }) == ObjectIdentifier(object) else { return }
            names.withLock { $0.append(note.name.rawValue) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let context = BGAppContext(app: testApp, manifest: testManifest, driver: device.driver, launchedInBackground: true)
        application.withLock { $0 = ObjectIdentifier(context.application) }
        context.withCurrent { context.application.launch() }
        #expect(context.application.applicationState == .background, "already while the launch methods run, as on iOS")
        context.withCurrent { context.application.finishLaunching() }
        await device.settle()
        #expect(context.application.applicationState == .background)
        #expect(context.application.lifecycleState == .background)
        #expect(context.application.hasFinishedLaunching)
        #expect(names.withLock { $0 } == ["UIApplicationDidFinishLaunchingNotification"], "no foreground was left: no didEnterBackground")
        #expect(context.application.backgroundTimeRemaining == .greatestFiniteMagnitude, "the task's budget is the daemon's")
        // The daemon suspends it, not the 5 s delay of an app that left the foreground.
        await device.run(for: 60)
        #expect(context.application.lifecycleState == .background)
        // An assertion a minute in still buys its whole window.
        let identifier = context.withCurrent { UIApplication.shared.beginBackgroundTask(withName: "Save draft") {} }
        #expect(identifier != .invalid)
        #expect(abs(context.application.backgroundTimeRemaining - 30) < 0.001)
        context.withCurrent { UIApplication.shared.endBackgroundTask(identifier) }
        await device.run(for: 60)
        #expect(context.application.lifecycleState == .background)
        // Opened by the user, it is an ordinary app.
        context.withCurrent { UIApplication.shared.enterForeground() }
        #expect(context.application.applicationState == .active)
    }
}
