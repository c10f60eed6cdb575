import Foundation
import Testing
@testable import SchedulerCore

/// Throttling (issue 3, scope 4): strikes for over-scheduling and for runs that expire or
/// never complete; a delay that doubles per strike up to a maximum, halves per half-life of
/// good behaviour, and explains itself.
@Suite("Throttle state")
struct ThrottleStateTests {
    let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let minute: TimeInterval = 60
    static let hour: TimeInterval = 3_600

    private func strikes(_ count: Int, _ outcome: RunOutcome = .expired, into state: inout ThrottleState, at now: Date) {
        for _ in 0..<count { state.recordRunEnded(outcome: outcome, calledSetTaskCompleted: outcome == .expired, at: now) }
    }

    // MARK: Cadence

    @Test func goodCadenceGivesNoStrike() {
        var state = ThrottleState()
        let lastRun = t0.addingTimeInterval(-30)
        // Rescheduled from inside the handler, 15 and 30 minutes after the run started.
        #expect(state.recordSubmission(kind: .appRefresh, earliestBeginDate: lastRun + 15 * Self.minute, previousRunOfSameIdentifier: lastRun, at: t0) == nil)
        #expect(state.recordSubmission(kind: .appRefresh, earliestBeginDate: lastRun + 30 * Self.minute, previousRunOfSameIdentifier: lastRun, at: t0) == nil)
        // The first request of an app, "whenever the system likes".
        #expect(state.recordSubmission(kind: .appRefresh, earliestBeginDate: nil, previousRunOfSameIdentifier: nil, at: t0) == nil)
        // A first request 15 minutes ahead; no date long after the previous run.
        #expect(state.recordSubmission(kind: .appRefresh, earliestBeginDate: t0 + 15 * Self.minute, previousRunOfSameIdentifier: nil, at: t0) == nil)
        #expect(state.recordSubmission(kind: .appRefresh, earliestBeginDate: nil, previousRunOfSameIdentifier: t0 - 2 * Self.hour, at: t0) == nil)
        // Processing daily; continued processing has no cadence at all.
        #expect(state.recordSubmission(kind: .processing, earliestBeginDate: t0 + 24 * Self.hour, previousRunOfSameIdentifier: t0 - 60, at: t0) == nil)
        #expect(state.recordSubmission(kind: .continuedProcessing, earliestBeginDate: nil, previousRunOfSameIdentifier: t0 - 1, at: t0) == nil)
        #expect(state.strikes == 0)
        #expect(state.delay(at: t0) == 0)
        #expect(state.reason(at: t0) == nil)
    }

    @Test func resubmittingFasterThanTheCadenceIsAStrike() throws {
        var state = ThrottleState()
        let lastRun = t0.addingTimeInterval(-60)
        let recorded = state.recordSubmission(kind: .appRefresh, earliestBeginDate: t0 + 60, previousRunOfSameIdentifier: lastRun, at: t0)
        let strike = try #require(recorded)
        #expect(strike.cause == .overScheduling(kind: .appRefresh, interval: 120, cadence: 900))
        #expect(strike.penalty == 15 * Self.minute)
        #expect(state.strikes == 1)
        #expect(state.delay(at: t0) == 15 * Self.minute)
        #expect(state.reason(at: t0) == "throttled 15 min: refresh resubmitted every 2 min, cadence is 15 min")
    }

    @Test func processingCadenceIsOneHourAndNoDateAfterARunCounts() throws {
        var state = ThrottleState()
        // "As soon as possible" ten minutes after the last run: a 10-minute cadence.
        let recorded = state.recordSubmission(kind: .processing, earliestBeginDate: nil, previousRunOfSameIdentifier: t0 - 10 * Self.minute, at: t0)
        let strike = try #require(recorded)
        #expect(strike.cause == .overScheduling(kind: .processing, interval: 600, cadence: 3_600))
        // A first request for one minute from now: no run yet, so nothing was resubmitted.
        var other = ThrottleState()
        #expect(other.recordSubmission(kind: .appRefresh, earliestBeginDate: t0 + 60, previousRunOfSameIdentifier: nil, at: t0) == nil)
        #expect(other.delay(at: t0) == 0)
    }

