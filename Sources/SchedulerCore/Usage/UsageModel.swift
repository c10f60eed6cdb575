import Foundation

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
///
/// ## An app that is never used
///
/// With no launch recorded, no hour is likely, and
/// ``preferredRefreshTime(eligibleAt:now:lastBackgroundLaunch:leadSpread:)`` returns the
/// eligible instant: spacing is left to rate limiting and throttling (guessing an hour
/// would delay the refresh with nothing to gain). Processing is allowed
/// for the first ``UsageModelConfiguration/unusedProcessingCutoff`` (7 days) after
/// ``createdAt``, as if the app had been opened then, because installing or registering
/// an app is the closest thing to a use we know of; after that it is denied until the app
/// is opened, exactly like an app unused for a week.
public struct UsageModel: Sendable, Codable, Hashable {
    /// The tunables (offset, half-life, lead time, threshold, horizon, cutoff). The driver
    /// may replace it, for example when the time zone changes.
    public var configuration: UsageModelConfiguration
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
    /// Per hour of the week, the start of the latest occurrence already counted, so
    /// another launch in the same hour adds nothing.
    private var lastCountedOccurrence: [Date?]

    /// Creates an empty model: nothing observed yet, processing allowed for the first 7
    /// days (see "An app that is never used").
    public init(createdAt: Date, configuration: UsageModelConfiguration = .init()) {
        self.configuration = configuration
        self.createdAt = createdAt
        self.observedSince = createdAt
        self.launchWeights = Array(repeating: 0, count: LocalWeek.hoursPerWeek)
        self.lastCountedOccurrence = Array(repeating: nil, count: LocalWeek.hoursPerWeek)
    }

    private var week: LocalWeek { LocalWeek(utcOffset: configuration.utcOffset) }

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
        foregroundCount += 1
        lastUse = max(lastUse ?? date, date)
        observedSince = min(observedSince, date)

        let week = self.week
        let hour = week.absoluteHour(of: date)
        let start = week.start(ofHour: hour)
        let bucket = LocalWeek.hourOfWeek(ofHour: hour)
        if let counted = lastCountedOccurrence[bucket], start <= counted { return }
        lastCountedOccurrence[bucket] = start

