/// FNV-1a, 64-bit: a hash that is the same in every process and on every machine (Swift's
/// `Hasher` is seeded per process), for herd-spreading offsets, machine identities and
/// trace fingerprints.
public enum StableHash {
    /// FNV-1a's 64-bit offset basis: the hash of nothing.
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The FNV-1a hash of `bytes`, continuing from `hash` (so that parts can be hashed one
    /// after the other without being joined).
    @inlinable
    public static func fnv1a<Bytes: Sequence>(_ bytes: Bytes, from hash: UInt64 = offsetBasis) -> UInt64 where Bytes.Element == UInt8 {
        var hash = hash
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
