import Foundation

/// One stretch during which the device was online: when the network came back and how long
/// it stayed before it went away for ``SchedulerEngine/minimumNetworkGap`` or more.
public struct NetworkStay: Sendable, Codable, Hashable {
    /// When the network came back.
    public var start: Date
    /// How long it stayed, in seconds.
    public var duration: TimeInterval

    /// Creates a stay.
    public init(start: Date, duration: TimeInterval) {
        self.start = start
        self.duration = duration
    }

    /// A representable start and end, and a finite, non-negative duration.
    var isValid: Bool {
        LocalWeek.isRepresentable(start) && duration.isFinite && duration >= 0
            && LocalWeek.isRepresentable(start.addingTimeInterval(duration))
    }
}

extension UsageModel {
    /// How many network stays a model keeps: 64, a month of two windows a day, or the last
    /// day or two of a network that comes and goes every half hour.
    public static let networkStayMemory = 64

    /// Records that the network was up from `start` until `end`, when it went away for a
    /// minute or more (the engine calls it when the network comes back, for every app it
    /// knows). A stay is kept in order of its start, once per start (a replica's memory may
    /// already hold a later one another replica learned); one that is no instant or ends
    /// before it began adds nothing. See ``usualNetworkStay(afterReturnAt:now:)`` for what
    /// the policies make of them.
    public mutating func recordNetworkStay(from start: Date, to end: Date) {
        let stay = NetworkStay(start: start, duration: end.timeIntervalSince(start))
        guard stay.isValid else { return }
        networkStays = Self.latestStays(networkStays + [stay])
    }

    /// `stays` as a model keeps them: ascending by start, one per start (the first given),
    /// the latest ``networkStayMemory``.
    static func latestStays(_ stays: [NetworkStay]) -> [NetworkStay] {
        var kept: [NetworkStay] = []
        for stay in stays.filter(\.isValid).enumerated().sorted(by: { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }) {
            if let latest = kept.last, latest.start == stay.element.start { continue }
            kept.append(stay.element)
        }
        return Array(kept.suffix(networkStayMemory))
    }

    /// How long the network usually stays once it is back, for a return at `returnedAt`, as
    /// known at `now`: the weighted median of the durations of the recorded stays that began
    /// within ``networkStayNeighbourhood`` (an hour) of the same local time of day, on any
    /// day, each weighed by the launches' decay of its age at `now` (recent days count more:
    /// a changed routine takes over). `nil` when no such stay was recorded: nothing is
    /// known, and nothing changes.
    ///
    /// Days are pooled, as the launches' hours of the day are: a network that comes back
    /// for a quarter of an hour at 03:17 is known after the first day. Herd spreading keeps
    /// a request's turn within a quarter of it, and the usage policy runs a refresh that waited
    /// for the network before the network usually goes again rather than at a placement
    /// after it (docs/policies.md, "Short network stays").
    public func usualNetworkStay(afterReturnAt returnedAt: Date, now: Date) -> TimeInterval? {
        guard !networkStays.isEmpty, LocalWeek.isRepresentable(returnedAt), LocalWeek.isRepresentable(now) else { return nil }
        let week = self.week
        let timeOfDay = week.secondOfDay(of: returnedAt)
        var candidates: [(duration: TimeInterval, weight: Double)] = []
        for stay in networkStays where stay.start <= now {
            let apart = abs(week.secondOfDay(of: stay.start) - timeOfDay)
            guard min(apart, 86_400 - apart) <= Self.networkStayNeighbourhood else { continue }
            candidates.append((stay.duration, configuration.decayFactor(age: now.timeIntervalSince(stay.start))))
        }
        let total = candidates.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return nil }
        var reached = 0.0
        for candidate in candidates.sorted(by: { $0.duration < $1.duration }) {
            reached += candidate.weight
            if reached >= total / 2 { return candidate.duration }
        }
        return candidates.map(\.duration).max()
    }

    /// How far apart in the local time of day a recorded stay's start and a return may be for
    /// the stay to tell how long the network stays after that return: an hour.
    public static let networkStayNeighbourhood: TimeInterval = 3_600
}
