import Foundation
@testable import SchedulerCore
import Testing

/// Calendar arithmetic and stable hashing, the same on every machine.
@Suite struct SupportTests {
    @Test func utcFieldsOfKnownInstants() {
        #expect(GregorianDate.utc(secondsSince1970: 0) == (1970, 1, 1, 0, 0, 0))
        #expect(GregorianDate.utc(secondsSince1970: 1_795_996_800 + 3_723) == (2026, 11, 30, 1, 2, 3))
        #expect(GregorianDate.utc(secondsSince1970: 951_782_400) == (2000, 2, 29, 0, 0, 0), "a leap day")
        #expect(GregorianDate.utc(secondsSince1970: -1) == (1969, 12, 31, 23, 59, 59), "before 1970 rounds down")
        #expect(GregorianDate.utc(secondsSince1970: -86_400) == (1969, 12, 31, 0, 0, 0))
    }

    @Test func fnv1aMatchesTheReferenceVectors() {
        // From the FNV reference test suite: "" and "a" and "foobar".
        #expect(StableHash.fnv1a([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        #expect(StableHash.fnv1a("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(StableHash.fnv1a("foobar".utf8) == 0x8594_4171_f739_67e8)
        #expect(StableHash.fnv1a("bar".utf8, from: StableHash.fnv1a("foo".utf8)) == StableHash.fnv1a("foobar".utf8), "parts hash as their concatenation")
    }
}

@Suite("Duration text") struct DurationTextTests {
    @Test func spokenRoundsToTheUnitAPersonWouldSay() {
        #expect(DurationText.spoken(0) == "0 s")
        #expect(DurationText.spoken(1.5) == "1.5 s")
        #expect(DurationText.spoken(2) == "2 s")
        #expect(DurationText.spoken(59.4) == "59 s")
        #expect(DurationText.spoken(1_000) == "17 min")
        #expect(DurationText.spoken(-90) == "-2 min")
        #expect(DurationText.spoken(.nan) == "?")
        #expect(DurationText.spoken(1e300) == "forever")
    }

    @Test func measuredKeepsAPrecisionThatSuitsTheSize() {
        #expect(DurationText.measured(0.123) == "0.12 s")
        #expect(DurationText.measured(42.5) == "42.5 s")
        #expect(DurationText.measured(600) == "10.0 min")
        #expect(DurationText.measured(9_000) == "2.5 h")
        #expect(DurationText.measured(3 * 86_400) == "3.0 d")
        #expect(DurationText.measured(.infinity) == "forever")
        #expect(DurationText.measured(.nan) == "?")
    }
}
