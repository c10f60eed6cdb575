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
        // Contiguous bytes (a native string's UTF-8) read from their buffer: iterating a
        // string's UTF-8 view decodes its storage byte by byte, and the herd and usage
        // policies hash two identifiers on every judgement.
        if let hashed = bytes.withContiguousStorageIfAvailable({ buffer in fnv1a(buffer: buffer, from: hash) }) {
            return hashed
        }
        return Array(bytes).withUnsafeBufferPointer { fnv1a(buffer: $0, from: hash) }
    }

    /// A hash value already well spread (a `hashValue`) mixed with a hash table's seed, for
    /// keys that keep their hash value (``AppID``, ``RequestKey``): the seed changes every
    /// bit of the result (a plain exclusive or would keep runs of neighbouring buckets
    /// together from one table to the next, the clustering a per-table seed exists to
    /// prevent), with the finalizer of MurmurHash3 (xor-shift, multiply, xor-shift, twice).
    @inlinable
    public static func mix(_ value: Int, seed: Int) -> Int {
        var x = UInt64(truncatingIfNeeded: value) ^ UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        x = (x ^ (x >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        return Int(truncatingIfNeeded: x ^ (x >> 33))
    }

    /// ``fnv1a(_:from:)`` of a buffer.
    @inlinable
    static func fnv1a(buffer: UnsafeBufferPointer<UInt8>, from hash: UInt64) -> UInt64 {
        var hash = hash
        for byte in buffer {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
