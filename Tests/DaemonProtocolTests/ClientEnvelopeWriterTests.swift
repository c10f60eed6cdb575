@testable import DaemonProtocol
import Foundation
import SchedulerCore
import Testing

/// The messages an app writes without Codable read back, through the daemon's own decoder,
/// as what JSONEncoder's form of them reads back as; the others are left to JSONEncoder.
@Suite struct ClientEnvelopeWriterTests {
    static let awkward = ["com.example.app", "quote \" and back\\slash", "slash / é 🚀", "tab\tnew\nline\r", "control \u{01}\u{1F}\u{7F}", ""]

    static func request(_ identifier: String, app: String = "com.example.app", earliest: Date? = nil, submitted: Date, network: Bool = false, power: Bool = true, kind: TaskKind = .processing) -> PendingRequest {
        PendingRequest(app: AppID(app), identifier: identifier, kind: kind, earliestBeginDate: earliest,
                       requiresNetworkConnectivity: network, requiresExternalPower: power, submittedAt: submitted)
    }

    static var written: [ClientEnvelope] {
        var envelopes: [ClientEnvelope] = [
            ClientEnvelope(id: 1, request: .hello(Hello(role: .app, app: AppID("com.example.app")))),
            ClientEnvelope(id: 3, request: .hello(Hello(role: .admin))),
            ClientEnvelope(id: UInt64.max, request: .app(.finishedLaunching(registered: []))),
            ClientEnvelope(id: 2, request: .app(.finishedLaunching(registered: awkward))),
        ]
        let dates = [Date(timeIntervalSince1970: 1_796_096_541.190_512_7), Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -12.5),
                     Date(timeIntervalSince1970: 1e16), Date(timeIntervalSinceReferenceDate: 0.1), Date(timeIntervalSince1970: 5e-324)]
        for (index, date) in dates.enumerated() {
            let identifier = awkward[index % awkward.count]
            envelopes.append(ClientEnvelope(id: UInt64(10 + index), request: .app(.submit(request(identifier, app: identifier, earliest: index.isMultiple(of: 2) ? nil : date, submitted: date, network: index.isMultiple(of: 3), kind: TaskKind.allCases[index % TaskKind.allCases.count])))))
        }
        return envelopes
    }

    @Test(arguments: written)
    func writtenMessagesDecodeToThemselves(_ envelope: ClientEnvelope) throws {
        let data = try #require(ClientEnvelopeWriter.encode(envelope))
        // What the daemon reads is what it reads from JSONEncoder's form (dates included:
        // both go through seconds since 1970, so a date since 2001 may move by its last bits).
        let fromEncoder = try MessageCoding.decode(ClientEnvelope.self, from: MessageCoding.jsonEncoded(envelope))
        #expect(try MessageCoding.decode(ClientEnvelope.self, from: data) == fromEncoder, "\(String(decoding: data, as: UTF8.self))")
        // And MessageCoding takes this path.
        #expect(try MessageCoding.encode(envelope) == data)
    }

    /// The writer names every stored property of what it writes: one added later must be
    /// added there too (or the message left to JSONEncoder), not dropped from the wire.
    @Test func theWriterKnowsEveryFieldOfWhatItWrites() {
        let request = Self.request("com.example.app.x", submitted: Date(timeIntervalSince1970: 0))
        // The key is the app and the identifier, written as those two fields.
        #expect(Mirror(reflecting: request).children.compactMap(\.label) == [
            "key", "kind", "earliestBeginDate", "requiresNetworkConnectivity", "requiresExternalPower",
            "protectionTypeOfRequiredData", "continuedProcessing", "submittedAt", "remoteNotificationPayload",
        ], "PendingRequest changed: update ClientEnvelopeWriter")
        #expect(Mirror(reflecting: Hello(role: .app)).children.compactMap(\.label) == ["role", "app"], "Hello changed: update ClientEnvelopeWriter")
    }

    @Test func everythingElseIsLeftToJSONEncoder() throws {
        let date = Date(timeIntervalSince1970: 1_796_096_541)
        var continued = Self.request("com.example.app.export.1", submitted: date, kind: .continuedProcessing)
        continued.continuedProcessing = ContinuedProcessingOptions(title: "Export", subtitle: "", strategy: .queue)
        var protected = Self.request("com.example.app.study", submitted: date, kind: .healthResearch)
        protected.protectionTypeOfRequiredData = "complete"
        var pushed = Self.request("com.example.app.push", submitted: date)
        pushed.remoteNotificationPayload = "{}"
        let others: [ClientEnvelope] = [
            ClientEnvelope(id: 1, request: .app(.submit(continued))),
            ClientEnvelope(id: 2, request: .app(.submit(protected))),
            ClientEnvelope(id: 3, request: .app(.submit(pushed))),
            ClientEnvelope(id: 4, request: .app(.cancelAll)),
            ClientEnvelope(id: 5, request: .admin(.status)),
        ]
        for envelope in others {
            #expect(ClientEnvelopeWriter.encode(envelope) == nil)
            #expect(try MessageCoding.decode(ClientEnvelope.self, from: MessageCoding.encode(envelope)) == envelope)
        }
        // A date JSONEncoder refuses is refused the same way, not written.
        let infinite = ClientEnvelope(id: 6, request: .app(.submit(Self.request("com.example.app.x", submitted: Date(timeIntervalSince1970: .infinity)))))
        #expect(ClientEnvelopeWriter.encode(infinite) == nil)
        #expect(throws: (any Error).self) { try MessageCoding.encode(infinite) }
    }
}
