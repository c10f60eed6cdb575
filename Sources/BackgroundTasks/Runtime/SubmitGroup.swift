import Dispatch
import SchedulerCore
import Synchronization

/// Group commit for the embedded scheduler's synchronous `submit` (docs/replicas.md,
/// "Group commit"): threads of one process that submit while a commit is in flight wait,
/// and the next commit writes all of theirs in one transaction (one `fsync`, and on a
/// shared PostgreSQL store one notifying commit), at most one request per key. Each
/// `submit` still returns only once its own request is on disk, or refused.
///
/// No thread of its own: the first submitter that finds no commit in flight leads. It
/// commits one batch, which opens with its own request, wakes the submitters answered with
/// it, and hands the lead to the first one still waiting (so no thread serves others for
/// long). Only then does it carry out what its commits led to (traces, launches: app code
/// among them), so no submitter ever waits on app code running on the leader's thread,
/// and app code that submits again from there finds no lead of its own in the way. A
/// submitter alone commits at once: a batch of one is the plain path.
final class SubmitGroup: Sendable {
    typealias Outcome = Result<Void, SubmitRejection>

    /// One waiting submission.
    private final class Waiter: @unchecked Sendable {
        // @unchecked: `outcome` is written and read only under the group's mutex; the
        // semaphore is thread-safe.
        let request: PendingRequest
        let wake = DispatchSemaphore(value: 0)
        var outcome: Outcome?

        init(_ request: PendingRequest) { self.request = request }
    }

    private struct State {
        var queue: [Waiter] = []
        var committing = false
        var largestBatch = 0
    }

    /// The most requests one commit writes (a bound on one transaction's size).
    static let largestBatch = 256

    private let state = Mutex(State())

    /// Submits `request`: `commit` writes a batch (in order, one request per key), answers
    /// each of its requests and returns what is to be carried out after; it is called by
    /// whichever submitter leads, never under this group's lock, and what it returns is run
    /// by that leader once it leads no more. It returns one outcome per request.
    func submit(_ request: PendingRequest, commit: ([PendingRequest]) -> ([Outcome], () -> Void)) -> Outcome {
        let waiter = Waiter(request)
        let leads = state.withLock { state -> Bool in
            state.queue.append(waiter)
            if state.committing { return false }
            state.committing = true
            return true
        }
        if !leads {
            waiter.wake.wait()
            if let outcome = state.withLock({ _ in waiter.outcome }) { return outcome }
            // Woken to lead: the previous leader handed over.
        }
        // A leader is first in the queue (a fresh one found it empty; a handed-over one is
        // its first), so its request opens the batch it commits.
        let batch = nextBatch()
        assert(batch.first === waiter, "a leader's own request opens its batch")
        let (outcomes, carryOut) = commit(batch.map(\.request))
        state.withLock { _ in
            for (member, outcome) in zip(batch, outcomes) { member.outcome = outcome }
        }
        for member in batch.dropFirst() { member.wake.signal() }
        // Woken without an outcome, the first one still waiting leads next.
        let next = state.withLock { state -> Waiter? in
            if state.queue.isEmpty { state.committing = false }
            return state.queue.first
        }
        next?.wake.signal()
        carryOut()
        return outcomes[0]
    }

    /// How many submissions wait for a commit (for tests).
    var queuedCount: Int { state.withLock { $0.queue.count } }

    /// The most requests one commit of this group has written so far (for tests).
    var largestBatchCommitted: Int { state.withLock { $0.largestBatch } }

    /// The next commit's requests, in arrival order, one per key, at most
    /// ``largestBatch``; the rest stay queued for the next one.
    private func nextBatch() -> [Waiter] {
        state.withLock { state in
            var keys = Set<RequestKey>()
            var batch: [Waiter] = []
            var later: [Waiter] = []
            for member in state.queue {
                if batch.count < Self.largestBatch, keys.insert(member.request.key).inserted {
                    batch.append(member)
                } else {
                    later.append(member)
                }
            }
            state.queue = later
            state.largestBatch = max(state.largestBatch, batch.count)
            return batch
        }
    }
}
