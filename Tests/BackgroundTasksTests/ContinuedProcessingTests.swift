import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Synchronization
import Testing

@Suite struct ContinuedProcessingTests {
    private let exportPrefix = "com.example.test.export"

    private func makeExportDevice(handler: @escaping @Sendable (BGTask) -> Void) throws -> (SimulatedDevice, BGAppContext) {
        let (device, context) = try makeDevice()
        let accepted = context.withCurrent {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: "\(exportPrefix).*", using: nil, launchHandler: handler)
        }
        #expect(accepted)
        return (device, context)
    }

    @Test func queuedWorkRunsFirstInFirstOutBehindTheCap() async throws {
        let order = Mutex<[String]>([])
        let (device, context) = try makeExportDevice { task in
            order.withLock { $0.append(task.identifier) }
            let continued = task as! BGContinuedProcessingTask
            continued.progress.completedUnitCount = 100
            let clock = BGAppContext.current!.driver.clock
            _ = clock.schedule(at: clock.now().addingTimeInterval(10)) { task.setTaskCompleted(success: true) }
        }
        for name in ["a", "b", "c"] {
            try submit(BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).\(name)", title: "Export \(name)", subtitle: "Starting"), in: context)
        }
        await device.run(for: 1)
        #expect(order.withLock { $0 } == ["\(exportPrefix).a"], "the cap is one at a time")
        await device.run(for: 60)
        #expect(order.withLock { $0 } == ["a", "b", "c"].map { "\(exportPrefix).\($0)" })
    }

    @Test func failStrategyIsRefusedWhenItCannotStartNow() throws {
        let (_, context) = try makeExportDevice { _ in }
        try submit(BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).first", title: "Export", subtitle: ""), in: context)
        let second = BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).second", title: "Export", subtitle: "")
        second.strategy = .fail
        #expect {
            try submit(second, in: context)
        } throws: { ($0 as? BGTaskScheduler.Error)?.code == .immediateRunIneligible }
    }

    @Test func unsupportedResourceIsNotPermitted() throws {
        let (_, context) = try makeExportDevice { _ in }
        let request = BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).gpu", title: "Render", subtitle: "")
        request.requiredResources = .gpu
        #expect(context.withCurrent { BGTaskScheduler.supportedResources } == .default)
        #expect {
            try submit(request, in: context)
        } throws: { error in
            guard let error = error as? BGTaskScheduler.Error else { return false }
            return error.code == .notPermitted && error.message.contains("gpu")
        }
    }

    @Test func stalledProgressIsExpired() async throws {
        let (device, context) = try makeExportDevice { task in
            let continued = task as! BGContinuedProcessingTask
            continued.updateTitle("Exporting", subtitle: "1 of 100")
            continued.progress.completedUnitCount = 1  // then never advances
            task.expirationHandler = { task.setTaskCompleted(success: false) }
        }
        try submit(BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).stall", title: "Export", subtitle: ""), in: context)
        await device.run(for: 600)
        let run = try #require(device.runs().first)
        #expect(run.outcome == .expired)
        #expect(run.stopReason?.contains("progress stalled") == true)
        #expect(run.endedAt == testStart.addingTimeInterval(120), "sampled at 60 s (advanced from nothing), stalled at 120 s")
    }

    @Test func progressThroughAChildProgressIsProgress() async throws {
        // An outside probe: an export reporting through a child progress (as a download's is
        // attached) was expired as stalled, since the parent's completed units move only
        // when the child finishes.
        let (device, context) = try makeExportDevice { task in
            let continued = task as! BGContinuedProcessingTask
            let child = Progress(totalUnitCount: 10)
            continued.progress.addChild(child, withPendingUnitCount: 100)
            task.expirationHandler = { task.setTaskCompleted(success: false) }
            let clock = BGAppContext.current!.driver.clock
            for step in 1...10 {
                _ = clock.schedule(at: clock.now().addingTimeInterval(Double(step) * 30)) {
                    child.completedUnitCount = Int64(step)
                    if step == 10 { task.setTaskCompleted(success: true) }
                }
            }
        }
        try submit(BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).child", title: "Export", subtitle: ""), in: context)
        await device.run(for: 400)
        let run = try #require(device.runs().first)
        #expect(run.outcome == .success, "\(run.stopReason ?? "")")
        #expect(run.endedAt == testStart.addingTimeInterval(300))
    }

    @Test func aForceQuitCancelsTheQueuedRequestsAndNotTheOthers() async throws {
        // Apple: the system cancels queued continued-processing requests if someone closes
        // the app in the app switcher (an outside probe found them kept).
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.test.p1", using: nil) { $0.setTaskCompleted(success: true) }
        }
        // The first continued processing runs on, never completing; the second is queued.
        #expect(context.withCurrent { BGTaskScheduler.shared.register(forTaskWithIdentifier: "\(exportPrefix).*", using: nil) { _ in } })
        try submit(BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).running", title: "Export", subtitle: ""), in: context)
        await device.run(for: 1)
        try submit(BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).queued", title: "Export", subtitle: ""), in: context)
        let later = BGProcessingTaskRequest(identifier: "com.example.test.p1")
        later.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
        try submit(later, in: context)
        #expect(Set(device.driver.pendingRequests(of: testApp).map(\.identifier)) == ["\(exportPrefix).queued", "com.example.test.p1"])
        context.withCurrent { context.application.forceQuit() }
        await device.run(for: 1)
        #expect(device.driver.pendingRequests(of: testApp).map(\.identifier) == ["com.example.test.p1"], "the processing request waits for the app to be opened")
        #expect(device.log.messages.contains { $0.text.contains("cancelled the queued continued processing '\(exportPrefix).queued': the app was force-quit") })
    }

    @Test func progressThatStartsLowerAfterTheTotalGrewStillCounts() async throws {
        // A reviewer's find: compared with the most ever seen, a fraction that fell when the
        // app added a second child (1.0, then 0.5 and rising) never counted again.
        let (device, context) = try makeExportDevice { task in
            let continued = task as! BGContinuedProcessingTask
            let first = Progress(totalUnitCount: 2)
            continued.progress.addChild(first, withPendingUnitCount: 100)
            task.expirationHandler = { task.setTaskCompleted(success: false) }
            let clock = BGAppContext.current!.driver.clock
            _ = clock.schedule(at: clock.now().addingTimeInterval(30)) { first.completedUnitCount = 2 }
            // At 90 s the app finds more work: the total doubles, the fraction halves.
            let second = Progress(totalUnitCount: 4)
            _ = clock.schedule(at: clock.now().addingTimeInterval(90)) {
                continued.progress.totalUnitCount = 200
                continued.progress.addChild(second, withPendingUnitCount: 100)
            }
            for step in 1...4 {
                _ = clock.schedule(at: clock.now().addingTimeInterval(90 + Double(step) * 45)) {
                    second.completedUnitCount = Int64(step)
                    if step == 4 { task.setTaskCompleted(success: true) }
                }
            }
        }
        try submit(BGContinuedProcessingTaskRequest(identifier: "\(exportPrefix).more", title: "Export", subtitle: ""), in: context)
        await device.run(for: 400)
        let run = try #require(device.runs().first)
        #expect(run.outcome == .success, "\(run.stopReason ?? "")")
        #expect(run.endedAt == testStart.addingTimeInterval(270))
    }
}
