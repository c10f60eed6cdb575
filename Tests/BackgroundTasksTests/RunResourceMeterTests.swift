import BackgroundTasks
import Foundation
import Synchronization
import Testing
import SchedulerCore

@Suite struct RunResourceMeterTests {
    /// A process whose CPU time and peak memory the test sets by hand.
    private final class FakeProcess: Sendable {
        private let sample = Mutex(RunResourceMeter.Sample(cpuTime: 0, peakMemoryBytes: nil))

        func set(cpu: TimeInterval, peak: Int64? = nil) {
            sample.withLock { $0 = RunResourceMeter.Sample(cpuTime: cpu, peakMemoryBytes: peak) }
        }

        func read() -> RunResourceMeter.Sample { sample.withLock { $0 } }
    }

    private func makeMeter() -> (RunResourceMeter, FakeProcess) {
        let process = FakeProcess()
        return (RunResourceMeter(sampler: { process.read() }), process)
    }

    @Test func overlappingRunsShareTheCPUOfEachIntervalEqually() throws {
        let (meter, process) = makeMeter()
        let a = RunID(1), b = RunID(2), c = RunID(3)

        process.set(cpu: 10)
        meter.runStarted(a)
        process.set(cpu: 12)           // 2 s with A alone: A 2
        meter.runStarted(b)
        process.set(cpu: 16)           // 4 s shared by A and B: 2 each
        let measuredA = try #require(meter.runFinished(a))
        #expect(measuredA.cpuTime == 4)
        process.set(cpu: 17, peak: 50_000_000)   // 1 s with B alone: B 3
        let measuredB = try #require(meter.runFinished(b))
        #expect(measuredB.cpuTime == 3)
        #expect(measuredB.peakMemoryBytes == 50_000_000)

        process.set(cpu: 20)           // 3 s with no run alive: charged to none
        meter.runStarted(c)
        process.set(cpu: 21.5)
        #expect(meter.runFinished(c)?.cpuTime == 1.5)
        #expect(meter.runsAlive.isEmpty)
    }

    @Test func threeOverlappingRunsAndAnUnknownRun() throws {
        let (meter, process) = makeMeter()
        process.set(cpu: 0)
        for id in 1...3 { meter.runStarted(RunID(Int64(id))) }
        process.set(cpu: 6)
        #expect(meter.runFinished(RunID(2))?.cpuTime == 2)
        #expect(meter.runsAlive == [RunID(1), RunID(3)])
        // A run the meter never saw start has no measurement.
        #expect(meter.runFinished(RunID(99)) == nil)
        process.set(cpu: 8)
        #expect(meter.runFinished(RunID(1))?.cpuTime == 3)
        #expect(meter.runFinished(RunID(3))?.cpuTime == 3)
        // Finishing twice: the second time it is unknown.
        #expect(meter.runFinished(RunID(3)) == nil)
    }

    @Test func aSamplerThatGoesBackwardsChargesNothing() {
        let (meter, process) = makeMeter()
        process.set(cpu: 5)
        meter.runStarted(RunID(1))
        process.set(cpu: 4)
        #expect(meter.runFinished(RunID(1))?.cpuTime == 0)
    }

    @Test func finishFillsTheRecordAndEstimatesItsEnergy() throws {
        let (meter, process) = makeMeter()
        let start = Date(timeIntervalSince1970: 1_796_025_600)
        let request = PendingRequest(app: AppID("com.example.a"), identifier: "t", kind: .processing, submittedAt: start)
        let model = EnergyModel(perCoreWatts: 2, baseWatts: 0.5)

        process.set(cpu: 1)
        meter.runStarted(RunID(1))
        process.set(cpu: 4, peak: 1_024)
        let ended = RunRecord(id: RunID(1), request: request, startedAt: start, endedAt: start.addingTimeInterval(10), outcome: .success)
        let measured = meter.finish(ended, model: model)
        #expect(measured.cpuTime == 3)
        #expect(measured.peakMemoryBytes == 1_024)
        #expect(measured.energyJoules == 3 * 2 + 10 * 0.5 as Double)
        #expect(measured.outcome == .success)

        // Not seen starting: the base cost of its wall time only.
        let unseen = RunRecord(id: RunID(2), request: request, startedAt: start, endedAt: start.addingTimeInterval(4), outcome: .failure)
        let estimated = meter.finish(unseen, model: model)
        #expect(estimated.cpuTime == nil)
        #expect(estimated.energyJoules == 2)
    }

    @Test func theProcessSamplerSeesCPUBurnedDuringARun() throws {
        let meter = RunResourceMeter()
        meter.runStarted(RunID(1))
        // Burn CPU until the process clock has visibly advanced (at most 2 s of wall time).
        let before = RunResourceMeter.processSample().cpuTime
        let deadline = Date().addingTimeInterval(2)
        var accumulator: UInt64 = 1
        while RunResourceMeter.processSample().cpuTime - before < 0.05, Date() < deadline {
            for step in 0..<100_000 { accumulator = accumulator &* 6_364_136_223_846_793_005 &+ UInt64(step) }
        }
        let measurement = try #require(meter.runFinished(RunID(1)))
        #expect(accumulator != 0)
        #expect(measurement.cpuTime > 0)
        #expect(measurement.cpuTime.isFinite)
        #expect((measurement.peakMemoryBytes ?? 0) > 1_000_000, "a Swift test process has a peak resident set of megabytes")
    }
}
