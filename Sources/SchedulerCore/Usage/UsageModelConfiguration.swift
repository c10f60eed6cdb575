import Foundation

/// The tunables of ``UsageModel``, with defaults that follow what Apple says of its own
/// on-device model (docs/system.md, "How the system decides"): refreshes cluster shortly before the launches the model
/// expects, and processing needs an app "used within the past week".
///
/// Memory is bounded by design rather than by a history limit: the model keeps one decayed
/// weight per hour of the week (168 numbers) and the instant it started observing, never a
/// list of launches, so an app opened a thousand times a day costs what an app opened once
/// costs, and old habits fade through ``halfLife`` instead of being cut off at a count.
public struct UsageModelConfiguration: Hashable, Sendable, Codable {
    /// The device's offset from UTC in seconds (east positive), so that hours of the week
    /// are the user's local hours. Default `0`.
    ///
    /// The model never reads `TimeZone.current` (policy code is pure); the driver passes
    /// the zone's current offset and updates it when the zone or daylight-saving time
    /// changes. Launches are filed under the offset in force when they are recorded, so a
    /// one-hour daylight-saving step blurs a habit across two adjacent hours for a few
    /// weeks, until the decay lets the new hour win.
    public var utcOffset: TimeInterval
    /// How long until an observation counts half as much. Default 14 days.
    ///
    /// Two weeks keeps a daily habit stable through a holiday or a sick day, yet lets a
    /// changed habit (a new commute, a new job) take over within two to three weeks.
    /// `.infinity`, zero or a negative value disable decay (every week counts the same).
    public var halfLife: TimeInterval
    /// How long before a likely launch a refresh is placed. Default 10 minutes.
    ///
    /// Long enough for a refresh (budget 30 s) to finish even when the run is delayed by
    /// a few minutes of coalescing or conditions; short enough that the content is fresh
    /// when the user opens the app.
    public var leadTime: TimeInterval
    /// The launch probability (0...1) at or above which an hour counts as a likely launch.
    /// Default 0.3.
    ///
    /// Roughly "at least two weeks out of seven": regular habits qualify, a one-off
    /// launch fades below it in about a month (with the default half-life), and the
    /// refreshes it places are not wasted on hours the user rarely opens the app.
    public var likelyThreshold: Double
    /// How far ahead of the eligible instant the model looks for a likely launch.
    /// Default 12 hours.
    ///
    /// Holding a refresh back longer than half a day for a launch that may not happen
    /// would leave the app stale for the launches the model failed to predict; beyond
    /// the horizon the refresh runs when it is eligible.
    public var horizon: TimeInterval
    /// An app not brought to the foreground for this long gets no processing runs.
    /// Default 7 days (Apple: processing runs "as long as the user has used the app within
    /// the past week").
    public var unusedProcessingCutoff: TimeInterval
    /// The share of the refreshes an app asks for that it gets, placed where its launches
    /// are (see ``UsageModel/refreshSpacings(startingAt:now:requestedInterval:)``).
    /// Default 0.23: about 22 a day for a refresh asked every 15 minutes, counted as the
    /// placement places them. The goal allows a quarter of a 15-minute timer's wakeups
    /// (docs/scenarios.md, "Comparing with timers"); the rest of the quarter is left to the
    /// app's other kinds (a clean-up that wakes the device apart from a refresh). Measured
    /// on the 17 lives of bgtask-bench h: 0.2, 0.23 and 0.25 gave 5, 7 and 6 lives passing.
    public var refreshBudgetShare: Double
    /// The spacing of refreshes in an hour whose launch likelihood is ``likelyThreshold``
    /// when the budget allows more: the cost of a refresh in the square-root rule, so that
    /// an app used rarely gets fewer refreshes than its budget. Default 13.5 minutes (below
    /// the standard 15-minute cadence, which bounds it there: what it moves is the hours
    /// less likely than the threshold, on a device whose day does not spend the budget).
    /// Measured on 2026-12-05 (docs/scenarios.md): 15 minutes left the wakeups goal's room
    /// unspent on lives used in few hours; 12 to 13.5 gave the same, better goals.
    public var refreshSpacingAtThreshold: TimeInterval
    /// An hour whose refreshes would be further apart than this gets none: launches there
    /// are too rare to refresh for. Default 2 hours.
    public var maximumRefreshSpacing: TimeInterval