    @Test func repeatsWithinOneCadenceFoldIntoOneStrike() {
        var state = ThrottleState()
        // A loop that resubmits every minute, each time for one minute after its last run.
        for second in stride(from: 0.0, to: 14 * 60 + 1, by: 60) {
            let now = t0 + second
            state.recordSubmission(kind: .appRefresh, earliestBeginDate: now + 60, previousRunOfSameIdentifier: now - 60, at: now)
        }
        #expect(state.strikes == 1, "fourteen minutes of resubmissions: one cadence, one strike")
        state.recordSubmission(kind: .appRefresh, earliestBeginDate: t0 + 16 * Self.minute, previousRunOfSameIdentifier: t0 + 14 * Self.minute, at: t0 + 15 * Self.minute)
        #expect(state.strikes == 2, "the next cadence earns the next strike")
        // Processing over-scheduling is a separate count.
        state.recordSubmission(kind: .processing, earliestBeginDate: nil, previousRunOfSameIdentifier: t0, at: t0 + 15 * Self.minute)
        #expect(state.strikes == 3)
    }

    // MARK: Penalty

    @Test func delayDoublesWithEachStrike() {
        var state = ThrottleState()
        var delays: [TimeInterval] = []
        for _ in 0..<4 {
            state.recordRunEnded(outcome: .expired, calledSetTaskCompleted: true, at: t0)
            delays.append(state.delay(at: t0))
        }
        #expect(delays == [15, 30, 60, 120].map { $0 * Self.minute })
        #expect(state.strikes == 4)
    }

    @Test func delayIsCappedAtTheMaximum() {
        var state = ThrottleState()
        strikes(7, .terminated, into: &state, at: t0)
        #expect(state.delay(at: t0) == 16 * Self.hour, "15 min × 2⁶")
        strikes(1, .terminated, into: &state, at: t0)
        #expect(state.delay(at: t0) == 24 * Self.hour, "15 min × 2⁷ = 32 h, capped at 24 h")
        strikes(5, .terminated, into: &state, at: t0)
        #expect(state.delay(at: t0) == 24 * Self.hour)
        #expect(state.recentStrikes.allSatisfy { $0.penalty <= 24 * Self.hour })

        var small = ThrottleState(configuration: .init(maximumPenalty: 20 * Self.minute))
        strikes(3, into: &small, at: t0)
        #expect(small.delay(at: t0) == 20 * Self.minute)
    }

    @Test func delayHalvesWithEveryHalfLife() {
        var state = ThrottleState()
        strikes(3, into: &state, at: t0)  // 60 min
        #expect(abs(state.delay(at: t0 + 6 * Self.hour) - 30 * Self.minute) < 1e-9)
        #expect(abs(state.delay(at: t0 + 12 * Self.hour) - 15 * Self.minute) < 1e-9)
        #expect(abs(state.delay(at: t0 + 3 * Self.hour) - 60 * Self.minute / 2.0.squareRoot()) < 1e-9)
        // Faded below a second (after about 12 half-lives): no delay, no reason.
        #expect(state.delay(at: t0 + 80 * Self.hour) == 0)
        #expect(state.reason(at: t0 + 80 * Self.hour) == nil)
    }

    @Test func aStrikeAfterTheDelayFadedStartsAgainAtTheBase() {
        var state = ThrottleState()
        strikes(4, into: &state, at: t0)  // 2 h
        strikes(1, into: &state, at: t0 + 48 * Self.hour)  // 2 h × 2⁻⁸ ≈ 28 s, doubled: below the base
        #expect(state.delay(at: t0 + 48 * Self.hour) == 15 * Self.minute)
        // A strike while a delay is left doubles what is left: 15 min × 2^(−½) after 3 h.
        strikes(1, into: &state, at: t0 + 51 * Self.hour)
        #expect(abs(state.delay(at: t0 + 51 * Self.hour) - 2 * 15 * Self.minute / 2.0.squareRoot()) < 1e-9)
    }

