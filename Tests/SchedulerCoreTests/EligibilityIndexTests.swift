import Foundation
import Testing
@testable import SchedulerCore

/// Where pending requests sit (waiting, ready, blocked, busy, continued queue) and how they move.
@Suite("Eligibility index")
struct EligibilityIndexTests {
    typealias F = EngineFixtures
    let t0 = EngineFixtures.t0

    @Test func requestNotYetDueWaitsThenBecomesReadyOnAdvance() {
        var index = EligibilityIndex()
        let request = F.refresh(earliest: t0 + 60)
        index.insert(request, sequence: 1, now: t0, conditions: .favorable)
        #expect(index.location(of: request.key) == .waiting)
        #expect(index.nextDueDate == t0 + 60)
        #expect(!index.hasReady)

        #expect(index.advance(to: t0 + 59.999, conditions: .favorable).isEmpty)
        #expect(index.location(of: request.key) == .waiting)

        let moved = index.advance(to: t0 + 60, conditions: .favorable)
        #expect(moved == [.init(key: request.key, location: .ready)])
        #expect(index.location(of: request.key) == .ready)
        #expect(index.nextDueDate == nil)
        #expect(index.popReady(conditions: .favorable) == request)
        #expect(index.count == 0)
    }

    @Test func dueRequestIsBlockedOnExternalPowerUntilConditionsChange() {
        var index = EligibilityIndex()
        let request = F.processing(power: true)
        index.insert(request, sequence: 1, now: t0, conditions: F.noPower)
        #expect(index.location(of: request.key) == .blocked(.externalPower))
        #expect(index.popReady(conditions: F.noPower) == nil)

        let moved = index.conditionsChanged(to: .favorable, at: t0)
        #expect(moved == [.init(key: request.key, location: .ready)])
        #expect(index.popReady(conditions: .favorable) == request)
    }

    @Test func dueRequestIsBlockedOnNetworkUntilConditionsChange() {
        var index = EligibilityIndex()
        let request = F.processing(network: true)
        index.insert(request, sequence: 1, now: t0, conditions: F.noNetwork)
        #expect(index.location(of: request.key) == .blocked(.network))
        #expect(index.conditionsChanged(to: F.noNetwork, at: t0).isEmpty, "nothing moves while the network is still down")
        #expect(index.popReady(conditions: F.noNetwork) == nil)

        let moved = index.conditionsChanged(to: .favorable, at: t0)
        #expect(moved == [.init(key: request.key, location: .ready)])
        #expect(index.popReady(conditions: .favorable) == request)
    }

    @Test func requestNeedingBothConditionsMovesFromOneBlockToTheOther() {
        var index = EligibilityIndex()
        let request = F.processing(network: true, power: true)
        index.insert(request, sequence: 1, now: t0, conditions: F.nothing)
        #expect(index.location(of: request.key) == .blocked(.externalPower))
        #expect(index.conditionsChanged(to: F.noNetwork, at: t0) == [.init(key: request.key, location: .blocked(.network))])
        #expect(index.conditionsChanged(to: .favorable, at: t0) == [.init(key: request.key, location: .ready)])
    }

    @Test func readyEntryWhoseConditionWentAwayIsRefiledAtPop() {
        var index = EligibilityIndex()
        let request = F.processing(network: true)
        index.insert(request, sequence: 1, now: t0, conditions: .favorable)
        #expect(index.location(of: request.key) == .ready)

        // The network goes away; the index finds out lazily, when it pops.
        #expect(index.popReady(conditions: F.noNetwork) == nil)
        #expect(index.location(of: request.key) == .blocked(.network))
        #expect(!index.hasReady)
        #expect(index.count == 1, "the stale entry is re-filed, not dropped")

        #expect(index.conditionsChanged(to: .favorable, at: t0) == [.init(key: request.key, location: .ready)])
        #expect(index.popReady(conditions: .favorable) == request)
    }

