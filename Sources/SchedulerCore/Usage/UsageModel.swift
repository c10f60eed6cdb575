import Foundation
import Synchronization

/// What the system has learned of one app from the moments the user brought it to the
/// foreground: how likely a launch is in each hour of the week, when the next likely
/// launch is, where to place a refresh, and whether the app is used enough for processing.
///
/// A pure value: it never reads the clock, the time zone or a file. The engine records
/// foregrounds with ``recordForeground(at:)`` and asks questions with an explicit `now`;
/// the store persists it as Codable.
///
/// ## The launch probability
///
/// Hours of the week are local (``UsageModelConfiguration/utcOffset``), numbered 0 (Monday
/// 00:00-01:00) to 167 (Sunday 23:00-24:00). An *occurrence* of hour *h* is one concrete
/// hour, say Monday 2026-05-11 08:00-09:00. For hour *h* at instant `now`:
///
/// ```
///              Σ  w(now − start(o))   over occurrences o of h in which the app was opened
/// p(h, now) = ─────────────────────────────────────────────────────────────────────────────
///              Σ  w(now − start(o))   over occurrences o of h observed so far
///
/// w(age) = 2^(−age / halfLife)
/// ```
///
/// An occurrence is *observed* when it has begun at or before `now` and ends after the
/// model started observing (``observedSince``, the earlier of ``createdAt`` and the first
/// recorded launch). Several launches in one occurrence count once: the question is "in
/// how many Monday 08:00 hours did the user open the app", not "how often". So `p` is the
/// decayed share of observed weeks in which a launch happened in that hour; it is in
/// 0...1, 0 for an hour never observed, and recent weeks outweigh old ones so a changed
/// habit takes over. The numerator terms are a subset of the denominator's, which keeps
/// `p <= 1` without clamping tricks.
///
/// Storage is 168 decayed weights (the numerator, kept as of the latest counted
/// occurrence), the latest counted occurrence per hour (to count each once), and
/// ``observedSince``; the denominator is a geometric series computed in closed form.
/// Beside them, per hour of the day and kind of day, 12 decayed weights of the five-minute
/// slot in which the hour's first launch came (see ``launchOnset(hourOfWeek:at:)``).
///
/// ## An app that is never used
///
/// With no launch recorded, no hour is likely, and
/// ``preferredRefreshTime(eligibleAt:now:lastRefresh:leadSpread:)`` returns the
/// eligible instant: spacing is left to rate limiting and throttling (guessing an hour
/// would delay the refresh with nothing to gain). Processing is allowed
/// for the first ``UsageModelConfiguration/unusedProcessingCutoff`` (7 days) after
/// ``createdAt``, as if the app had been opened then, because installing or registering
/// an app is the closest thing to a use we know of; after that it is denied until the app
/// is opened, exactly like an app unused for a week.
public struct UsageModel: Sendable, Codable, Hashable {
    /// The tunables (offset, half-life, lead time, threshold, horizon, cutoff). The driver
    /// may replace it, for example when the time zone changes.
    public var configuration: UsageModelConfiguration {
        didSet { likelihoodMemo = LikelihoodMemo(); sharesMemo = LikelihoodMemo() }
    }
    /// When the model was created (the app first became known to the scheduler); the
    /// start of the 7-day grace of an app that was never opened.
    public let createdAt: Date
    /// The latest instant the app was brought to the foreground, or `nil` if never.
    public private(set) var lastUse: Date?
    /// How many foregrounds were recorded (each one, even several in one hour).
    public private(set) var foregroundCount: Int = 0
    /// Where observation starts: the earlier of ``createdAt`` and the first recorded
    /// launch. Hours before it are not counted as weeks without a launch.
    public private(set) var observedSince: Date

    /// Decayed numerator of each hour of the week, as of `weightsAsOf`.
    private var launchWeights: [Double]
    /// The start of the latest occurrence counted in `launchWeights`: the weights' epoch.
    private var weightsAsOf: Date?
    /// Decayed count of the first launch's five-minute slot within the hour, per hour of
    /// the day and kind of day (weekdays 0..<24, the weekend 24..<48), 12 slots each, as
    /// of `weightsAsOf` (the same epoch as `launchWeights`).
    private var launchMinuteWeights: [Double]
    /// Per hour of the week, the start of the latest occurrence already counted, so
    /// another launch in the same hour adds nothing.
    private var lastCountedOccurrence: [Date?]
    /// Per hour of the week, the five-minute slot of the first launch in its latest counted
    /// occurrence (nil: not known), so a replica's merge can count it too.
    private var lastCountedSlot: [Int?]
    /// Decayed count, per hour of the day (24, every day), of the occurrences in which the
    /// app was opened again in a later five-minute slot at least ``relaunchSlots`` after the
    /// hour's first launch, as of `weightsAsOf` (the same epoch as `launchWeights`).
    private var relaunchWeights: [Double]
    /// Per hour of the week, the start of the latest occurrence whose relaunch is counted, so
    /// a third launch in it adds nothing.
    private var lastCountedRelaunch: [Date?]
    /// Decayed count, per hour of the day (24, every day), of the occurrences in which the
    /// app was opened and then opened again in the next hour, at least
    /// ``relaunchSlots`` five-minute slots after the hour's last launch, as of `weightsAsOf`.
    private var followWeights: [Double]
    /// Per hour of the week, the start of the latest occurrence whose follow is counted.
    private var lastCountedFollow: [Date?]
    /// Decayed sum, over the occurrences counted in `launchWeights`, of how unforeseen each
    /// one's launch was when it came (``unforeseenness(ofOccurrenceStartingAt:bucket:)``), as
    /// of `weightsAsOf`: the numerator of ``unforeseenShare(at:)``.
    private var unforeseenWeight: Double = 0
    /// Decayed count of the occurrences judged so (the denominator), as of `weightsAsOf`.
    private var judgedLaunchWeight: Double = 0
    /// The starts of the device's network losses of an hour or more
    /// (``recordNetworkLoss(at:)``), ascending, at most one per hour and at most
    /// ``networkLossMemory`` of them (the oldest go first).
    private var networkLosses: [Date] = []
    /// The starts of the device's holds of an hour or more on refreshes with the network
    /// there (``recordDeviceHold(at:)``: Low Power Mode, heat), kept as
    /// the losses are.
    private var deviceHolds: [Date] = []
    /// The device's latest stretches online (``recordNetworkStay(from:to:)``), ascending by
    /// start, at most ``networkStayMemory`` of them (the oldest go first).
    var networkStays: [NetworkStay] = []
    /// The likelihood tables of the latest hour asked about (``likelihoods(at:)`` and the
    /// history's, ``historyTable(asOfHour:)``), and the launch onsets' table (``onsetTable``,
    /// for any hour); replaced by an empty one whenever what they are computed from changes:
    /// an occurrence counted (``countOccurrence(startingAt:bucket:slot:)``), the start of
    /// observation, the configuration. A relaunch, a follow, ``lastUse`` and
    /// ``foregroundCount`` feed no table.
    private var likelihoodMemo = LikelihoodMemo()
    /// The network-loss and device-hold shares of the latest hour asked about; replaced by an
    /// empty one when the losses, the holds, the start of observation or the configuration
    /// change (not when an occurrence is counted, as the likelihoods are: the shares do not
    /// depend on the launches). May be another app's model's, when both hold the same evidence for
    /// them (``shareLossMemo(with:)``).
    private var sharesMemo = LikelihoodMemo()
    /// The plan's latest bisections (``budgetScale(_:)``), by their questions: an app's
    /// refresh is judged when it comes due and again at the instant placed, often within
    /// the same hour, on the same numbers. Never emptied: an answer depends on its question
    /// alone.
    private var budgetScales = BudgetScaleMemo()

    /// Creates an empty model: nothing observed yet, processing allowed for the first 7
    /// days (see "An app that is never used").
    public init(createdAt: Date, configuration: UsageModelConfiguration = .init()) {
        self.configuration = configuration
        self.createdAt = createdAt
        self.observedSince = createdAt
        self.launchWeights = Array(repeating: 0, count: LocalWeek.hoursPerWeek)
        self.launchMinuteWeights = Array(repeating: 0, count: Self.minuteWeightCount)
        self.lastCountedOccurrence = Array(repeating: nil, count: LocalWeek.hoursPerWeek)
        self.lastCountedSlot = Array(repeating: nil, count: LocalWeek.hoursPerWeek)
        self.relaunchWeights = Array(repeating: 0, count: 24)
        self.lastCountedRelaunch = Array(repeating: nil, count: LocalWeek.hoursPerWeek)
        self.followWeights = Array(repeating: 0, count: 24)
        self.lastCountedFollow = Array(repeating: nil, count: LocalWeek.hoursPerWeek)
    }

    var week: LocalWeek { LocalWeek(utcOffset: configuration.utcOffset) }

    // MARK: Recording

    /// Records that the user brought the app to the foreground at `date`.
    ///
    /// Launches are expected in time order. One that falls in an hour already counted, or
    /// in an earlier occurrence of an hour counted since (a clock stepped back by a week),
    /// still updates ``lastUse`` and ``foregroundCount`` but adds nothing to the
    /// probabilities, so nothing is counted twice. A non-finite or absurd instant is
    /// ignored.
    public mutating func recordForeground(at date: Date) {
        guard LocalWeek.isRepresentable(date) else { return }
        // The likelihood tables stay until an occurrence is counted (countOccurrence empties
        // them): the launch is judged against the table of the evidence before it.
        foregroundCount += 1
        let previousUse = lastUse
        lastUse = max(lastUse ?? date, date)
        if date < observedSince {
            observedSince = date
            likelihoodMemo = LikelihoodMemo()
            sharesMemo = LikelihoodMemo()
        }

        let week = self.week
        let hour = week.absoluteHour(of: date)
        let start = week.start(ofHour: hour)
        let slot = min(Self.slotsPerHour - 1, max(0, Int(date.timeIntervalSince(start) / Self.slotLength)))
        let bucket = LocalWeek.hourOfWeek(ofHour: hour)
        if lastCountedOccurrence[bucket] == start, let first = lastCountedSlot[bucket], slot - first >= Self.relaunchSlots {
            countRelaunch(inOccurrenceStartingAt: start, bucket: bucket)
        }
        countOccurrence(startingAt: start, bucket: bucket, slot: slot)
        if let previousUse, week.absoluteHour(of: previousUse) == hour - 1,
           date.timeIntervalSince(previousUse) >= Double(Self.relaunchSlots) * Self.slotLength {
            countFollow(inOccurrenceStartingAt: week.start(ofHour: hour - 1), bucket: LocalWeek.hourOfWeek(ofHour: hour - 1))
        }
    }

    /// Counts the occurrence of hour of the week `bucket` that starts at `start` (one already
    /// counted as opened) as one the app was opened again after, in the next hour, unless it
    /// already is.
    private mutating func countFollow(inOccurrenceStartingAt start: Date, bucket: Int) {
        countOnce(start, bucket: bucket, counted: \.lastCountedFollow, weights: \.followWeights)
    }

