@testable import BackgroundTasks
import Foundation
import Testing

/// Waiting for app work to settle (what the simulator does after every step).
@Suite struct ActivityTrackerTests {
    @Test func idleNowReturnsAtOnceWhateverTheTimeout() async {
        let tracker = BGActivityTracker()
        #expect(await tracker.waitUntilIdle(timeout: .zero))
        #expect(await tracker.waitUntilIdle(timeout: .seconds(3600)))
    }

    @Test func workThatEndsBeforeTheTimeoutReturnsTrue() async {
        let tracker = BGActivityTracker()
        tracker.enter()
        async let idle = tracker.waitUntilIdle(timeout: .seconds(30))
        tracker.leave()
        #expect(await idle, "the work ended long before the timeout")
    }

    @Test func workThatNeverEndsTimesOut() async {
        let tracker = BGActivityTracker()
        tracker.enter()
        #expect(await tracker.waitUntilIdle(timeout: .milliseconds(50)) == false)
        tracker.leave()
        #expect(await tracker.waitUntilIdle(timeout: .seconds(30)))
    }
}
