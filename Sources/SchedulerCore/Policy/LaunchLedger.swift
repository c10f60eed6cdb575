import Foundation

/// How many background launches the app has had lately, as a decayed count: what the
/// refresh placement has really spent of its budget, where its plan only says what it
/// means to spend (``UsageModel/preferredRefreshTime(eligibleAt:now:lastRefresh:leadSpread:requestedInterval:launches:)``).
///
/// A plan counts the refreshes it would place over the next 24 hours, but it is made again
/// at every judgement, and each plan spends its day afresh: when the user opens the app,
/// the rest of that hour is planned again (``UsageModel/relaunchShare(hourOfDay:)``) and
/// what it no longer needs goes to the other hours. A reader who checks every few minutes
/// has the budget spent more than once a day. The ledger lets the placement see that and
/// spend less until the days are back within the budget.
///
/// Each launch adds 1, and the count decays as `e^(−age / meanAge)` (``meanAge``: 7 days),
/// so the count of launches at a steady `r` a day tends to `r × 7`: a rate averaged over
/// about the last week (habits are weekly: a busy weekend is paid for by quiet weekdays),
/// in a few numbers, whatever the cadence. Beside it, the decayed time in which the device
/// forbade refreshes: a budget cannot be spent offline, and a timer could not have run there
/// either. Tasks that joined a launch at the same instant are one launch (one wake);
/// continued processing, which the user started, is not counted. A pure value, persisted
/// with ``AppPolicyState``; docs/policies.md, "What a day really spends".
public struct LaunchLedger: Hashable, Sendable, Codable {
    /// Since when launches are counted: what came before is not known, so the expected
    /// count is of the time since (``excessPerDay(over:at:)``).
    public private(set) var since: Date
    /// The instant the decayed sums are kept as of.
    public private(set) var epoch: Date
    /// The decayed count of launches as of ``epoch`` (see ``count(at:)``).
    public private(set) var decayedCount: Double
    /// The decayed seconds during which the device forbade refreshes (offline, Low Power
    /// Mode, a critical battery), as of ``epoch`` (see ``forbiddenTime(at:)``).
    public private(set) var decayedForbiddenTime: Double
    /// Since when the device has forbidden refreshes, while it does; `nil` while it allows them.
    public private(set) var forbiddenSince: Date?
    /// The latest launch counted, or `nil` before the first.
    public private(set) var latestLaunch: Date?

    /// The most a count can be: a launch every second for ever (the sum of the decay at one
    /// launch a second tends to the mean age in seconds). More is damage.
    static let largestCount = meanAge + 1

    /// The decay's mean age: 7 days (a half-life of about 4.9 days). A week, so that the
    /// days of a weekly habit average out and one busy day is not a reason to starve the
    /// next; measured on the lives of docs/scenarios.md, 5 to 14 days do about the same.
    public static let meanAge: TimeInterval = 7 * 86_400

    /// An empty ledger counting from `since`, when the device allows refreshes or not.
    public init(since: Date, refreshesAllowed: Bool = true) {
        self.since = since
        self.epoch = since
        self.decayedCount = 0
        self.decayedForbiddenTime = 0
        self.forbiddenSince = refreshesAllowed ? nil : since
    }

    /// Records a launch at `instant`, judged at `now` (the launch's own instant, or later for
    /// one restored from the run log). One at the instant of the latest is the same launch
    /// (a task that joined it) and adds nothing; an earlier one adds its decayed weight; one
    /// in the stretch the device has forbidden refreshes since (a clean-up offline) is not
    /// counted, as that time earns no budget either. A non-finite instant is ignored.
    public mutating func record(_ instant: Date, now: Date) {
        guard instant.timeIntervalSince1970.isFinite, now.timeIntervalSince1970.isFinite, instant != latestLaunch else { return }
        rebase(ifAfter: now)
        advance(to: instant)
        since = min(since, instant)
        latestLaunch = max(latestLaunch ?? instant, instant)
        if let forbidden = forbiddenSince, instant >= forbidden { return }
        decayedCount += Self.decay(epoch.timeIntervalSince(instant))
    }

    /// Takes back the launch at `instant` (one that did not happen after all: its run was not
    /// claimed from the store, another replica ran it). The count never goes below 0.
    public mutating func forget(_ instant: Date) {
        guard instant <= epoch, instant.timeIntervalSince1970.isFinite else { return }
        // Another launch may come at this very instant (the next request of the app).
        if latestLaunch == instant { latestLaunch = nil }
        // One in the stretch the device forbids refreshes in was not counted (see record).
        if let forbidden = forbiddenSince, instant >= forbidden { return }
        decayedCount = max(0, decayedCount - Self.decay(epoch.timeIntervalSince(instant)))
    }

    /// Records whether the device allows refreshes from `now` on (the network is there, Low
    /// Power Mode is off and the battery is not critical): time in which it did not is time
    /// in which no budget could be spent, and a timer could not have run either.
    public mutating func refreshesAllowed(_ allowed: Bool, at now: Date) {
        guard now.timeIntervalSince1970.isFinite else { return }
        rebase(ifAfter: now)
        advance(to: now)
        if allowed { forbiddenSince = nil } else if forbiddenSince == nil { forbiddenSince = max(now, epoch) }
    }

    /// The decayed count of launches at `now` (0 before the first).
    public func count(at now: Date) -> Double {
        decayedCount * Self.decay(max(0, now.timeIntervalSince(epoch)))
    }