    /// The decayed share (0 ... 1) of the occurrences of hour of the day `hourOfDay` (any
    /// hour number is reduced modulo 24; every day) in which the app was opened that saw it
    /// opened again in the next hour, three five-minute slots' length or more after the last
    /// launch (``relaunchSlots``): how likely a launch is in the next hour once one came in
    /// this one. 0 for an hour never opened.
    ///
    /// The placement gives the hour after the one the user last opened the app in the
    /// smaller of its own likelihood and this share: a habit at 09:45 give or take 20
    /// minutes, whose late days make 10:00 likely too, gets no refreshes after 10:00 on a day
    /// it came at 09:50, while a user with another habit at 10:30 keeps them.
    public func followShare(hourOfDay: Int) -> Double {
        shareOfOpened(followWeights, hourOfDay: hourOfDay)
    }

    /// How many occurrences' worth of the next hour's own likelihood the follow share is
    /// shrunk toward (``followLikelihood(afterHour:ownLikelihood:)``): half of one, so one
    /// day's launch without a follow does not take the next hour's refreshes away at once.
    /// Chosen on the 20 lives and 12 held-out ones (docs/scenarios.md, "Kept on 2026-12-07
    /// (session 42)"): without it the next hour lost its refreshes on the first day's evidence.
    static let followPriorOccurrences = 0.5

    /// The likelihood the placement gives the hour after `hour` (an absolute hour, or an hour
    /// of the day) once the app was opened in `hour`: ``followShare(hourOfDay:)`` shrunk toward
    /// the next hour's `ownLikelihood` by ``followPriorOccurrences``, weighed by how often
    /// `hour` was seen opened.
    func followLikelihood(afterHour hour: Int, ownLikelihood: Double) -> Double {
        let opened = openedWeight(hourOfDay: hour)
        let prior = Self.followPriorOccurrences
        return (followShare(hourOfDay: hour) * opened + prior * ownLikelihood) / (opened + prior)
    }

    /// How many five-minute slots after the slot of the hour's first launch another launch
    /// must come to count as a relaunch: 3 (a quarter of an hour, the standard refresh
    /// interval, between the slots' starts; 10 to 20 minutes between the launches): content
    /// refreshed for the first launch is stale by then.
    static let relaunchSlots = 3

    /// Counts the occurrence of hour of the week `bucket` that starts at `start` (one already
    /// counted as opened) as one in which the app was opened again, unless it already is.
    private mutating func countRelaunch(inOccurrenceStartingAt start: Date, bucket: Int) {
        countOnce(start, bucket: bucket, counted: \.lastCountedRelaunch, weights: \.relaunchWeights)
    }

    /// Adds the occurrence of hour of the week `bucket` that starts at `start` to `weights`
    /// (per hour of the day, decayed to the weights' epoch), unless `counted` says it, or a
    /// later occurrence of that hour, already is; nothing for an occurrence after the epoch.
    private mutating func countOnce(_ start: Date, bucket: Int, counted: WritableKeyPath<UsageModel, [Date?]>, weights: WritableKeyPath<UsageModel, [Double]>) {
        if let latest = self[keyPath: counted][bucket], start <= latest { return }
        guard let epoch = weightsAsOf, start <= epoch else { return }
        self[keyPath: counted][bucket] = start
        self[keyPath: weights][bucket % 24] += configuration.decayFactor(age: epoch.timeIntervalSince(start))
    }

    /// `weights[hour]` (per hour of the day) over the decayed occurrences of that hour in
    /// which the app was opened, every day, at most 1; 0 for an hour never opened.
    private func shareOfOpened(_ weights: [Double], hourOfDay: Int) -> Double {
        let opened = openedWeight(hourOfDay: hourOfDay)
        return opened > 0 ? min(1, weights[((hourOfDay % 24) + 24) % 24] / opened) : 0
    }

    /// The decayed count of the occurrences of hour of the day `hourOfDay` (any hour number
    /// is reduced modulo 24) in which the app was opened, every day.
    private func openedWeight(hourOfDay: Int) -> Double {
        let hour = ((hourOfDay % 24) + 24) % 24
        var opened = 0.0
        for bucket in stride(from: hour, to: LocalWeek.hoursPerWeek, by: 24) { opened += launchWeights[bucket] }
        return opened
    }

    /// The decayed share (0 ... 1) of the occurrences of hour of the day `hourOfDay` (any
    /// hour number is reduced modulo 24, so an absolute hour may be passed; every
    /// day) in which the app was opened that saw it opened again three five-minute slots or more
    /// after the first launch (``relaunchSlots``): how likely another launch is in an hour
    /// whose first has come. 0 for an hour never opened.
    ///
    /// The placement gives an hour in which the user already opened the app this share as
    /// its likelihood, where it gave it none: a reader who comes back every few minutes
    /// for an hour (a commute, a lunch break) finds content refreshed for the rest of it,
    /// while an hour opened once a day still gets nothing after its launch.
    public func relaunchShare(hourOfDay: Int) -> Double {
        shareOfOpened(relaunchWeights, hourOfDay: hourOfDay)
    }

    /// Records that the device lost its network at `start` and stayed offline for an hour or
    /// more (the engine calls it when the network comes back, for every app it knows;
    /// ``SchedulerEngine/minimumNetworkLoss``).
    ///
    /// One in an hour already holding one adds nothing. Losses come in time order, but one
    /// before the latest recorded (a clock set back, which leaves the latest in the future)
    /// is put in its place: future-dated losses must not stop the model learning until the
    /// clock passes them. A non-finite or absurd instant is ignored. See
    /// ``networkLossShare(hourOfWeek:at:)`` for what the placement makes of them.
    public mutating func recordNetworkLoss(at start: Date) {
        guard let kept = Self.adding(start, to: networkLosses, week: week) else { return }
        networkLosses = kept
        sharesMemo = LikelihoodMemo()
    }

    /// `starts` (the network losses or the device holds, as kept) with `start` added, or nil
    /// when it adds nothing: not an instant, or in an hour that holds one. One after the
    /// latest's hour is appended (O(1), the usual case); an earlier one (a clock set back)
    /// is put in its place, as ``oneLossPerHour(_:week:)`` keeps them.
    static func adding(_ start: Date, to starts: [Date], week: LocalWeek) -> [Date]? {
        guard LocalWeek.isRepresentable(start) else { return nil }
        let hour = week.absoluteHour(of: start)
        if let latest = starts.last, hour <= week.absoluteHour(of: latest) {
            if starts.contains(where: { week.absoluteHour(of: $0) == hour }) { return nil }
            let kept = oneLossPerHour(starts + [start], week: week)
            return kept == starts ? nil : kept
        }
        var kept = starts
        kept.append(start)
        if kept.count > networkLossMemory { kept.removeFirst(kept.count - networkLossMemory) }
        return kept
    }

    /// Records that the device began to hold refreshes at `start` for an hour or more with
    /// the network there: Low Power Mode, or a thermal state at which refreshes wait (the
    /// engine calls it when the hold ends, for every app it knows;
    /// ``SchedulerEngine/minimumDeviceHold``). Kept and judged as the network losses are
    /// (``deviceHoldShare(hourOfWeek:at:)``): a daily hold is refreshed before, as a daily
    /// loss is. Found from outside: a gaming evening that runs hot from 19:30 had content
    /// 75 minutes old (median) when the heat began, and hours old at the launches in it.
    public mutating func recordDeviceHold(at start: Date) {
        guard let kept = Self.adding(start, to: deviceHolds, week: week) else { return }
        deviceHolds = kept
        sharesMemo = LikelihoodMemo()
    }

    /// As ``networkLossShare(hourOfWeek:at:)``, of the device's holds on refreshes
    /// (``recordDeviceHold(at:)``): the placement refreshes before an hour whose share is at
    /// least ``networkLossShareThreshold``, outside the day's plan (the ``LaunchLedger``
    /// counts those launches as any other).
    public func deviceHoldShare(hourOfWeek: Int, at now: Date) -> Double {
        holdShares(at: now)[LocalWeek.hourOfWeek(ofHour: hourOfWeek)]
    }

    /// The hours of the week (ascending) whose ``deviceHoldShare(hourOfWeek:at:)`` at `now`
    /// is at least ``networkLossShareThreshold``: those refreshed before the hold.
    public func deviceHoldHours(at now: Date) -> [Int] {
        hoursAtThreshold(holdShares(at: now))
    }

    /// The hours of the week whose share in `shares` is at least ``networkLossShareThreshold``.
    private func hoursAtThreshold(_ shares: [Double]) -> [Int] {
        shares.indices.filter { shares[$0] >= Self.networkLossShareThreshold }
    }

    /// How many network losses a model keeps: 256, months of daily ones (a loss 70 days old
    /// weighs 3 % at the default half-life of 14 days; the 256th daily one, next to nothing).
    public static let networkLossMemory = 256

    /// The share of the observed occurrences of hour of the week `hourOfWeek` (an absolute
    /// hour is reduced to its hour of the week) in which the network went away for an hour
    /// or more, each weighed with the same decay as the launches, as known at `now`
    /// (0 ... 1).
    ///
    /// The placement treats an hour whose share is at least ``networkLossShareThreshold``
    /// as one whose launch is that likely: its lead gets a refresh, so the content taken
    /// offline (a flight, a weekend off the grid, a commute through a tunnel) is as fresh as
    /// the budget allows. Those refreshes are not counted in the day's plan (an hour that
    /// loses the network cannot spend what the budget gives it); they are launches like any
    /// other for the app's ``LaunchLedger``, which makes the following days' plans spend less
    /// when the week ran over its budget (docs/policies.md, "The usage model").
    public func networkLossShare(hourOfWeek: Int, at now: Date) -> Double {
        lossShares(at: now)[LocalWeek.hourOfWeek(ofHour: hourOfWeek)]
    }

    /// `losses` as a model keeps them: representable instants, ascending, the first of each
    /// hour, the latest ``networkLossMemory``.
    static func oneLossPerHour(_ losses: [Date], week: LocalWeek) -> [Date] {
        var kept: [Date] = []
        for loss in losses.filter(LocalWeek.isRepresentable).sorted() {
            if let latest = kept.last, week.absoluteHour(of: latest) >= week.absoluteHour(of: loss) { continue }
            kept.append(loss)
        }
        return Array(kept.suffix(networkLossMemory))
    }

    /// The hours of the week (ascending) whose ``networkLossShare(hourOfWeek:at:)`` at `now`
    /// is at least ``networkLossShareThreshold``: those refreshed before the loss.
    public func networkLossHours(at now: Date) -> [Int] {
        hoursAtThreshold(lossShares(at: now))
    }

    /// Takes `other`'s memo of network-loss and device-hold shares when both models hold
    /// the same evidence for them (the same losses, holds, start of observation and
    /// configuration): the engine teaches every app the device's losses and holds together,
    /// and the apps then work the shares out once an hour between them, not once each. Any
    /// later change to either model's evidence gives it a memo of its own again.
    mutating func shareLossMemo(with other: UsageModel) {
        guard networkLosses == other.networkLosses, deviceHolds == other.deviceHolds,
              observedSince == other.observedSince, configuration == other.configuration else { return }
        sharesMemo = other.sharesMemo
    }

