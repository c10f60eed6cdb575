/// Lets the line of one kind of event through at most `burst` times per `interval`, and
/// counts the events held back, so that the next line let through says how many there
/// were: a flood of such events (clients churning at the connection cap, or connecting
/// and leaving mid-frame thousands of times a second) cannot flood the log.
///
/// A value under its owner's lock; the owner passes the time, so tests pass theirs.
struct LogThrottle: Sendable {
    /// How long a window lasts, from the first line let through in it.
    let interval: Duration
    /// How many lines a window lets through.
    let burst: Int
    private var windowStart: ContinuousClock.Instant?
    private var loggedInWindow = 0
    private var heldBack = 0

    /// A throttle letting `burst` lines (at least 1) through per `interval`.
    init(interval: Duration, burst: Int = 1) {
        self.interval = interval
        self.burst = max(1, burst)
    }

    /// The event at `now`: its line is logged with the number of lines held back since the
    /// last one logged (0 or more), or it is held back and counted (nil).
    mutating func admit(at now: ContinuousClock.Instant) -> Int? {
        if let start = windowStart, now - start < interval {
            guard loggedInWindow < burst else {
                heldBack += 1
                return nil
            }
            loggedInWindow += 1
        } else {
            windowStart = now
            loggedInWindow = 1
        }
        defer { heldBack = 0 }
        return heldBack
    }
}