    @Test func successDecaysFasterAndNeutralOutcomesChangeNothing() {
        var state = ThrottleState()
        strikes(3, into: &state, at: t0)  // 60 min
        #expect(state.recordRunEnded(outcome: .failure, calledSetTaskCompleted: true, at: t0) == nil)
        #expect(state.delay(at: t0) == 60 * Self.minute, "reporting failure is not misbehaviour")
        #expect(state.recordRunEnded(outcome: .success, calledSetTaskCompleted: true, at: t0) == nil)
        #expect(state.delay(at: t0) == 30 * Self.minute, "a clean run halves the delay at once")
        // Then decay continues from the successful run.
        #expect(abs(state.delay(at: t0 + 6 * Self.hour) - 15 * Self.minute) < 1e-9)
        #expect(state.strikes == 3)
    }

    /// docs/ARCHITECTURE.md, "Crash loops are throttled": a run cut off by a stop of the
    /// process is a strike, so a handler that kills its process is not relaunched at once.
    @Test func anInterruptedRunIsAStrike() {
        var state = ThrottleState()
        let strike = state.recordRunEnded(outcome: .interrupted, calledSetTaskCompleted: false, at: t0)
        #expect(strike?.cause == .interrupted)
        #expect(state.delay(at: t0) == 15 * Self.minute)
        #expect(state.recordRunEnded(outcome: .interrupted, calledSetTaskCompleted: false, at: t0)?.penalty == 30 * Self.minute)
        #expect(state.reason(at: t0)?.contains("2 runs cut off by a stop of the process") == true)
    }

    @Test func aLaunchThatNeverReachedTheAppIsAStrikeOfItsOwn() throws {
        var state = ThrottleState()
        #expect(state.recordAppNotStarted(at: t0)?.cause == .notStarted)
        #expect(state.delay(at: t0) == 15 * Self.minute)
        // Not the handler's fault: the reason says the process did not start.
        #expect(state.reason(at: t0) == "throttled 15 min: 1 run never reached the app (its process did not start or finish launching) in the last day")
        #expect(state.recordAppNotStarted(at: Date(timeIntervalSinceReferenceDate: .nan)) == nil)
        // The other runs queued for the same process, failed at the same instant: no more strikes.
        #expect(state.recordAppNotStarted(at: t0) == nil)
        #expect(state.strikes == 1 && state.delay(at: t0) == 15 * Self.minute)
        // An endless penalty never ends its hold.
        var endless = ThrottleState(configuration: .init(basePenalty: .infinity, maximumPenalty: .infinity))
        endless.recordAppNotStarted(at: t0)
        #expect(endless.holdEnd(waitingSince: t0) == .distantFuture)
        let decoded = try JSONDecoder().decode(ThrottleState.self, from: JSONEncoder().encode(state))
        #expect(decoded == state)
    }

    @Test func theHoldEndsWhereTheWaitMeetsTheFadingDelayWhenEverAsked() {
        var state = ThrottleState()
        #expect(state.holdEnd(waitingSince: t0) == t0, "no delay: no hold")
        strikes(3, .terminated, into: &state, at: t0)  // 1 h, fading with a 6 h half-life
        let start = t0 + 600
        let end = state.holdEnd(waitingSince: start)
        let waited = end.timeIntervalSince(start)
        // Free at the end, held two seconds before it; sooner than the delay as it was at the start.
        #expect(waited >= state.delay(at: end) && waited - 2 < state.delay(at: end - 2), "\(waited)")
        #expect(waited < state.delay(at: start))
        #expect(waited == waited.rounded(), "to the second")
        // Asking later (as the engine and `bgtask why` do) changes nothing: the state is all it reads.
        #expect(state.holdEnd(waitingSince: start) == end)
        #expect(state.holdEnd(waitingSince: Date(timeIntervalSinceReferenceDate: .infinity)).timeIntervalSinceReferenceDate == .infinity)
    }