    /// ``networkLossShare(hourOfWeek:at:)`` of every hour of the week.
    private func lossShares(at now: Date) -> [Double] { shares(.networkLossShares, of: networkLosses, at: now) }
    /// ``deviceHoldShare(hourOfWeek:at:)`` of every hour of the week.
    private func holdShares(at now: Date) -> [Double] { shares(.deviceHoldShares, of: deviceHolds, at: now) }

    /// Every hour of the week's share when none was learned: 0.
    private static let noShares = [Double](repeating: 0, count: LocalWeek.hoursPerWeek)

    /// An hour is refreshed for as if its launch were as likely as its network loss from a
    /// share of 0.3 (about one week in three).
    public static let networkLossShareThreshold = 0.3

    /// The shares of `starts` (the network losses or the device holds) of every hour of the
    /// week (168), kept in the shares memo under `kind`; all 0 when none was learned. Taken as
    /// of the start of the hour in progress, as the likelihoods are, and kept for the hour:
    /// the placement asks on every judged refresh.
    private func shares(_ kind: LikelihoodMemo.Kind, of starts: [Date], at now: Date) -> [Double] {
        guard !starts.isEmpty, LocalWeek.isRepresentable(now) else { return Self.noShares }
        let nowHour = week.absoluteHour(of: now)
        return sharesMemo.table(kind, forHour: nowHour) { shares(of: starts, asOfHour: nowHour) }
    }

    /// The shares of `starts` (the network losses or the device holds, as kept) as of the
    /// start of absolute hour `nowHour`, in one pass over them.
    ///
    /// Each hour of the week's own share is its decayed losses over its decayed observed
    /// weeks. Days are pooled as the launches' hours are: the hour of the day's share over
    /// all days (losses over observed occurrences, every day of the week) is blended in
    /// as ``dailyPatternPriorWeeks`` weeks of evidence, `(lost(h) + k · allDays) /
    /// (observed(h) + k)`, and an hour takes the larger of that and its own share. So a
    /// network that goes away at 06:15 every day is known from the second day (not the
    /// second week), while a loss every Friday evening keeps its own share and lends the
    /// other evenings only a seventh of its weight (below the threshold).
    private func shares(of starts: [Date], asOfHour nowHour: Int) -> [Double] {
        let hours = LocalWeek.hoursPerWeek
        var lost = [Double](repeating: 0, count: hours)
        let week = self.week
        let now = week.start(ofHour: nowHour)
        for loss in starts {
            guard loss <= now else { break }  // in time order
            let hour = week.absoluteHour(of: loss)
            lost[LocalWeek.hourOfWeek(ofHour: hour)] += configuration.decayFactor(age: now.timeIntervalSince(week.start(ofHour: hour)))
        }
        var shares = [Double](repeating: 0, count: hours)
        guard lost.contains(where: { $0 > 0 }) else { return shares }
        // The device was watched from its first loss on, even before the app was known; once
        // the memory is full, older losses may have been dropped, so the weeks before the
        // oldest kept one are not counted as weeks without a loss.
        let oldest = starts.first ?? observedSince
        let since = starts.count >= Self.networkLossMemory ? oldest : min(observedSince, oldest)
        // The occurrence in progress counts as observed although its loss, if any, is learned
        // only an hour later: the share dips as the hour begins. Counting it from an hour on
        // (tried) raised every share and travel's wakeups past their bound.
        // Only the hours of the day that lost the network on some day have a share: the
        // observed weeks (a power and an expm1 each) are worked out for their seven hours of
        // the week alone.
        var allDaysLost = [Double](repeating: 0, count: 24)
        for bucket in 0..<hours { allDaysLost[bucket % 24] += lost[bucket] }
        let k = Self.dailyPatternPriorWeeks
        for hourOfDay in 0..<24 where allDaysLost[hourOfDay] > 0 {
            let buckets = stride(from: hourOfDay, to: hours, by: 24)
            let observed = buckets.map { observedWeeks(hourOfWeek: $0, upTo: now, at: now, since: since) }
            let allDaysObserved = observed.reduce(0, +)
            guard allDaysObserved > 0 else { continue }
            let allDays = min(1, allDaysLost[hourOfDay] / allDaysObserved)
            for (day, bucket) in buckets.enumerated() {
                let own = observed[day] > 0 ? min(1, lost[bucket] / observed[day]) : 0
                shares[bucket] = max(own, min(1, (lost[bucket] + k * allDays) / (observed[day] + k)))
            }
        }
        return shares
    }

    /// Five-minute slots in an hour, for where in its hour a launch comes.
    static let slotsPerHour = 12
    /// The length of one slot: five minutes.
    static let slotLength: TimeInterval = 300
    /// 48 hour-of-day pools (weekdays, the weekend) of 12 slots.
    static let minuteWeightCount = 48 * slotsPerHour

    /// The hour-of-day pool of hour of the week `bucket`: weekdays 0..<24, the weekend 24..<48.
    static func pool(ofBucket bucket: Int) -> Int { (bucket >= 5 * 24 ? 24 : 0) + bucket % 24 }

    /// Counts the occurrence of hour of the week `bucket` that starts at `start` as one in
    /// which the app was opened, unless it (or a later occurrence of that hour) already is.
    private mutating func countOccurrence(startingAt start: Date, bucket: Int, slot: Int?) {
        if let counted = lastCountedOccurrence[bucket], start <= counted { return }
        // Judged before the occurrence is counted, against what the history said of it
        // beforehand; only a launch later than every one counted so far can be (one counted
        // late, a replica's earlier launch or a clock stepped back, would be judged against
        // later launches: it is not judged).
        let unforeseen = (weightsAsOf.map { start > $0 } ?? true) ? unforeseenness(ofOccurrenceStartingAt: start, bucket: bucket) : 0
        likelihoodMemo = LikelihoodMemo()
        lastCountedOccurrence[bucket] = start
        lastCountedSlot[bucket] = slot
        let slotIndex = slot.map { Self.pool(ofBucket: bucket) * Self.slotsPerHour + $0 }

        guard let epoch = weightsAsOf else {
            weightsAsOf = start
            launchWeights[bucket] = 1
            if let slotIndex { launchMinuteWeights[slotIndex] = 1 }
            unforeseenWeight = unforeseen
            judgedLaunchWeight = 1
            return
        }
        if start > epoch {
            // Move the epoch forward, so that weights stay near 1 and never underflow
            // while the app is in use: everything recorded so far ages by the gap.
            let factor = configuration.decayFactor(age: start.timeIntervalSince(epoch))
            for index in launchWeights.indices { launchWeights[index] *= factor }
            for index in launchMinuteWeights.indices { launchMinuteWeights[index] *= factor }
            for index in relaunchWeights.indices { relaunchWeights[index] *= factor }
            for index in followWeights.indices { followWeights[index] *= factor }
            unforeseenWeight = unforeseenWeight * factor + unforeseen
            judgedLaunchWeight = judgedLaunchWeight * factor + 1
            weightsAsOf = start
            launchWeights[bucket] += 1
            if let slotIndex { launchMinuteWeights[slotIndex] += 1 }
        } else {
            let weight = configuration.decayFactor(age: epoch.timeIntervalSince(start))
            launchWeights[bucket] += weight
            if let slotIndex { launchMinuteWeights[slotIndex] += weight }
            // A launch counted late is not judged (above): the unforeseen weights stay.
        }
    }

    /// Where the launches of hour of the week `bucket` usually begin within their hour, as
    /// known at `now`: seconds after the hour's start (a multiple of five minutes, 0 ... 55).
    ///
    /// The five-minute slot by which ``launchOnsetShare`` of the hour's first launches had
    /// come, on days of the same kind (weekdays, the weekend) or, while those weigh less
    /// than ``launchOnsetEvidence`` decayed launches, on every day; 0 (the hour's start) while
    /// every day's weigh less than that too. Launches are counted with the same decay as
    /// the likelihoods: a habit that moved earlier in its hour moves the onset at once, one
    /// that moved later as the earlier launches decay (half-life 14 days: for a daily habit,
    /// weeks).
    public func launchOnset(hourOfWeek: Int, at now: Date) -> TimeInterval {
        guard weightsAsOf != nil, LocalWeek.isRepresentable(now) else { return 0 }
        return Self.launchOnset(pool: Self.pool(ofBucket: LocalWeek.hourOfWeek(ofHour: hourOfWeek)), evidence: onsetEvidenceInEpoch(at: now), table: onsetTable)
    }

    /// ``launchOnsetEvidence`` in the weights' epoch: the minute weights are kept as of
    /// `weightsAsOf`, so the decayed evidence at `now` reaches the threshold when the kept
    /// weights reach it divided by the decay since (infinite when everything decayed away).
    private func onsetEvidenceInEpoch(at now: Date) -> Double {
        guard let epoch = weightsAsOf else { return .infinity }
        return Self.launchOnsetEvidence / configuration.decayFactor(age: max(0, now.timeIntervalSince(epoch)))
    }

    /// The onset of hour-of-day pool `pool` (see ``launchOnset(hourOfWeek:at:)``), with the
    /// evidence threshold `evidence` in the weights' epoch, from the model's `table`
    /// (``onsetTable``): the hour's own kind of days while they weigh `evidence` or more,
    /// else every day, while those do; else the hour's start.
    private static func launchOnset(pool: Int, evidence: Double, table: [Double]) -> TimeInterval {
        let entry = pool * onsetTableStride
        let kindTotal = table[entry]
        let pooled = kindTotal < evidence
        let total = pooled ? kindTotal + table[entry + 1] : kindTotal
        guard total >= evidence, total > 0 else { return 0 }
        return table[entry + (pooled ? 3 : 2)]
    }

    /// Numbers per pool in ``onsetTable``.
    private static let onsetTableStride = 4

    /// Per hour-of-day pool (48), what its onset is made of, kept in the likelihood memo
    /// until the launches change (not per hour: it does not age, only the evidence
    /// threshold does, and that is compared at each question): the decayed first launches
    /// of its own kind of days and of the other kind, the slot by which
    /// ``launchOnsetShare`` of its own kind's had come, and that of every day's. The plan
    /// asks for 26 hours' onsets at every judgement of a refresh.
    private var onsetTable: [Double] {
        likelihoodMemo.table(.onsets, forHour: .min) {
            let slots = Self.slotsPerHour
            var table = [Double](repeating: 0, count: 48 * Self.onsetTableStride)
            for pool in 0..<48 {
                let sameKind = pool * slots
                let otherKind = ((pool + 24) % 48) * slots
                var kindTotal = 0.0
                var otherTotal = 0.0
                for slot in 0..<slots {
                    kindTotal += launchMinuteWeights[sameKind + slot]
                    otherTotal += launchMinuteWeights[otherKind + slot]
                }
                // The slot by which the share of `total` had come (0: none reached it).
                func onset(pooled: Bool, total: Double) -> Double {
                    var cumulative = 0.0
                    for slot in 0..<slots {
                        cumulative += launchMinuteWeights[sameKind + slot] + (pooled ? launchMinuteWeights[otherKind + slot] : 0)
                        if cumulative >= Self.launchOnsetShare * total { return Double(slot) * Self.slotLength }
                    }
                    return 0
                }
                let entry = pool * Self.onsetTableStride
                table[entry] = kindTotal
                table[entry + 1] = otherTotal
                table[entry + 2] = onset(pooled: false, total: kindTotal)
                table[entry + 3] = onset(pooled: true, total: kindTotal + otherTotal)
            }
            return table
        }
    }