        guard let epoch = weightsAsOf else {
            weightsAsOf = start
            launchWeights[bucket] = 1
            return
        }
        if start > epoch {
            // Move the epoch forward, so that weights stay near 1 and never underflow
            // while the app is in use: everything recorded so far ages by the gap.
            let factor = configuration.decayFactor(age: start.timeIntervalSince(epoch))
            for index in launchWeights.indices { launchWeights[index] *= factor }
            weightsAsOf = start
            launchWeights[bucket] += 1
        } else {
            launchWeights[bucket] += configuration.decayFactor(age: epoch.timeIntervalSince(start))
        }
    }

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

    /// How likely (0...1) a launch is in local hour of the week `hourOfWeek` (modulo 168),
    /// as the scheduler judges at `now`: the hour of the week's own evidence shrunk toward
    /// the same hour on the days of the same kind (Monday to Friday, or the weekend),
    ///
    /// ```
    /// likelihood = (launched(h) + k · pooled(h)) / (observed(h) + k)
    /// ```
    ///
    /// where `launched` and `observed` are the decayed numerator and denominator of
    /// ``launchProbability(hourOfWeek:at:)``, `pooled` is the decayed share of the
    /// occurrences of that hour of the day on days of the same kind with a launch, and `k`
    /// is ``dailyPatternPriorWeeks`` (2). So a weekday routine is learned after one
    /// weekday, a weekend one after one weekend day, a weekly rhythm (nothing on Friday
    /// evenings) takes over as the weeks show it, and one odd week does not erase a habit.
    /// An occurrence still in progress without a launch is left out: whether the user
    /// opens the app this hour is not known yet.
    public func likelihood(hourOfWeek: Int, at now: Date) -> Double {
        let bucket = LocalWeek.hourOfWeek(ofHour: hourOfWeek)
        var own = (launched: 0.0, observed: 0.0)
        var launched = 0.0
        var observed = 0.0
        let weekend = bucket / 24 >= 5
        for day in 0..<7 where (day >= 5) == weekend {
            let sameHour = evidence(hourOfWeek: bucket % 24 + 24 * day, at: now, excludingOpenOccurrence: true)
            if day == bucket / 24 { own = sameHour }  // the hour asked about is one of its pool
            launched += sameHour.launched
            observed += sameHour.observed
        }
        let pooled = observed > 0 ? min(1, launched / observed) : 0
        let k = Self.dailyPatternPriorWeeks
        return min(1, max(0, (own.launched + k * pooled) / (own.observed + k)))
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
    /// their age at `now` (the denominator).
    ///
    /// The occurrences are `first, first + 1 week, ...` up to the latest that has begun;
    /// with `q = w(1 week)` and `a` the age of the latest, the sum of their weights is
    /// `w(a) · (1 − qⁿ) / (1 − q)`.
    private func observedWeeks(hourOfWeek bucket: Int, upTo: Date, at now: Date) -> Double {
        guard LocalWeek.isRepresentable(observedSince), LocalWeek.isRepresentable(upTo) else { return 0 }
        let week = self.week
        let nowHour = week.absoluteHour(of: upTo)
        let first = LocalWeek.firstHour(atOrAfter: week.absoluteHour(of: observedSince), withHourOfWeek: bucket)
        guard first <= nowHour else { return 0 }
        let count = (nowHour - first) / LocalWeek.hoursPerWeek + 1
        let latest = first + (count - 1) * LocalWeek.hoursPerWeek
        let newest = configuration.decayFactor(age: now.timeIntervalSince(week.start(ofHour: latest)))
        let halfLife = configuration.halfLife
        guard halfLife > 0, halfLife.isFinite else { return Double(count) }  // no decay: each week counts 1
        // (1 − qⁿ) / (1 − q) through expm1: exact for n = 1 (a new app's first week, where
        // a launch must give p = 1, not 0.999...), and precise when q is close to 1. log q
        // is written out (q = 2^(−week / halfLife)): the scheduler asks this for several
        // hours of every judged refresh, and pow and log cost more than the rest.
        let logQ = -LocalWeek.secondsPerWeek / halfLife * M_LN2
        return newest * (expm1(Double(count) * logQ) / expm1(logQ))
    }

    /// The hours of the week (ascending) whose ``likelihood(hourOfWeek:at:)`` at `now` is
    /// at least ``UsageModelConfiguration/likelyThreshold``.
    public func likelyHours(at now: Date) -> [Int] {
        guard weightsAsOf != nil else { return [] }
        return (0..<LocalWeek.hoursPerWeek).filter {
            likelihood(hourOfWeek: $0, at: now) >= configuration.likelyThreshold
        }
    }

    /// Whether the local hour that contains `date` is a likely launch hour, as judged at `now`.
    public func isLikelyHour(containing date: Date, now: Date) -> Bool {
        guard weightsAsOf != nil, LocalWeek.isRepresentable(date) else { return false }
        return likelihood(hourOfWeek: week.hourOfWeek(of: date), at: now) >= configuration.likelyThreshold
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
        // A probability depends only on the hour of the week: after one week of
        // candidates every further one repeats an answer already given.
        for candidate in hour..<(hour + LocalWeek.hoursPerWeek) {
            let candidateStart = week.start(ofHour: candidate)
            if candidateStart > end { return nil }
            let probability = likelihood(hourOfWeek: LocalWeek.hourOfWeek(ofHour: candidate), at: now)
            if probability >= configuration.likelyThreshold { return candidateStart }
        }
        return nil
    }

    /// When a refresh that may run from `eligibleAt` should run, as known at `now`.
    ///
    /// The rules, from `from = max(eligibleAt, now)`:
    /// 1. `from` lies in a likely launch hour: `eligibleAt` (while the user is likely to
    ///    open the app, refreshes run at the cadence the app asks for);
    /// 2. a likely launch hour begins within the horizon (``nextLikelyLaunch(after:now:)``):
    ///    `max(eligibleAt, launch − leadTime × (0.5 + leadSpread))` (by default 5 to 15 min
    ///    before that hour: `leadSpread` in 0..<1 is a stable per-device, per-request draw,
    ///    so that devices sharing a habit do not all wake at the same minute);
    /// 3. no likely launch within the horizon, for an app the user has opened: `max(eligibleAt,
    ///    lastBackgroundLaunch + unpredictedRefreshInterval)` (default 2 h) when the app's
    ///    last background launch (of any of its tasks) is known, else `eligibleAt`.
    ///
    /// The result is never earlier than `eligibleAt`: the model only ever holds a refresh
    /// back, it never runs one before the date the app asked for. A result at or before
    /// `now` means "now".
    ///
    /// An app never opened runs its refresh at `eligibleAt`: with nothing learned, the
    /// conservative default is to do what the app asks rather than guess an hour (which
    /// could only leave its first launch stale). Once opened, the two-hour spacing of rule
    /// 3 keeps content from going very stale for the launches no habit predicts, without
    /// waking the device every quarter of an hour.
    public func preferredRefreshTime(eligibleAt: Date, now: Date, lastBackgroundLaunch: Date? = nil, leadSpread: Double = 0.5) -> Date {
        guard weightsAsOf != nil else { return eligibleAt }
        let from = max(eligibleAt, now)
        if isLikelyHour(containing: from, now: now) { return eligibleAt }
        if let launch = nextLikelyLaunch(after: from, now: now) {
            let lead = configuration.leadTime * (0.5 + min(max(leadSpread, 0), 1))
            return max(eligibleAt, launch.addingTimeInterval(-lead))
        }
        guard let lastBackgroundLaunch else { return eligibleAt }
        return max(eligibleAt, lastBackgroundLaunch.addingTimeInterval(configuration.unpredictedRefreshInterval))
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
        case launchWeights, weightsAsOf, lastCountedOccurrence
    }

    /// Decodes a stored model, refusing one whose per-hour tables do not have 168 entries
    /// (a damaged record must not crash the scheduler later).
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
        guard launchWeights.count == LocalWeek.hoursPerWeek,
            launchWeights.allSatisfy({ $0.isFinite && $0 >= 0 })
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .launchWeights, in: container,
                debugDescription: "expected \(LocalWeek.hoursPerWeek) finite, non-negative weights")
        }
        guard lastCountedOccurrence.count == LocalWeek.hoursPerWeek else {
            throw DecodingError.dataCorruptedError(
                forKey: .lastCountedOccurrence, in: container,
                debugDescription: "expected \(LocalWeek.hoursPerWeek) entries")
        }
    }
}
