import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization
import Testing

@Suite struct AssertionTests {
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
                expiredAt.withLock { $0 = AppContext.current?.driver.clock.now() }
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
