/// A SplitMix64 generator: a seed gives the same sequence on every machine and every
/// Swift release.
///
/// Simulations draw every random choice (jitter, whether a launch happens) from one of
/// these, so a run is reproduced from its seed alone. The bounded draws below are written
/// out here rather than taken from `Int.random(in:using:)`, whose algorithm the standard
/// library does not promise to keep.
public struct SeededRandom: RandomNumberGenerator, Hashable, Sendable {
    /// The generator's whole state: the next output is a function of it alone.
    public private(set) var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// An independent generator for one numbered stream of `seed` (for example one per
    /// simulated day), so what one stream draws never shifts what another draws.
    public init(seed: UInt64, stream: UInt64) {
        state = Self.mix(seed ^ Self.mix(stream &+ Self.golden))
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= Self.golden
        return Self.mix(state)
    }

    /// A uniform whole number in `range`, without modulo bias (Lemire's multiply-shift
    /// with rejection).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(bitPattern: Int64(range.upperBound &- range.lowerBound)) &+ 1
        // A span of 2^64 (the whole of Int) wrapped to 0: every 64-bit value is in range.
        guard span != 0 else { return Int(truncatingIfNeeded: next()) }
        let threshold = (0 &- span) % span
        while true {
            let product = next().multipliedFullWidth(by: span)
            if product.low >= threshold {
                return range.lowerBound &+ Int(truncatingIfNeeded: product.high)
            }
        }
    }

    /// A uniform number in `0..<1` with 53 random bits (every value is a multiple of 2^-53).
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// The golden-ratio increment of SplitMix64.
    private static let golden: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// SplitMix64's finalizer (Stafford's variant 13).
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