    /// The share of an hour's first launches that come before its onset
    /// (``launchOnset(hourOfWeek:at:)``): 0.1.
    public static let launchOnsetShare = 0.1

    /// How many decayed first launches an hour needs (on days of its kind, else on every
    /// day) before its onset moves from the hour's start: 3.
    public static let launchOnsetEvidence = 3.0

    // MARK: Questions

    /// The hour of the week (0 = Monday 00:00 ... 167 = Sunday 23:00, local under
    /// ``UsageModelConfiguration/utcOffset``) that contains `date`.
    public func hourOfWeek(of date: Date) -> Int {
        guard LocalWeek.isRepresentable(date) else { return 0 }
        return week.hourOfWeek(of: date)
    }

    /// The probability (0...1) that the user opens the app during local hour of the week
    /// `hourOfWeek` (taken modulo 168), as known at `now`: the decayed share of observed
    /// weeks in which a launch happened in that hour (the formula is in the type's
    /// documentation). 0 for an hour not yet observed and for an app never opened.
    public func launchProbability(hourOfWeek: Int, at now: Date) -> Double {
        let evidence = self.evidence(hourOfWeek: hourOfWeek, at: now)
        guard evidence.observed > 0 else { return 0 }
        // Only a question about the past (now before a recorded launch) can exceed 1.
        return min(1, max(0, evidence.launched / evidence.observed))
    }

    /// How many weeks of evidence the pooled estimate of the same hour on days of the same
    /// kind is worth when it is blended into an hour of the week's own (see
    /// ``likelihood(hourOfWeek:at:)``).
    public static let dailyPatternPriorWeeks = 2.0

    /// How many days of evidence the app's overall launch rate is worth when it is blended
    /// into the estimate of one hour of the day over all days (see
    /// ``likelihood(hourOfWeek:at:)``).
    public static let overallRatePriorDays = 2.0

    /// How many hours of evidence the app's overall launch rate is worth when it is blended
    /// into the launch rate of one kind of day (weekdays, the weekend).
    public static let kindRatePriorHours = 24.0

    /// How many days of evidence the estimate of an hour of the day over all days is worth
    /// when it is blended into the estimate over the days of the same kind.
    public static let allDaysPriorDays = 1.0

    /// How likely (0...1) a launch is in local hour of the week `hourOfWeek` (modulo 168),
    /// as the scheduler judges at `now`: the hour of the week's own evidence shrunk toward
    /// the same hour on the days of the same kind (Monday to Friday, or the weekend), that
    /// toward the same hour on every day, and that toward the app's overall rate:
    ///
    /// ```
    /// overall   = decayed launch-hours / decayed observed hours, over every hour
    /// allDays   = (launched(all days' h) + a · overall) / (observed(all days' h) + a)
    /// kindRate  = (launch-hours on days of h's kind + r · overall) / (observed hours on them + r)
    /// kindPrior = allDays + max(0, kindRate − overall) / (observed(same kind's h) + 1)
    /// kind      = (launched(same kind's h) + d · kindPrior) / (observed(same kind's h) + d)
    /// likelihood = (launched(h) + k · kind) / (observed(h) + k)
    /// ```
    ///
    /// where `launched` and `observed` are the decayed numerator and denominator of
    /// ``launchProbability(hourOfWeek:at:)``, `a` is ``overallRatePriorDays`` (2), `r`
    /// ``kindRatePriorHours`` (24), `d` ``allDaysPriorDays`` (1) and `k`
    /// ``dailyPatternPriorWeeks`` (2). `kindPrior` serves a kind of day on which the app is
    /// used more than on the other: an hour of it observed little on days of its kind takes
    /// that kind's rate rather than what the other kind's hours say (an app opened only at
    /// weekends: on its first Saturday, five silent weekdays must not make Saturday
    /// afternoon look unused), and the inheritance fades as the hour is observed on days of
    /// its kind. So a weekday
    /// routine is learned after one weekday, a weekend one after one weekend day, a weekly
    /// rhythm (nothing on Friday evenings) takes over as the weeks show it, and one odd
    /// week does not erase a habit. With little evidence every hour keeps some of the
    /// app's overall rate (the scheduler is unsure, so it refreshes more); an hour of the
    /// day never used loses it as the days show it stays unused. An occurrence still in
    /// progress without a launch is left out: whether the user opens the app this hour is
    /// not known yet.
    ///
    /// Last, every hour keeps at least ``unforeseenFloor(overall:at:)``: the square of the
    /// share of launches the history did not foresee (``unforeseenShare(at:)``) times
    /// `overall`. The priors above judge each hour by its own days; this judges the history
    /// by what it predicted. A device whose launches keep coming in hours its history had
    /// written off (one launch a day at a new hour) would otherwise wait half a day for
    /// hours that were likely once, while a timer with the same wakeups finds content an
    /// hour old.
    public func likelihood(hourOfWeek: Int, at now: Date) -> Double {
        likelihoods(at: now)[LocalWeek.hourOfWeek(ofHour: hourOfWeek)]
    }

    /// ``likelihood(hourOfWeek:at:)`` of all 168 hours of the week at once, in one pass
    /// over the evidence: the scheduler asks for a day of them on every judged refresh.
    ///
    /// Hour `nowHour − b` (b = 0 ... 167) is the latest occurrence of its hour of the week
    /// to have begun, so its weight is `w(age of nowHour) · w(1 h)^b`, and the occurrences
    /// of that hour observed since ``observedSince`` form the geometric series of
    /// ``observedWeeks(hourOfWeek:upTo:at:)``; the hour in progress without a launch counts
    /// from the occurrence a week earlier.
    ///
    /// The table is taken as of the start of the hour in progress (ages measured from
    /// there), so it stays the same for the whole hour and is computed once per hour: the
    /// engine asks for it on every judgement of every refresh, and within an hour the
    /// decay moves a likelihood by less than a thousandth.
    func likelihoods(at now: Date) -> [Double] {
        guard weightsAsOf != nil, LocalWeek.isRepresentable(now), LocalWeek.isRepresentable(observedSince) else {
            return [Double](repeating: 0, count: LocalWeek.hoursPerWeek)
        }
        let nowHour = week.absoluteHour(of: now)
        return likelihoodMemo.table(.likelihoods, forHour: nowHour) { likelihoods(asOfHour: nowHour) }
    }

    /// ``likelihoods(at:)`` computed as of the start of absolute hour `nowHour`: the
    /// history's estimates, each raised to the floor of ``unforeseenFloor(overall:at:)``.
    private func likelihoods(asOfHour nowHour: Int) -> [Double] {
        let history = historyTable(asOfHour: nowHour)
        // The floor is at most the overall rate, itself at most 1.
        let floor = unforeseenFloor(overall: history[LocalWeek.hoursPerWeek], at: week.start(ofHour: nowHour))
        return (0..<LocalWeek.hoursPerWeek).map { max(history[$0], floor) }
    }

    /// The likelihoods of the 168 hours of the week as the history alone gives them (the
    /// formula of ``likelihood(hourOfWeek:at:)`` without the unforeseen launches' floor) as
    /// of the start of absolute hour `nowHour`, followed by the app's overall rate (decayed
    /// launch-hours over decayed observed hours, 0 with nothing observed): 169 numbers, kept
    /// for the hour (each hour's first launch is judged against them, and the floored table
    /// is made from them).
    func historyTable(asOfHour nowHour: Int) -> [Double] {
        likelihoodMemo.table(.history, forHour: nowHour) { computeHistoryTable(asOfHour: nowHour) }
    }

