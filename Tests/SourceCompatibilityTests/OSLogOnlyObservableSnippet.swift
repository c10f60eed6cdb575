// A model in a file that imports only OSLog, as a public budgeting app writes its stores
// (`@Observable` with a `Logger`): Apple's OSLog brings Foundation, and Foundation the
// Observation macro, Combine and Dispatch's constants (Sources/FoundationCompat), in Swift 6
// mode with warnings as errors.
import OSLog

@MainActor @Observable
final class BiometricLock {
    private(set) var unlocked = false
    private(set) var lockedAt: Date?
    @ObservationIgnored private let logger = Logger(subsystem: "com.example.budget", category: "lock")

    func lock(at date: Date) {
        unlocked = false
        lockedAt = date
        logger.info("locked at \(date, privacy: .public)")
    }

    /// The grace period after leaving the app, in nanoseconds for `Task.sleep`.
    var grace: UInt64 { 30 * NSEC_PER_SEC }
}

final class LockEvents: ObservableObject {
    @Published var count = 0
}