    @Test func staleEntryDoesNotHideAnEligibleOneBehindIt() {
        var index = EligibilityIndex()
        let needsNetwork = F.processing(F.processingID(0), submittedAt: t0, network: true)
        let needsNothing = F.processing(F.processingID(1), submittedAt: t0 + 1)
        index.insert(needsNetwork, sequence: 1, now: t0 + 1, conditions: .favorable)
        index.insert(needsNothing, sequence: 2, now: t0 + 1, conditions: .favorable)
        #expect(index.popReady(conditions: F.noNetwork) == needsNothing)
        #expect(index.location(of: needsNetwork.key) == .blocked(.network))
    }

    @Test func requestIsBusyWhileSameKeyRunsAndReleasedByMarkFinished() {
        var index = EligibilityIndex()
        let request = F.refresh()
        index.markRunning(request.key)
        #expect(index.isRunning(request.key))
        index.insert(request, sequence: 1, now: t0, conditions: .favorable)
        #expect(index.location(of: request.key) == .busy)
        #expect(index.popReady(conditions: .favorable) == nil)

        let moved = index.markFinished(request.key, conditions: .favorable, at: t0)
        #expect(moved == [.init(key: request.key, location: .ready)])
        #expect(!index.isRunning(request.key))
        #expect(index.popReady(conditions: .favorable) == request)
    }

    @Test func requestThatBecomesDueWhileSameKeyRunsIsBusy() {
        var index = EligibilityIndex()
        let request = F.refresh(earliest: t0 + 10)
        index.markRunning(request.key)
        index.insert(request, sequence: 1, now: t0, conditions: .favorable)
        #expect(index.advance(to: t0 + 10, conditions: .favorable) == [.init(key: request.key, location: .busy)])
        #expect(index.markFinished(request.key, conditions: .favorable, at: t0) == [.init(key: request.key, location: .ready)])
    }

    @Test func markFinishedWithoutBusyRequestMovesNothing() {
        var index = EligibilityIndex()
        index.markRunning(F.key(F.refreshID))
        #expect(index.markFinished(F.key(F.refreshID), conditions: .favorable, at: t0).isEmpty)
        #expect(!index.isRunning(F.key(F.refreshID)))
    }

    @Test func insertReplacesPendingRequestWithSameKey() {
        var index = EligibilityIndex()
        let first = F.refresh(earliest: t0 + 600)
        let second = F.refresh(submittedAt: t0 + 1, earliest: nil)
        index.insert(first, sequence: 1, now: t0, conditions: .favorable)
        let replaced = index.insert(second, sequence: 2, now: t0 + 1, conditions: .favorable)
        #expect(replaced == first)
        #expect(index.count == 1)
        #expect(index.request(for: second.key) == second)
        #expect(index.location(of: second.key) == .ready, "filed by the new request's date")
        #expect(index.nextDueDate == nil, "the old waiting entry is gone")
        #expect(index.pendingCount(of: F.app, in: .refresh) == 1)
    }

    @Test func removeAllRemovesOneAppOnly() {
        var index = EligibilityIndex()
        let mine = [F.refresh(), F.processing(F.syncID, earliest: t0 + 60), F.continued()]
        let theirs = F.refresh(F.otherRefreshID, app: F.otherApp)
        for (sequence, request) in (mine + [theirs]).enumerated() {
            index.insert(request, sequence: UInt64(sequence + 1), now: t0, conditions: .favorable)
        }
        let removed = index.removeAll(of: F.app)
        #expect(Set(removed) == Set(mine))
        #expect(index.count == 1)
        #expect(index.requests(of: F.app).isEmpty)
        #expect(index.requests(of: F.otherApp) == [theirs])
        #expect(index.location(of: theirs.key) == .ready)
        for limitClass in PendingLimitClass.allCases {
            #expect(index.pendingCount(of: F.app, in: limitClass) == 0)
        }
        #expect(index.pendingCount(of: F.otherApp, in: .refresh) == 1)
        #expect(!index.hasQueuedContinuedProcessing)
        #expect(index.nextDueDate == nil)
    }

