import BackgroundTasks
import Foundation
import os
import SwiftUI
import Testing

/// What SwiftUIExtrasSnippets.swift compiles, run where the library decides.
@Suite struct SwiftUIExtrasTests {
    @Test func optionalAppStorageIsNilUntilSetAndSettingNilRemovesIt() throws {
        let suite = "bgtask-appstorage-\(UUID().uuidString)"
        let store = try #require(UserDefaults(suiteName: suite))
        defer { store.removePersistentDomain(forName: suite) }
        let token = AppStorage<String?>("token", store: store)
        #expect(token.wrappedValue == nil)
        token.wrappedValue = "abc"
        #expect(store.string(forKey: "token") == "abc" && token.wrappedValue == "abc")
        token.wrappedValue = nil
        #expect(store.object(forKey: "token") == nil)
        let count = AppStorage<Int?>("count", store: store)
        count.wrappedValue = 3
        #expect(AppStorage<Int?>("count", store: store).wrappedValue == 3)
        enum Mode: String { case focus, rest }
        let mode = AppStorage<Mode?>("mode", store: store)
        mode.wrappedValue = .rest
        #expect(store.string(forKey: "mode") == "rest" && mode.wrappedValue == .rest)
        store.set("unknown", forKey: "mode")
        #expect(mode.wrappedValue == nil, "a raw value no case has reads as nil")
        let link = AppStorage<URL?>("link", store: store)
        link.wrappedValue = URL(string: "https://example.com/a")
        #expect(link.wrappedValue?.absoluteString == "https://example.com/a")
    }

    @Test func aTimerTextReadsTheTimeLeftOrGone() {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let interval = start...start.addingTimeInterval(3_723)
        #expect(Text(timerInterval: interval, pauseTime: start).content == "1:02:03")
        #expect(Text(timerInterval: interval, pauseTime: start.addingTimeInterval(3_423)).content == "5:00")
        #expect(Text(timerInterval: interval, pauseTime: start.addingTimeInterval(3_423), countsDown: false).content == "57:03")
        #expect(Text(timerInterval: interval, pauseTime: start, showsHours: false).content == "62:03")
        // Before the start and after the end it is held at the ends.
        #expect(Text(timerInterval: interval, pauseTime: start.addingTimeInterval(-50)).content == "1:02:03")
        #expect(Text(timerInterval: interval, pauseTime: start.addingTimeInterval(9_999)).content == "0:00")
        // Dates no clock could show do not stop the program.
        let far = Date(timeIntervalSinceReferenceDate: -1e300)...Date(timeIntervalSinceReferenceDate: 1e300)
        #expect(Text(timerInterval: far, pauseTime: Date(timeIntervalSinceReferenceDate: 0)).content == "100000000:00:00")
        let endless = Date(timeIntervalSinceReferenceDate: 0)...Date(timeIntervalSinceReferenceDate: .infinity)
        #expect(Text(timerInterval: endless, pauseTime: Date(timeIntervalSinceReferenceDate: 0)).content == "0:00")
    }

    @Test func aDebugDumpIsBuiltOnlyWhenDebugIsWritten() {
        var built = false
        _ = logStateIfDebugging(.disabled) {
            built = true
            return "x"
        }
        #expect(!built, "a disabled log writes nothing")
        #expect(!os_log_type_enabled(.disabled, .error))
        // Faults are written whatever BGTASK_LOG says; a log of the app's own is enabled.
        #expect(os_log_type_enabled(.default, .fault))
        #expect(os_log_type_enabled(OSLog(subsystem: "com.example", category: "sync"), .fault))
    }

    @Test func aCacheInADirectoryKeepsItsCapacities() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgtask-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = cachedSession(in: directory)
        defer { session.invalidateAndCancel() }
        let cache = try #require(session.configuration.urlCache)
        #expect(cache.memoryCapacity == 4 << 20 && cache.diskCapacity == 20 << 20)
    }

    @Test func aFreshSessionHasNoTasksToCancel() async {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        #expect(await cancelEverything(in: session) == 0)
    }

    @Test @MainActor func theOrientationLockIsAMaskWithApplesBits() {
        #expect(UIInterfaceOrientationMask.all.rawValue == 30)
        #expect(UIInterfaceOrientationMask.allButUpsideDown.rawValue == 26)
        #expect(UIInterfaceOrientationMask.landscape == [.landscapeLeft, .landscapeRight])
        #expect(OrientationLockingDelegate().orientationLock.contains(.portrait))
    }
}