    /// ``historyTable(asOfHour:)`` computed.
    private func computeHistoryTable(asOfHour nowHour: Int) -> [Double] {
        let hours = LocalWeek.hoursPerWeek
        let nothingObserved = [Double](repeating: 0, count: hours + 1)
        guard let epoch = weightsAsOf else { return nothingObserved }
        let week = self.week
        let now = week.start(ofHour: nowHour)
        let firstObserved = week.absoluteHour(of: observedSince)
        let launchedFactor = configuration.decayFactor(age: now.timeIntervalSince(epoch))
        let hourDecay = configuration.decayFactor(age: LocalWeek.secondsPerHour)
        let weekDecay = configuration.decayFactor(age: LocalWeek.secondsPerWeek)
        var series: (count: Int, sum: Double) = (0, 0)
        func observedSeries(_ count: Int) -> Double {
            if series.count != count { series = (count, geometricWeeks(count)) }
            return series.sum
        }
        // Per hour of the week its decayed launches and observed occurrences; per hour of
        // the day the same summed over weekdays (0..<24) and over weekend days (24..<48).
        // Scratch space on the stack: this runs once per app and hour of every simulation.
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * hours + 6 * 24) { scratch in
            scratch.initialize(repeating: 0)
            let launched = UnsafeMutableBufferPointer(rebasing: scratch[0..<hours])
            let observed = UnsafeMutableBufferPointer(rebasing: scratch[hours..<(2 * hours)])
            let poolLaunched = UnsafeMutableBufferPointer(rebasing: scratch[(2 * hours)..<(2 * hours + 48)])
            let poolObserved = UnsafeMutableBufferPointer(rebasing: scratch[(2 * hours + 48)..<(2 * hours + 96)])
            let sameKindByPool = UnsafeMutableBufferPointer(rebasing: scratch[(2 * hours + 96)..<(2 * hours + 144)])
            var totalLaunched = 0.0
            var totalObserved = 0.0
            var ageFactor = 1.0
            var bucket = LocalWeek.hourOfWeek(ofHour: nowHour)
            // The bucket's hour of the day, stepped down with it (no division per hour).
            var hourOfDay = bucket % 24
            let launchWeights = self.launchWeights
            for back in 0..<hours {
                // Hour `nowHour − back` is the latest occurrence of `bucket` to have begun.
                var latest = nowHour - back
                var factor = ageFactor
                if back == 0, lastCountedOccurrence[bucket] != now {
                    // Whether the user opens the app this hour is not known yet.
                    latest -= hours
                    factor *= weekDecay
                }
                if latest >= firstObserved {
                    let seen = factor * observedSeries((latest - firstObserved) / hours + 1)
                    let opened = launchWeights[bucket] * launchedFactor
                    observed[bucket] = seen
                    launched[bucket] = opened
                    let pool = (bucket >= 5 * 24 ? 24 : 0) + hourOfDay  // Self.pool(ofBucket:)
                    poolObserved[pool] += seen
                    poolLaunched[pool] += opened
                    totalObserved += seen
                    totalLaunched += opened
                }
                ageFactor *= hourDecay
                bucket = bucket == 0 ? hours - 1 : bucket - 1
                hourOfDay = hourOfDay == 0 ? 23 : hourOfDay - 1
            }
            guard totalObserved > 0 else { return nothingObserved }
            let overall = min(1, totalLaunched / totalObserved)
            // Each kind of day's launch rate (pools 0..<24 weekdays, 24..<48 the weekend).
            func kindRate(_ pools: Range<Int>) -> Double {
                (poolLaunched[pools].reduce(0, +) + Self.kindRatePriorHours * overall)
                    / (poolObserved[pools].reduce(0, +) + Self.kindRatePriorHours)
            }
            let kindRates = (weekdays: kindRate(0..<24), weekend: kindRate(24..<48))
            // Each pool's rate, the prior of its hours of the week: the same for the five (or
            // two) hours of the week of a pool, so worked out once per pool, not per hour.
            for kind in 0..<48 {
                let hourOfDay = kind % 24
                let allLaunched = poolLaunched[hourOfDay] + poolLaunched[24 + hourOfDay]
                let allObserved = poolObserved[hourOfDay] + poolObserved[24 + hourOfDay]
                let allDays = (allLaunched + Self.overallRatePriorDays * overall) / (allObserved + Self.overallRatePriorDays)
                let kindRate = kind >= 24 ? kindRates.weekend : kindRates.weekdays
                // The kind's excess fades as the hour is observed on days of its kind: all of it
                // before the first, a half after one, a sixth after five.
                let unfamiliarity = 1 / (poolObserved[kind] + 1)
                let kindPrior = allDays + unfamiliarity * max(0, kindRate - overall)
                sameKindByPool[kind] = (poolLaunched[kind] + Self.allDaysPriorDays * kindPrior) / (poolObserved[kind] + Self.allDaysPriorDays)
            }
            let k = Self.dailyPatternPriorWeeks
            return [Double](unsafeUninitializedCapacity: hours + 1) { result, count in
                // Day by day, hour by hour: bucket = 24 · day + hour, its pool the hour of a
                // weekday (days 0 ... 4) or of the weekend.
                for day in 0..<7 {
                    let pools = day >= 5 ? 24 : 0
                    for hour in 0..<24 {
                        let bucket = day * 24 + hour
                        let sameKind = sameKindByPool[pools + hour]
                        result[bucket] = min(1, max(0, (launched[bucket] + k * sameKind) / (observed[bucket] + k)))
                    }
                }
                result[hours] = overall
                count = hours + 1
            }
        }
    }

    /// How unforeseen a launch in the occurrence of hour of the week `bucket` that starts at
    /// `start` is, judged before it is counted: `1 − likelihood / overall`, at least 0, with
    /// the hour's likelihood and the app's overall rate as the history alone gave them
    /// (``historyTable(asOfHour:)``: the floor the unforeseen launches raise is left
    /// out, or it would hide them); 1 for the first launch of all (nothing foresaw it). A
    /// launch in an hour as likely as the app's average hour, or more, was foreseen (0); one
    /// in an hour the history had written off (a tenth of the average) was not (0.9).
    private func unforeseenness(ofOccurrenceStartingAt start: Date, bucket: Int) -> Double {
        guard weightsAsOf != nil, LocalWeek.isRepresentable(start), LocalWeek.isRepresentable(observedSince) else { return 1 }
        let history = historyTable(asOfHour: week.absoluteHour(of: start))
        let overall = history[LocalWeek.hoursPerWeek]
        guard overall > 0 else { return 1 }
        return max(0, 1 - history[bucket] / overall)
    }

    /// The decayed share (0 ... 1) of the app's launches that came in hours its history did
    /// not foresee (``unforeseenness(ofOccurrenceStartingAt:bucket:)``, each hour's first
    /// launch judged when it came), shrunk toward ``unforeseenPrior`` by
    /// ``unforeseenPriorLaunches``: low for a user of habits (a commuter's settles near 0.05
    /// within a week or two), high for one whose days never repeat (an app opened once a day
    /// at a new hour: about 0.9). ``unforeseenPrior`` for an app never opened.
    public func unforeseenShare(at now: Date) -> Double {
        let decay = judgedWeightsDecay(at: now)
        let prior = Self.unforeseenPriorLaunches
        let share = (unforeseenWeight * decay + prior * Self.unforeseenPrior) / (judgedLaunchWeight * decay + prior)
        return share.isFinite ? min(1, max(0, share)) : Self.unforeseenPrior
    }

    /// The decayed number of launches judged so far (the denominator of
    /// ``unforeseenShare(at:)`` without its prior): 0 for an app never opened, and for a
    /// record kept before launches were judged until its next.
    func judgedLaunches(at now: Date) -> Double {
        judgedLaunchWeight * judgedWeightsDecay(at: now)
    }

    /// What the unforeseen weights, kept as of `weightsAsOf`, weigh at `now` (0 with none).
    private func judgedWeightsDecay(at now: Date) -> Double {
        weightsAsOf.map { configuration.decayFactor(age: now.timeIntervalSince($0)) } ?? 0
    }

    /// The unforeseen share of an app not yet opened: half (nothing is known either way).
    public static let unforeseenPrior = 0.5

    /// How many launches' worth ``unforeseenPrior`` weighs in ``unforeseenShare(at:)``: one,
    /// so the first days' own launches decide.
    public static let unforeseenPriorLaunches = 1.0

    /// The least likelihood every hour keeps (see ``likelihood(hourOfWeek:at:)``): the
    /// square of ``unforeseenShare(at:)`` times the app's `overall` rate. A device whose
    /// launches keep coming where its history saw none (share near 1) cannot be predicted
    /// by the hour, and its refreshes spread over the day as a timer's would (the budget is
    /// the same), instead of waiting 12 hours or more for hours that were likely once; a
    /// user of habits (share 0.05 to 0.3) keeps a floor of a quarter-hundredth to a tenth of
    /// the overall rate, about what the priors leave a silent hour anyway. Squared rather
    /// than taken as it is: a plain share raised the floor through the first week of every
    /// life (whose first launches are all unforeseen) and cost the medians there
    /// (docs/scenarios.md, "Kept on 2026-12-07 (session 45)").
    func unforeseenFloor(overall: Double, at now: Date) -> Double {
        let share = unforeseenShare(at: now)
        return share * share * overall
    }

    /// The decayed launches (numerator) and observed occurrences (denominator) of one hour
    /// of the week at `now`; with `excludingOpenOccurrence`, an occurrence in progress in
    /// which no launch has been recorded yet is not counted as observed.
    private func evidence(hourOfWeek: Int, at now: Date, excludingOpenOccurrence: Bool = false) -> (launched: Double, observed: Double) {
        guard let epoch = weightsAsOf, LocalWeek.isRepresentable(now) else { return (0, 0) }
        let bucket = LocalWeek.hourOfWeek(ofHour: hourOfWeek)
        var upTo = now
        if excludingOpenOccurrence {
            let hour = week.absoluteHour(of: now)
            let current = week.start(ofHour: hour)
            if LocalWeek.hourOfWeek(ofHour: hour) == bucket, lastCountedOccurrence[bucket] != current {
                // Ask as of just before the occurrence began (ages still from `now`).
                upTo = current.addingTimeInterval(-1)
            }
        }
        let observed = observedWeeks(hourOfWeek: bucket, upTo: upTo, at: now)
        guard observed > 0 else { return (0, 0) }
        return (launchWeights[bucket] * configuration.decayFactor(age: now.timeIntervalSince(epoch)), observed)
    }

    /// The decayed number of occurrences of `bucket` that had begun by `upTo`, weighed by
    /// their age at `now` (the denominator), counted from `since` (by default
    /// ``observedSince``).
    ///
    /// The occurrences are `first, first + 1 week, ...` up to the latest that has begun;
    /// with `q = w(1 week)` and `a` the age of the latest, the sum of their weights is
    /// `w(a) · (1 − qⁿ) / (1 − q)`.
    private func observedWeeks(hourOfWeek bucket: Int, upTo: Date, at now: Date, since: Date? = nil) -> Double {
        let since = since ?? observedSince
        guard LocalWeek.isRepresentable(since), LocalWeek.isRepresentable(upTo) else { return 0 }
        let week = self.week
        let nowHour = week.absoluteHour(of: upTo)
        let first = LocalWeek.firstHour(atOrAfter: week.absoluteHour(of: since), withHourOfWeek: bucket)
        guard first <= nowHour else { return 0 }
        let count = (nowHour - first) / LocalWeek.hoursPerWeek + 1
        let latest = first + (count - 1) * LocalWeek.hoursPerWeek
        // (1 − qⁿ) / (1 − q) through expm1: exact for n = 1 (a new app's first week, where
        // a launch must give p = 1, not 0.999...), and precise when q is close to 1.
        let newest = configuration.decayFactor(age: now.timeIntervalSince(week.start(ofHour: latest)))
        return newest * geometricWeeks(count)
    }

    /// `1 + q + ... + q^(count−1)` with `q = w(1 week)`: the decayed number of `count`
    /// weekly occurrences, the latest weighing 1 (`count` without decay).
    private func geometricWeeks(_ count: Int) -> Double {
        let halfLife = configuration.halfLife
        guard halfLife > 0, halfLife.isFinite else { return Double(count) }
        let logQ = -LocalWeek.secondsPerWeek / halfLife * M_LN2
        return expm1(Double(count) * logQ) / expm1(logQ)
    }

    /// The hours of the week (ascending) whose ``likelihood(hourOfWeek:at:)`` at `now` is
    /// at least ``UsageModelConfiguration/likelyThreshold``.
    public func likelyHours(at now: Date) -> [Int] {
        guard weightsAsOf != nil else { return [] }
        let likelihoods = self.likelihoods(at: now)
        return (0..<LocalWeek.hoursPerWeek).filter { likelihoods[$0] >= configuration.likelyThreshold }
    }

    /// Whether the local hour that contains `date` is a likely launch hour, as judged at `now`.
    public func isLikelyHour(containing date: Date, now: Date) -> Bool {
        guard weightsAsOf != nil, LocalWeek.isRepresentable(date) else { return false }
        return likelihood(hourOfWeek: week.hourOfWeek(of: date), at: now) >= configuration.likelyThreshold
    }

    /// Whether the user is likely to open the app shortly after `date`: the instant a lead
    /// time (``UsageModelConfiguration/leadTime``) after it falls in a likely hour. What
    /// herd spreading and wake sharing ask of a moment.
    public func isLikelyHour(aLeadTimeAfter date: Date, now: Date) -> Bool {
        isLikelyHour(containing: date.addingTimeInterval(configuration.leadTime), now: now)
    }

    /// Whether the launches of a likely hour usually begin (its start plus its onset,
    /// ``launchOnset(hourOfWeek:at:)``) within `interval` after `date`, as judged at `now`:
    /// what herd spreading asks of the turn it would give a refresh (its window and a lead
    /// time), so that content stale since a long loss is not held past the user's return.
    public func likelyLaunchesBegin(within interval: TimeInterval, after date: Date, now: Date) -> Bool {
        guard let next = nextLikelyLaunch(after: date, now: now) else { return false }
        let onset = launchOnset(hourOfWeek: week.absoluteHour(of: next), at: now)
        return next.addingTimeInterval(onset) <= date.addingTimeInterval(interval)
    }

    /// The start of the first local hour that begins at or after `start`, and no later
    /// than `start + horizon` (default 12 h), whose ``likelihood(hourOfWeek:at:)`` at `now`
    /// is at least ``UsageModelConfiguration/likelyThreshold`` (default 0.3); `nil` when
    /// there is none, and always for an app never opened.
    ///
    /// An hour already in progress at `start` is not a candidate: the launch it predicts
    /// may already have happened, and a refresh placed now would not be "shortly before".
    public func nextLikelyLaunch(after start: Date, now: Date) -> Date? {
        guard weightsAsOf != nil, LocalWeek.isRepresentable(start), LocalWeek.isRepresentable(now) else { return nil }
        let week = self.week
        let end = start.addingTimeInterval(configuration.horizon)
        var hour = week.absoluteHour(of: start)
        if week.start(ofHour: hour) < start { hour += 1 }
        let likelihoods = self.likelihoods(at: now)
        // A probability depends only on the hour of the week: after one week of
        // candidates every further one repeats an answer already given.
        for candidate in hour..<(hour + LocalWeek.hoursPerWeek) {
            let candidateStart = week.start(ofHour: candidate)
            if candidateStart > end { return nil }
            let probability = likelihoods[LocalWeek.hourOfWeek(ofHour: candidate)]
            if probability >= configuration.likelyThreshold { return candidateStart }
        }
        return nil
    }

    /// How far apart refreshes should be in each of the 24 local hours that begin with the
    /// one containing `start`, as judged at `now`, for an app that asks for a refresh
    /// every `requestedInterval`; nil for an hour that gets none.
    ///
    /// **Where.** The spacing follows the square-root rule of refreshing for readers who
    /// arrive at random: with launches at rate `λ` in an hour and a refresh costing as
    /// much as `c` of staleness, the expected cost per hour `c / T + λ · T / 2` is least at
    /// `T = √(2c / λ)`. So an hour four times as likely gets refreshes twice as close, an
    /// unlikely hour far apart, an hour never used none: `spacing(h) = scale / √likelihood(h)`,
    /// and an hour whose spacing would exceed ``UsageModelConfiguration/maximumRefreshSpacing``
    /// gets none.
    ///
    /// **When in the hour.** Each hour runs, for the placement, from its onset
    /// (``launchOnset(hourOfWeek:at:)``: where its launches usually begin) to the next
    /// hour's, so the refreshes before a habit at 12:35 come before 12:20, not before 12:00.
    ///
    /// **How many.** `scale` is set so that the refreshes the placement places over the
    /// 24 hours add up to ``UsageModelConfiguration/refreshBudgetShare`` of what the app
    /// asks for (about 22 a day for a refresh every 15 minutes): counted as placed,
    /// each stretch of hours that get refreshes beginning with one and each hour at most at
    /// the app's own cadence. The budget is spent where this device's own history says the
    /// user opens the app; with little history every hour keeps some likelihood, so the
    /// refreshes spread out, and they gather before the habits as the days show them.
    public func refreshSpacings(startingAt start: Date, now: Date, requestedInterval: TimeInterval? = nil) -> [TimeInterval?] {
        guard let plan = refreshPlan(startingAt: start, now: now, requestedInterval: requestedInterval) else {
            return Array(repeating: nil, count: 24)
        }
        return (0..<24).map { plan.spacing($0) }
    }

    /// The placement's view of the hours around the one containing its start: each hour's
    /// spacing (nil: none) and its onset, for the hours −1 ... 24 relative to that one (the
    /// hour before it too, because the hour containing the start may not have reached its
    /// onset yet, so the start may still lie in the stretch of the hour before).
    struct RefreshPlan {
        /// Spacings of the relative hours −1 ... 24, at index `relative + 1`.
        var spacings: [TimeInterval?]
        /// Onsets of the same hours, in seconds after each hour's start.
        var onsets: [TimeInterval]
        /// The spacing of relative hour `relative` (−1 ... 24).
        func spacing(_ relative: Int) -> TimeInterval? { spacings[relative + 1] }
        /// The onset of relative hour `relative` (−1 ... 24).
        func onset(_ relative: Int) -> TimeInterval { onsets[relative + 1] }
    }

    /// The spacings and onsets of the hours around the one containing `start`, judged at
    /// `now` (see ``refreshSpacings(startingAt:now:requestedInterval:)``); nil when the app
    /// was never opened or no hour is likely at all. The budget is counted over the 24
    /// hours from the one containing `start`, each running from its onset to the next's.
    func refreshPlan(startingAt start: Date, now: Date, requestedInterval: TimeInterval? = nil, launches: LaunchLedger? = nil) -> RefreshPlan? {
        guard weightsAsOf != nil, LocalWeek.isRepresentable(start), LocalWeek.isRepresentable(now) else { return nil }
        let likelihoods = self.likelihoods(at: now)
        let first = week.absoluteHour(of: start)
        // Relative hours −1 ... 24 at index + 1.
        var roots = (-1..<25).map { likelihoods[LocalWeek.hourOfWeek(ofHour: first + $0)].squareRoot() }
        // The likelihood is of a first launch in the hour: once the user opened the app in
        // this hour, the launch it predicted has happened; what is left is the chance that the
        // user comes back later in the hour, as the days showed it (relaunchShare: nothing for
        // an hour opened once, most of it for a reader who checks every few minutes).
        if let lastUse, lastUse <= now {
            // (An absolute hour is reduced to its hour of the day by relaunchShare.)
            if lastUse >= week.start(ofHour: first) { roots[1] = relaunchShare(hourOfDay: first).squareRoot() }
            if lastUse >= week.start(ofHour: first - 1) { roots[0] = relaunchShare(hourOfDay: first - 1).squareRoot() }
            // The hour after the one the user last opened the app in: its own likelihood
            // counts launches that were the same habit come late (a launch at 09:45 give or
            // take 20 minutes falls in 10:00-10:05 some days); once the habit has come, what
            // is left is the chance of another launch in that hour, as the days showed it
            // (followShare, shrunk toward the hour's own likelihood while the launch's hour
            // was seen opened only a few times), when that is the smaller.
            let used = week.absoluteHour(of: lastUse)
            if used == first - 1 || used == first {
                let following = used - first + 2
                roots[following] = min(roots[following], followLikelihood(afterHour: used, ownLikelihood: roots[following] * roots[following]).squareRoot())
            }
        }
        // The budget is counted on the launches alone; an hour that usually loses the
        // network, or in which the device usually holds refreshes, is then refreshed for as
        // if its launch were as likely as the loss (networkLossShare, deviceHoldShare),
        // outside the count, and from its start: the loss may come before the hour's
        // launches begin, and the lead must come before the loss.
        let countedRoots = roots
        var lossHours: [Int] = []
        if !networkLosses.isEmpty || !deviceHolds.isEmpty {
            let losses = lossShares(at: now)
            let holds = deviceHolds.isEmpty ? losses : holdShares(at: now)
            for relative in -1..<25 {
                let hourOfWeek = LocalWeek.hourOfWeek(ofHour: first + relative)
                let share = max(losses[hourOfWeek], holds[hourOfWeek])
                guard share >= Self.networkLossShareThreshold else { continue }
                roots[relative + 1] = max(roots[relative + 1], share.squareRoot())
                lossHours.append(relative + 1)
            }
        }
        let cadence = Self.cadence(requestedInterval)
        let budget = refreshBudget(requestedInterval: requestedInterval, launches: launches, at: now).planned
        let lead = min(max(configuration.leadTime, 0), 3600)  // the placement's mean lead
        guard cadence * (countedRoots[1...24].max() ?? 0) > 0 else { return nil }
        let evidence = onsetEvidenceInEpoch(at: now)
        let onsetTable = self.onsetTable
        let onsets = (-1..<25).map { Self.launchOnset(pool: Self.pool(ofBucket: LocalWeek.hourOfWeek(ofHour: first + $0)), evidence: evidence, table: onsetTable) }
        // The count of placed refreshes is a whole number, so the budget's whole part alone
        // decides the bisection.
        let question = BudgetScaleQuestion(
            roots: countedRoots, onsets: onsets, cadence: cadence, lead: lead,
            maximumSpacing: configuration.maximumRefreshSpacing, budget: budget.rounded(.down))
        let high = budgetScales.scale(for: question) { Self.budgetScale(question) }
        // Never closer than the square-root rule's own cost puts them: an app opened once a
        // week is not worth its whole budget.
        let scale = max(high, configuration.refreshSpacingAtThreshold * configuration.likelyThreshold.squareRoot())
        var placedOnsets = onsets
        for index in lossHours { placedOnsets[index] = 0 }
        return RefreshPlan(
            spacings: roots.map { Self.spacing(root: $0, scale: scale, cadence: cadence, maximumSpacing: configuration.maximumRefreshSpacing) },
            onsets: placedOnsets)
    }

    /// What the plan's bisection answers (``budgetScale(_:)``): every number it reads.
    struct BudgetScaleQuestion: Equatable, Sendable {
        /// The square roots of the relative hours −1 ... 24's likelihoods (at index + 1), as
        /// the budget counts them.
        var roots: [Double]
        /// The onsets of the same hours.
        var onsets: [TimeInterval]
        /// The closest spacing the app asks for.
        var cadence: TimeInterval
        /// The placement's mean lead.
        var lead: TimeInterval
        /// ``UsageModelConfiguration/maximumRefreshSpacing``.
        var maximumSpacing: TimeInterval
        /// The refreshes the plan may place over the day (a whole number).
        var budget: Double
    }

    /// The smallest scale (to a hundredth of a second) at which the placement spends no more
    /// than `question`'s budget, or 0 when even every hour at the cadence does not spend it.
    static func budgetScale(_ question: BudgetScaleQuestion) -> Double {
        var low = question.cadence * (question.roots[1...24].max() ?? 0)  // every hour at the cadence: the most refreshes
        var high = question.maximumSpacing
        // Whether the placement at `scale` places more than the budget over the day, as
        // ``preferredRefreshTime`` places them (with the mean lead), not the hours' shares
        // of it: a stretch of hours that get refreshes begins with one in the lead before it
        // (the content is old by then), then one a spacing apart. Counting shares (3600 /
        // spacing an hour) missed the first refresh of every stretch, and the day spent more
        // than its budget. The count only grows, so it stops once past the budget.
        func placesMore(at scale: Double) -> Bool {
            func spacing(_ index: Int) -> TimeInterval? {
                Self.spacing(root: question.roots[index], scale: scale, cadence: question.cadence, maximumSpacing: question.maximumSpacing)
            }
            var last = -Double.infinity
            var count = 0.0
            func place(from start: Double, to stop: Double, every spacing: Double?) {
                guard let spacing else { return }
                var at = max(start, last + spacing)
                while at < stop {
                    count += 1
                    last = at
                    at += spacing
                }
            }
            var next = spacing(1)
            for relative in 0..<24 {
                let hourStart = Double(relative) * 3600 + question.onsets[relative + 1]
                let hourEnd = Double(relative + 1) * 3600 + question.onsets[relative + 2]
                let leadStart = hourEnd - question.lead
                let own = next
                next = relative < 23 ? spacing(relative + 2) : nil
                // As the placement does: a stretch shorter than the lead is all lead.
                place(from: hourStart, to: leadStart, every: own)
                place(from: max(hourStart, leadStart), to: hourEnd, every: Self.leadSpacing(own: own, next: next))
                if count > question.budget { return true }
            }
            return false
        }
        // The count falls as the scale grows (by steps, and not strictly: an hour that drops
        // out splits a stretch in two): bisect for a scale that spends the budget.
        if !placesMore(at: low) {
            return 0  // the budget does not bind: the square-root rule's own cost decides
        } else {
            // To a hundredth of a second of scale (a spacing is the scale over the root of its
            // hour's likelihood, so a few hundredths at most): finer moves no placement, whose
            // instants are judged to the minute. At most 40 halvings either way.
            var halvings = 0
            while high - low > 0.01, halvings < 40 {
                let middle = (low + high) / 2
                if placesMore(at: middle) { low = middle } else { high = middle }
                halvings += 1
            }
        }
        return high
    }

    /// The spacing of an hour whose likelihood's square root is `root` at `scale`: the scale
    /// over the root, never closer than `cadence`; nil for an hour with no likelihood, or one
    /// farther apart than `maximumSpacing` (it gets no refresh). One rule for the plan and
    /// for the bisection's count of it.
    static func spacing(root: Double, scale: Double, cadence: TimeInterval, maximumSpacing: TimeInterval) -> TimeInterval? {
        guard root > 0 else { return nil }
        let spacing = max(cadence, scale / root)
        return spacing <= maximumSpacing ? spacing : nil
    }

    /// The spacing in the lead at the end of an hour's stretch (before the next hour's
    /// onset): the tighter of the hour's own and the
    /// next hour's (either may get none). One rule for the placement and for the budget's
    /// count of it.
    static func leadSpacing(own: TimeInterval?, next: TimeInterval?) -> TimeInterval? {
        guard let own else { return next }
        return next.map { min(own, $0) } ?? own
    }

    /// How many refreshes a day the placement plans for an app that asks for one every
    /// `requestedInterval` (15 minutes when it does not say), as judged at `now`:
    /// ``UsageModelConfiguration/refreshBudgetShare`` of what it asks for (`day`: about 22 a
    /// day at 15 minutes), less ``spendingCorrection`` times what the app's background launches
    /// lately spent over that a day (`excess`, from `launches`: ``LaunchLedger/excessPerDay(over:at:)``),
    /// and never less than half of it (`planned`).
    ///
    /// The plan is made again at every judgement and each plan spends its 24 hours afresh,
    /// so what a day really spends drifts from what any one plan counts (the hours whose
    /// launch came are planned again with less, and the rest goes elsewhere). The ledger
    /// closes the loop: an app whose last week spent more than its budget (its launches
    /// counted in the hours the device allowed refreshes) plans fewer until the week is
    /// back within it. A week that spent less changes nothing: the budget is a ceiling,
    /// and an app that has nothing worth refreshing for should not be made to spend it.
    public func refreshBudget(requestedInterval: TimeInterval? = nil, launches: LaunchLedger?, at now: Date) -> (day: Double, excess: Double, planned: Double) {
        let cadence = Self.cadence(requestedInterval)
        let day = configuration.refreshBudgetShare * 86_400 / cadence
        let excess = launches?.excessPerDay(over: day, at: now) ?? 0
        guard excess > 0 else { return (day, excess, day) }
        return (day, excess, max(day / 2, day - Self.spendingCorrection * excess))
    }

    /// How many refreshes a day the plan gives up for each launch a day the app's last week
    /// spent over its budget: 4. The sum's memory is a week (``LaunchLedger/meanAge``), so a
    /// small factor would leave an app that overspends a little overspending for good (each
    /// plan overshoots by a share of what it plans); measured on the lives of
    /// docs/scenarios.md, 3 to 5 do the same.
    public static let spendingCorrection = 4.0

    /// How close to now a placed refresh counts as now: one minute.
    public static let placementGrain: TimeInterval = 60

    /// The interval between refreshes an app asks for, as the placement counts it: the
    /// request's (``standardRefreshInterval`` when it does not say), at least a minute.
    static func cadence(_ requestedInterval: TimeInterval?) -> TimeInterval {
        let interval = requestedInterval ?? standardRefreshInterval
        return interval.isFinite ? max(interval, 60) : standardRefreshInterval
    }

    /// The refresh interval the budget assumes when the request does not say: 15 minutes.
    public static let standardRefreshInterval: TimeInterval = 15 * 60

    /// When a refresh that may run from `eligibleAt` should run, as known at `now`, given
    /// the start of the app's last successful refresh (its content's age; a clean-up's
    /// launch fetched nothing, ``AppPolicyState/lastRefresh``) and the interval the
    /// app asks for between refreshes (its request's earliest begin date after its
    /// submission).
    ///
    /// From `from = max(eligibleAt, now)`, hour by hour up to the horizon (each hour running
    /// from its onset to the next hour's, ``launchOnset(hourOfWeek:at:)``): the first
    /// instant `s` at which the content's age `s − lastRefresh` reaches the
    /// hour's spacing (``refreshSpacings(startingAt:now:requestedInterval:)``). In the
    /// last `leadTime × (0.5 + leadSpread)` before the next hour's onset (by default 5 to 15 minutes;
    /// `leadSpread` in 0..<1 is a stable per-device, per-request draw, so that devices
    /// sharing a habit do not all wake at the same minute) the next hour's spacing counts
    /// too when it is tighter: content is refreshed shortly *before* a likely launch, not
    /// after it began. An hour that gets no refreshes places nothing; when no hour within
    /// the horizon places the refresh, it is held to the horizon's end and judged again.
    ///
    /// A refresh that waited for the network or the battery runs as soon as it is allowed
    /// again in an hour that gets refreshes, because its content is by then older than any
    /// spacing; in an hour that gets none it waits for the next one that does. The result is never
    /// earlier than `eligibleAt`: the model only ever holds a refresh back. An app never
    /// opened, or with no successful refresh known, runs its refresh at `eligibleAt`: with
    /// nothing learned, it does what the app asks.
    public func preferredRefreshTime(eligibleAt: Date, now: Date, lastRefresh: Date? = nil, leadSpread: Double = 0.5, requestedInterval: TimeInterval? = nil, launches: LaunchLedger? = nil) -> Date {
        guard let last = lastRefresh,
              LocalWeek.isRepresentable(eligibleAt), LocalWeek.isRepresentable(now), LocalWeek.isRepresentable(last) else { return eligibleAt }
        guard weightsAsOf != nil else {
            // Never opened: nothing says when a launch may come, so the budget is spread
            // evenly over the day.
            let cadence = Self.cadence(requestedInterval)
            let spacing = max(cadence, cadence / max(configuration.refreshBudgetShare, 0.001))
            return max(eligibleAt, last.addingTimeInterval(spacing))
        }
        let from = max(eligibleAt, now)
        let lead = configuration.leadTime * (0.5 + min(max(leadSpread, 0), 1))
        let end = from.addingTimeInterval(min(configuration.horizon, 23 * 3600))
        let week = self.week
        let first = week.absoluteHour(of: from)
        guard let plan = refreshPlan(startingAt: from, now: now, requestedInterval: requestedInterval, launches: launches) else {
            return max(eligibleAt, end)
        }
        // The first instant of [start, stop) at which the content's age reaches `spacing`;
        // within ``placementGrain`` of `from`, `from` itself. The spacings move a little as
        // `now` moves (decay, the day's window): asked again at the instant it named, the
        // model must not name one a few seconds later, again and again.
        func due(from start: Date, to stop: Date, spacing: TimeInterval?) -> Date? {
            guard let spacing, start < stop else { return nil }
            var due = max(start, last.addingTimeInterval(spacing))
            if due < from.addingTimeInterval(Self.placementGrain) { due = from }
            return due < min(stop, end) ? due : nil
        }
        var relative = -1
        while relative < 23, week.start(ofHour: first + relative) < end {
            defer { relative += 1 }
            let spacing = plan.spacing(relative)
            let next = plan.spacing(relative + 1)
            let hourEnd = week.start(ofHour: first + relative + 1).addingTimeInterval(plan.onset(relative + 1))
            if hourEnd <= from { continue }
            let hourStart = max(from, week.start(ofHour: first + relative).addingTimeInterval(plan.onset(relative)))
            let leadStart = hourEnd.addingTimeInterval(-lead)
            // The hour's own spacing, then the tighter of it and the next hour's in the lead.
            let tighter = Self.leadSpacing(own: spacing, next: next)
            if let at = due(from: hourStart, to: min(leadStart, hourEnd), spacing: spacing)
                ?? due(from: max(hourStart, leadStart), to: hourEnd, spacing: tighter) {
                return max(eligibleAt, at)
            }
        }
        return max(eligibleAt, end)
    }

    /// Whether the app may get processing runs at `now`: true while it was brought to the
    /// foreground less than ``UsageModelConfiguration/unusedProcessingCutoff`` (7 days)
    /// ago; false from 7 days on.
    ///
    /// An app never opened is treated as opened at ``createdAt``: allowed for the first 7
    /// days after the model was created, then denied until the user opens it (see the
    /// type's documentation for the rationale).
    public func allowsProcessing(at now: Date) -> Bool {
        now.timeIntervalSince(lastUse ?? createdAt) < configuration.unusedProcessingCutoff
    }

    /// When processing stops being allowed if the app is not opened before then:
    /// ``lastUse`` (or ``createdAt``) plus the cutoff.
    public var processingAllowedUntil: Date {
        (lastUse ?? createdAt).addingTimeInterval(configuration.unusedProcessingCutoff)
    }

    // MARK: Decoding

    private enum CodingKeys: String, CodingKey {
        case configuration, createdAt, lastUse, foregroundCount, observedSince
        case launchWeights, weightsAsOf, lastCountedOccurrence, launchMinuteWeights, lastCountedSlot
        case relaunchWeights, lastCountedRelaunch, followWeights, lastCountedFollow
        case networkLosses, networkStays, deviceHolds
        case unforeseenWeight, judgedLaunchWeight
    }

    /// Decodes a stored model, refusing one whose tables do not have their sizes (168 per
    /// hour of the week, 576 slots) or hold a negative or non-finite weight or a slot
    /// outside its hour: a damaged record must not crash the scheduler later.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        configuration = try container.decode(UsageModelConfiguration.self, forKey: .configuration)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        lastUse = try container.decodeIfPresent(Date.self, forKey: .lastUse)
        foregroundCount = try container.decode(Int.self, forKey: .foregroundCount)
        observedSince = try container.decode(Date.self, forKey: .observedSince)
        launchWeights = try container.decode([Double].self, forKey: .launchWeights)
        weightsAsOf = try container.decodeIfPresent(Date.self, forKey: .weightsAsOf)
        lastCountedOccurrence = try container.decode([Date?].self, forKey: .lastCountedOccurrence)
        // Records written before onsets were kept have neither table: every hour then
        // begins at its start until launches show otherwise.
        launchMinuteWeights = try container.decodeIfPresent([Double].self, forKey: .launchMinuteWeights)
            ?? Array(repeating: 0, count: Self.minuteWeightCount)
        lastCountedSlot = try container.decodeIfPresent([Int?].self, forKey: .lastCountedSlot)
            ?? Array(repeating: nil, count: LocalWeek.hoursPerWeek)
        // A damaged table (wrong length, a negative or non-finite weight, a slot out of its
        // hour) is refused.
        func check(_ weights: [Double], count: Int, key: CodingKeys) throws {
            guard weights.count == count, weights.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "expected \(count) finite, non-negative weights")
            }
        }
        // A per-hour table of another length is refused.
        func checkHourEntries(_ count: Int, key: CodingKeys) throws {
            guard count == LocalWeek.hoursPerWeek else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "expected \(LocalWeek.hoursPerWeek) entries")
            }
        }
        try check(launchWeights, count: LocalWeek.hoursPerWeek, key: .launchWeights)
        try check(launchMinuteWeights, count: Self.minuteWeightCount, key: .launchMinuteWeights)
        // Records written before relaunches were kept have neither: no hour is known to be
        // opened twice until the days show it.
        relaunchWeights = try container.decodeIfPresent([Double].self, forKey: .relaunchWeights) ?? Array(repeating: 0, count: 24)
        try check(relaunchWeights, count: 24, key: .relaunchWeights)
        lastCountedRelaunch = try container.decodeIfPresent([Date?].self, forKey: .lastCountedRelaunch)
            ?? Array(repeating: nil, count: LocalWeek.hoursPerWeek)
        try checkHourEntries(lastCountedRelaunch.count, key: .lastCountedRelaunch)
        let storedFollows = try container.decodeIfPresent([Double].self, forKey: .followWeights)
        followWeights = storedFollows ?? []
        if storedFollows != nil { try check(followWeights, count: 24, key: .followWeights) }
        lastCountedFollow = try container.decodeIfPresent([Date?].self, forKey: .lastCountedFollow)
            ?? Array(repeating: nil, count: LocalWeek.hoursPerWeek)
        try checkHourEntries(lastCountedFollow.count, key: .lastCountedFollow)
        guard lastCountedSlot.count == LocalWeek.hoursPerWeek,
            lastCountedSlot.allSatisfy({ $0.map { (0..<Self.slotsPerHour).contains($0) } ?? true })
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .lastCountedSlot, in: container,
                debugDescription: "expected \(LocalWeek.hoursPerWeek) slots, each 0 to \(Self.slotsPerHour - 1) or null")
        }
        try checkHourEntries(lastCountedOccurrence.count, key: .lastCountedOccurrence)
        // Records written before network losses were kept have none. Losses are put in order
        // rather than refused: a record written under another UTC offset (a replica's, or
        // before the time zone changed) may hold two in what is one hour here, and refusing
        // it would lose the whole usage history.
        networkLosses = Self.oneLossPerHour(try container.decodeIfPresent([Date].self, forKey: .networkLosses) ?? [], week: week)
        deviceHolds = Self.oneLossPerHour(try container.decodeIfPresent([Date].self, forKey: .deviceHolds) ?? [], week: week)
        // Records written before network stays were kept have none; a stay that is no
        // instant or no duration is damage, refused as the weights are.
        let stays = try container.decodeIfPresent([NetworkStay].self, forKey: .networkStays) ?? []
        guard stays.allSatisfy(\.isValid) else {
            throw DecodingError.dataCorruptedError(
                forKey: .networkStays, in: container,
                debugDescription: "expected stays with a representable start and a finite, non-negative duration")
        }
        networkStays = Self.latestStays(stays)
        if storedFollows == nil {
            // Written before follows were kept: every opened hour counts as followed (a share
            // of 1, so the next hour keeps its own likelihood, as it did), and the days teach
            // the real share as these weights decay with the launches'.
            followWeights = (0..<24).map(openedWeight(hourOfDay:))
        }
        // Records written before unforeseen launches were judged have neither: the share is
        // the prior's until launches are judged.
        let unforeseen = try container.decodeIfPresent(Double.self, forKey: .unforeseenWeight) ?? 0
        let judged = try container.decodeIfPresent(Double.self, forKey: .judgedLaunchWeight) ?? 0
        try check([unforeseen], count: 1, key: .unforeseenWeight)
        try check([judged], count: 1, key: .judgedLaunchWeight)
        unforeseenWeight = unforeseen
        judgedLaunchWeight = judged
    }
}