    @Test func pendingCountsArePerLimitClass() {
        var index = EligibilityIndex()
        let requests = [
            F.refresh(),
            F.processing(F.syncID),
            F.processing(F.researchID, kind: .healthResearch),
            F.continued("a"),
        ]
        for (sequence, request) in requests.enumerated() {
            index.insert(request, sequence: UInt64(sequence + 1), now: t0, conditions: .favorable)
        }
        #expect(index.pendingCount(of: F.app, in: .refresh) == 1)
        #expect(index.pendingCount(of: F.app, in: .processing) == 2, "health research counts as processing")
        #expect(index.pendingCount(of: F.app, in: .continuedProcessing) == 1)
        #expect(index.pendingCount(of: F.otherApp, in: .refresh) == 0)

        index.remove(F.key(F.syncID))
        #expect(index.pendingCount(of: F.app, in: .processing) == 1)
        _ = index.popReady(conditions: .favorable)
        #expect(index.pendingCount(of: F.app, in: .refresh) + index.pendingCount(of: F.app, in: .processing) == 1)
    }

    @Test func continuedProcessingQueueIsFirstInFirstOut() {
        var index = EligibilityIndex()
        let names = ["c", "a", "b"]
        for (offset, name) in names.enumerated() {
            // A future earliest date is ignored: continued processing is queued at once.
            let request = F.continued(name, submittedAt: t0 + Double(offset), earliest: t0 + 3600)
            index.insert(request, sequence: UInt64(offset + 1), now: t0 + Double(offset), conditions: .favorable)
            #expect(index.location(of: request.key) == .continuedQueue)
        }
        #expect(index.hasQueuedContinuedProcessing)
        #expect(index.popReady(conditions: .favorable) == nil, "continued processing never comes out of the ready heap")
        var popped: [String] = []
        while let next = index.popContinuedProcessing() { popped.append(next.identifier) }
        #expect(popped == names.map(F.exportID))
        #expect(!index.hasQueuedContinuedProcessing)
    }

    @Test func readyRequestsPopByDueDateThenSubmissionOrder() {
        var index = EligibilityIndex()
        let late = F.processing(F.processingID(0), earliest: t0 - 10)
        let early = F.processing(F.processingID(1), earliest: t0 - 20)
        let tieFirst = F.processing(F.processingID(2), earliest: t0 - 5)
        let tieSecond = F.processing(F.processingID(3), earliest: t0 - 5)
        for (sequence, request) in [late, early, tieSecond, tieFirst].enumerated() {
            index.insert(request, sequence: UInt64(sequence + 1), now: t0, conditions: .favorable)
        }
        var popped: [String] = []
        while let next = index.popReady(conditions: .favorable) { popped.append(next.identifier) }
        #expect(popped == [early, late, tieSecond, tieFirst].map(\.identifier))
    }

    @Test func requestsOfAppAreInSubmissionOrder() {
        var index = EligibilityIndex()
        let ids = [F.processingID(5), F.processingID(1), F.processingID(9)]
        for (sequence, id) in ids.enumerated() {
            index.insert(F.processing(id, earliest: t0 + 100), sequence: UInt64(sequence + 1), now: t0, conditions: .favorable)
        }
        #expect(index.requests(of: F.app).map(\.identifier) == ids)
        #expect(index.allRequests.map(\.identifier) == ids)
    }

    @Test func removeReturnsRequestOrNil() {
        var index = EligibilityIndex()
        let request = F.processing(earliest: t0 + 100)
        index.insert(request, sequence: 1, now: t0, conditions: .favorable)
        #expect(index.remove(request.key) == request)
        #expect(index.remove(request.key) == nil)
        #expect(index.nextDueDate == nil)
        #expect(index.advance(to: t0 + 200, conditions: .favorable).isEmpty)
    }

