import Foundation
@testable import PostgreSQLStore
import SchedulerCore
import SchedulerStore
import Synchronization
import Testing

/// The PostgreSQL store shared by replicas (docs/replicas.md): claims, leases from the
/// server's clock, the sweep of expired leases, and word of changes through LISTEN/NOTIFY.
extension PostgreSQLServerTests {
    @Suite("PostgreSQL shared by replicas")
    struct Sharing {
        private func open(_ server: TestPostgreSQLServer, _ database: String, replica: String) throws -> PostgreSQLStore {
            try PostgreSQLStore.open(address: server.address(database: database), replica: replica, now: Sample.now)
        }

        /// A fresh database on the shared test server, and a store for each replica named.
        private func freshDatabase(replicas names: [String]) throws -> (server: TestPostgreSQLServer, database: String, stores: [PostgreSQLStore]) {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            return (server, database, try names.map { try open(server, database, replica: $0) })
        }

        /// Collects what a listener hears; `wait` polls for a condition on it (the
        /// notification crosses the server: no virtual time to drive).
        final class Heard: Sendable {
            let changes = Mutex<[SharedStoreChange]>([])
            func record(_ change: SharedStoreChange) { changes.withLock { $0.append(change) } }
            func wait(timeout: Duration = .seconds(10), _ condition: ([SharedStoreChange]) -> Bool) -> Bool {
                waitDoing(timeout: timeout, {}, condition)
            }
            /// Repeats `action` until `condition` holds (a LISTEN takes effect some time after
            /// the listener starts: a change is made again until one is heard).
            func waitDoing(timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(50), _ action: () -> Void, _ condition: ([SharedStoreChange]) -> Bool) -> Bool {
                let deadline = ContinuousClock.now + timeout
                var nextAction = ContinuousClock.now
                while ContinuousClock.now < deadline {
                    if ContinuousClock.now >= nextAction {
                        action()
                        nextAction = ContinuousClock.now + interval
                    }
                    let seen = changes.withLock { $0 }
                    if condition(seen) { return true }
                    usleep(2_000)
                }
                return condition(changes.withLock { $0 })
            }
        }

        @Test("one claim of two commits; the loser writes nothing; a replaced request cannot be claimed by its old run")
        func claimsAreExclusive() throws {
            let (_, _, stores) = try freshDatabase(replicas: ["a", "b"])
            let (a, b) = (stores[0], stores[1])
            let request = Sample.request("job")
            try a.upsertRequest(request)
            #expect(try a.claimRun(Sample.run(1, of: request), lease: 30))
            #expect(try b.claimRun(Sample.run(1, of: request), lease: 30) == false)
            #expect(try b.run(RunID(1)) == nil, "the loser recorded nothing")
            #expect(try a.run(RunID(1))?.identifier == "job")
            #expect(try a.pendingRequests().isEmpty)
            // Resubmitted: a run made from the first submission cannot take the second.
            let again = Sample.request("job", submittedAt: Sample.now.addingTimeInterval(5))
            try b.upsertRequest(again)
            #expect(try a.claimRun(Sample.run(2, of: request), lease: 30) == false)
            #expect(try b.pendingRequests(keys: [again.key, Sample.request("absent").key]) == [again])
            #expect(try b.claimRun(Sample.run(1, of: again), lease: 30))
        }

        @Test("two processes under one replica name: the second claim of a run number is refused saying so, not as a bare duplicate key")
        func twoProcessesUnderOneReplicaNameAreNamed() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let first = try open(server, database, replica: "same")
            let second = try open(server, database, replica: "same")
            defer {
                first.close()
                second.close()
            }
            let x = Sample.request("x")
            let y = Sample.request("y")
            try first.upsertRequests([x, y])
            #expect(try first.claimRun(Sample.run(1, of: x), lease: 30))
            let error = try #require(throws: StoreError.self) { _ = try second.claimRun(Sample.run(1, of: y), lease: 30) }
            #expect(error.message.contains("another process runs under the same replica name; give each replica a name of its own"), "\(error.message)")
            #expect(try first.pendingRequests().map(\.identifier) == ["y"], "the refused claim took nothing")
        }