/// Tables a ``UsageModel`` works out from its evidence (the likelihoods or the network-loss
/// and device-hold shares of one hour, the onsets' table), shared by the copies of one
/// model, and a shares memo by models that hold the same losses and holds
/// (``UsageModel/shareLossMemo(with:)``).
///
/// A copy shares its original's memo, which is right because every change to the evidence
/// or the configuration gives the changed model a new, empty memo: the models sharing one
/// memo always hold the same evidence. It takes no part in equality, hashing or coding.
struct LikelihoodMemo: Sendable, Hashable {
    /// The tables kept, one of each kind.
    enum Kind: Int, CaseIterable {
        /// ``UsageModel/likelihood(hourOfWeek:at:)`` of every hour of the week.
        case likelihoods
        /// The history's likelihoods and the overall rate (``UsageModel/historyTable(asOfHour:)``).
        case history
        /// ``UsageModel/networkLossShare(hourOfWeek:at:)`` of every hour of the week.
        case networkLossShares
        /// ``UsageModel/deviceHoldShare(hourOfWeek:at:)`` of every hour of the week.
        case deviceHoldShares
        /// The launch onsets' table (``UsageModel/onsetTable``), under hour `Int.min`: it
        /// does not change with the hour.
        case onsets
    }

    /// The reference the copies share; its entries behind a mutex, because copies of a model
    /// may be read on several threads.
    private final class Storage: Sendable {
        let entries = Mutex<[(hour: Int, table: [Double])?]>(Array(repeating: nil, count: Kind.allCases.count))
    }
    private let storage = Storage()