    @Test func readySinceCountsFromTheDateTheConditionsOrTheRunNotFromAPolicysHold() throws {
        var index = EligibilityIndex()
        // Due at t0 + 10 on battery: eligible from then, ready only once plugged in.
        let request = F.processing(earliest: t0 + 10, power: true)
        index.insert(request, sequence: 1, now: t0, conditions: F.noPower)
        _ = index.advance(to: t0 + 10, conditions: F.noPower)
        _ = index.conditionsChanged(to: .favorable, at: t0 + 500)
        var peeked = index.peekReady(conditions: .favorable)
        var candidate = try #require(peeked)
        #expect(candidate.eligibleSince == t0 + 10)
        #expect(candidate.readySince == t0 + 500)
        // Held by a policy and back: still ready since the plug-in.
        _ = index.holdFirstReady(until: .until(t0 + 900))
        _ = index.advance(to: t0 + 900, conditions: .favorable)
        peeked = index.peekReady(conditions: .favorable)
        candidate = try #require(peeked)
        #expect(candidate.readySince == t0 + 500)
        _ = index.holdFirstReady(until: .deviceChange)
        _ = index.releaseHeldForDevice(conditions: .favorable)
        #expect(index.readySince(of: request.key) == t0 + 500)
        // Its key ran meanwhile: ready again from the run's end.
        index.markRunning(request.key)
        _ = index.peekReady(conditions: .favorable)
        _ = index.markFinished(request.key, conditions: .favorable, at: t0 + 2000)
        peeked = index.peekReady(conditions: .favorable)
        #expect(try #require(peeked).readySince == t0 + 2000)
    }

    @Test func theNextDeferralEndIsTheEarliestPolicyHold() throws {
        var index = EligibilityIndex()
        index.insert(F.processing(F.processingID(1)), sequence: 1, now: t0, conditions: .favorable)
        index.insert(F.processing(F.processingID(2)), sequence: 2, now: t0, conditions: .favorable)
        index.insert(F.refresh(earliest: t0 + 50), sequence: 3, now: t0, conditions: .favorable)
        #expect(index.nextDeferralEnd == nil, "a request waiting for its date is not a policy's hold")
        _ = index.peekReady(conditions: .favorable)
        _ = index.holdFirstReady(until: .until(t0 + 300))
        _ = index.peekReady(conditions: .favorable)
        _ = index.holdFirstReady(until: .untilWake(t0 + 200))
        #expect(index.nextDeferralEnd == t0 + 200)
        #expect(index.location(of: F.key(F.processingID(2))) == .deferred(until: t0 + 200))
        // A run started: what was held until a wake is ready again; a plain hold and the
        // request waiting for its date stay where they are.
        #expect(index.hasHeldUntilWake)
        let released = index.releaseHeldUntilWake(conditions: .favorable)
        #expect(released == [.init(key: F.key(F.processingID(2)), location: .ready)])
        #expect(!index.hasHeldUntilWake)
        #expect(index.nextDeferralEnd == t0 + 300)
        #expect(index.location(of: F.key(F.refreshID)) == .waiting)
    }

    @Test func aHoldUntilAWakeThatEndsByItsInstantIsForgotten() throws {
        var index = EligibilityIndex()
        index.insert(F.processing(), sequence: 1, now: t0, conditions: .favorable)
        _ = index.peekReady(conditions: .favorable)
        _ = index.holdFirstReady(until: .untilWake(t0 + 200))
        #expect(index.advance(to: t0 + 200, conditions: .favorable) == [.init(key: F.key(F.syncID), location: .ready)])
        #expect(!index.hasHeldUntilWake, "its hold ended at its instant: a later wake releases nothing")
        _ = index.peekReady(conditions: .favorable)
        _ = index.holdFirstReady(until: .untilWake(t0 + 400))
        _ = index.remove(F.key(F.syncID))
        #expect(!index.hasHeldUntilWake, "removed with its request")
    }

    @Test func requestPendingWhenItsKeyStartsRunningIsBusyOnceDue() {
        var index = EligibilityIndex()
        let request = F.refresh(earliest: t0 + 10)
        index.insert(request, sequence: 1, now: t0, conditions: .favorable)
        index.markRunning(request.key)
        #expect(index.advance(to: t0 + 10, conditions: .favorable) == [.init(key: request.key, location: .busy)])
        #expect(index.markFinished(request.key, conditions: .favorable, at: t0) == [.init(key: request.key, location: .ready)])
    }

