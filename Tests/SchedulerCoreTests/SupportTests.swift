import Foundation
@testable import SchedulerCore
import Testing

/// Calendar arithmetic and stable hashing, the same on every machine.
@Suite struct SupportTests {
    @Test func countsTakeTheSingularForOne() {
        #expect(CountText.counted(1, "device") == "1 device")
        #expect(CountText.counted(0, "run") == "0 runs")
        #expect(CountText.counted(2, "earlier strike") == "2 earlier strikes")
    }

    @Test func iso8601IsProlepticGregorianUTC() {
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: 1_796_025_600.25), milliseconds: true) == "2026-11-30T08:00:00.250Z")
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: -1.5), milliseconds: true) == "1969-12-31T23:59:58.500Z")
        // Rounded to the nearest millisecond, carrying into the second (the traces' rule).
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: 59.9996), milliseconds: true) == "1970-01-01T00:01:00.000Z")
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: 59.9996)) == "1970-01-01T00:00:59Z", "whole seconds are cut, not rounded")
        let reform = Double(GregorianDate.daysSince1970(year: 1500, month: 1, day: 1)) * 86_400
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: reform)) == "1500-01-01T00:00:00Z", "not the Julian 1499-12-22")
        let beforeZero = Double(GregorianDate.daysSince1970(year: -1, month: 6, day: 1)) * 86_400
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: beforeZero)) == "-0001-06-01T00:00:00Z")
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: .infinity)).hasSuffix("Z"), "no trap on an instant without a date")
        #expect(GregorianDate.iso8601(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00Z")
    }

    @Test func utcFieldsOfKnownInstants() {
        #expect(GregorianDate.utc(secondsSince1970: 0) == (1970, 1, 1, 0, 0, 0))
        #expect(GregorianDate.utc(secondsSince1970: 1_795_996_800 + 3_723) == (2026, 11, 30, 1, 2, 3))
        #expect(GregorianDate.utc(secondsSince1970: 951_782_400) == (2000, 2, 29, 0, 0, 0), "a leap day")
        #expect(GregorianDate.utc(secondsSince1970: -1) == (1969, 12, 31, 23, 59, 59), "before 1970 rounds down")
        #expect(GregorianDate.utc(secondsSince1970: -86_400) == (1969, 12, 31, 0, 0, 0))
    }

    /// Days from a civil date are the inverse of the civil date of days, across four
    /// centuries either side of 1970 (leap years and the century rule included).
    @Test func daysFromACivilDateInvertTheCivilDateOfDays() {
        for days in stride(from: -146_097 * 2, through: 146_097 * 2, by: 37) {
            let (year, month, day) = GregorianDate.civil(daysSince1970: days)
            #expect(GregorianDate.daysSince1970(year: year, month: month, day: day) == days, "\(year)-\(month)-\(day)")
            #expect((1...GregorianDate.daysInMonth(month, of: year)).contains(day))
        }
        #expect(GregorianDate.daysSince1970(year: 1970, month: 1, day: 1) == 0)
        #expect(GregorianDate.daysSince1970(year: 2000, month: 3, day: 1) == 11_017)
        #expect(GregorianDate.daysInMonth(2, of: 1900) == 28 && GregorianDate.daysInMonth(2, of: 2000) == 29 && GregorianDate.daysInMonth(2, of: 2028) == 29)
    }

    @Test func fnv1aMatchesTheReferenceVectors() {
        // From the FNV reference test suite: "" and "a" and "foobar".
        #expect(StableHash.fnv1a([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        #expect(StableHash.fnv1a("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(StableHash.fnv1a("foobar".utf8) == 0x8594_4171_f739_67e8)
        #expect(StableHash.fnv1a("bar".utf8, from: StableHash.fnv1a("foo".utf8)) == StableHash.fnv1a("foobar".utf8), "parts hash as their concatenation")
    }

    @Test func contiguousAndByteByByteInputsHashAlike() {
        // Native strings and arrays take the buffer path; a lazy sequence goes byte by byte:
        // the same bytes must give the same hash.
        let text = "com.example.bench.app7/com.example.bench.app7.refresh"
        let lazyBytes = text.utf8.lazy.map { $0 }
        #expect(text.utf8.withContiguousStorageIfAvailable { _ in true } == true, "the buffer path is taken")
        #expect(StableHash.fnv1a(text.utf8) == StableHash.fnv1a(lazyBytes))
        #expect(StableHash.fnv1a(Array(text.utf8), from: 42) == StableHash.fnv1a(lazyBytes, from: 42))
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
