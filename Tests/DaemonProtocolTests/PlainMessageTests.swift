@testable import DaemonProtocol
import Foundation
import SchedulerCore
import Testing

/// The frequent messages read without Codable read as `StrictJSON` and `JSONDecoder` read
/// them, and anything the plain reader does not take on is left to those two.
@Suite struct PlainMessageTests {
    static let date = Date(timeIntervalSince1970: 1_796_096_541.190_512_7)

    static var clientMessages: [ClientEnvelope] {
        ClientEnvelopeWriterTests.written + [
            ClientEnvelope(id: 3, request: .app(.taskCompleted(run: RunID(42), success: true))),
            ClientEnvelope(id: 4, request: .app(.taskCompleted(run: RunID(Int64.max), success: false))),
            ClientEnvelope(id: 5, request: .app(.cancel(identifier: "com.example.app.refresh"))),
            ClientEnvelope(id: 6, request: .app(.cancelAll)),
            ClientEnvelope(id: 7, request: .admin(.status)),
        ]
    }

    static let daemonMessages: [DaemonEnvelope] = [
        .reply(id: 1, .done(nil)),
        .reply(id: UInt64.max, .done("installed com.example.app")),
        .reply(id: 2, .done("quote \" back\\slash\ttab \u{01} é 🚀")),
        .reply(id: 3, .welcome(Welcome(daemonPID: 4242))),
        .reply(id: 4, .welcome(Welcome(daemonPID: Int32.max, backgroundRefreshEnabled: false))),
        .reply(id: 5, .failed(DaemonFailure(.submitRejected, "too many", rejection: .tooManyPendingTaskRequests))),
        .reply(id: 6, .flag(true)),
        .push(.quit(reason: "uninstalled")),
        .push(.launch(RunRecord(id: RunID(7), request: PendingRequest(
            app: AppID("com.example.app"), identifier: "com.example.app.refresh", kind: .appRefresh,
            earliestBeginDate: date.addingTimeInterval(900), submittedAt: date), startedAt: date.addingTimeInterval(901)), budget: 30)),
        .push(.launch(RunRecord(id: RunID(Int64.max), request: PendingRequest(
            app: AppID("com.example.app"), identifier: "com.example.app.clean", kind: .processing,
            requiresNetworkConnectivity: true, requiresExternalPower: true, submittedAt: date), startedAt: date), budget: nil)),
        .push(.expire(run: RunID(7), reason: "budget of 30 s exhausted")),
        .push(.terminate(run: RunID(8), reason: "not completed within the 2 s grace period")),
        .push(.finished(RunRecord(id: RunID(9), request: PendingRequest(
            app: AppID("com.example.app"), identifier: "com.example.app.refresh", kind: .appRefresh, submittedAt: date),
            startedAt: date, endedAt: date.addingTimeInterval(3), outcome: .success, success: true))),
        .push(.deviceConditions(fullConditions)),
        .push(.deviceConditions(.favorable)),
        .push(.deviceConditions(Conditions(externalPower: false, networkAvailable: false, batteryLevel: 0, batteryState: .unknown,
                                           thermalState: .critical, networkMetered: false, deviceIdle: false, cpuPressure: 1))),
        .push(.deviceConditions(Conditions(externalPower: true, networkAvailable: true, batteryLevel: 1e-300, cpuPressure: 0.1 + 0.2))),
    ]

