import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization
import Testing
import SchedulerCore

@Suite struct SchedulerAPITests {
    @Test func registerReturnsFalseForAnIdentifierNotInTheManifest() throws {
        let accepted = Mutex<[Bool]>([])
        _ = try makeDevice {
            let ok = BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.other", using: nil) { _ in }
            let malformed = BGTaskScheduler.shared.register(forTaskWithIdentifier: "", using: nil) { _ in }
            let good = BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { _ in }
            accepted.withLock { $0 = [ok, malformed, good] }
        }
        #expect(accepted.withLock { $0 } == [false, false, true])
    }

    @Test func taskRunsAtItsEarliestBeginDateNotBefore() async throws {
        let started = Mutex<[Date]>([])
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                started.withLock { $0.append(BGAppContext.current!.driver.clock.now()) }
                task.setTaskCompleted(success: true)
            }
        }
        try submit(refresh(after: 900), in: context)
        await device.run(for: 899)
        #expect(started.withLock { $0 }.isEmpty)
        await device.run(for: 2)
        #expect(started.withLock { $0 } == [testStart.addingTimeInterval(900)])
        #expect(device.runs(of: refreshID).map(\.outcome) == [.success])
        #expect(device.driver.pendingRequests(of: testApp).isEmpty, "the request is consumed at launch")
    }

    @Test func handlerSeesItsConcreteTaskClassAndCanResubmitFromInside() async throws {
        let kinds = Mutex<[String]>([])
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { task in
                let refreshTask = task as! BGAppRefreshTask
                kinds.withLock { $0.append(String(describing: type(of: refreshTask))) }
                let next = BGAppRefreshTaskRequest(identifier: refreshID)
                next.earliestBeginDate = Date(timeIntervalSinceNow: 600)
                try? BGTaskScheduler.shared.submit(next)
                task.setTaskCompleted(success: true)
            }
        }
        try submit(refresh(after: 600), in: context)
        await device.run(for: 3600)
        #expect(kinds.withLock { $0 }.count == 6)
        #expect(kinds.withLock { $0 }.allSatisfy { $0 == "BGAppRefreshTask" })
    }

    @Test func submittingAgainReplacesThePendingRequest() throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        try submit(refresh(after: 600), in: context)
        try submit(refresh(after: 1200), in: context)
        let pending = device.driver.pendingRequests(of: testApp)
        #expect(pending.count == 1)
        #expect(pending.first?.earliestBeginDate == testStart.addingTimeInterval(1200))
    }

    @Test func eleventhProcessingRequestIsRefusedWithTooManyPending() throws {
        let (_, context) = try makeDevice {
            for index in 0..<12 {
                BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.test.p\(index)", using: nil) { $0.setTaskCompleted(success: true) }
            }
        }
        for index in 0..<10 {
            let request = BGProcessingTaskRequest(identifier: "com.example.test.p\(index)")
            request.requiresExternalPower = true
            request.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
            try submit(request, in: context)
        }
        let eleventh = BGProcessingTaskRequest(identifier: "com.example.test.p10")
        eleventh.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
        #expect {
            try submit(eleventh, in: context)
        } throws: { error in
            (error as? BGTaskScheduler.Error)?.code == .tooManyPendingTaskRequests
        }
        do {
            try submit(eleventh, in: context)
            Issue.record("expected an error")
        } catch BGTaskScheduler.Error.tooManyPendingTaskRequests {
            // The iOS pattern `catch BGTaskScheduler.Error.code` matches.
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func backgroundRefreshOffMakesSubmitUnavailable() throws {
        let (_, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        context.application.setBackgroundRefreshEnabled(false)
        #expect(context.application.backgroundRefreshStatus == .denied)
        #expect {
            try submit(refresh(after: 60), in: context)
        } throws: { ($0 as? BGTaskScheduler.Error)?.code == .unavailable }
    }

    @Test(arguments: [Double.nan, Double.infinity, 400 * 86_400.0])
    func malformedEarliestBeginDateIsRefusedNamingTheIdentifier(offset: Double) throws {
        let (_, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let request = BGAppRefreshTaskRequest(identifier: refreshID)
        request.earliestBeginDate = Date(timeIntervalSinceReferenceDate: offset.isFinite ? Date().timeIntervalSinceReferenceDate + offset : offset)
        #expect {
            try submit(request, in: context)
        } throws: { error in
            guard let error = error as? BGTaskScheduler.Error else { return false }
            return error.code == .invalidRequest && error.message.contains(refreshID)
        }
    }

    @Test func processingWithoutTheProcessingBackgroundModeIsNotPermitted() throws {
        let device = try SimulatedDevice(start: testStart, policies: .foundation)
        let manifest = AppManifest(appID: testApp, permittedIdentifiers: [processingID], backgroundModes: ["fetch"], source: "Info.plist")
        let context = device.install(app: testApp, manifest: manifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        #expect {
            try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
        } throws: { error in
            guard let error = error as? BGTaskScheduler.Error else { return false }
            return error.code == .notPermitted && error.message.contains("processing") && error.message.contains("Info.plist")
        }
    }

    @Test func processingRequiringPowerWaitsForThePlug() async throws {
        let (device, context) = try makeDevice(conditions: Conditions(externalPower: false, networkAvailable: true)) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let request = BGProcessingTaskRequest(identifier: processingID)
        request.requiresExternalPower = true
        try submit(request, in: context)
        await device.run(for: 3600)
        #expect(device.runs(of: processingID).isEmpty)
        #expect(device.driver.location(of: RequestKey(app: testApp, identifier: processingID)) == .blocked(.externalPower))
        device.setConditions(.favorable, at: testStart.addingTimeInterval(7200))
        await device.run(for: 7200)
        let runs = device.runs(of: processingID)
        #expect(runs.map(\.startedAt) == [testStart.addingTimeInterval(7200)])
    }

    @Test func pendingTaskRequestsReturnsCopiesOfTheRightClass() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let request = BGProcessingTaskRequest(identifier: processingID)
        request.requiresNetworkConnectivity = true
        request.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
        try submit(request, in: context)
        request.requiresNetworkConnectivity = false  // the scheduler kept a copy
        let pending = await BGAppContext.$current.withValue(context) { await BGTaskScheduler.shared.pendingTaskRequests() }
        let copy = try #require(pending.first as? BGProcessingTaskRequest)
        #expect(copy.identifier == processingID)
        #expect(copy.requiresNetworkConnectivity)
        #expect(copy !== request)
        // The scheduler keeps the date on its own (virtual) clock; the app reads it back on the
        // wall clock it computed it from, so comparing it with Date() says whether it passed
        // (an outside probe: it read the virtual date, days before Date()).
        #expect(device.driver.pendingRequests(of: testApp).first?.earliestBeginDate == device.now.addingTimeInterval(3600))
        let offset = try #require(copy.earliestBeginDate).timeIntervalSinceNow
        #expect(abs(offset - 3600) < 60, "\(offset)")
        await device.run(for: 1800)
        let later = await BGAppContext.$current.withValue(context) { await BGTaskScheduler.shared.pendingTaskRequests() }
        let laterOffset = try #require(later.first?.earliestBeginDate).timeIntervalSinceNow
        #expect(abs(laterOffset - 1800) < 60, "half an hour of virtual time later: \(laterOffset)")
        context.withCurrent { BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: processingID) }
        #expect(device.driver.pendingRequests(of: testApp).isEmpty)
    }

    @Test func simulateLaunchFailsWithoutAPendingRequestAndRunsOneNow() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        #expect(throws: EngineError.self) {
            try context.withCurrent { try BGTaskScheduler.shared.simulateLaunch(forTaskWithIdentifier: processingID) }
        }
        let request = BGProcessingTaskRequest(identifier: processingID)
        request.earliestBeginDate = Date(timeIntervalSinceNow: 86_400)
        request.requiresExternalPower = true
        try submit(request, in: context)
        device.setConditions(Conditions(externalPower: false, networkAvailable: false))
        try context.withCurrent { try BGTaskScheduler.shared.simulateLaunch(forTaskWithIdentifier: processingID) }
        await device.settle()
        #expect(device.runs(of: processingID).map(\.outcome) == [.success])
        #expect(throws: EngineError.self) {
            try context.withCurrent { try BGTaskScheduler.shared.simulateExpiration(forTaskWithIdentifier: processingID) }
        }
    }
}
