import BackgroundTasks
import Foundation
import SchedulerCore
import Synchronization

/// Group commit of submissions (docs/daemon.md, "Many apps at once"): submits that arrive
/// while a commit is in flight wait in a queue, and the next commit takes them all (at
/// most one per request key per commit, see ``SchedulerDriver/submit(batch:)``) with one
/// `fsync`.
/// Every submit is answered only once its commit is on disk.
///
/// No submitter waits: the first finding no commit in flight starts the commits on the
/// committer's own queue, which commits until nothing waits; every submitter enqueues and
/// returns, and the completions are called from that queue. The commits must not run on the
/// submitter's thread: bgtaskd reads every connection on one serial queue, so a commit there
/// kept the other connections' submits from being read until it was on disk, and every
/// commit took one submit (16 apps submitted at 1.4 times one app's rate, not 5).
final class GroupCommitter: Sendable {
    typealias Completion = @Sendable (Result<Void, SubmitRejection>) -> Void

    private struct Waiting {
        var request: PendingRequest
        var completion: Completion
    }

    private struct State {
        var queue: [Waiting] = []
        var committing = false
    }

    /// Writes one batch and answers each of its requests, in order.
    typealias Commit = @Sendable ([PendingRequest]) -> [Result<Void, SubmitRejection>]

    private let commit: Commit
    private let state = Mutex(State())
    /// Where the commits run, one after the other.
    private let queue = DispatchQueue(label: "bgtaskd.group-commit")

    /// Commits with `driver`'s ``SchedulerDriver/submit(batch:)``.
    convenience init(driver: SchedulerDriver) {
        self.init { [driver] batch in driver.submit(batch: batch) }
    }

    /// Commits with `commit` (tests watch the batches it is given).
    init(commit: @escaping Commit) { self.commit = commit }

    /// Submits `request`; `completion` is called once it is on disk or refused.
    func submit(_ request: PendingRequest, completion: @escaping Completion) {
        let leads = state.withLock { state -> Bool in
            state.queue.append(Waiting(request: request, completion: completion))
            if state.committing { return false }
            state.committing = true
            return true
        }
        guard leads else { return }
        queue.async { [self] in
            while let batch = nextBatch() {
                let results = commit(batch.map(\.request))
                for (waiting, result) in zip(batch, results) { waiting.completion(result) }
            }
        }
    }

    /// The next commit's submissions, in arrival order, one per key; `nil` (and no commit
    /// in flight any more) when none waits.
    private func nextBatch() -> [Waiting]? {
        state.withLock { state in
            guard !state.queue.isEmpty else {
                state.committing = false
                return nil
            }
            var keys = Set<RequestKey>()
            var batch: [Waiting] = []
            var later: [Waiting] = []
            for waiting in state.queue {
                if keys.insert(waiting.request.key).inserted { batch.append(waiting) } else { later.append(waiting) }
            }
            state.queue = later
            return batch
        }
    }
}