    /// The table of `kind` for absolute hour `hour`: the one kept, if it is that hour's, else
    /// `compute()`'s, kept in its place.
    func table(_ kind: Kind, forHour hour: Int, compute: () -> [Double]) -> [Double] {
        if let kept = storage.entries.withLock({ $0[kind.rawValue] }), kept.hour == hour { return kept.table }
        let table = compute()
        storage.entries.withLock { $0[kind.rawValue] = (hour, table) }
        return table
    }

    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// The answers of the refresh plan's latest bisections (``UsageModel/budgetScale(_:)``) by
/// their questions, shared by the copies of one ``UsageModel`` (an answer depends on its
/// question alone, so any copy may use any). It takes no part in equality, hashing or coding.
struct BudgetScaleMemo: Sendable, Hashable {
    /// How many answers are kept: the latest.
    static let capacity = 8

    /// The reference the copies share; its entries behind a mutex, because copies of a model
    /// may be read on several threads.
    private final class Storage: Sendable {
        let entries = Mutex<[(question: UsageModel.BudgetScaleQuestion, scale: Double)]>([])
    }
    private let storage = Storage()

    /// The answer kept for `question`, else `compute()`'s, kept in place of the oldest.
    func scale(for question: UsageModel.BudgetScaleQuestion, compute: () -> Double) -> Double {
        if let kept = storage.entries.withLock({ entries in entries.first { $0.question == question }?.scale }) { return kept }
        let scale = compute()
        storage.entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeFirst() }
            entries.append((question, scale))
        }
        return scale
    }

    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