        @Test("a renewal is not held back by a call stuck on the replica's connection (a lock an administrator holds): the lease is renewed while the call waits")
        func aStuckCallDoesNotHoldTheRenewalBack() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let a = try open(server, database, replica: "a")
            defer { a.close() }
            let job = Sample.request("job")
            try a.upsertRequest(job)
            #expect(try a.claimRun(Sample.run(1, of: job), lease: 30))
            // An administrator takes the requests' table and keeps its transaction open; a's
            // next submit waits on it, holding a's connection (its statement timeout: 1 min).
            let administrator = try open(server, database, replica: "administrator")
            defer { administrator.close() }
            try administrator.withConnection { (connection) throws(StoreError) in
                try connection.execute("BEGIN")
                try connection.execute("LOCK TABLE bgtask_pending_requests IN ACCESS EXCLUSIVE MODE")
            }
            let submitEnded = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? a.upsertRequest(Sample.request("held"))
                submitEnded.signal()
            }
            // Until the submit waits on the lock (the server says so).
            var waiting = false
            for _ in 0..<200 where !waiting {
                waiting = try server.query("SELECT count(*)::text FROM pg_locks l, pg_sleep(0.02) WHERE NOT l.granted", in: database).first?.first == "1"
            }
            #expect(waiting, "the submit waits on the administrator's lock")
            // An outside probe: the renewal waited behind the stuck call until the lease ran out.
            try a.renewLeases([RunID(1)], lease: 60)
            #expect(submitEnded.wait(timeout: .now()) == .timedOut, "renewed while the submit still waited")
            let renewed = try server.query("SELECT (lease_expires_at > now() + interval '45 seconds')::text FROM bgtask_runs WHERE replica = 'a' AND id = 1", in: database)
            #expect(renewed.first?.first == "true", "\(renewed)")
            // The administrator's next call rolls its transaction back: the submit goes through.
            _ = try administrator.pendingRequests()
            #expect(submitEnded.wait(timeout: .now() + 30) == .success)
            #expect(try a.pendingRequests().map(\.identifier) == ["held"])
        }

        @Test("a lease that runs out ends the run as interrupted and restores its request, once, whoever sweeps; a renewed lease holds")
        func expiredLeasesAreSweptOnce() throws {
            let (server, database, stores) = try freshDatabase(replicas: ["a", "b"])
            let (a, b) = (stores[0], stores[1])
            let c = try open(server, database, replica: "c")
            let short = Sample.request("short")
            let renewed = Sample.request("renewed")
            try a.upsertRequests([short, renewed])
            #expect(try a.claimRun(Sample.run(1, of: short), lease: 1))
            #expect(try a.claimRun(Sample.run(2, of: renewed), lease: 1))
            #expect(try b.recoverExpiredLeases() == LeaseSweep(ended: [], runsInProgress: 2))
            // Wait out the first lease on the server's clock (leases are the server's time,
            // not this process's) while renewing the second.
            try a.renewLeases([RunID(2)], lease: 60)
            _ = try server.query("SELECT pg_sleep(1.2)::text", in: database)
            // b and c sweep at the same moment.
            let results = Mutex<[LeaseSweep]>([])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                do {
                    let sweep = try (index == 0 ? b : c).recoverExpiredLeases()
                    results.withLock { $0.append(sweep) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            let sweeps = results.withLock { $0 }
            let ended = sweeps.flatMap(\.ended)
            #expect(ended.map(\.identifier) == ["short"], "ended once, by one sweeper")
            #expect(ended.first?.outcome == .interrupted)
            #expect(ended.first?.stopReason?.contains("lease") == true)
            // The renewed run is still in progress (a sweeper may count the run the other is
            // ending meanwhile too: it reads before that one commits).
            #expect(sweeps.allSatisfy { (1...2).contains($0.runsInProgress) } && sweeps.contains { $0.runsInProgress == 1 }, "\(sweeps)")
            // One throttle strike for the app, in the sweep's transaction.
            let saved = try #require(try a.appSetting(app: Sample.app, name: AppSettingName.policyState))
            #expect(try JSONDecoder().decode(AppPolicyState.self, from: Data(saved.utf8)).throttle.strikes == 1)
            #expect(try a.pendingRequests().map(\.identifier) == ["short"], "restored")
            #expect(try a.run(RunID(1))?.outcome == .interrupted)
            // Its late end is refused: the run was already ended.
            #expect(throws: StoreError.self) { try a.recordRunFinished(Sample.finished(Sample.run(1, of: short), after: 2)) }
        }

        @Test("a continued-processing run whose lease runs out ends without its request coming back or a strike (the user's work ends with its process)")
        func expiredContinuedProcessingIsNotRestored() throws {
            let (server, database, stores) = try freshDatabase(replicas: ["a", "b"])
            let (a, b) = (stores[0], stores[1])
            let export = try #require(Sample.everyField.first { $0.kind == .continuedProcessing })
            try a.upsertRequests([export])
            #expect(try a.claimRun(Sample.run(1, of: export), lease: 1))
            _ = try server.query("SELECT pg_sleep(1.2)::text", in: database)
            let sweep = try b.recoverExpiredLeases()
            #expect(sweep.ended.map(\.id) == [RunID(1)])
            #expect(sweep.ended.first?.stopReason?.contains("continued processing begins at the user's action, so its request was not restored") == true, "\(sweep)")
            #expect(try a.pendingRequests().isEmpty, "not restored")
            #expect(try a.appSetting(app: export.app, name: AppSettingName.policyState) == nil, "no strike")
        }

        @Test("updates of one app setting from replicas at once each see the one before: none is lost, the first insert included; a run's end updates it in its transaction")
        func settingUpdatesAreAtomicAcrossReplicas() throws {
            let (_, _, replicas) = try freshDatabase(replicas: ["a", "b", "c"])
            let failures = Mutex<[String]>([])
            // Every replica adds 1 to a counter 40 times, starting at once on a row that does
            // not exist yet.
            DispatchQueue.concurrentPerform(iterations: replicas.count) { index in
                for _ in 0..<40 {
                    do {
                        try replicas[index].updateAppSetting(app: Sample.app, name: "counter") { String((Int($0 ?? "0") ?? 0) + 1) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            #expect(try replicas[0].appSetting(app: Sample.app, name: "counter") == "120")
            // An update that returns nil leaves the row as it is.
            try replicas[1].updateAppSetting(app: Sample.app, name: "counter") { _ in nil }
            #expect(try replicas[0].appSetting(app: Sample.app, name: "counter") == "120")
            // The end of a run and its update commit together; the end of a run this replica
            // never started is refused and updates nothing.
            let request = Sample.request("job")
            try replicas[0].upsertRequest(request)
            #expect(try replicas[0].claimRun(Sample.run(1, of: request), lease: 30))
            try replicas[0].recordRunFinished(Sample.finished(Sample.run(1, of: request), after: 2), updatingAppSetting: "counter") { String((Int($0 ?? "0") ?? 0) + 1) }
            #expect(try replicas[0].appSetting(app: Sample.app, name: "counter") == "121")
            #expect(try replicas[0].run(RunID(1))?.endedAt != nil)
            #expect(throws: StoreError.self) {
                try replicas[0].recordRunFinished(Sample.finished(Sample.run(9, of: request), after: 3), updatingAppSetting: "counter") { _ in "0" }
            }
            #expect(try replicas[0].appSetting(app: Sample.app, name: "counter") == "121", "the refused end updated nothing")
        }

        @Test("a request pending again is not overwritten by the restore of an expired run")
        func restoreKeepsANewerSubmission() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let a = try open(server, database, replica: "a")
            let first = Sample.request("job")
            try a.upsertRequest(first)
            #expect(try a.claimRun(Sample.run(1, of: first), lease: 1))
            let newer = Sample.request("job", submittedAt: Sample.now.addingTimeInterval(60))
            try a.upsertRequest(newer)
            _ = try server.query("SELECT pg_sleep(1.2)::text", in: database)
            #expect(try a.recoverExpiredLeases().ended.count == 1)
            #expect(try a.pendingRequests() == [newer])
        }

        @Test("every change of a pending row by another replica is heard; the store's own writes are not passed on; a listener that stops hears nothing more")
        func changesAreNotified() throws {
            let (_, _, a, b, heardByB, listener) = try listeningPair()
            defer { listener.stop() }
            let probe = Sample.request("probe")
            // b's own write is not news to b (its engine made it); a's write after it is.
            let own = Sample.request("own")
            heardByB.changes.withLock { $0.removeAll() }
            try b.upsertRequest(own)
            let marker = Sample.request("marker")
            try a.upsertRequest(marker)
            #expect(heardByB.wait { $0.mention(marker.key) })
            #expect(!heardByB.changes.withLock { $0.mention(own.key) }, "b heard its own write")
            heardByB.changes.withLock { $0.removeAll() }
            let job = Sample.request("job")
            try a.upsertRequest(job)
            #expect(heardByB.wait { $0.mention(job.key) })
            heardByB.changes.withLock { $0.removeAll() }
            #expect(try a.claimRun(Sample.run(1, of: job), lease: 30))
            #expect(heardByB.wait { $0.said(.removed(job.key, submittedAt: job.submittedAt)) }, "a claim deletes the row: heard")
            heardByB.changes.withLock { $0.removeAll() }
            try a.deleteRequest(probe.key)
            #expect(heardByB.wait { $0.said(.removed(probe.key, submittedAt: probe.submittedAt)) })
            listener.stop()
            heardByB.changes.withLock { $0.removeAll() }
            // Another listener hears the next write: by then b's would have too.
            let heardByC = Heard()
            let other = b.listen { heardByC.record($0) }
            defer { other.stop() }
            let after = Sample.request("after")
            #expect(heardByC.waitDoing({ try? a.upsertRequest(after) }) { $0.mention(after.key) })
            #expect(heardByB.changes.withLock { $0.isEmpty }, "stopped")
        }

        @Test("a listener whose server restarts says it is down, then back, and asks for everything to be read again")
        func aListenerSurvivesARestart() throws {
            let server = try TestPostgreSQLServer.start(name: "listener-restart")
            defer { server.remove() }
            // The writer is another replica (a store's own writes are not passed on).
            let (_, _, writer, listening, heard, listener) = try listeningPair(on: server)
            defer { listener.stop(); withExtendedLifetime(listening) {} }
            try server.stop()
            try server.start()
            // Down, then back, then "read everything" (notifications sent meanwhile are lost).
            #expect(heard.wait(timeout: .seconds(20)) { changes in
                guard let down = changes.firstIndex(of: .listening(down: true)),
                      let back = changes[down...].firstIndex(of: .listening(down: false)) else { return false }
                return changes[back...].contains(.everything)
            }, "\(heard.changes.withLock { $0 })")
            // The store's own connection learns of the restart on its next call (whose
            // outcome may then be unknown): the write is made again until it is heard.
            let second = Sample.request("second")
            #expect(heard.waitDoing({ try? writer.upsertRequest(second) }) { $0.mention(second.key) }, "listening again")
        }

        @Test("word of a change is read as the trigger writes it: a submission, a removal, a key; anything else asks for everything")
        func payloads() {
            typealias Payload = PostgreSQLColumns.Payload
            let key = RequestKey(app: AppID("com.example.app"), identifier: "com.example.app.refresh")
            #expect(Payload.change(from: #"["submitted", "com.example.app", "com.example.app.refresh", "refresh", null, "762843967.5", "t", "f", null]"#)
                    == .upserted(PendingRequest(app: key.app, identifier: key.identifier, kind: .appRefresh, requiresNetworkConnectivity: true, submittedAt: Date(timeIntervalSinceReferenceDate: 762_843_967.5))))
            #expect(Payload.change(from: #"["removed", "com.example.app", "com.example.app.refresh", "0.1"]"#) == .removed(key, submittedAt: Date(timeIntervalSinceReferenceDate: 0.1)))
            #expect(Payload.change(from: #"["com.example.app", "com.example.app.refresh"]"#) == .changed(key))
            // A word of ours it cannot read (a kind it does not know): its key, read again.
            #expect(Payload.change(from: #"["submitted", "com.example.app", "com.example.app.refresh", "teleport", null, "1", "t", "f", null]"#) == .changed(key))
            #expect(Payload.change(from: #"["removed", "com.example.app", "com.example.app.refresh", "NaN"]"#) == .changed(key))
            for garbage in ["", "[1, 2]", #"["only one"]"#, "{}", "not json", "[null, null]"] {
                #expect(Payload.change(from: garbage) == nil, "\(garbage)")
            }
        }

        /// Replica a's store, and what replica b's listener heard, once b is listening
        /// (a probe request of a's was heard; stop the listener).
        private func listeningPair(on given: TestPostgreSQLServer? = nil) throws -> (server: TestPostgreSQLServer, database: String, a: PostgreSQLStore, b: PostgreSQLStore, heardByB: Heard, listener: any SharedStoreListener) {
            let server = try given ?? TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let a = try open(server, database, replica: "a")
            let b = try open(server, database, replica: "b")
            let heardByB = Heard()
            let listener = b.listen { heardByB.record($0) }
            let probe = Sample.request("probe")
            guard heardByB.waitDoing({ try? a.upsertRequest(probe) }, { $0.mention(probe.key) }) else {
                listener.stop()
                throw StoreError(code: .unavailable, path: nil, message: "replica b never heard replica a")
            }
            return (server, database, a, b, heardByB, listener)
        }

        @Test("the trigger's word carries each submission exactly, and which submission a claim or a cancellation removed; too long, the key alone; longer, read everything")
        func wordCarriesTheRow() throws {
            let (_, _, a, b, heardByB, listener) = try listeningPair()
            defer { listener.stop(); withExtendedLifetime(b) {} }
            var odd = Sample.request("quote\"d, ünïcødé ✓")
            odd.earliestBeginDate = Date(timeIntervalSinceReferenceDate: 1.0 / 3.0)
            odd.requiresNetworkConnectivity = true
            odd.submittedAt = Date(timeIntervalSinceReferenceDate: 762_843_967.123_456_7)
            try a.upsertRequest(odd)
            #expect(heardByB.wait { $0.said(.upserted(odd)) }, "\(heardByB.changes.withLock { $0 })")
            #expect(try a.claimRun(Sample.run(1, of: odd), lease: 30))
            #expect(heardByB.wait { $0.said(.removed(odd.key, submittedAt: odd.submittedAt)) })
            // Too long for the row: the key alone. Longer than the key can be: everything.
            let long = Sample.request(String(repeating: "x", count: 7_850))
            try a.upsertRequest(long)
            #expect(heardByB.wait { $0.said(.changed(long.key)) })
            let huge = Sample.request(String(repeating: "z", count: 8_000))
            heardByB.changes.withLock { $0.removeAll() }
            try a.upsertRequest(huge)
            #expect(heardByB.wait { $0.contains(.everything) })
        }

        @Test("every writer is heard, SQL from outside included; a lost claim says nothing")
        func everyWriterIsHeard() throws {
            let (server, database, a, b, heardByB, listener) = try listeningPair()
            defer { listener.stop() }
            let probe = Sample.request("probe")
            // An operator's SQL: the trigger notifies.
            try server.administer(
                "INSERT INTO bgtask_pending_requests (app, identifier, kind, submitted_at, requires_network, requires_power) VALUES ('\(Sample.app.rawValue)', 'by-hand', 'processing', 1.5, false, false)",
                in: database)
            #expect(heardByB.wait { $0.mention(RequestKey(app: Sample.app, identifier: "by-hand")) })
            // A session that writes rounded floats still gives exact word.
            try server.administer(
                "SET extra_float_digits = 0; INSERT INTO bgtask_pending_requests (app, identifier, kind, submitted_at, requires_network, requires_power) VALUES ('\(Sample.app.rawValue)', 'third', 'processing', 1.0::float8 / 3, false, true)",
                in: database)
            #expect(heardByB.wait { $0.said(.upserted(PendingRequest(app: Sample.app, identifier: "third", kind: .processing, requiresExternalPower: true, submittedAt: Date(timeIntervalSinceReferenceDate: 1.0 / 3)))) },
                    "\(heardByB.changes.withLock { $0 })")
            // TRUNCATE, which row triggers do not see: read everything.
            heardByB.changes.withLock { $0.removeAll() }
            try server.administer("TRUNCATE bgtask_pending_requests", in: database)
            #expect(heardByB.wait { $0.contains(.everything) })
            try a.upsertRequest(probe)
            // Deleting every request of the app: one word per row.
            heardByB.changes.withLock { $0.removeAll() }
            try a.deleteAllRequests(app: Sample.app)
            #expect(heardByB.wait { $0.said(.removed(probe.key, submittedAt: probe.submittedAt)) }, "deleting every request of the app is heard through the trigger")
            // A claim that loses notifies nothing.
            let job = Sample.request("job")
            try b.upsertRequest(job)
            #expect(try b.claimRun(Sample.run(1, of: job), lease: 30))
            heardByB.changes.withLock { $0.removeAll() }
            #expect(try a.claimRun(Sample.run(1, of: job), lease: 30) == false)
            let marker = Sample.request("marker")
            try a.upsertRequest(marker)
            #expect(heardByB.wait { $0.mention(marker.key) })
            #expect(!heardByB.changes.withLock { $0.mention(job.key) }, "\(heardByB.changes.withLock { $0 })")
        }

        @Test("the loading read moves rows written badly since the open to the quarantine and returns the rest in order")
        func loadingReadQuarantinesWhatCannotBeRead() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let a = try open(server, database, replica: "a")
            let good = [Sample.request("good-b", submittedAt: Sample.now.addingTimeInterval(2)), Sample.request("good-a", submittedAt: Sample.now.addingTimeInterval(1))]
            for request in good { try a.upsertRequest(request) }
            try a.upsertRequest(Sample.request("other", app: Sample.otherApp))
            // Another program writes a kind no build knows, and a date that is not finite.
            try server.administer(
                "INSERT INTO bgtask_pending_requests (app, identifier, kind, submitted_at, requires_network, requires_power) "
                    + "VALUES ('\(Sample.app)', 'teleporter', 'teleport', 0, false, false), ('\(Sample.app)', 'forever', 'appRefresh', 'Infinity', false, false), "
                    + "('\(Sample.otherApp)', 'elsewhere', 'teleport', 0, false, false)",
                in: database)
            #expect(throws: StoreError.self) { try a.pendingRequests(app: Sample.app) }
            let read = try a.loadPendingRequests(app: Sample.app, now: Sample.now)
            #expect(read.loaded == good.reversed(), "the readable rows, by submission")
            #expect(Set(read.quarantined.map(\.identifier)) == ["teleporter", "forever", "elsewhere"], "another app's bad row goes in the same pass, and is reported")
            #expect(read.quarantined.contains { $0.identifier == "teleporter" && $0.reason.contains("teleport") })
            #expect(Set(try a.quarantinedRequests().map(\.identifier)) == ["teleporter", "forever", "elsewhere"], "kept, not deleted")
            #expect(try a.pendingRequests(app: Sample.otherApp).map(\.identifier) == ["other"])
            #expect(try a.pendingRequests(app: Sample.app) == good.reversed(), "the plain read works again")
            #expect(try a.loadPendingRequests(app: nil, now: Sample.now).quarantined.isEmpty)
        }

        @Test("the pending requests of several keys are read at once, whatever characters the keys hold")
        func pendingRequestsByKey() throws {
            let server = try TestPostgreSQLServer.shared()
            let database = try server.createDatabase()
            let a = try open(server, database, replica: "a")
            let odd = ["quote\"d", "back\\slash", "comma,{brace}", "ünïcødé ✓", "'single'"].map { Sample.request($0) }
            for request in odd { try a.upsertRequest(request) }
            let keys = Set(odd.map(\.key) + [Sample.request("absent").key])
            #expect(Set(try a.pendingRequests(keys: keys)) == Set(odd))
            #expect(try a.pendingRequests(keys: []).isEmpty)
        }
    }
}

extension SharedStoreChange {
    /// Whether this change names `key`.
    func mention(_ key: RequestKey) -> Bool {
        if case .requests(let changes) = self { return changes.contains { $0.key == key } }
        return false
    }
}

extension Array where Element == SharedStoreChange {
    /// Whether one of the changes names `key`.
    func mention(_ key: RequestKey) -> Bool { contains { $0.mention(key) } }

    /// Whether one of the changes says exactly `change`.
    func said(_ change: SharedRequestChange) -> Bool {
        contains { if case .requests(let changes) = $0 { changes.contains(change) } else { false } }
    }
}
