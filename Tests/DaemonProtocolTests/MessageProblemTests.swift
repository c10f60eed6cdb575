@testable import DaemonProtocol
import Foundation
import SchedulerCore
import Testing

/// A frame that is not a request is diagnosed in words naming the field, with the
/// request's number when it can be read (the daemon answers that request `invalid`).
@Suite struct MessageProblemTests {
    @Test func aNotificationResponseNamesWhatIsWrongWithIt() {
        #expect(NotificationResponseRequest(notification: "reminder", text: "on my way\nsoon\tok").problem == nil, "line feeds and tabs in text")
        #expect(NotificationResponseRequest(notification: "").problem == "the notification identifier is empty")
        #expect(NotificationResponseRequest(notification: "n", action: "").problem == "the action identifier is empty")
        #expect(NotificationResponseRequest(notification: "a\u{1B}b").problem == "the notification identifier \"a\\u001Bb\" holds a control character")
        #expect(NotificationResponseRequest(notification: "n", action: String(repeating: "x", count: 1_025)).problem == "the action identifier is 1025 bytes; at most 1024")
        #expect(NotificationResponseRequest(notification: "n", text: String(repeating: "x", count: 4_097)).problem == "the text is 4097 bytes; at most 4096")
        #expect(NotificationResponseRequest(notification: "n", text: "a\rb").problem == "the text holds a control character other than a line feed or a tab")
    }