// MARK: Replicas

extension UsageModel {
    /// This model (the one stored now, which other writers may have changed) with what
    /// `mine` learned since `baseline` (the stored model it started from): how replicas
    /// sharing one app's memory add their foregrounds up instead of overwriting each
    /// other's (docs/replicas.md, "Per-replica judgement, shared memory").
    ///
    /// When only one side changed, that side is the answer. When both did, the latest
    /// occurrence `mine` counted in each hour of the week since `baseline` is counted here
    /// too (once: an hour this model counted already adds nothing), oldest first, as
    /// ``recordForeground(at:)`` would have (with the five-minute slot of its first launch,
    /// for the onsets), and the relaunch and the follow each counted in an hour (once); the foreground count adds `mine`'s new ones,
    /// and the last use is the later; the network losses either side recorded join, one
    /// per hour, the latest ``networkLossMemory`` kept, as do the device's holds on refreshes,
    /// and so do the network stays (each
    /// once, the latest ``networkStayMemory``). Replicas write after every foreground, so `mine` is
    /// at most one foreground ahead of `baseline` in practice and nothing is lost; a
    /// replica that counted the same hour in two different weeks since `baseline` passes
    /// on the later week only. This model's configuration is kept.
    public func merging(changesIn mine: UsageModel, since baseline: UsageModel) -> UsageModel {
        if mine == baseline { return self }
        if self == baseline { return mine }
        var merged = self
        let counted = (0..<LocalWeek.hoursPerWeek).compactMap { bucket -> (start: Date, bucket: Int, slot: Int?)? in
            guard let start = mine.lastCountedOccurrence[bucket], start != baseline.lastCountedOccurrence[bucket] else { return nil }
            return (start, bucket, mine.lastCountedSlot[bucket])
        }
        merged.likelihoodMemo = LikelihoodMemo()
        merged.sharesMemo = LikelihoodMemo()
        // Before the occurrences are counted: each is judged against the merged history.
        merged.observedSince = min(observedSince, mine.observedSince)
        for occurrence in counted.sorted(by: { ($0.start, $0.bucket) < ($1.start, $1.bucket) }) {
            merged.countOccurrence(startingAt: occurrence.start, bucket: occurrence.bucket, slot: occurrence.slot)
        }
        for bucket in 0..<LocalWeek.hoursPerWeek {
            guard let start = mine.lastCountedRelaunch[bucket], start != baseline.lastCountedRelaunch[bucket] else { continue }
            merged.countRelaunch(inOccurrenceStartingAt: start, bucket: bucket)
        }
        for bucket in 0..<LocalWeek.hoursPerWeek {
            guard let start = mine.lastCountedFollow[bucket], start != baseline.lastCountedFollow[bucket] else { continue }
            merged.countFollow(inOccurrenceStartingAt: start, bucket: bucket)
        }
        merged.foregroundCount = foregroundCount + max(0, mine.foregroundCount - baseline.foregroundCount)
        merged.lastUse = [lastUse, mine.lastUse].compactMap { $0 }.max()
        merged.networkLosses = Self.oneLossPerHour(networkLosses + mine.networkLosses, week: week)
        merged.deviceHolds = Self.oneLossPerHour(deviceHolds + mine.deviceHolds, week: week)
        merged.networkStays = Self.latestStays(networkStays + mine.networkStays)
        return merged
    }
}
