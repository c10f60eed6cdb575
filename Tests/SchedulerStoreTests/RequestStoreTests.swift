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

}