    @Test(arguments: [
        (#"{"id":-1,"request":{"admin":{"_0":{"status":{}}}}}"#, nil, "'id' must be a whole number from 1 to 18446744073709551615, got -1"),
        // 0 is the number of the connection's own reply (MessageLink.connectionReplyID).
        (#"{"id":0,"request":{"admin":{"_0":{"status":{}}}}}"#, nil, "'id' must be a whole number from 1 to 18446744073709551615, got 0"),
        (#"{"id":-0,"request":{"admin":{"_0":{"status":{}}}}}"#, nil, "'id' must be a whole number from 1 to 18446744073709551615, got "),
        (#"{"id":0,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#, nil, "'id' must be a whole number from 1 to"),
        // Not JSON: the number at the top level is still read, by the validating scan, when
        // it comes before the fault (as every writer of the protocol puts it).
        (#"{"id":11,"request":{"hello":{"_0":{"role":"admin","role":"app"}}}}"#, 11, "duplicate key \"role\""),
        (#"{"id":12,"request":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}", 12, "the message is not valid JSON: "),
        (#"{"id":13,"request":{"hello":{"_0":{"role":"\ud800"}}}}"#, 13, "the message is not valid JSON: "),
        ("{\"id\":14,\"request\":{\"hello\":{\"_0\":{\"role\":\"a\u{1B}\"}}}}", 14, "the message is not valid JSON: "),
        (#" {"request":{"admin":{"_0":{"status":{}}}}, "id" : 15 } trailing"#, 15, "the message is not valid JSON: "),
        (#"{"id":16,"request":{"admin":{"_0":{"status":{}}}}}{"id":17}"#, 16, "the message is not valid JSON: "),
        (#"{"id":1.5,"request":{"admin":{"_0":{"status":{}}}}}"#, nil, "got 1.5"),
        (#"{"id":18446744073709551616,"request":{"admin":{"_0":{"status":{}}}}}"#, nil, "'id' must be a whole number"),
        (#"{"id":"7","request":{"admin":{"_0":{"status":{}}}}}"#, nil, #"got "7""#),
        (#"{"request":{"admin":{"_0":{"status":{}}}}}"#, nil, "no 'id'"),
        (#"[1,2]"#, nil, "a message must be a JSON object"),
        (#"{"id":1,"request":{},"x":2}"#, nil, #"unknown key "x""#),
        (#"{"id":3}"#, 3, "no 'request'"),
        (#"{"id":3,"request":{"king":{"_0":{}}}}"#, 3, #"unknown kind of request "king": expected hello, app, admin"#),
        (#"{"id":3,"request":{"admin":{"_0":{"nosuch":{}}}}}"#, 3, #"unknown admin request "nosuch"; the admin requests are: status, apps"#),
        (#"{"id":3,"request":{"app":{"_0":{"nosuch":{}}}}}"#, 3, #"unknown app request "nosuch"; the app requests are: finishedLaunching"#),
        (#"{"id":4,"request":{"hello":{"_0":{"role":"king"}}}}"#, 4, #"at request.hello.role: unknown value "king""#),
        (#"{"id":4,"request":{"hello":{"_0":{}}}}"#, 4, "at request.hello: the key 'role' is missing"),
        (#"{"id":5,"request":{"admin":{"_0":{"uninstall":{"app":5}}}}}"#, 5, "at request.admin._0.uninstall.app: expected a string"),
        (#"{"id":6,"request":{"app":{"_0":{"submit":{"_0":"x"}}}}}"#, 6, "at request.app._0.submit._0: expected an object"),
        (#"{"id":7,"request":{"admin":{"status":{}}}}"#, 7, "'request.admin' must be an object with one key, '_0'"),
        ("{\"id\":8,\"request\":{\"admin\":{\"_0\":{\"no\\u001b[2Jsuch\":{}}}}}", 8, "\\u001B"),
        // Numbers no field can hold: Foundation says only "not valid JSON", with no place.
        (#"{"id":9,"request":{"app":{"_0":{"taskCompleted":{"run":9223372036854775808,"success":true}}}}}"#, 9, "at request.app._0.taskCompleted.run: expected a whole number within the field's range"),
        (#"{"id":10,"request":{"app":{"_0":{"taskCompleted":{"run":1.5,"success":true}}}}}"#, 10, "at request.app._0.taskCompleted.run: expected a whole number"),
        // Grammatical JSON no Double holds: unreadable, at its key, not "not valid JSON".
        (#"{"id":11,"request":{"app":{"_0":{"taskCompleted":{"run":1e400,"success":true}}}}}"#, 11, "the message cannot be read: line 1, column 57 (at $.request.app._0.taskCompleted.run): expected a number within the range of a Double"),
    ] as [(String, UInt64?, String)])
    func aMalformedRequestIsNamed(payload: String, id: UInt64?, expected: String) {
        // It is malformed: the decoder refuses it.
        #expect(throws: MessageDecodingError.self) { try MessageCoding.decode(ClientEnvelope.self, from: Data(payload.utf8)) }
        let problem = MessageProblem.diagnose(clientPayload: Data(payload.utf8))
        #expect(problem.id == id, "\(problem)")
        #expect(problem.message.contains(expected), "\(problem.message)")
        #expect(!problem.message.unicodeScalars.contains { $0.value < 0x20 }, "a control character reached the message: \(problem.message)")
        for word in ["CodingKeys", "DecodingError", "ClientRole", "Cannot initialize"] {
            #expect(!problem.message.contains(word), "Swift's words: \(problem.message)")
        }
    }

    /// A key the request does not have, which JSONDecoder would ignore, is refused naming
    /// the key and where it is, whether the plain reader or JSONDecoder read the rest.
    @Test(arguments: [
        // At the top level the frame is not an envelope of the protocol: closed unanswered.
        (#"{"id":1,"extra":true,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#, nil, #"unknown key "extra" in the message"#),
        (#"{"id":2,"request":{"admin":{"_0":{"install":{"manifestPath":"/m","force":true}}}}}"#, 2, #"unknown key "force" in request.admin._0.install"#),
        (#"{"id":3,"request":{"admin":{"_0":{"status":{"verbose":1}}}}}"#, 3, #"unknown key "verbose" in request.admin._0.status"#),
        (#"{"id":4,"request":{"hello":{"_0":{"role":"admin","token":"t"}}}}"#, 4, #"unknown key "token" in request.hello._0"#),
        (#"{"id":5,"request":{"app":{"_0":{"cancel":{"identifier":"x","all":true}}}}}"#, 5, #"unknown key "all" in request.app._0.cancel"#),
        (#"{"id":6,"request":{"app":{"_0":{"submit":{"_0":{"app":"a","identifier":"i","kind":"refresh","requiresNetworkConnectivity":false,"requiresExternalPower":false,"submittedAt":1,"priority":9}}}}}}"#, 6, #"unknown key "priority" in request.app._0.submit._0"#),
        (#"{"id":7,"request":{"admin":{"_0":{"respond":{"app":"a.b","response":{"notification":"n","action":"open","txet":"hi"}}}}}}"#, 7, #"unknown key "txet" in request.admin._0.respond.response"#),
        (#"{"id":8,"request":{"app":{"_0":{"finishedLaunching":{"registered":["a"],"x\u001b":1}}}}}"#, 8, #"unknown key "x\u001B""#),
    ] as [(String, UInt64?, String)])
    func aKeyTheRequestDoesNotHaveIsRefused(payload: String, id: UInt64?, expected: String) throws {
        let data = Data(payload.utf8)
        // JSONDecoder alone reads it, ignoring the key: that is what must not pass.
        #expect(try MessageCoding.foundationDecoded(ClientEnvelope.self, from: data).id > 0)
        #expect(throws: MessageDecodingError.self) { try MessageCoding.decode(ClientEnvelope.self, from: data) }
        do {
            _ = try MessageCoding.decode(ClientEnvelope.self, from: data)
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
        let problem = MessageProblem.diagnose(clientPayload: data)
        #expect(problem.id == id, "answered when inside the request: \(problem)")
        #expect(problem.message.contains(expected), "\(problem.message)")
        #expect(!problem.message.unicodeScalars.contains { $0.value < 0x20 }, "\(problem.message)")
    }

    /// What every writer of the protocol sends has no key its request lacks: each request
    /// of every case, with its optional fields set and not, reads back through the check.
    @Test func everyRequestAsWrittenPassesTheCheck() throws {
        let date = Date(timeIntervalSince1970: 1_000)
        var full = PendingRequest(app: AppID("com.example.app"), identifier: "com.example.app.x", kind: .continuedProcessing, earliestBeginDate: date,
                                  requiresNetworkConnectivity: true, requiresExternalPower: true, protectionTypeOfRequiredData: "complete",
                                  continuedProcessing: ContinuedProcessingOptions(title: "t", subtitle: "s", strategy: .queue, requiredResources: ["gpu"]), submittedAt: date)
        full.remoteNotificationPayload = "{}"
        let plain = PendingRequest(app: AppID("com.example.app"), identifier: "com.example.app.y", kind: .appRefresh, submittedAt: date)
        var terms = RetryPolicyTerms(.fixed(60))
        terms.maximumDelay = 120
        let requests: [ClientRequest] = [
            .hello(Hello(role: .app, app: AppID("com.example.app"))), .hello(Hello(role: .admin)),
            .app(.finishedLaunching(registered: ["a", "b"])), .app(.submit(full)), .app(.submit(plain)),
            .app(.setRetryPolicy(identifier: "a.b", policy: terms)), .app(.setRetryPolicy(identifier: "a.b", policy: nil)),
            .app(.checkpointSet(key: "k", value: Data([1, 2, 3]))), .app(.lifecycle(.forceQuit)),
            .admin(.pending(app: AppID("a.b"))), .admin(.pending(app: nil)), .admin(.push(app: AppID("a.b"), payload: #"{"x":1}"#)),
            .admin(.respond(app: AppID("a.b"), response: NotificationResponseRequest(notification: "n", action: "open", text: "hi"))),
        ]
        for request in requests {
            let envelope = ClientEnvelope(id: 9, request: request)
            for payload in [try MessageCoding.encode(envelope), try MessageCoding.jsonEncoded(envelope)] {
                #expect(MessageCoding.unknownKey(in: payload, of: envelope) == nil, "\(String(decoding: payload, as: UTF8.self))")
                #expect(try MessageCoding.decode(ClientEnvelope.self, from: payload) == envelope)
            }
        }
    }

    /// A retry policy from the wire is checked field by field; a cap below the first delay
    /// (which RetryPolicy would silently raise) is refused naming both.
    @Test func retryTermsAreChecked() {
        var terms = RetryPolicyTerms(.fixed(60))
        #expect((try? terms.policy().get()) == .fixed(60))
        terms.maximumDelay = 30
        guard case .failure(let failure) = terms.policy() else { Issue.record("a cap below the first delay was accepted"); return }
        #expect(failure.code == .invalid && failure.message.contains("maximumDelay (30.0 s) must not be below initialDelay (60.0 s)"), "\(failure)")
        terms = RetryPolicyTerms(.fixed(60))
        terms.multiplier = .nan
        #expect((try? terms.policy().get()) == nil)
    }

    /// What the scan for the number of a message that is not JSON refuses to guess: each
    /// of these is answered nothing (nil), never with a number the peer did not give.
    @Test(arguments: [
        #"{"id":1,"id":2,"request":{}"#,                       // twice at the top level
        #"{"id":1,"request":{"admin":{"_0":{"status":{}}}},"id":1}"#, // twice, even the same number
        #"{"request":{"id":5},"x":[}"#,                        // only inside another value
        #"{"x":"\"id\":5","x":[}"#,                             // only inside a string
        #"{"id":01,"request":["#, #"{"id":1.5,"request":["#, #"{"id":1e2,"request":["#, #"{"id":-3,"request":["#,
        #"{"id":"7","request":["#, #"{"id":0,"request":["#, #"{"id":18446744073709551616,"request":["#,
        #"{"id":7"#,                                           // nothing after the number
        #"{"id":12 34,"request":["#,                           // run on: neither 12 nor 1234
        #"[{"id":7}"#, #""id":7"#, "", "{",
        // After the fault: past it, what looks like a member may be inside a broken value.
        #"{"request":{"hello":{"_0":{"role":"admin","role":"app"}}},"id":9}"#,
        #"{"request":"a\q","id":9}"#,
        "{\"request\":\"a\n\",\"id\":9}",
    ])
    func theScanForTheNumberDoesNotGuess(payload: String) {
        #expect(MessageProblem.diagnose(clientPayload: Data(payload.utf8)).id == nil, "\(payload)")
    }

    /// The number is read by the one validating scan of the payload, wherever it stands
    /// before the fault: after 64 KiB of other members, before nesting far beyond the limit,
    /// after values holding brackets and quotes in strings; spelled with escapes, it is the
    /// key `id` as JSON reads it.
    @Test func theNumberBeforeTheFaultIsRead() {
        let filler = "\"x\":\"" + String(repeating: "a", count: 64 * 1_024) + "\","
        let cases: [(String, UInt64)] = [
            ("{" + filler + "\"id\":7,\"request\":[}", 7),
            ("{\"id\":7,\"request\":" + String(repeating: "[", count: 500_000), 7),
            ("{\"request\":{\"a\":[1,{\"b\":\"}]\\\"\"}],\"c\":null},\"id\":8 ,\"z\":[", 8),
            (#"{"\u0069d":7,"request":["#, 7),
        ]
        for (payload, id) in cases {
            let problem = MessageProblem.diagnose(clientPayload: Data(payload.utf8))
            #expect(problem.id == id, "\(payload.prefix(80)): \(problem)")
            #expect(problem.message.hasPrefix("the message is not valid JSON"), "\(problem.message)")
        }
    }

    @Test func notJSONIsSaidSo() {
        let problem = MessageProblem.diagnose(clientPayload: Data("{\"id\":1,".utf8))
        // Cut short after a whole number: the number is the peer's, so it is answered.
        #expect(problem.id == 1)
        #expect(problem.message.hasPrefix("the message is not valid JSON"))
    }

    /// The lists the refusal of an unknown request names are the wire's names of every case.
    @Test func theListsOfRequestNamesAreTheWiresNames() throws {
        let date = Date(timeIntervalSince1970: 0)
        let request = PendingRequest(app: AppID("com.example.app"), identifier: "com.example.app.x", kind: .processing, earliestBeginDate: nil,
                                     requiresNetworkConnectivity: false, requiresExternalPower: false, submittedAt: date)
        let app: [AppRequest] = [
            .finishedLaunching(registered: []), .submit(request), .cancel(identifier: "a.b"), .cancelAll, .pending,
            .taskCompleted(run: RunID(1), success: true), .expirationDelivered(run: RunID(1), handlerWasSet: true),
            .progressSampled(run: RunID(1), completedUnitCount: 1), .launchFailed(run: RunID(1), reason: ""),
            .simulateLaunch(identifier: "a.b"), .simulateExpiration(identifier: "a.b"), .setBackgroundRefresh(enabled: true),
            .backgroundRefreshStatus, .lifecycle(.foreground), .assertionsHeld(true), .setRetryPolicy(identifier: "a.b", policy: nil),
            .checkpointGet(key: "k"), .checkpointSet(key: "k", value: Data()), .checkpointRemove(key: "k"), .checkpointKeys,
        ]
        let admin: [AdminRequest] = [
            .status, .apps, .install(manifestPath: "/m"), .uninstall(app: AppID("a.b")), .pending(app: nil), .run(app: AppID("a.b"), identifier: "a.b"),
            .expire(app: AppID("a.b"), identifier: "a.b"), .why(app: AppID("a.b"), identifier: "a.b"), .conditions, .policy,
            .setBackgroundRefresh(app: AppID("a.b"), enabled: true), .open(app: AppID("a.b")), .background(app: AppID("a.b")),
            .forceQuit(app: AppID("a.b")), .push(app: AppID("a.b"), payload: nil),
            .respond(app: AppID("a.b"), response: NotificationResponseRequest(notification: "n")),
        ]
        #expect(app.map(\.caseName) == AppRequest.caseNames)
        #expect(admin.map(\.caseName) == AdminRequest.caseNames)
        for request in app { #expect(try wireName(.app(request)) == request.caseName) }
        for request in admin { #expect(try wireName(.admin(request)) == request.caseName) }
    }

    /// The key under which JSONEncoder writes the request: `{"request":{"app":{"_0":{NAME:...}}}}`.
    private func wireName(_ request: ClientRequest) throws -> String? {
        let data = try MessageCoding.jsonEncoded(ClientEnvelope(id: 1, request: request))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let role = (object?["request"] as? [String: Any])?.values.first as? [String: Any]
        return (role?["_0"] as? [String: Any])?.keys.first
    }
}
