import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import os
import Synchronization
import Testing
import SchedulerCore

/// What MorePublicAppSnippets.swift compiles, run where its behaviour is the library's.
@Suite struct MorePublicAppSnippetTests {
    let app = AppID("com.example.app")

    func manifest(_ identifiers: [String]) -> AppManifest {
        AppManifest(appID: app, permittedIdentifiers: identifiers, backgroundModes: ["fetch", "processing"])
    }

    // MARK: OSAllocatedUnfairLock (`import os`)

    @Test func copiesOfAnUnfairLockShareOneStateAndExcludeEachOther() {
        let lock = OSAllocatedUnfairLock(initialState: 0)
        let copy = lock
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let mine = index.isMultiple(of: 2) ? lock : copy
            for _ in 0..<1_000 { mine.withLock { $0 += 1 } }
        }
        #expect(lock.withLock { $0 } == 8_000)
        #expect(copy.withLockUnchecked { $0 } == 8_000)
        let unchecked = OSAllocatedUnfairLock(uncheckedState: NSMutableArray())
        unchecked.withLockUnchecked { $0.add(1) }
        #expect(unchecked.withLockUnchecked { $0.count } == 1)
    }

    @Test func anUnfairLockWhoseHolderExitedStopsTheNextTakerAsAppleDoes() async {
        // An outside probe: the next lock() waited for ever.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = OSAllocatedUnfairLock()
            let taken = DispatchSemaphore(value: 0)
            let holder = Thread {
                lock.lock()
                taken.signal()
            }
            holder.start()
            taken.wait()
            while !holder.isFinished { usleep(1_000) }
            lock.lock()
        }
        let text = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(text.contains("owner thread exited without unlocking"), "\(text)")
    }

    @Test func anUnfairLockHeldByAnotherThreadIsNotAvailable() {
        let lock = OSAllocatedUnfairLock()
        let state = OSAllocatedUnfairLock(initialState: "free")
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            lock.lock()
            state.withLockUnchecked { _ in
                held.signal()
                release.wait()
            }
            lock.unlock()
            released.signal()
        }
        held.wait()
        #expect(!lock.lockIfAvailable())
        #expect(lock.withLockIfAvailable { 1 } == nil)
        #expect(state.withLockIfAvailable { $0 } == nil)
        lock.precondition(.notOwner)
        release.signal()
        released.wait()
        #expect(lock.lockIfAvailable())
        lock.precondition(.owner)
        lock.unlock()
        #expect(state.withLockIfAvailable { $0 } == "free")
        state.withLockUnchecked { _ in state.precondition(.owner) }
        state.precondition(.notOwner)
    }

    @Test func theThrottledSchedulerSubmitsOncePerMinute() async throws {
        let device = try compatDevice()
        let identifier = "com.example.app.throttled"
        let context = device.install(app: app, manifest: manifest([identifier])) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let scheduler = ThrottledScheduler()
        context.withCurrent {
            let request = BGAppRefreshTaskRequest(identifier: identifier)
            request.earliestBeginDate = Date(timeIntervalSinceNow: 3600)
            scheduler.submitIfDue(request)
            BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: identifier)
            scheduler.submitIfDue(request)
        }
        #expect(await context.scheduler.pendingTaskRequests().isEmpty, "the second submission came within the minute")
    }

    @Test func aProcessingHandlerSharingAFlagUnderTheLockCompletes() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: manifest([IndexRebuild.identifier])) {
            IndexRebuild.register()
        }
        try context.withCurrent {
            try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: IndexRebuild.identifier))
        }
        await device.run(for: 60)
        // The snippet completes its task from a block on a global queue, a real thread the
        // simulator does not count as app work (only what the runtime starts is), so the
        // run may still be open when virtual time has moved on: wait for that thread (at
        // most 10 s of wall time), not for the scheduler.
        let deadline = ContinuousClock.now + .seconds(10)
        while device.runs(of: IndexRebuild.identifier).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            await device.settle()
        }
        #expect(device.runs(of: IndexRebuild.identifier).map(\.outcome) == [.success])
    }

    // MARK: Protected data (UIKit)

    @Test @MainActor func protectedDataIsAlwaysAvailableOnLinuxSoTheSyncCompletesAtOnce() async throws {
        let device = try compatDevice()
        let delegate = ProtectedSyncDelegate()
        let context = device.install(app: app, manifest: manifest(["com.example.vault.sync"])) {
            _ = delegate.application(UIApplication.shared, didFinishLaunchingWithOptions: nil)
        }
        try context.withCurrent {
            #expect(UIApplication.shared.isProtectedDataAvailable)
            try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: "com.example.vault.sync"))
        }
        await device.run(for: 5)
        #expect(device.runs(of: "com.example.vault.sync").map(\.outcome) == [.success], "not parked waiting for an unlock that Linux never sends")
        #expect(UIApplication.protectedDataDidBecomeAvailableNotification.rawValue == "UIApplicationProtectedDataDidBecomeAvailable")
        #expect(UIApplication.protectedDataWillBecomeUnavailableNotification.rawValue == "UIApplicationProtectedDataWillBecomeUnavailable")
    }

    // MARK: Pending requests, as the debug screen and the settings-driven backup read them

    @Test @MainActor func theBackupRequestFollowsItsSettingsAndTheDebugScreenSeesIt() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: manifest([PhotoBackupScheduler.identifier])) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: PhotoBackupScheduler.identifier, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let model = PendingTasksViewModel()
        // A Task made under withCurrent inherits the app (a task-local), as the model's would.
        await context.withCurrent {
            PhotoBackupScheduler.settingsDidChange(BackupSettings(onlyOnWiFi: true, onlyWhileCharging: true))
            return Task { await model.reloadAsync() }
        }.value
        #expect(model.rows == [PhotoBackupScheduler.identifier])
        #expect(model.backupNeedsPower == true)
        await context.withCurrent {
            PhotoBackupScheduler.settingsDidChange(BackupSettings(onlyOnWiFi: true, onlyWhileCharging: false))
            return Task { await model.reloadAsync() }
        }.value
        #expect(model.rows == [PhotoBackupScheduler.identifier], "replaced, not added")
        #expect(model.backupNeedsPower == false)
        context.withCurrent { PhotoBackupScheduler.logOut() }
        await context.withCurrent { Task { await model.reloadAsync() } }.value
        #expect(model.rows.isEmpty)
    }

    @Test("a handler formed on the main actor runs on the scheduler's queue, as iOS runs the block, and hops to the main actor itself")
    @MainActor func aMainActorScreensHandlerRunsOffTheMainActorAndHops() async throws {
        let device = try compatDevice()
        let context = device.install(app: app, manifest: manifest([PhotoBackupScheduler.identifier])) {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: PhotoBackupScheduler.identifier, using: nil) { $0.setTaskCompleted(success: true) }
        }
        let model = PendingTasksViewModel()
        let ranOnMainThread = Mutex<Bool?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            context.withCurrent {
                // An hour ahead (Wi-Fi only), so it is still pending when the screen reads.
                PhotoBackupScheduler.settingsDidChange(BackupSettings(onlyOnWiFi: true, onlyWhileCharging: true))
                model.reload()
                // Called after reload's handler, on the same queue: the handler has run (and
                // queued its hop to the main queue) when this one runs.
                BGTaskScheduler.shared.getPendingTaskRequests { _ in
                    ranOnMainThread.withLock { $0 = Thread.isMainThread }
                    done.resume()
                }
            }
        }
        #expect(ranOnMainThread.withLock { $0 } == false, "on the scheduler's queue, not the main thread")
        // The screen's own hop, queued before this test's continuation resumed on the main actor.
        await withCheckedContinuation { (flushed: CheckedContinuation<Void, Never>) in DispatchQueue.main.async { flushed.resume() } }
        #expect(model.rows.count == 1 && model.rows.first?.hasPrefix("\(PhotoBackupScheduler.identifier) (processing) ") == true, "\(model.rows)")
    }
}