    @Test func eachKindOfMisbehaviourIsAStrike() {
        var state = ThrottleState()
        #expect(state.recordRunEnded(outcome: .expired, calledSetTaskCompleted: true, at: t0)?.cause == .expired)
        #expect(state.recordRunEnded(outcome: .terminated, calledSetTaskCompleted: false, at: t0)?.cause == .terminated)
        #expect(state.recordRunEnded(outcome: .crashed, calledSetTaskCompleted: false, at: t0)?.cause == .crashed)
        #expect(state.recordRunEnded(outcome: .failure, calledSetTaskCompleted: false, at: t0)?.cause == .neverCompleted)
        // Expired by the system because the user became active, then completed in the grace.
        #expect(state.recordRunEnded(outcome: .expired, calledSetTaskCompleted: true, expiredForConditions: true, at: t0) == nil)
        // Ignoring that expiration is still the app's doing.
        #expect(state.recordRunEnded(outcome: .terminated, calledSetTaskCompleted: false, expiredForConditions: true, at: t0)?.cause == .terminated)
        // A crash after the system expired the run for the device's sake is still the app's.
        #expect(state.recordRunEnded(outcome: .crashed, calledSetTaskCompleted: false, expiredForConditions: true, at: t0)?.cause == .crashed)
        // The user force-quit the app during the run: however it ended, not the app's doing.
        for outcome in [RunOutcome.crashed, .terminated, .expired, .failure, .interrupted] {
            #expect(state.recordRunEnded(outcome: outcome, calledSetTaskCompleted: false, endedByTheUser: true, at: t0) == nil, "\(outcome)")
        }
        #expect(state.strikes == 6)
    }

    // MARK: Reason

    @Test func reasonNamesTheCauses() {
        var state = ThrottleState()
        strikes(3, into: &state, at: t0)
        state.recordSubmission(kind: .appRefresh, earliestBeginDate: t0 + 60, previousRunOfSameIdentifier: t0 - 60, at: t0)
        #expect(state.reason(at: t0) == "throttled 2 h: 3 runs expired in the last day; refresh resubmitted every 2 min, cadence is 15 min")

        var quiet = ThrottleState()
        quiet.recordRunEnded(outcome: .failure, calledSetTaskCompleted: false, at: t0)
        quiet.recordRunEnded(outcome: .crashed, calledSetTaskCompleted: false, at: t0 + 60)
        #expect(quiet.reason(at: t0 + 60) == "throttled 30 min: 1 run ended without setTaskCompleted, 1 run crashed in the last day")
    }

    @Test func reasonForStrikesOlderThanTheWindow() {
        var state = ThrottleState()
        strikes(8, .terminated, into: &state, at: t0)  // 24 h
        let later = t0 + 30 * Self.hour  // 24 h × 2⁻⁵ = 45 min
        #expect(state.reason(at: later) == "throttled 45 min: 8 earlier strikes, the last 1 d 6 h ago; the delay halves every 6 h of good behaviour")
    }

    // MARK: Storage

    @Test func recentStrikesAreBounded() {
        var state = ThrottleState(configuration: .init(recentStrikeLimit: 5))
        strikes(20, into: &state, at: t0)
        #expect(state.recentStrikes.count == 5)
        #expect(state.strikes == 20)
        // Strikes older than the window are dropped when the next one is recorded.
        strikes(1, .crashed, into: &state, at: t0 + 25 * Self.hour)
        #expect(state.recentStrikes.map(\.cause) == [.crashed])
        #expect(state.lastStrikeAt == t0 + 25 * Self.hour)
    }

    @Test func codableRoundTrip() throws {
        var state = ThrottleState()
        strikes(2, into: &state, at: t0)
        state.recordSubmission(kind: .processing, earliestBeginDate: nil, previousRunOfSameIdentifier: t0 - 60, at: t0)
        let decoded = try JSONDecoder().decode(ThrottleState.self, from: JSONEncoder().encode(state))
        #expect(decoded == state)
        #expect(decoded.delay(at: t0 + Self.hour) == state.delay(at: t0 + Self.hour))
        #expect(decoded.reason(at: t0) == state.reason(at: t0))
    }

    @Test func durationsReadNaturally() {
        #expect(DurationText.spoken(45) == "45 s")
        #expect(DurationText.spoken(120) == "2 min")
        #expect(DurationText.spoken(5_400) == "1 h 30 min")
        #expect(DurationText.spoken(7_200) == "2 h")
        #expect(DurationText.spoken(108_000) == "1 d 6 h")
        #expect(DurationText.spoken(.infinity) == "forever")
    }
}
