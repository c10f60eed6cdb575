import Foundation
import SchedulerCore
import Testing

/// DecodingErrorText on documents that are JSON but hold a number out of its field's range,
/// which Foundation's decoder calls "not valid JSON" without a place (an outside probe: a
/// kept answer with "options": -1, a pending notification with "badge": 1e30).
@Suite struct DecodingErrorTextTests {
    struct Answer: Codable { var status: Int; var options: UInt }
    struct Kept: Codable { var pending: [Item] }
    struct Item: Codable { var added: Double; var badge: Int?; var name: String }

    private func described<Value: Decodable>(_ text: String, as type: Value.Type, retrying: Bool = true) -> String {
        let bytes = Array(text.utf8)
        do {
            _ = try JSONDecoder().decode(Value.self, from: Data(bytes))
            return "decoded"
        } catch {
            return DecodingErrorText.describe(error, decoding: bytes, retrying: retrying ? { _ = try JSONDecoder().decode(Value.self, from: $0) } : nil)
        }
    }

    @Test func aNumberOutOfItsFieldsRangeIsNamedWithItsPath() {
        #expect(described(#"{"status": -3, "options": -1}"#, as: Answer.self) == "at options: -1 does not fit its field (out of its range)")
        // Fractions and negatives that fit their fields are passed over: the culprit is found.
        let kept = #"{"pending": [{"added": 7.5e8, "badge": 2, "name": "a"}, {"added": -12.25, "badge": 1e30, "name": "b"}]}"#
        #expect(described(kept, as: Kept.self) == "at pending[1].badge: 1e+30 does not fit its field (out of its range)")
        #expect(described(#"{"pending": [{"added": 1, "badge": 1.5, "name": "c"}]}"#, as: Kept.self).hasPrefix("at pending[0].badge: 1.5"))
    }

    @Test func withoutTheDecodingItSaysTheDocumentIsJSONAndNotWhere() {
        let text = described(#"{"status": 1, "options": -1}"#, as: Answer.self, retrying: false)
        #expect(text == "the document is JSON, but a value in it does not fit its field (most likely a number out of its range); the decoder does not say which")
        #expect(described(#"{"status": 1, "options": "#, as: Answer.self).contains("line 1"), "a syntax error still names its place")
        #expect(described(#"{"status": 1, "options": 2}"#, as: Answer.self) == "decoded")
    }
}
