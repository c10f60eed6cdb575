import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization
import Testing

/// The store contract (``SchedulerStorage``), run against both implementations: every test
/// takes the kind of store and sees only the protocol. The expectations are the SQLite
/// store's (Tests/SchedulerStoreTests), which the PostgreSQL store must meet as they are.
extension PostgreSQLServerTests {
    @Suite("Store contract")
    struct Contract {
        // MARK: Pending requests

        @Test("every field of every kind of request round-trips exactly", arguments: StoreKind.allCases)
        func everyFieldRoundTrips(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            for request in Sample.everyField { try store.upsertRequest(request) }
            let stored = try store.pendingRequests(app: nil)
            #expect(Set(stored) == Set(Sample.everyField))
            let bits = { (requests: [PendingRequest]) in
                Set(requests.flatMap { [$0.submittedAt, $0.earliestBeginDate ?? .distantPast].map(\.timeIntervalSinceReferenceDate.bitPattern) })
            }
            #expect(bits(stored) == bits(Sample.everyField))
        }

        @Test("a date that would lose a bit through the 1970 epoch comes back exactly", arguments: StoreKind.allCases)
        func lossyDatesRoundTrip(kind: StoreKind) throws {
            // An instant whose seconds since 1970 do not convert back exactly (about half do not).
            let date = try #require((0..<1_000).lazy
                .map { Date(timeIntervalSinceReferenceDate: 770_000_000 + Double($0) * 0.000_321_7) }
                .first { Date(timeIntervalSince1970: $0.timeIntervalSince1970) != $0 })
            let store = try StoreFixture(kind).store
            let request = PendingRequest(app: Sample.app, identifier: "exact", kind: .processing, earliestBeginDate: date, submittedAt: date)
            try store.upsertRequest(request)
            #expect(try store.pendingRequests(app: nil) == [request])
        }

        @Test("submitting the same identifier again replaces the request, of that app only", arguments: StoreKind.allCases)
        func upsertReplaces(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let first = PendingRequest(app: Sample.app, identifier: "sync", kind: .processing, requiresNetworkConnectivity: true, submittedAt: Sample.now)
            var second = PendingRequest(
                app: Sample.app, identifier: "sync", kind: .processing,
                earliestBeginDate: Sample.now.addingTimeInterval(3_600), requiresExternalPower: true,
                submittedAt: Sample.now.addingTimeInterval(10)
            )
            second.remoteNotificationPayload = "{}"
            let otherApps = Sample.request("sync", app: Sample.otherApp)
            try store.upsertRequest(first)
            try store.upsertRequest(otherApps)
            try store.upsertRequest(second)
            #expect(try store.pendingRequests(app: Sample.app) == [second])
            #expect(try store.pendingRequests(app: Sample.otherApp) == [otherApps])
            // Replacing with fewer fields clears the ones the new request lacks.
            try store.upsertRequest(first)
            #expect(try store.pendingRequests(app: Sample.app) == [first])
        }

