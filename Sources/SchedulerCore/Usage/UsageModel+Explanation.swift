import Foundation

extension UsageModel {
    /// One line for `bgtask why`: the hours the app is usually opened, the next likely
    /// launch with its probability, and whether processing is denied for disuse. Times are
    /// local under ``UsageModelConfiguration/utcOffset``. For example:
    ///
    /// - `usually opened around 08:00 and 12:00 on weekdays; next likely launch Tue 08:00 (p=0.80)`
    /// - `usually opened around 12:00 on weekdays; next likely launch Tue 12:00, usually from 12:20 (p=0.90)`
    /// - `opened 2 times, no regular hours yet; no likely launch within 12 h`
    /// - `opened 1 time, no regular hours yet (every hour looks likely: refreshes are spread); next likely launch Mon 10:00 (p=0.67)`
    /// - `never opened (known since Sat 2026-05-09 06:13): refreshes run when eligible; processing allowed until Sat 2026-05-16 06:13`
    /// - `opened 12 times, no regular hours yet; 87 % of launches came in hours the history did not foresee: refreshes are spread over every hour; next likely launch ...`
    /// - `...; the network usually goes away around 19:00 on Fridays: refreshes go before it`
    /// - `...; the device usually holds refreshes around 19:00 on weekdays (Low Power Mode or heat): refreshes go before it`
    /// - `...; not opened for 9 d: no processing runs until the app is opened`
    public func explanation(at now: Date) -> String {
        let week = LocalWeek(utcOffset: configuration.utcOffset)
        guard LocalWeek.isRepresentable(now) else { return "no explanation for an invalid instant" }
        guard let lastUse else {
            let since = LocalWeek.isRepresentable(createdAt) ? week.dateAndClock(createdAt) : "\(createdAt)"
            let until = processingAllowedUntil
            let processing = allowsProcessing(at: now)
                ? "processing allowed until \(LocalWeek.isRepresentable(until) ? week.dateAndClock(until) : "\(until)")"
                : "no processing runs until the app is opened (never opened within \(DurationText.spoken(configuration.unusedProcessingCutoff)))"
            return "never opened (known since \(since)): refreshes run when eligible; \(processing)"
        }

        var parts: [String] = []
        let likely = likelyHours(at: now)
        // Most of the week likely with fewer launches than a day of those hours is the
        // priors speaking (a few launches, no pattern yet: every hour keeps the app's overall
        // rate), not habits; a heavy user opening the app at most hours has them.
        let unsure = likely.count * 4 >= LocalWeek.hoursPerWeek * 3 && foregroundCount < likely.count / 7
        let habits = unsure ? nil : Self.describeHabits(likely)
        parts.append(habits.map { "usually opened around \($0)" }
            ?? "opened \(CountText.counted(foregroundCount, "time")), no regular hours yet" + (likely.isEmpty ? "" : " (every hour looks likely: refreshes are spread)"))

        // Said once the floor passes a quarter of the overall rate (below, it changes little)
        // and four launches' worth were judged (the first are all unforeseen; a record kept
        // before launches were judged has the prior's half until then).
        let unforeseen = unforeseenShare(at: now)
        if unforeseen > 0.5, judgedLaunches(at: now) >= 4 {
            parts.append("\(Int((unforeseen * 100).rounded())) % of launches came in hours the history did not foresee: refreshes are spread over every hour")
        }

        if let launch = nextLikelyLaunch(after: now, now: now) {
            // The likelihood the placement judges by (the hour's own evidence blended with
            // its day, every day and the app's rate), not the hour's raw share.
            let probability = likelihood(hourOfWeek: week.hourOfWeek(of: launch), at: now)
            // Where in that hour its launches usually begin, when not at its start: what the
            // refresh is placed before.
            let onset = launchOnset(hourOfWeek: week.hourOfWeek(of: launch), at: now)
            let from = onset > 0 ? ", usually from \(week.clock(launch.addingTimeInterval(onset)))" : ""
            parts.append("next likely launch \(week.dayAndClock(launch))\(from) (p=\(String(format: "%.2f", probability)))")
        } else {
            parts.append("no likely launch within \(DurationText.spoken(configuration.horizon))")
        }

        if let losses = Self.describeHabits(networkLossHours(at: now)) {
            parts.append("the network usually goes away around \(losses): refreshes go before it")
        }
        if let holds = Self.describeHabits(deviceHoldHours(at: now)) {
            parts.append("the device usually holds refreshes around \(holds) (Low Power Mode or heat): refreshes go before it")
        }

        if !allowsProcessing(at: now) {
            parts.append("not opened for \(DurationText.spoken(now.timeIntervalSince(lastUse))): no processing runs until the app is opened")
        }
        return parts.joined(separator: "; ")
    }

    /// "08:00 and 12:00 on weekdays, 10:00 on weekends": likely hours of the week grouped
    /// by the days they share, earliest hour first; `nil` when there are none.
    static func describeHabits(_ hoursOfWeek: [Int]) -> String? {
        guard !hoursOfWeek.isEmpty else { return nil }
        // Bit d of daysByHour[h] is set when hour-of-day h is likely on day d (0 = Monday).
        var daysByHour = Array(repeating: 0, count: 24)
        for hour in hoursOfWeek { daysByHour[hour % 24] |= 1 << (hour / 24) }
        var groups: [(days: Int, hours: [Int])] = []
        for hourOfDay in 0..<24 where daysByHour[hourOfDay] != 0 {
            if let index = groups.firstIndex(where: { $0.days == daysByHour[hourOfDay] }) {
                groups[index].hours.append(hourOfDay)
            } else {
                groups.append((daysByHour[hourOfDay], [hourOfDay]))
            }
        }
        // A user with many habits gets the first few; the JSON of `why` has them all.
        let shownGroups = 3, shownHours = 4
        var phrases = groups.prefix(shownGroups).map { group -> String in
            var clocks = group.hours.prefix(shownHours).map(LocalWeek.clock(hourOfDay:))
            if group.hours.count > shownHours { clocks.append("\(group.hours.count - shownHours) more") }
            return list(clocks) + " " + dayPhrase(group.days)
        }
        if groups.count > shownGroups { phrases.append("and other hours") }
        return phrases.joined(separator: ", ")
    }

    /// "every day", "on weekdays", "on weekends", "on Mondays", "on Mon, Wed and Fri".
    static func dayPhrase(_ days: Int) -> String {
        switch days {
        case 0b111_1111: return "every day"
        case 0b001_1111: return "on weekdays"
        case 0b110_0000: return "on weekends"
        default:
            let indices = (0..<7).filter { days & (1 << $0) != 0 }
            if indices.count == 1 {
                return "on " + ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"][indices[0]]
            }
            return "on " + list(indices.map { LocalWeek.dayNames[$0] })
        }
    }

    /// "a", "a and b", "a, b and c".
    private static func list(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }
}
