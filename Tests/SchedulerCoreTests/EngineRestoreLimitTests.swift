import Foundation
import Testing
@testable import SchedulerCore

/// docs/ARCHITECTURE.md, "Limits hold for what is loaded": `restore` applies the pending
/// limits a submission would, in submission order, and returns the excess.
@Suite struct EngineRestoreLimitTests {
    typealias F = EngineFixtures

    @Test func restoreLoadsAtMostTheLimitPerAppAndKindAndReturnsTheRest() {
        var engine = F.engine()
        let processing = (0..<12).map { F.processing(F.processingID($0), submittedAt: F.t0.addingTimeInterval(Double($0))) }
        let refreshes = [F.refresh(submittedAt: F.t0), F.refresh(F.secondRefreshID, submittedAt: F.t0.addingTimeInterval(1))]
        let other = F.refresh(F.otherRefreshID, app: F.otherApp, submittedAt: F.t0.addingTimeInterval(2))
        // Given out of order: restore sorts by submission, so the earliest submitted win.
        let refused = engine.restore((processing + refreshes + [other]).reversed(), at: F.t0)
        #expect(refused.map(\.identifier) == [F.secondRefreshID, F.processingID(10), F.processingID(11)], "in submission order")
        #expect(engine.pendingRequests(of: F.app).count == 11)
        #expect(engine.pendingRequests(of: F.otherApp).map(\.identifier) == [F.otherRefreshID])
        // And the limits then hold for submissions as usual.
        #expect(F.rejection(of: F.processing(F.syncID), by: engine, at: F.t0)?.code == .tooManyPendingTaskRequests)
    }

    @Test func restoringTheSameRequestAgainReplacesItAndIsNotRefused() {
        var engine = F.engine()
        let requests = (0..<10).map { F.processing(F.processingID($0)) }
        #expect(engine.restore(requests, at: F.t0).isEmpty)
        #expect(engine.restore([requests[3]], at: F.t0).isEmpty)
        #expect(engine.pendingRequests(of: F.app).count == 10)
    }
}
