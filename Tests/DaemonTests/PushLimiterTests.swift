import BGTaskDaemon
import Foundation
import SchedulerCore
import Testing

/// Remote wakes are rate-limited per app, as iOS throttles silent pushes.
@Suite struct PushLimiterTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func threePushesAnHourPerAppThenTheTimeUntilTheNext() throws {
        let limiter = PushLimiter(limit: .init())
        let app = AppID("com.example.a")
        #expect(limiter.admit(app, at: start) == nil)
        #expect(limiter.admit(app, at: start.addingTimeInterval(60)) == nil)
        #expect(limiter.admit(app, at: start.addingTimeInterval(120)) == nil)
        let wait = try #require(limiter.admit(app, at: start.addingTimeInterval(180)))
        #expect(abs(wait - 3420) < 0.001, "the next push is allowed an hour after the first")
        // Another app has its own allowance.
        #expect(limiter.admit(AppID("com.example.b"), at: start.addingTimeInterval(180)) == nil)
        // An hour after the first, one more is allowed.
        #expect(limiter.admit(app, at: start.addingTimeInterval(3600)) == nil)
        #expect(limiter.admit(app, at: start.addingTimeInterval(3601)) != nil)
    }

    @Test func anUndeliveredPushIsForgottenAndDoesNotCount() {
        let limiter = PushLimiter(limit: .init(count: 1, period: 100))
        let app = AppID("com.example.a")
        #expect(limiter.admit(app, at: start) == nil)
        // The wake could not be delivered (the app was force-quit...): its slot is given back.
        limiter.forget(app, at: start)
        #expect(limiter.admit(app, at: start.addingTimeInterval(1)) == nil)
        #expect(limiter.admit(app, at: start.addingTimeInterval(2)) != nil)
    }

    @Test func anUninstallForgetsTheAppsPushesOnly() {
        let limiter = PushLimiter(limit: .init(count: 1, period: 100))
        let (app, other) = (AppID("com.example.a"), AppID("com.example.b"))
        #expect(limiter.admit(app, at: start) == nil)
        #expect(limiter.admit(other, at: start) == nil)
        limiter.reset(app)
        #expect(limiter.admit(app, at: start.addingTimeInterval(1)) == nil)
        #expect(limiter.admit(other, at: start.addingTimeInterval(1)) != nil)
    }

    @Test func aRefusedPushIsNotCounted() {
        let limiter = PushLimiter(limit: .init(count: 1, period: 100))
        let app = AppID("com.example.a")
        #expect(limiter.admit(app, at: start) == nil)
        for offset in stride(from: 1.0, to: 100, by: 10) { #expect(limiter.admit(app, at: start.addingTimeInterval(offset)) != nil) }
        #expect(limiter.admit(app, at: start.addingTimeInterval(100)) == nil)
    }
}
