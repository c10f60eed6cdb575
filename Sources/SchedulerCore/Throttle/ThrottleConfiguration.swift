import Foundation

/// The tunables of ``ThrottleState``: what counts as over-scheduling, and how the penalty
/// grows and fades. The defaults follow Apple's guidance that "a good cadence is refresh at
/// most every 15-30 minutes, processing daily or weekly" (docs/system.md, "How the system decides").
public struct ThrottleConfiguration: Hashable, Sendable, Codable {
    /// The shortest interval between runs of one identifier that is not over-scheduling,
    /// per kind. Default: refresh 15 minutes, processing and health research 1 hour;
    /// continued processing has none (it is started by the user, not scheduled).
    ///
    /// 15 minutes is the low end of Apple's refresh cadence (and what Apple's sample code
    /// asks for). Processing is meant to run daily or weekly; one hour leaves room for
    /// apps that chunk a large job into hourly pieces while catching tight loops.
    public var minimumCadence: [TaskKind: TimeInterval]
    /// The delay of a first strike. Default 15 minutes: one refresh cadence, so a single
    /// slip costs one missed slot.
    public var basePenalty: TimeInterval
    /// The largest delay. Default 24 hours: a persistently misbehaving app still runs
    /// about once a day, so its user is not left with a broken app, and the penalty
    /// cannot grow past what a day of good behaviour undoes (four half-lives).
    public var maximumPenalty: TimeInterval
    /// How long good behaviour takes to halve the delay. Default 6 hours.
    ///
    /// The delay decays continuously from the last strike (`2^(-t / 6 h)`): an app
    /// fixed by an update is back to normal within a day, while one that keeps
    /// misbehaving strikes again before the penalty has faded.
    public var decayHalfLife: TimeInterval
    /// What a successful run (one that called `setTaskCompleted(success: true)` within its
    /// budget) multiplies the current delay by. Default 0.5.
    ///
    /// A clean run is direct evidence of good behaviour, worth as much as one half-life
    /// of waiting: an app that misbehaved once and then behaves recovers faster than an
    /// app that merely stays quiet.
    public var successDecayFactor: Double
    /// How far back ``ThrottleState/reason(at:)`` counts strikes by cause, and how long
    /// strikes stay in ``ThrottleState/recentStrikes``. Default 24 hours ("in the last day").
    public var reasonWindow: TimeInterval
    /// The most strikes kept in ``ThrottleState/recentStrikes``, so a runaway app cannot
    /// grow the stored state. Default 64.
    public var recentStrikeLimit: Int

    /// Creates a configuration; every default is documented on its property.
    public init(
        minimumCadence: [TaskKind: TimeInterval] = [.appRefresh: 15 * 60, .processing: 3_600, .healthResearch: 3_600],
        basePenalty: TimeInterval = 15 * 60,
        maximumPenalty: TimeInterval = 24 * 3_600,
        decayHalfLife: TimeInterval = 6 * 3_600,
        successDecayFactor: Double = 0.5,
        reasonWindow: TimeInterval = 24 * 3_600,
        recentStrikeLimit: Int = 64
    ) {
        self.minimumCadence = minimumCadence
        self.basePenalty = basePenalty
        self.maximumPenalty = maximumPenalty
        self.decayHalfLife = decayHalfLife
        self.successDecayFactor = successDecayFactor
        self.reasonWindow = reasonWindow
        self.recentStrikeLimit = recentStrikeLimit
    }

    /// The minimum cadence of `kind`, or `nil` when the kind has none.
    public func minimumCadence(for kind: TaskKind) -> TimeInterval? {
        minimumCadence[kind]
    }

    /// The fraction of a penalty left after `elapsed` seconds of good behaviour:
    /// `2^(-elapsed / decayHalfLife)`; 1 when decay is disabled (a half-life that is not
    /// a positive finite number) or for a negative `elapsed`.
    public func decayFactor(elapsed: TimeInterval) -> Double {
        guard decayHalfLife > 0, decayHalfLife.isFinite, elapsed > 0 else { return 1 }
        return pow(2, -elapsed / decayHalfLife)
    }
}