    @Test func holdFirstReadyHoldsWhatPeekReturned() throws {
        var index = EligibilityIndex()
        let first = F.processing(F.processingID(1))
        let second = F.processing(F.processingID(2))
        index.insert(first, sequence: 1, now: t0, conditions: .favorable)
        index.insert(second, sequence: 2, now: t0, conditions: .favorable)
        let peeked = index.peekReady(conditions: .favorable)
        let candidate = try #require(peeked)
        #expect(candidate.request == first)
        #expect(candidate.eligibleSince == t0)
        #expect(index.holdFirstReady(until: .until(t0 + 30)) == .deferred(until: t0 + 30))
        #expect(index.location(of: first.key) == .deferred(until: t0 + 30))
        let next = index.peekReady(conditions: .favorable)
        #expect(next?.request == second)
        #expect(index.holdFirstReady(until: .appChange) == .parkedForApp)
        #expect(index.heldCount == 2)
        #expect(index.nextDueDate == t0 + 30)
    }

    /// Seeded random inserts, removals, holds, condition flips and time steps against a
    /// plain list: the index always pops the eligible request with the smallest (due date,
    /// submission order), however its slots are reused.
    @Test func randomizedOperationsMatchNaiveModel() {
        struct Modelled { var request: PendingRequest; var sequence: UInt64; var heldUntil: Date? }
        var rng = SeededRandom(seed: 0x5EED_1DE)
        var index = EligibilityIndex()
        var model: [RequestKey: Modelled] = [:]
        var now = t0
        var conditions = Conditions.favorable
        var sequence: UInt64 = 0
        var pops = 0
        func eligible(_ entry: Modelled) -> Bool {
            entry.request.dueDate <= now && (entry.heldUntil.map { $0 <= now } ?? true)
                && conditions.firstUnmet(for: entry.request) == nil
        }
        for step in 0..<3000 {
            let identifier = F.processingID(Int.random(in: 0..<25, using: &rng))
            let key = F.key(identifier)
            switch Int.random(in: 0..<20, using: &rng) {
            case 0..<7:
                sequence += 1
                let request = F.processing(
                    identifier, submittedAt: now, earliest: now + Double(Int.random(in: 0..<4, using: &rng) * 30),
                    network: Bool.random(using: &rng), power: Bool.random(using: &rng))
                #expect(index.insert(request, sequence: sequence, now: now, conditions: conditions) == model[key]?.request, "step \(step): insert replaces")
                model[key] = Modelled(request: request, sequence: sequence, heldUntil: nil)
            case 7..<9:
                #expect(index.remove(key) == model.removeValue(forKey: key)?.request, "step \(step): remove")
            case 9..<11:
                if let candidate = index.peekReady(conditions: conditions) {
                    let until = now + 45
                    _ = index.holdFirstReady(until: .until(until))
                    model[candidate.request.key]?.heldUntil = until
                }
            case 11..<13:
                conditions = Conditions(externalPower: Bool.random(using: &rng), networkAvailable: Bool.random(using: &rng))
                _ = index.conditionsChanged(to: conditions, at: now)
            case 13..<16:
                now += Double(Int.random(in: 1..<40, using: &rng))
                _ = index.advance(to: now, conditions: conditions)
            default:
                let expected = model.values.filter(eligible).min { ($0.request.dueDate, $0.sequence) < ($1.request.dueDate, $1.sequence) }
                let popped = index.popReady(conditions: conditions)
                #expect(popped == expected?.request, "step \(step): pop")
                if let popped { model[popped.key] = nil; pops += 1 }
            }
            #expect(index.count == model.count, "step \(step): count")
        }
        #expect(pops > 200, "the sequence exercises popping")
        #expect(index.allRequests == model.values.sorted { $0.sequence < $1.sequence }.map(\.request))
    }
}
