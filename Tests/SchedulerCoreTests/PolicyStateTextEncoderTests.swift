import Foundation
@testable import SchedulerCore
import Testing

private typealias T = UsageModelTests

/// The text a store keeps of an app's policy state reuses the usage model's text while the
/// model is unchanged (`PolicyStateTextEncoder`): it must read back as the state itself,
/// every time, and follow every change of the model.
@Suite struct PolicyStateTextEncoderTests {
    static let app = AppID("com.example.text")

    /// A state with two weeks of launches, a ledger, a refresh and retries: every field set.
    static func fullState() -> AppPolicyState {
        var usage = UsageModel(createdAt: T.monday)
        for day in 0..<14 { usage.recordForeground(at: T.at(week: 0, day: day, 8, 10)) }
        usage.recordNetworkLoss(at: T.at(week: 1, day: 6, 12, 0))
        var state = AppPolicyState(usage: usage)
        state.energyUsed = 12.5
        state.energyDay = 20_000
        state.lastRefresh = T.at(week: 1, day: 6, 7, 58)
        state.retryAttempts = ["com.example.text.refresh": 2]
        state.recordLaunch(at: T.at(week: 1, day: 6, 7, 58), now: T.at(week: 1, day: 6, 7, 58), refreshesAllowed: true)
        return state
    }

    static func decoded(_ text: String?) throws -> AppPolicyState {
        try JSONDecoder().decode(AppPolicyState.self, from: Data(try #require(text).utf8))
    }

    @Test func theTextReadsBackAsTheStateAndAsJSONEncodersText() throws {
        var encoder = PolicyStateTextEncoder()
        for state in [Self.fullState(), AppPolicyState(usage: UsageModel(createdAt: T.monday))] {
            let text = encoder.text(of: state, for: Self.app)
            #expect(try Self.decoded(text) == state)
            let plain = try JSONDecoder().decode(AppPolicyState.self, from: JSONEncoder().encode(state))
            #expect(try Self.decoded(text) == plain)
            // The same object: every key of JSONEncoder's text, with the same values.
            let textData = Data(try #require(text).utf8)
            let ours = try #require(try JSONSerialization.jsonObject(with: textData) as? NSDictionary)
            let theirs = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? NSDictionary)
            #expect(ours == theirs)
            #expect(ours.count == theirs.count && ours["usage"] != nil)
            // The usage model once: a second copy would decode (the last wins) and hide a
            // rest that kept it.
            #expect(try #require(text).components(separatedBy: "\"usage\":").count == 2)
        }
    }

    @Test func anUnchangedUsageModelIsEncodedOnceAndAChangedOneAgain() throws {
        var encoder = PolicyStateTextEncoder()
        var state = Self.fullState()
        _ = encoder.text(of: state, for: Self.app)
        // A run's end: throttle and energy change, the usage model does not.
        state.energyUsed += 3
        _ = state.throttle.recordRunEnded(outcome: .expired, calledSetTaskCompleted: false, at: T.at(week: 2, day: 0, 9, 0))
        let second = encoder.text(of: state, for: Self.app)
        #expect(encoder.usageEncodings == 1)
        #expect(try Self.decoded(second) == state)
        // The user opens the app: the model changed, and the text must say so.
        state.usage.recordForeground(at: T.at(week: 2, day: 0, 21, 30))
        let third = encoder.text(of: state, for: Self.app)
        #expect(encoder.usageEncodings == 2)
        #expect(try Self.decoded(third) == state)
        #expect(try Self.decoded(third).usage != Self.fullState().usage)
    }

    @Test func anotherAppsEqualModelIsNotTakenForThisAppsAndOnlyCapacityAppsAreKept() throws {
        var encoder = PolicyStateTextEncoder(capacity: 2)
        let state = Self.fullState()
        let apps = ["a", "b", "c"].map { AppID("com.example.\($0)") }
        for app in apps { _ = encoder.text(of: state, for: app) }
        #expect(encoder.usageEncodings == 3)
        // b and c are kept; a was the least recently saved and went.
        _ = encoder.text(of: state, for: apps[2])
        _ = encoder.text(of: state, for: apps[1])
        #expect(encoder.usageEncodings == 3)
        let again = encoder.text(of: state, for: apps[0])
        #expect(encoder.usageEncodings == 4)
        #expect(try Self.decoded(again) == state)
    }
}