    /// Creates a configuration; every default is documented on its property.
    public init(
        utcOffset: TimeInterval = 0,
        halfLife: TimeInterval = 14 * 86_400,
        leadTime: TimeInterval = 10 * 60,
        likelyThreshold: Double = 0.3,
        horizon: TimeInterval = 12 * 3_600,
        unusedProcessingCutoff: TimeInterval = 7 * 86_400,
        refreshBudgetShare: Double = 0.23,
        refreshSpacingAtThreshold: TimeInterval = 13.5 * 60,
        maximumRefreshSpacing: TimeInterval = 2 * 3_600
    ) {
        self.refreshBudgetShare = refreshBudgetShare
        self.refreshSpacingAtThreshold = refreshSpacingAtThreshold
        self.maximumRefreshSpacing = maximumRefreshSpacing
        self.utcOffset = utcOffset
        self.halfLife = halfLife
        self.leadTime = leadTime
        self.likelyThreshold = likelyThreshold
        self.horizon = horizon
        self.unusedProcessingCutoff = unusedProcessingCutoff
    }

    private enum CodingKeys: String, CodingKey {
        case utcOffset, halfLife, leadTime, likelyThreshold, horizon, unusedProcessingCutoff
        case refreshBudgetShare, refreshSpacingAtThreshold, maximumRefreshSpacing
    }

    /// Decodes a stored configuration; keys added since it was written take their defaults,
    /// and keys no longer used (`unpredictedRefreshInterval`, replaced by the refresh budget)
    /// are ignored, so an upgrade keeps what the model learned. A stored record with a
    /// non-finite value, a UTC offset beyond a day either way or a horizon beyond a week is
    /// refused (`DecodingError`, naming the key): the model turns instants shifted by the
    /// offset, and the horizon's end, into hour numbers, which such values would overflow.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = UsageModelConfiguration()
        self.init(
            utcOffset: try container.decodeIfPresent(TimeInterval.self, forKey: .utcOffset) ?? defaults.utcOffset,
            halfLife: try container.decodeIfPresent(TimeInterval.self, forKey: .halfLife) ?? defaults.halfLife,
            leadTime: try container.decodeIfPresent(TimeInterval.self, forKey: .leadTime) ?? defaults.leadTime,
            likelyThreshold: try container.decodeIfPresent(Double.self, forKey: .likelyThreshold) ?? defaults.likelyThreshold,
            horizon: try container.decodeIfPresent(TimeInterval.self, forKey: .horizon) ?? defaults.horizon,
            unusedProcessingCutoff: try container.decodeIfPresent(TimeInterval.self, forKey: .unusedProcessingCutoff) ?? defaults.unusedProcessingCutoff,
            refreshBudgetShare: try container.decodeIfPresent(Double.self, forKey: .refreshBudgetShare) ?? defaults.refreshBudgetShare,
            refreshSpacingAtThreshold: try container.decodeIfPresent(TimeInterval.self, forKey: .refreshSpacingAtThreshold) ?? defaults.refreshSpacingAtThreshold,
            maximumRefreshSpacing: try container.decodeIfPresent(TimeInterval.self, forKey: .maximumRefreshSpacing) ?? defaults.maximumRefreshSpacing
        )
        let values: [(CodingKeys, Double, ClosedRange<Double>?)] = [
            (.utcOffset, utcOffset, -86_400...86_400), (.halfLife, halfLife, nil), (.leadTime, leadTime, nil),
            (.likelyThreshold, likelyThreshold, nil), (.horizon, horizon, 0...604_800),
            (.unusedProcessingCutoff, unusedProcessingCutoff, nil), (.refreshBudgetShare, refreshBudgetShare, nil),
            (.refreshSpacingAtThreshold, refreshSpacingAtThreshold, nil), (.maximumRefreshSpacing, maximumRefreshSpacing, nil),
        ]
        for (key, value, range) in values where !value.isFinite || !(range?.contains(value) ?? true) {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "\(value) is out of range\(range.map { " (\($0.lowerBound) to \($0.upperBound) seconds)" } ?? " (not finite)")")
        }
    }

    /// The weight, relative to a fresh one, of an observation `age` seconds old:
    /// `2^(-age / halfLife)`, or 1 when decay is disabled.
    public func decayFactor(age: TimeInterval) -> Double {
        guard halfLife > 0, halfLife.isFinite else { return 1 }
        return pow(2, -age / halfLife)
    }
}
