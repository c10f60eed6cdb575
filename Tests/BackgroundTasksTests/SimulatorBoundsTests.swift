import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Synchronization
import Testing

/// What an outside probe fed the simulator and the API that no finite instant or sane key
/// is: each gets a clear error naming it, not a trap deep inside or a device that stops.
@Suite struct SimulatorBoundsTests {
    @Test func aRequestWithANaNDatePrintsItsNumber() {
        // Apps print the request they could not submit; Foundation's Date.description traps
        // on NaN, and submit refuses such a date, so the print is what would crash.
        let request = BGAppRefreshTaskRequest(identifier: refreshID)
        request.earliestBeginDate = Date(timeIntervalSinceReferenceDate: .nan)
        #expect("\(request)".contains("nan s from 2001-01-01 (not a finite date)"))
        request.earliestBeginDate = Date(timeIntervalSinceReferenceDate: .infinity)
        #expect("\(request)".contains("inf s from 2001-01-01"))
        request.earliestBeginDate = testStart
        #expect("\(request)".contains("2026-12-01 00:00:00 +0000"))
    }

    @Test func distantPastMeansAsSoonAsPossibleInTheSimulatorToo() async throws {
        // The wall clock is years after the virtual start: distantPast moved back by that
        // offset fell before distantPast, and the engine refused a number the app never wrote.
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let request = BGAppRefreshTaskRequest(identifier: refreshID)
        request.earliestBeginDate = .distantPast
        try submit(request, in: context)
        await device.run(for: 60)
        #expect(device.runs(of: refreshID).count == 1)
        await device.shutDown()
    }

    @Test func aDateThatDoesNotFitIsJudgedAsTheAppWroteIt() throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let request = BGProcessingTaskRequest(identifier: processingID)
        request.earliestBeginDate = Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude)
        #expect { try submit(request, in: context) } throws: { error in
            // The app's own number, not the infinity its offset from virtual now overflows to.
            "\(error)".contains("more than 366 days") && !"\(error)".contains("inf")
        }
        _ = device
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300, -1e300])
    func aDeviceCannotStartAtNoInstant(seconds: Double) {
        #expect { try SimulatedDevice(start: Date(timeIntervalSinceReferenceDate: seconds)) } throws: { error in
            error is SimulatedDeviceError && "\(error)".contains("cannot start at")
        }
    }

    @Test(arguments: [Double.nan, .infinity, .greatestFiniteMagnitude, 1e15])
    func aRunToNoInstantPlaysNothingAndSaysSo(duration: Double) async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: processingID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        try submit(BGProcessingTaskRequest(identifier: processingID), in: context)
        let before = device.now
        await device.run(for: duration)
        #expect(device.now == before, "the clock did not move")
        #expect(device.runs().isEmpty)
        #expect(device.log.messages.contains { $0.level == .error && $0.text.contains("nothing is played") })
        // The device still works.
        await device.run(for: 3_600)
        #expect(device.runs(of: processingID).count == 1)
        await device.shutDown()
    }

    @Test func aRunUntilNaNPlaysNothingAndSaysSo() async throws {
        let (device, _) = try makeDevice()
        let before = device.now
        await device.run(until: Date(timeIntervalSinceReferenceDate: .nan))
        #expect(device.now == before)
        #expect(device.log.messages.contains { $0.level == .error && $0.text.contains("nan s from 2001-01-01") })
        await device.run(until: before.addingTimeInterval(-60))  // an end before now settles, silently
        #expect(device.log.messages.filter { $0.level == .error }.count == 1)
        await device.shutDown()
    }

    /// App work of no duration Swift's `Duration` holds stopped the program (an outside
    /// probe); a delay that is no number scheduled its action at once.
    @Test(arguments: [Double.nan, .infinity, -1, 1e20])
    func workOfNoDurationIsRefusedAndADelayOfNoNumberSchedulesNothing(seconds: Double) async throws {
        let (device, _) = try makeDevice()
        await #expect(throws: SimulationError.self) { try await device.work(for: seconds) }
        #expect(device.log.messages.contains { $0.level == .error && $0.text.contains("work(for: ") })
        if !seconds.isFinite {
            let fired = Mutex(false)
            device.schedule(after: seconds) { fired.withLock { $0 = true } }
            await device.run(for: 3600)
            #expect(!fired.withLock { $0 })
            #expect(device.log.messages.contains { $0.level == .error && $0.text.contains("schedule(after: ") })
        }
        await device.shutDown()
    }

    /// A simulation's days are bounded: its script and trace are kept in memory (an outside
    /// probe's `days: Int.max` took 5 GB in a minute before anything played).
    @Test(arguments: [0, -5, Simulation.maximumDays + 1, Int.max])
    func aSimulationOfNoSensibleLengthIsRefused(days: Int) async throws {
        let simulation = Simulation(scenario: try #require(Scenario.builtIn(named: "commuter")), days: days, seed: 1)
        #expect(throws: SimulationError.self) { _ = try simulation.run(modelled: [.feedReader()]) }
        await #expect(throws: SimulationError.self) { _ = try await simulation.run(installing: { _ in }) }
    }

    @Test func nothingIsPlayedAfterShutDown() async throws {
        let (device, context) = try makeDevice {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { $0.setTaskCompleted(success: true) }
        }
        await device.shutDown()
        // A context kept past the device's end cannot submit (nothing would host the run);
        // the device plays nothing more, and its clock stays where the device ended.
        #expect { try submit(refresh(after: 0), in: context) } throws: { error in
            (error as? BGTaskScheduler.Error)?.code == .unavailable && "\(error)".contains("shut down")
        }
        let end = device.now
        await device.run(for: 3_600)
        #expect(device.now == end)
        #expect(device.runs().isEmpty)
        #expect(device.log.messages.contains { $0.level == .error && $0.text.contains("shut down; nothing is played") })
        await device.shutDown()  // a second shutdown is harmless
    }

    @Test func aRefusedCheckpointKeyIsShownBounded() throws {
        let (device, context) = try makeDevice()
        for key in ["a\u{0}b", String(repeating: "k", count: 100_000)] {
            #expect { try context.withCurrent { try BGTaskScheduler.shared.checkpoints.save(1, forKey: key) } } throws: { error in
                let text = "\(error)"
                return text.count < 1_000 && !text.contains("\u{0}") && (error as? BGCheckpointStore.Error)?.key == key
            }
        }
        _ = device
    }
}