    /// Conditions with every field given.
    static let fullConditions = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.42, batteryState: .discharging,
                                           lowPowerMode: true, thermalState: .serious, networkMetered: true, deviceIdle: true, cpuPressure: 0.25)

    /// Both decoders of a client payload: the plain one (nil when it leaves it) and
    /// JSONDecoder's (nil when it refuses).
    static func bothReadings(client payload: Data) -> (plain: ClientEnvelope?, foundation: ClientEnvelope?) {
        (PlainMessageReader.clientEnvelope(payload), try? MessageCoding.foundationDecoded(ClientEnvelope.self, from: payload))
    }

    static func bothReadings(daemon payload: Data) -> (plain: DaemonEnvelope?, foundation: DaemonEnvelope?) {
        (PlainMessageReader.daemonEnvelope(payload), try? MessageCoding.foundationDecoded(DaemonEnvelope.self, from: payload))
    }

    @Test(arguments: clientMessages)
    func clientMessagesReadAsJSONDecoderReadsThem(_ envelope: ClientEnvelope) throws {
        for payload in [try MessageCoding.encode(envelope), try MessageCoding.jsonEncoded(envelope)] {
            let (plain, foundation) = Self.bothReadings(client: payload)
            let text = String(decoding: payload, as: UTF8.self)
            #expect(foundation != nil, "\(text)")
            if let plain { #expect(plain == foundation, "\(text)") }
            #expect(try MessageCoding.decode(ClientEnvelope.self, from: payload) == foundation)
        }
    }

    /// What an app writes on every launch and submit is read without JSONDecoder.
    @Test func theFrequentMessagesTakeThePlainPath() throws {
        let request = PendingRequest(app: AppID("com.example.app"), identifier: "com.example.app.refresh", kind: .appRefresh,
                                     earliestBeginDate: Self.date.addingTimeInterval(900), submittedAt: Self.date)
        let frequent: [ClientEnvelope] = [
            ClientEnvelope(id: 1, request: .hello(Hello(role: .app, app: AppID("com.example.app")))),
            ClientEnvelope(id: 2, request: .app(.finishedLaunching(registered: ["com.example.app.refresh", "com.example.app.clean"]))),
            ClientEnvelope(id: 3, request: .app(.submit(request))),
            ClientEnvelope(id: 4, request: .app(.taskCompleted(run: RunID(7), success: true))),
        ]
        for envelope in frequent {
            #expect(PlainMessageReader.clientEnvelope(try MessageCoding.encode(envelope)) == envelope)
        }
        let run = RunRecord(id: RunID(7), request: request, startedAt: Self.date.addingTimeInterval(901))
        for envelope in [DaemonEnvelope.reply(id: 3, .done(nil)), .reply(id: 1, .welcome(Welcome(daemonPID: 9, backgroundRefreshEnabled: true))),
                         .push(.launch(run, budget: 30)), .push(.launch(run, budget: nil)),
                         .push(.expire(run: RunID(7), reason: "budget of 30 s exhausted")), .push(.terminate(run: RunID(7), reason: "overran")),
                         .push(.deviceConditions(Self.fullConditions)), .push(.deviceConditions(.favorable))] {
            #expect(PlainMessageReader.daemonEnvelope(try MessageCoding.encode(envelope)) == envelope, "\(envelope)")
        }
    }

    @Test(arguments: daemonMessages)
    func daemonMessagesReadAsJSONDecoderReadsThem(_ envelope: DaemonEnvelope) throws {
        let written = try MessageCoding.encode(envelope)
        for payload in [written, try MessageCoding.jsonEncoded(envelope)] {
            let (plain, foundation) = Self.bothReadings(daemon: payload)
            let text = String(decoding: payload, as: UTF8.self)
            #expect(foundation == envelope, "\(text)")
            if let plain { #expect(plain == foundation, "\(text)") }
            #expect(try MessageCoding.decode(DaemonEnvelope.self, from: payload) == envelope)
        }
        if DaemonEnvelopeWriter.encode(envelope) != nil, !envelope.hasEscapedText {
            #expect(PlainMessageReader.daemonEnvelope(written) == envelope)
        }
    }

    /// The name of `push` on the wire; a new case fails to compile here until named.
    static func wireName(_ push: AppPush) -> String {
        switch push {
        case .launch: "launch"
        case .expire: "expire"
        case .terminate: "terminate"
        case .finished: "finished"
        case .sampleProgress: "sampleProgress"
        case .quit: "quit"
        case .foreground: "foreground"
        case .background: "background"
        case .deviceConditions: "deviceConditions"
        case .notificationResponse: "notificationResponse"
        }
    }

    /// ``AppPush/names`` (what an app does not pass over) is every case, as JSONEncoder names them.
    @Test func thePushNamesAreEveryCase() throws {
        let run = RunRecord(id: RunID(1), request: PendingRequest(app: AppID("a"), identifier: "a.b", kind: .appRefresh, submittedAt: Self.date), startedAt: Self.date)
        let every: [AppPush] = [.launch(run, budget: 30), .expire(run: RunID(1), reason: "r"), .terminate(run: RunID(1), reason: "r"), .finished(run),
                                .sampleProgress(run: RunID(1)), .quit(reason: "r"), .foreground, .background, .deviceConditions(.favorable),
                                .notificationResponse(NotificationResponseRequest(notification: "n", action: "a", text: "t"))]
        for push in every {
            let object = try #require(try JSONSerialization.jsonObject(with: MessageCoding.jsonEncoded(push)) as? [String: Any])
            #expect(Array(object.keys) == [Self.wireName(push)])
        }
        #expect(Set(every.map(Self.wireName)) == AppPush.names)
    }

    /// The writer names every stored property of what it writes.
    @Test func theDaemonWriterKnowsEveryFieldOfWhatItWrites() {
        #expect(Mirror(reflecting: Welcome(daemonPID: 1)).children.compactMap(\.label) == ["daemonPID", "backgroundRefreshEnabled"],
                "Welcome changed: update DaemonEnvelopeWriter and PlainMessageReader")
        let request = PendingRequest(app: AppID("a"), identifier: "a.b", kind: .appRefresh, submittedAt: Self.date)
        #expect(Mirror(reflecting: RunRecord(id: RunID(1), request: request, startedAt: Self.date)).children.compactMap(\.label) == [
            "id", "request", "startedAt", "endedAt", "outcome", "success", "stopReason", "cpuTime", "peakMemoryBytes",
            "energyJoules", "measuredBy", "bytesRead", "bytesWritten",
        ], "RunRecord changed: update DaemonEnvelopeWriter's launch (it must refuse a record it cannot write whole)")
        #expect(Mirror(reflecting: Conditions.favorable).children.compactMap(\.label) == [
            "externalPower", "networkAvailable", "batteryLevel", "batteryState", "lowPowerMode", "thermalState",
            "networkMetered", "deviceIdle", "cpuPressure",
        ], "Conditions changed: update PlainJSONWriter.conditions and PlainMessageReader.conditions")
    }

    /// Forms the plain reader leaves to JSONDecoder: it answers nil, and MessageCoding then
    /// reads or refuses them as before.
    @Test(arguments: [
        // a key twice: StrictJSON refuses it
        #"{"id":1,"id":2,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#,
        // an optional written as null
        #"{"id":1,"request":{"hello":{"_0":{"role":"app","app":null}}}}"#,
        // an escaped string
        #"{"id":1,"request":{"app":{"_0":{"cancel":{"identifier":"a\/b"}}}}}"#,
        // trailing text, a leading zero, an exponent, a negative id, a fraction for an integer
        #"{"id":1,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}} x"#,
        #"{"id":01,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#,
        #"{"id":1e2,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#,
        #"{"id":-1,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#,
        #"{"id":1.5,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#,
        // an id past UInt64, a date past Double, a kind that does not exist
        #"{"id":18446744073709551616,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}}"#,
        #"{"id":1,"request":{"app":{"_0":{"submit":{"_0":{"app":"a","identifier":"i","kind":"refresh","requiresNetworkConnectivity":false,"requiresExternalPower":false,"submittedAt":1e400}}}}}}"#,
        #"{"id":1,"request":{"app":{"_0":{"submit":{"_0":{"app":"a","identifier":"i","kind":"nap","requiresNetworkConnectivity":false,"requiresExternalPower":false,"submittedAt":1}}}}}}"#,
        // a missing field, two cases at once, an unterminated document
        #"{"id":1,"request":{"app":{"_0":{"submit":{"_0":{"app":"a","identifier":"i","kind":"refresh","requiresExternalPower":false,"submittedAt":1}}}}}}"#,
        #"{"id":1,"request":{"app":{"_0":{"cancel":{"identifier":"x"},"cancelAll":{}}}}}"#,
        #"{"id":1,"request":{"app":{"_0":{"cancel":{"identifier":"x"}}}}"#,
        // a control character inside a string
        "{\"id\":1,\"request\":{\"app\":{\"_0\":{\"cancel\":{\"identifier\":\"a\u{01}b\"}}}}}",
    ])
    func formsLeftToJSONDecoder(_ text: String) {
        let payload = Data(text.utf8)
        #expect(PlainMessageReader.clientEnvelope(payload) == nil)
        let viaCoding = try? MessageCoding.decode(ClientEnvelope.self, from: payload)
        #expect(viaCoding == (try? MessageCoding.foundationDecoded(ClientEnvelope.self, from: payload)))
    }

    /// The device's conditions in forms the plain reader leaves to JSONDecoder, which reads
    /// or refuses them as it would.
    @Test(arguments: [
        // an optional written as null, an exponent, a thermal state by number or unknown name,
        // a battery state that does not exist, a missing field, an unknown key
        #"{"push":{"_0":{"deviceConditions":{"_0":{"externalPower":true,"networkAvailable":true,"batteryLevel":null,"batteryState":"full","lowPowerMode":false,"thermalState":"nominal","deviceIdle":true}}}}}"#,
        #"{"push":{"_0":{"deviceConditions":{"_0":{"externalPower":true,"networkAvailable":true,"batteryLevel":5e-1,"batteryState":"full","lowPowerMode":false,"thermalState":"nominal","deviceIdle":true}}}}}"#,
        #"{"push":{"_0":{"deviceConditions":{"_0":{"externalPower":true,"networkAvailable":true,"batteryState":"full","lowPowerMode":false,"thermalState":2,"deviceIdle":true}}}}}"#,
        #"{"push":{"_0":{"deviceConditions":{"_0":{"externalPower":true,"networkAvailable":true,"batteryState":"full","lowPowerMode":false,"thermalState":"toasty","deviceIdle":true}}}}}"#,
        #"{"push":{"_0":{"deviceConditions":{"_0":{"externalPower":true,"networkAvailable":true,"batteryState":"leaking","lowPowerMode":false,"thermalState":"fair","deviceIdle":true}}}}}"#,
        #"{"push":{"_0":{"deviceConditions":{"_0":{"externalPower":true,"networkAvailable":true,"batteryState":"full","lowPowerMode":false,"thermalState":"fair"}}}}}"#,
        #"{"push":{"_0":{"deviceConditions":{"_0":{"externalPower":true,"networkAvailable":true,"batteryState":"full","lowPowerMode":false,"thermalState":"fair","deviceIdle":true,"screen":"on"}}}}}"#,
    ])
    func conditionsFormsLeftToJSONDecoder(_ text: String) {
        let payload = Data(text.utf8)
        #expect(PlainMessageReader.daemonEnvelope(payload) == nil)
        let viaCoding = try? MessageCoding.decode(DaemonEnvelope.self, from: payload)
        #expect(viaCoding == (try? MessageCoding.foundationDecoded(DaemonEnvelope.self, from: payload)))
    }

    @Test func aMessageWithAHundredThousandKeysIsReadInLinearTime() throws {
        // One 1 MiB frame of keys: a quadratic duplicate check made it cost minutes of CPU.
        var text = #"{"id":2,"x":{"#
        for index in 0..<100_000 { text += "\"k\(index)\":1," }
        text += #""k0":1},"request":{"admin":{"_0":{"status":{}}}}}"#
        let began = ContinuousClock.now
        #expect(PlainJSONReader.read(Data(text.utf8)) == nil, "the repeated k0 is refused")
        #expect(throws: MessageDecodingError.self) { try MessageCoding.decode(ClientEnvelope.self, from: Data(text.utf8)) }
        #expect(ContinuousClock.now - began < .seconds(20))
    }

    @Test func invalidUTF8AndDeepNestingAreLeftToJSONDecoder() {
        var invalid = Data(#"{"id":1,"request":{"app":{"_0":{"cancel":{"identifier":"x"#.utf8)
        invalid.append(contentsOf: [0xC3, 0x28])
        invalid.append(contentsOf: Data(#""}}}}}"#.utf8))
        #expect(PlainMessageReader.clientEnvelope(invalid) == nil)
        #expect(throws: MessageDecodingError.self) { try MessageCoding.decode(ClientEnvelope.self, from: invalid) }
        let deep = Data((String(repeating: "[", count: 100) + String(repeating: "]", count: 100)).utf8)
        #expect(PlainJSONReader.read(deep) == nil)
        #expect(PlainJSONReader.read(Data("[[1,2],{\"a\":null}]".utf8)) == .array([.array([.number("1"), .number("2")]), .object([("a", .null)])]))
    }

    /// Damaged messages: whatever the plain reader accepts, JSONDecoder accepts as the same
    /// message. Deterministic: a fixed generator over every byte position.
    @Test func damagedMessagesNeverReadDifferently() throws {
        var generator = SeededRandom(seed: 0x5EED)
        let alphabet = Array(#"{}[]":,\ 0123456789.-eE+tfnulrs_aA"#.utf8)
        var accepted = 0
        let clientPayloads = try Self.clientMessages.map { try MessageCoding.encode($0) }
        let daemonPayloads = try Self.daemonMessages.map { try MessageCoding.encode($0) }
        for round in 0..<4000 {
            let isClient = round.isMultiple(of: 2)
            let payloads = isClient ? clientPayloads : daemonPayloads
            var bytes = [UInt8](payloads[Int(generator.next() % UInt64(payloads.count))])
            for _ in 0...(generator.next() % 3) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                default: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                }
                if bytes.isEmpty { bytes = [UInt8(ascii: "{")] }
            }
            let payload = Data(bytes)
            let text = String(decoding: payload, as: UTF8.self)
            if isClient {
                let (plain, foundation) = Self.bothReadings(client: payload)
                if let plain { accepted += 1; #expect(plain == foundation, "\(text)") }
            } else {
                let (plain, foundation) = Self.bothReadings(daemon: payload)
                if let plain { accepted += 1; #expect(plain == foundation, "\(text)") }
            }
        }
        // Some damage leaves a valid message (a digit changed in an id): the comparison ran.
        #expect(accepted > 50)
    }
}

private extension DaemonEnvelope {
    var hasEscapedText: Bool {
        guard case .reply(_, .done(let text?)) = self else { return false }
        return text.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }
}
