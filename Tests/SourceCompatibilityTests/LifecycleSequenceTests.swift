import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Testing
import UIKit
import SchedulerCore

/// What LifecycleSequenceSnippets.swift compiles, run where its behaviour is the library's.
/// Each test posts to a center of its own, never `.default`.
@Suite struct LifecycleSequenceTests {
    let app = AppID("com.example.store")

    @Test @MainActor func theStoreSavesAndSchedulesEachTimeTheAppEntersTheBackground() async throws {
        let device = try compatDevice()
        let manifest = AppManifest(appID: app, permittedIdentifiers: ["com.example.store.refresh"], backgroundModes: ["fetch"])
        let context = device.install(app: app, manifest: manifest) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.store.refresh", using: nil) { $0.setTaskCompleted(success: true) }
        }
        let center = NotificationCenter()
        let store = LifecycleAwareStore()
        context.withCurrent { store.startObserving(center: center) }
        center.post(name: UIApplication.didEnterBackgroundNotification, object: nil)
        center.post(name: UIApplication.willEnterForegroundNotification, object: nil)
        center.post(name: UIApplication.didEnterBackgroundNotification, object: nil)
        // The loop runs on the main actor, which this test holds between its awaits: yield
        // it the turns it needs (bounded, so a loop that never reads fails, not hangs).
        for _ in 0..<10_000 where store.saves < 2 { await Task.yield() }
        #expect(store.saves == 2)
        #expect(store.scheduledRefreshes == 2)
        #expect(await context.scheduler.pendingTaskRequests().map(\.identifier) == ["com.example.store.refresh"])
        store.stopObserving()
    }

    @Test func aMappedSequenceCarriesOnlyWhatIsSendable() async {
        let center = NotificationCenter()
        let name = Notification.Name("com.example.session.signedIn")
        async let names = userNames(of: center, name: name, count: 2)
        // The sequence is made inside `userNames`; post until it has read both, as a
        // notification posted before it observes is not included (Apple's rule too).
        let poster = Task {
            var round = 0
            while !Task.isCancelled {
                center.post(name: name, object: nil, userInfo: ["user": "user-\(round)"])
                round += 1
                await Task.yield()
            }
        }
        let received = await names
        poster.cancel()
        #expect(received.count == 2)
        #expect(received.allSatisfy { $0.hasPrefix("user-") })
    }
}