    /// The decayed seconds in which the device forbade refreshes, at `now`.
    public func forbiddenTime(at now: Date) -> Double {
        let age = max(0, now.timeIntervalSince(epoch))
        return decayedForbiddenTime * Self.decay(age) + (forbiddenSince == nil ? 0 : Self.meanAge * (1 - Self.decay(age)))
    }

    /// How many launches a day more than `budget` a day the app has had lately, at `now`: the
    /// decayed count less what `budget` launches a day, spread evenly over the time since
    /// ``since`` in which the device allowed refreshes, would have left, over the decay's
    /// mean age (negative when it spent less). So it is an average over about the last week,
    /// and a ledger younger than that takes the time before it as spent at the budget: a
    /// new app's first, unsure day (8 launches over the budget) reads as about 8 / 7 a day
    /// over, not as 8, and does not halve its second day's refreshes.
    public func excessPerDay(over budget: Double, at now: Date) -> Double {
        let elapsed = max(0, now.timeIntervalSince(since))
        let allowed = max(0, Self.meanAge * (1 - Self.decay(elapsed)) - forbiddenTime(at: now))
        let excess = (count(at: now) - budget / 86_400 * allowed) * 86_400 / Self.meanAge
        return excess.isFinite ? excess : 0
    }

    /// This ledger (the one stored now) with the launches `mine` counted since `baseline`
    /// added, as replicas sharing one app's memory add their launches up (docs/replicas.md);
    /// a launch `mine` took back that the stored one counts stays counted. The time the
    /// device forbade refreshes is `mine`'s (each replica judges its own device; a replica
    /// that takes another's ledger as it is learns its own device's state at its next
    /// launch or change of conditions).
    public func merging(changesIn mine: LaunchLedger, since baseline: LaunchLedger?) -> LaunchLedger {
        let latest = max(epoch, mine.epoch, baseline?.epoch ?? epoch)
        var merged = mine
        merged.advance(to: latest)
        let added = mine.count(at: latest) - (baseline?.count(at: latest) ?? 0)
        merged.decayedCount = count(at: latest) + max(0, added)
        merged.since = min(since, mine.since)
        merged.latestLaunch = [latestLaunch, mine.latestLaunch].compactMap { $0 }.max()
        return merged
    }

    /// A clock stepped back (or a replica whose clock ran ahead) left the epoch more than a
    /// minute after `now`: the ledger is moved back whole, its sums kept as of `now` and its
    /// instants by the same step (the time stepped back counts as none, and the ledger keeps
    /// its age), so that the count decays and launches weigh again from here, where they
    /// would weigh next to nothing against an epoch in the future.
    private mutating func rebase(ifAfter now: Date) {
        let step = epoch.timeIntervalSince(now)
        guard step > 60 else { return }
        epoch = now
        since = since.addingTimeInterval(-step)
        latestLaunch = latestLaunch.map { $0.addingTimeInterval(-step) }
        forbiddenSince = forbiddenSince.map { $0.addingTimeInterval(-step) }
    }

    /// Moves the decayed sums' epoch to `instant` (never back).
    private mutating func advance(to instant: Date) {
        guard instant > epoch else { return }
        let age = instant.timeIntervalSince(epoch)
        decayedCount *= Self.decay(age)
        decayedForbiddenTime = min(forbiddenTime(at: instant), Self.meanAge)  // rounding never past the whole
        epoch = instant
    }

    private enum CodingKeys: String, CodingKey {
        case since, epoch, decayedCount, decayedForbiddenTime, forbiddenSince, latestLaunch
    }

    /// Decodes a stored ledger, refusing one with a sum that is negative, non-finite or more
    /// than a ledger can hold, a non-finite instant or an epoch before its start: a damaged
    /// record must not make the placement spend nothing (or everything) later.
    /// ``AppPolicyState`` drops a refused ledger and keeps the rest of the state.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func instant(_ key: CodingKeys) throws -> Date? {
            guard let date = try container.decodeIfPresent(Date.self, forKey: key) else { return nil }
            guard date.timeIntervalSince1970.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a finite instant")
            }
            return date
        }
        func sum(_ key: CodingKeys, atMost limit: Double) throws -> Double {
            let value = try container.decode(Double.self, forKey: key)
            guard value.isFinite, value >= 0, value <= limit else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "\(value) is not a sum from 0 to \(limit)")
            }
            return value
        }
        guard let since = try instant(.since), let epoch = try instant(.epoch) else {
            throw DecodingError.dataCorruptedError(forKey: .since, in: container, debugDescription: "a ledger needs its start and its epoch")
        }
        guard epoch >= since else {
            throw DecodingError.dataCorruptedError(forKey: .epoch, in: container, debugDescription: "the epoch \(epoch) is before the start \(since)")
        }
        self.since = since
        self.epoch = epoch
        self.decayedCount = try sum(.decayedCount, atMost: Self.largestCount)
        self.decayedForbiddenTime = try sum(.decayedForbiddenTime, atMost: Self.meanAge)
        self.forbiddenSince = try instant(.forbiddenSince)
        self.latestLaunch = try instant(.latestLaunch)
    }

    /// The weight of something `age` seconds old.
    private static func decay(_ age: TimeInterval) -> Double {
        let weight = exp(-age / meanAge)
        return weight.isFinite ? weight : 0
    }
}
