import Foundation
import SchedulerCore
import Synchronization
import Testing
@testable import SchedulerStore

@Suite("Pending requests")
struct RequestStoreTests {
    @Test("every field of every kind of request survives a round trip through the file")
    func roundTripOfAllFields() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let requests = Sample.requestsUsingEveryField
        do {
            let store = try openStore(url)
            for request in requests { try store.upsertRequest(request) }
            #expect(try store.pendingRequests() == requests)
        }
        // Reopen: nothing came from a cache in memory.
        let reopened = try openStore(url)
        let stored = try reopened.pendingRequests()
        #expect(stored == requests)
        // `==` on Date compares the exact Double; check the dates bit for bit anyway.
        #expect(stored.map(\.submittedAt.timeIntervalSinceReferenceDate.bitPattern)
            == requests.map(\.submittedAt.timeIntervalSinceReferenceDate.bitPattern))
    }

    @Test("dates that would lose a bit through the 1970 epoch come back exactly")
    func datesRoundTripExactly() throws {
        // Find an instant whose seconds-since-1970 Double does not convert back exactly:
        // storing that Double would break `==`. Present-day dates do this about half the time.
        var lossy: Date?
        for step in 0..<1_000 {
            let candidate = Date(timeIntervalSinceReferenceDate: 760_000_000 + Double(step) * 0.000_123_7)
            if Date(timeIntervalSince1970: candidate.timeIntervalSince1970) != candidate {
                lossy = candidate
                break
            }
        }
        let date = try #require(lossy)
        let store = try SchedulerStore.inMemory()
        let request = PendingRequest(app: Sample.app, identifier: "x", kind: .processing, earliestBeginDate: date, submittedAt: date)
        try store.upsertRequest(request)
        #expect(try store.pendingRequests() == [request])
    }

    @Test("submitting the same identifier again replaces the pending request")
    func replaceOnResubmit() throws {
        let store = try SchedulerStore.inMemory()
        let first = PendingRequest(app: Sample.app, identifier: "sync", kind: .processing, requiresNetworkConnectivity: true, submittedAt: Sample.now)
        let second = PendingRequest(
            app: Sample.app, identifier: "sync", kind: .processing,
            earliestBeginDate: Sample.now.addingTimeInterval(3_600), requiresExternalPower: true,
            submittedAt: Sample.now.addingTimeInterval(10)
        )
        let sameIdentifierOtherApp = Sample.request("sync", app: Sample.otherApp)
        try store.upsertRequest(first)
        try store.upsertRequest(sameIdentifierOtherApp)
        try store.upsertRequest(second)
        #expect(try store.pendingRequests(app: Sample.app) == [second])
        #expect(try store.pendingRequests(app: Sample.otherApp) == [sameIdentifierOtherApp])
    }

    @Test("deleting one request leaves the others")
    func deleteOneRequest() throws {
        let store = try SchedulerStore.inMemory()
        let keep = Sample.request("keep")
        let drop = Sample.request("drop")
        try store.upsertRequest(keep)
        try store.upsertRequest(drop)
        try store.deleteRequest(drop.key)
        try store.deleteRequest(RequestKey(app: Sample.app, identifier: "never-submitted"))
        #expect(try store.pendingRequests() == [keep])
    }

    @Test("deleting all requests of an app touches only that app")
    func deleteAllOfOneApp() throws {
        let store = try SchedulerStore.inMemory()
        let mine = [Sample.request("a"), Sample.request("b")]
        let theirs = [Sample.request("a", app: Sample.otherApp), Sample.request("c", app: Sample.otherApp)]
        for request in mine + theirs { try store.upsertRequest(request) }
        try store.deleteAllRequests(app: Sample.app)
        #expect(try store.pendingRequests(app: Sample.app).isEmpty)
        #expect(try store.pendingRequests() == theirs)
    }

    @Test("pending requests are ordered by app, then submission time, then identifier")
    func ordering() throws {
        let store = try SchedulerStore.inMemory()
        let early = Sample.now
        let late = Sample.now.addingTimeInterval(60)
        let expected = [
            Sample.request("z", app: Sample.app, submittedAt: early),
            Sample.request("a", app: Sample.app, submittedAt: late),
            Sample.request("b", app: Sample.app, submittedAt: late),
            Sample.request("a", app: Sample.otherApp, submittedAt: early),
        ]
        for request in expected.reversed() { try store.upsertRequest(request) }
        #expect(try store.pendingRequests() == expected)
        #expect(try store.pendingRequests(app: Sample.otherApp) == [expected[3]])
    }

    @Test("threads sharing one store do not lose writes")
    func concurrentWriters() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.file("store.sqlite"))
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<25 {
                do {
                    try store.upsertRequest(Sample.request("task-\(thread)-\(index)"))
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try store.pendingRequests().count == 200)
    }
}