        @Test("a batch is saved in one transaction: all of it, or none when a row fails", arguments: StoreKind.allCases)
        func batchIsAllOrNone(kind: StoreKind) throws {
            let fixture = try StoreFixture(kind)
            let store = fixture.store
            let before = Sample.request("a")
            try store.upsertRequest(before)
            let batch = [Sample.request("b"), Sample.request("c", app: Sample.otherApp)]
            try store.upsertRequests(batch)
            #expect(try store.pendingRequests(app: nil) == [before, batch[0], batch[1]])
            try store.upsertRequests([])

            try fixture.poisonIdentifier()
            var replacement = Sample.request("a")
            replacement.submittedAt = Sample.now.addingTimeInterval(60)
            #expect(throws: StoreError.self) {
                try store.upsertRequests([replacement, Sample.request("d"), Sample.request("poison"), Sample.request("e")])
            }
            // Neither the rows before the failure nor the replacement were kept.
            #expect(try store.pendingRequests(app: nil) == [before, batch[0], batch[1]])
            // The store still works after the failed transaction.
            try store.upsertRequests([Sample.request("f")])
            #expect(try store.pendingRequests(app: Sample.app).map(\.identifier) == ["a", "b", "f"])
        }

        @Test("a batch larger than one statement carries is saved whole, or not at all", arguments: StoreKind.allCases)
        func largeBatchIsAllOrNone(kind: StoreKind) throws {
            let fixture = try StoreFixture(kind)
            let store = fixture.store
            let batch = (0..<600).map { Sample.request("bulk\($0)") }
            try store.upsertRequests(batch)
            #expect(try store.pendingRequests(app: Sample.app).count == 600)
            try fixture.poisonIdentifier()
            let failing = (0..<599).map { Sample.request("more\($0)") } + [Sample.request("poison")]
            #expect(throws: StoreError.self) { try store.upsertRequests(failing) }
            #expect(try store.pendingRequests(app: Sample.app).count == 600, "none of the failed batch's rows, from any of its statements")
        }

        @Test("deleting one request, or every request of one app, leaves the others", arguments: StoreKind.allCases)
        func deleting(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let mine = [Sample.request("a"), Sample.request("b"), Sample.request("c")]
            let theirs = [Sample.request("a", app: Sample.otherApp), Sample.request("z", app: Sample.otherApp)]
            for request in mine + theirs { try store.upsertRequest(request) }
            try store.deleteRequest(mine[1].key)
            try store.deleteRequest(RequestKey(app: Sample.app, identifier: "never-submitted"))
            #expect(try store.pendingRequests(app: Sample.app) == [mine[0], mine[2]])
            try store.deleteAllRequests(app: Sample.app)
            #expect(try store.pendingRequests(app: Sample.app).isEmpty)
            #expect(try store.pendingRequests(app: nil) == theirs)
        }

        @Test("pending requests are ordered by app, then submission, then identifier (by code point)", arguments: StoreKind.allCases)
        func pendingOrder(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let early = Sample.now
            let late = Sample.now.addingTimeInterval(60)
            let expected = [
                Sample.request("z", submittedAt: early),
                Sample.request("B", submittedAt: late),
                Sample.request("a", submittedAt: late),
                Sample.request("é", submittedAt: late),
                Sample.request("a", app: Sample.otherApp, submittedAt: early),
            ]
            for request in expected.reversed() { try store.upsertRequest(request) }
            #expect(try store.pendingRequests(app: nil) == expected)
            #expect(try store.pendingRequests(app: Sample.otherApp) == [expected[4]])
        }

        @Test("threads sharing one store lose no write", arguments: StoreKind.allCases)
        func concurrentWriters(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for index in 0..<20 {
                    do {
                        try store.upsertRequest(Sample.request("task-\(thread)-\(index)"))
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(try store.pendingRequests(app: nil).count == 160)
        }

        // MARK: Quarantine

        @Test("a row that cannot be read is reported, never returned; set aside by key, it hides nothing", arguments: StoreKind.allCases)
        func unreadableRowsAndTheQuarantine(kind: StoreKind) throws {
            let fixture = try StoreFixture(kind)
            let store = fixture.store
            let good = [Sample.request("good-1"), Sample.request("good-2", app: Sample.otherApp)]
            for request in good { try store.upsertRequest(request) }
            try fixture.insertRawRequest(app: Sample.app, identifier: "teleporter", kind: "teleport")
            let error = try #require(throws: StoreError.self) { try store.pendingRequests(app: nil) }
            #expect(error.code == .invalidData)
            #expect(error.message.contains("unknown task kind \"teleport\""))
            #expect(error.message.contains("\(Sample.app)/teleporter"))

            let moved = try store.quarantineRequests(
                [RequestKey(app: Sample.app, identifier: "teleporter"), RequestKey(app: Sample.app, identifier: "absent")],
                reason: "cannot be read", now: Sample.now
            )
            #expect(moved == [QuarantinedRequest(app: Sample.app.rawValue, identifier: "teleporter", reason: "cannot be read", quarantinedAt: Sample.now)])
            #expect(try store.pendingRequests(app: nil) == good)
            try store.quarantineRequests([good[1].key], reason: "over the limit", now: Sample.now.addingTimeInterval(1))
            #expect(try store.pendingRequests(app: nil) == [good[0]])
            // Kept, oldest first, never deleted.
            #expect(try store.quarantinedRequests().map(\.identifier) == ["teleporter", "good-2"])
            #expect(try store.quarantinedRequests().map(\.reason) == ["cannot be read", "over the limit"])
            #expect(try store.quarantinedRequests().last?.quarantinedAt == Sample.now.addingTimeInterval(1))
        }

        // MARK: The run log

        /// One rule for both stores (RunRecordRules): a value no run can have is named with
        /// the run, its app and identifier and the column, never read (the PostgreSQL store
        /// read an infinite energy as "not measured"), and the other runs are read.
        @Test("a run row with a value no run can have is named, and the others are read", arguments: StoreKind.allCases)
        func impossibleRunValues(kind: StoreKind) throws {
            let fixture = try StoreFixture(kind)
            let store = fixture.store
            for id in Int64(1) ... 5 {
                let run = Sample.run(id, of: Sample.request("task-\(id)"), startedAt: Sample.now.addingTimeInterval(Double(id)))
                try store.recordRunStarted(run)
                var ended = Sample.finished(run, after: 10)
                ended.cpuTime = 1
                ended.energyJoules = 2
                try store.recordRunFinished(ended)
            }
            try fixture.damageRun(1, sqlite: "energy_joules = 9e999", postgreSQL: "energy_joules = 'Infinity'")
            try fixture.damageRun(2, sqlite: "cpu_time = -1", postgreSQL: "cpu_time = -1")
            try fixture.damageRun(3, sqlite: "ended_at = started_at - 5", postgreSQL: "ended_at = started_at - 5")
            try fixture.damageRun(4, sqlite: "cpu_time = 1e308", postgreSQL: "cpu_time = 1e308")
            let (runs, unreadable) = try store.readableRuns(app: nil, since: nil)
            #expect(runs.map(\.id) == [RunID(5)])
            #expect(unreadable.map(\.id) == [RunID(1), RunID(2), RunID(3), RunID(4)])
            let reasons = unreadable.map(\.reason)
            #expect(reasons[0].hasPrefix("energy_joules of run#1 (\(Sample.app)/task-1) is inf,"), "\(reasons)")
            #expect(reasons[1].hasPrefix("cpu_time of run#2 (\(Sample.app)/task-2) is -1.0,"), "\(reasons)")
            #expect(reasons[2].hasPrefix("ended_at of run#3 (\(Sample.app)/task-3) is 5.0 seconds before its started_at"), "\(reasons)")
            #expect(reasons[3].hasPrefix("cpu_time of run#4 (\(Sample.app)/task-4) is 1e+308,"), "\(reasons)")
            // The strict readers refuse rather than return them.
            let error = try #require(throws: StoreError.self) { try store.run(RunID(1)) }
            #expect(error.code == .invalidData)
            #expect(throws: StoreError.self) { try store.energySummary(app: nil, since: nil) }
        }

        @Test("a run's start consumes its request in the same transaction", arguments: StoreKind.allCases)
        func runStartConsumesTheRequest(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let request = Sample.everyField[1]
            let other = Sample.request("other")
            try store.upsertRequest(request)
            try store.upsertRequest(other)
            let run = Sample.run(1, of: request)
            try store.recordRunStarted(run)
            #expect(try store.pendingRequests(app: nil) == [other])
            #expect(try store.run(RunID(1)) == run)
        }

        @Test("a start written late consumes the submission it ran, not one the app made since; a start at the launch consumes the row of its identifier (a remote wake's run, the app's own request)", arguments: StoreKind.allCases)
        func runStartLeavesALaterSubmissionOnlyWhenWrittenLate(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            // A present-day instant whose seconds since 1970 would lose a bit: the match is exact.
            let ran = Sample.request("refresh", submittedAt: Date(timeIntervalSinceReferenceDate: 818_000_000.123456789))
            try store.upsertRequest(ran)
            let since = Sample.request("refresh", submittedAt: ran.submittedAt.addingTimeInterval(30))
            try store.upsertRequest(since)
            let run = Sample.run(1, of: ran)
            try store.recordRunStarted(run, onlyItsOwnSubmission: true)
            #expect(try store.pendingRequests(app: nil) == [since])
            #expect(try store.run(RunID(1)) == run)
            // Its own submission, read back from the store, is consumed (the round trip is exact).
            let read = try #require(try store.pendingRequests(app: nil).first)
            try store.recordRunStarted(Sample.run(2, of: read), onlyItsOwnSubmission: true)
            #expect(try store.pendingRequests(app: nil).isEmpty)
            // At the launch, whatever the row's submission: a push's run replaces the app's own.
            try store.upsertRequest(Sample.request("wake", submittedAt: ran.submittedAt))
            try store.recordRunStarted(Sample.run(3, of: Sample.request("wake", submittedAt: ran.submittedAt.addingTimeInterval(600))))
            #expect(try store.pendingRequests(app: nil).isEmpty)
        }

        @Test("a run whose start cannot be recorded leaves its request pending", arguments: StoreKind.allCases)
        func failedStartWritesNothing(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let request = Sample.request("refresh")
            try store.upsertRequest(request)
            let earlier = Sample.run(7, of: Sample.request("earlier"))
            try store.recordRunStarted(earlier)
            // Run number 7 exists: the insert fails, and the delete before it is rolled back.
            #expect(throws: StoreError.self) { try store.recordRunStarted(Sample.run(7, of: request)) }
            #expect(try store.pendingRequests(app: nil) == [request])
            #expect(try store.runs() == [earlier])
        }

        @Test("runs round-trip with every field and measurement, before and after they end", arguments: StoreKind.allCases)
        func runsRoundTrip(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            var finished: [RunRecord] = []
            for (offset, request) in Sample.everyField.enumerated() {
                let started = Sample.run(Int64(offset + 1), of: request, startedAt: Sample.now.addingTimeInterval(Double(offset) + 0.123_456_789))
                try store.recordRunStarted(started)
                #expect(try store.run(started.id) == started)
                var ended = started
                ended.endedAt = started.startedAt.addingTimeInterval(29.999_999_9)
                ended.outcome = RunOutcome.allCases[offset % RunOutcome.allCases.count]
                ended.success = offset.isMultiple(of: 2) ? (offset == 0) : nil
                ended.stopReason = offset == 3 ? nil : "budget of 30 s exhausted (\(offset))"
                if offset != 2 {
                    ended.cpuTime = 1.234_567_891 * Double(offset + 1)
                    ended.peakMemoryBytes = 5_000_000_000 + Int64(offset)
                    ended.energyJoules = 0.1 + Double(offset)
                }
                if offset == 1 {
                    ended.measuredBy = "cgroup; energy: RAPL (package, whole machine)"
                    ended.bytesRead = 4_096
                    ended.bytesWritten = Int64.max
                }
                try store.recordRunFinished(ended, appSettings: [:])
                finished.append(ended)
            }
            #expect(try store.runs() == finished)
            #expect(try store.run(RunID(99)) == nil)
        }

        @Test("a non-finite measurement is stored as unknown", arguments: StoreKind.allCases)
        func nonFiniteMeasurements(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let started = Sample.run(1, of: Sample.request("a"))
            try store.recordRunStarted(started)
            var ended = Sample.finished(started, after: 1)
            ended.cpuTime = .infinity
            ended.energyJoules = .nan
            try store.recordRunFinished(ended, appSettings: [:])
            let stored = try #require(try store.run(started.id))
            #expect(stored.cpuTime == nil)
            #expect(stored.energyJoules == nil)
        }

        @Test("a run's end writes its app's settings in the same transaction", arguments: StoreKind.allCases)
        func runEndWritesSettings(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let request = Sample.request("refresh")
            let started = Sample.run(1, of: request)
            try store.recordRunStarted(started)
            try store.setAppSetting("stale", app: request.app, name: "to-delete")
            let ended = Sample.finished(started, after: 5)
            try store.recordRunFinished(ended, appSettings: [AppSettingName.policyState: #"{"learned":1}"#, "to-delete": nil])
            #expect(try store.run(started.id) == ended)
            #expect(try store.appSetting(app: request.app, name: AppSettingName.policyState) == #"{"learned":1}"#)
            #expect(try store.appSetting(app: request.app, name: "to-delete") == nil)
        }

        @Test("finishing a run that never started fails, names it, and writes nothing", arguments: StoreKind.allCases)
        func finishingANeverStartedRun(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            try store.setAppSetting(#"{"learned":1}"#, app: Sample.app, name: AppSettingName.policyState)
            let unknown = Sample.finished(Sample.run(3, of: Sample.request("x")), after: 1)
            let error = try #require(throws: StoreError.self) {
                try store.recordRunFinished(unknown, appSettings: [AppSettingName.policyState: #"{"learned":2}"#, "new": "value"])
            }
            #expect(error.code == .invalidData)
            #expect(error.message.contains("run#3"))
            #expect(try store.appSetting(app: Sample.app, name: AppSettingName.policyState) == #"{"learned":1}"#)
            #expect(try store.appSetting(app: Sample.app, name: "new") == nil)
            #expect(try store.runs().isEmpty)
        }

        @Test("maxRunID is nil for an empty log and the highest number otherwise", arguments: StoreKind.allCases)
        func maxRunID(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            #expect(try store.maxRunID() == nil)
            for id in [4, 12, 9] as [Int64] {
                try store.recordRunStarted(Sample.run(id, of: Sample.request("t\(id)")))
            }
            #expect(try store.maxRunID() == RunID(12))
        }

        @Test("lastLaunch is an app's latest run start, continued processing left out, nil with none", arguments: StoreKind.allCases)
        func lastLaunch(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            #expect(try store.lastLaunch(of: Sample.app) == nil)
            try store.recordRunStarted(Sample.run(1, of: Sample.request("a"), startedAt: Sample.now))
            // Ended, and still the latest start: a run's end does not move it.
            let later = Sample.run(2, of: Sample.request("b"), startedAt: Sample.now.addingTimeInterval(30))
            try store.recordRunStarted(later)
            try store.recordRunFinished(Sample.finished(later, after: 5))
            // Later still, but not spaced by the rate limit, or another app's.
            var continued = Sample.request("c")
            continued.kind = .continuedProcessing
            try store.recordRunStarted(Sample.run(3, of: continued, startedAt: Sample.now.addingTimeInterval(60)))
            try store.recordRunStarted(Sample.run(4, of: Sample.request("d", app: Sample.otherApp), startedAt: Sample.now.addingTimeInterval(90)))
            #expect(try store.lastLaunch(of: Sample.app) == Sample.now.addingTimeInterval(30))
            #expect(try store.lastLaunch(of: Sample.otherApp) == Sample.now.addingTimeInterval(90))
            // Many at once (bgtaskd's start-up), an app without runs left out.
            let many = try store.lastLaunches(of: [Sample.app, Sample.otherApp, AppID("com.example.none")])
            #expect(many == [Sample.app: Sample.now.addingTimeInterval(30), Sample.otherApp: Sample.now.addingTimeInterval(90)], "\(many)")
        }

        @Test("runs filter by app and start, keep the newest with a limit, newest last, ties by number", arguments: StoreKind.allCases)
        func runsSinceAndLimit(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            var all: [RunRecord] = []
            for index in 0..<10 {
                let app = index.isMultiple(of: 3) ? Sample.otherApp : Sample.app
                // Runs 9 and 10 start at the same instant: ordered by number.
                let start = Sample.now.addingTimeInterval(Double(min(index, 8)) * 60)
                all.append(Sample.run(Int64(index + 1), of: Sample.request("t", app: app), startedAt: start))
            }
            for run in all.reversed() { try store.recordRunStarted(run) }
            let mine = all.filter { $0.app == Sample.app }
            let since = Sample.now.addingTimeInterval(4 * 60)
            #expect(try store.runs() == all)
            #expect(try store.runs(app: Sample.app, since: nil, limit: nil) == mine)
            #expect(try store.runs(app: nil, since: since, limit: nil) == all.filter { $0.startedAt >= since })
            #expect(try store.runs(app: nil, since: nil, limit: 3) == Array(all.suffix(3)))
            #expect(try store.runs(app: Sample.app, since: since, limit: 2) == Array(mine.filter { $0.startedAt >= since }.suffix(2)))
            #expect(try store.runs(app: nil, since: nil, limit: 0).isEmpty)
            #expect(try store.runs(app: nil, since: nil, limit: -5).isEmpty)
            #expect(try store.runs(app: AppID("com.example.unknown"), since: nil, limit: nil).isEmpty)
        }

        @Test("pruning deletes finished runs that ended before the cutoff, never unfinished ones or the newest", arguments: StoreKind.allCases)
        func pruning(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let day: TimeInterval = 86_400
            let cutoff = Sample.now.addingTimeInterval(-30 * day)
            let old = Sample.finished(Sample.run(1, of: Sample.request("old"), startedAt: cutoff.addingTimeInterval(-2 * day)), after: 5)
            // Ended exactly at the cutoff: kept (only runs that ended before it go).
            let atCutoff = Sample.finished(Sample.run(2, of: Sample.request("edge"), startedAt: cutoff.addingTimeInterval(-10)), after: 10)
            let stillRunning = Sample.run(3, of: Sample.request("long"), startedAt: cutoff.addingTimeInterval(-day))
            let older = Sample.finished(Sample.run(4, of: Sample.request("older"), startedAt: cutoff.addingTimeInterval(-40 * day)), after: 1)
            let recent = Sample.finished(Sample.run(5, of: Sample.request("recent"), startedAt: Sample.now.addingTimeInterval(-60)), after: 60)
            for run in [old, atCutoff, stillRunning, older, recent] {
                try store.recordRunStarted(Sample.run(run.id.rawValue, of: run.request, startedAt: run.startedAt))
                if run.endedAt != nil { try store.recordRunFinished(run, appSettings: [:]) }
            }
            #expect(try store.pruneRuns(olderThan: cutoff) == 2)
            #expect(try store.runs().map(\.id) == [RunID(3), RunID(2), RunID(5)])
            #expect(try store.pruneRuns(olderThan: cutoff) == 0)
            // Everything finished is old now, but the newest run stays: numbers keep increasing.
            #expect(try store.pruneRuns(olderThan: Sample.now.addingTimeInterval(day)) == 1)
            #expect(try store.runs().map(\.id) == [RunID(3), RunID(5)])
            #expect(try store.maxRunID() == RunID(5))
        }

        @Test("the energy summary sums the runs per app and task", arguments: StoreKind.allCases)
        func energySummary(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            func measured(_ id: Int64, _ identifier: String, startingAfter offset: TimeInterval, seconds: TimeInterval, cpu: Double?, joules: Double?) -> RunRecord {
                var run = Sample.finished(Sample.run(id, of: Sample.request(identifier), startedAt: Sample.now.addingTimeInterval(offset)), after: seconds)
                run.cpuTime = cpu
                run.energyJoules = joules
                return run
            }
            let runs = [
                measured(1, "a", startingAfter: 0, seconds: 2, cpu: 0.5, joules: 2),
                measured(2, "a", startingAfter: 10, seconds: 4, cpu: 1, joules: 4),
                measured(3, "b", startingAfter: 20, seconds: 1, cpu: nil, joules: nil),
            ]
            for run in runs {
                try store.recordRunStarted(Sample.run(run.id.rawValue, of: run.request, startedAt: run.startedAt))
                try store.recordRunFinished(run, appSettings: [:])
            }
            try store.recordRunStarted(Sample.run(4, of: Sample.request("a"), startedAt: Sample.now.addingTimeInterval(30)))
            let rows = try store.energySummary(app: nil, since: nil)
            #expect(rows == EnergySummary.make(from: try store.runs()))
            #expect(rows.map(\.identifier) == ["a", "b"])
            #expect(rows[0].runs == 2 && rows[0].inProgress == 1)
            #expect(rows[0].meanDuration == 3)
            #expect(rows[0].cpuSeconds == 1.5)
            #expect(rows[0].energyJoules == 6)
            #expect(rows[1].unmeasuredRuns == 1)
            #expect(try store.energySummary(app: nil, since: Sample.now.addingTimeInterval(5)).map(\.runs) == [1, 1])
            #expect(try store.energySummary(app: Sample.otherApp, since: nil).isEmpty)
        }

        // MARK: Settings and checkpoints

        @Test("app settings are set, overwritten, listed by name and deleted with nil, per app", arguments: StoreKind.allCases)
        func appSettings(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let name = AppSettingName.backgroundRefresh
            #expect(try store.appSetting(app: Sample.app, name: name) == nil)
            #expect(try store.appSettings(named: name).isEmpty)
            try store.setAppSetting("on", app: Sample.app, name: name)
            try store.setAppSetting("off", app: Sample.app, name: name)
            try store.setAppSetting("on", app: Sample.otherApp, name: name)
            try store.setAppSetting("", app: Sample.app, name: "note ✍️")
            #expect(try store.appSetting(app: Sample.app, name: name) == "off")
            #expect(try store.appSetting(app: Sample.app, name: "note ✍️") == "")
            #expect(try store.appSettings(named: name) == [Sample.app: "off", Sample.otherApp: "on"])
            try store.setAppSetting(nil, app: Sample.app, name: name)
            try store.setAppSetting(nil, app: Sample.app, name: "never-set")
            #expect(try store.appSetting(app: Sample.app, name: name) == nil)
            #expect(try store.appSettings(named: name) == [Sample.otherApp: "on"])
        }

        @Test("checkpoints are set, read, overwritten, listed and removed per app, any bytes", arguments: StoreKind.allCases)
        func checkpoints(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            let everyByte = Data((0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) })
            #expect(try store.checkpoint(app: Sample.app, key: "offset") == nil)
            #expect(try store.saveCheckpoint(Data("first".utf8), app: Sample.app, key: "offset", at: Sample.now) == nil)
            #expect(try store.saveCheckpoint(everyByte, app: Sample.app, key: "offset", at: Sample.now.addingTimeInterval(1)) == nil)
            #expect(try store.saveCheckpoint(Data(), app: Sample.app, key: "empty", at: Sample.now) == nil)
            #expect(try store.saveCheckpoint(Data("theirs".utf8), app: Sample.otherApp, key: "offset", at: Sample.now) == nil)
            #expect(try store.checkpoint(app: Sample.app, key: "offset") == everyByte)
            #expect(try store.checkpoint(app: Sample.app, key: "empty") == Data())
            #expect(try store.checkpoint(app: Sample.otherApp, key: "offset") == Data("theirs".utf8))
            #expect(try store.checkpointKeys(app: Sample.app) == ["empty", "offset"])
            try store.removeCheckpoint(app: Sample.app, key: "offset")
            try store.removeCheckpoint(app: Sample.app, key: "never-set")
            #expect(try store.checkpoint(app: Sample.app, key: "offset") == nil)
            #expect(try store.checkpointKeys(app: Sample.app) == ["empty"])
            #expect(try store.checkpointKeys(app: Sample.otherApp) == ["offset"])
        }

        @Test("writers saving checkpoints at once cannot together pass the app's limits: each counts and writes in one transaction", arguments: StoreKind.allCases)
        func checkpointLimitsHoldUnderConcurrentSaves(kind: StoreKind) throws {
            let fixture = try StoreFixture(kind)
            let store = fixture.store
            for index in 0..<(CheckpointRules.maximumKeysPerApp - 1) {
                #expect(try store.saveCheckpoint(Data([1]), app: Sample.app, key: "k\(index)", at: Sample.now) == nil)
            }
            // One key is left. Six writers want it at once: six threads on one store, or
            // six replicas with connections of their own.
            let writers = 6
            let stores: [any SchedulerStorage] = try (0..<writers).map { index in
                kind == .postgreSQL ? try fixture.openAnother(replica: "writer-\(index)") : store
            }
            let outcomes = Mutex<[String?]>([])
            DispatchQueue.concurrentPerform(iterations: writers) { index in
                let outcome: String?
                do {
                    outcome = try stores[index].saveCheckpoint(Data([2]), app: Sample.app, key: "new\(index)", at: Sample.now)
                } catch {
                    outcome = "error: \(error)"
                }
                outcomes.withLock { $0.append(outcome) }
            }
            let results = outcomes.withLock { $0 }
            #expect(results.filter { $0 == nil }.count == 1, "\(results)")
            #expect(results.compactMap { $0 }.allSatisfy { $0.contains("the most one app may hold is \(CheckpointRules.maximumKeysPerApp)") }, "\(results)")
            #expect(try store.checkpointKeys(app: Sample.app).count == CheckpointRules.maximumKeysPerApp)
            // The key's and value's own rules are checked too, before anything is counted.
            #expect(try store.saveCheckpoint(Data(), app: Sample.app, key: "", at: Sample.now) != nil)
            // Replacing a key the app has is within its limits.
            #expect(try store.saveCheckpoint(Data([3]), app: Sample.app, key: "k0", at: Sample.now) == nil)
            #expect(try store.checkpoint(app: Sample.app, key: "k0") == Data([3]))
            for other in stores where (other as AnyObject) !== (store as AnyObject) { other.close() }
        }

        @Test("a checkpoint usage counts the app's other keys and their bytes", arguments: StoreKind.allCases)
        func checkpointUsage(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            #expect(try store.checkpointUsage(app: Sample.app, excluding: "a") == CheckpointUsage(keys: 0, bytes: 0))
            #expect(try store.saveCheckpoint(Data(count: 10), app: Sample.app, key: "a", at: Sample.now) == nil)
            #expect(try store.saveCheckpoint(Data(count: 100), app: Sample.app, key: "bé", at: Sample.now) == nil)
            #expect(try store.saveCheckpoint(Data(count: 1000), app: Sample.otherApp, key: "a", at: Sample.now) == nil)
            // Keys count in bytes of UTF-8 ("bé" is 3).
            #expect(try store.checkpointUsage(app: Sample.app, excluding: "none") == CheckpointUsage(keys: 2, bytes: 1 + 10 + 3 + 100))
            #expect(try store.checkpointUsage(app: Sample.app, excluding: "a") == CheckpointUsage(keys: 1, bytes: 103))
        }

        // MARK: Closing

        @Test("after close every call fails with closed; closing twice does nothing", arguments: StoreKind.allCases)
        func close(kind: StoreKind) throws {
            let store = try StoreFixture(kind).store
            try store.upsertRequest(Sample.request("a"))
            store.close()
            store.close()
            let calls: [(String, () throws -> Void)] = [
                ("upsert", { try store.upsertRequest(Sample.request("b")) }),
                ("pending", { _ = try store.pendingRequests(app: nil) }),
                ("runs", { _ = try store.runs() }),
                ("setting", { try store.setAppSetting("x", app: Sample.app, name: "y") }),
                ("checkpoint", { _ = try store.checkpoint(app: Sample.app, key: "k") }),
            ]
            for (name, call) in calls {
                let error = try #require(throws: StoreError.self, "\(name)") { try call() }
                #expect(error.code == .closed, "\(name)")
            }
        }
    }
}
