@testable import BackgroundTasks
import Testing

/// How an app asks bgtaskd again after losing it (docs/daemon.md, "Reconnecting").
@Suite struct ReconnectBackoffTests {
    @Test func anUnreachableDaemonIsAskedAgainAfterDoublingDelaysUpToFiveSeconds() {
        let middle = (1...10).map { ReconnectBackoff.delay(after: $0, cause: .unreachable, unit: 0.5) }
        #expect(middle == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5, 5])
    }

    @Test func aBusyDaemonIsAskedAgainSoonerAndAtLeastEverySecond() {
        let middle = (1...6).map { ReconnectBackoff.delay(after: $0, cause: .busy, unit: 0.5) }
        #expect(middle == [0.1, 0.2, 0.4, 0.8, 1, 1])
    }

    @Test func delaysSpreadByAQuarterEitherWaySoAppsDoNotKnockTogether() {
        #expect(abs(ReconnectBackoff.delay(after: 1, cause: .unreachable, unit: 0) - 0.0375) < 1e-9)
        #expect(abs(ReconnectBackoff.delay(after: 8, cause: .unreachable, unit: 0.999_999) - 6.25) < 1e-4)
        // Out-of-range input is clamped, never a negative or huge delay.
        #expect(abs(ReconnectBackoff.delay(after: 0, cause: .busy, unit: -3) - 0.075) < 1e-9)
        #expect(abs(ReconnectBackoff.delay(after: Int.max, cause: .busy, unit: 7) - 1.25) < 1e-9)
    }
}
