// Apple's Foundation reads any asynchronous sequence of bytes as text: `bytes.lines`,
// `.characters`, `.unicodeScalars` (iOS 15), over `URLSession.bytes(from:)`, `FileHandle.bytes`
// and `URL.resourceBytes` (AsyncByteSources.swift). swift-corelibs-foundation has none of
// them; apps stream a feed or a model download line by line in a processing task with
// `for try await line in bytes.lines` (docs/porting.md, "Foundation beside the API",
// streaming bytes).
//
// What Apple documents and its shipped behaviour are followed: a line ends at LF, VT, FF, CR,
// CR LF (one break), NEL (U+0085), LINE SEPARATOR (U+2028) or PARAGRAPH SEPARATOR (U+2029);
// the break is not part of the line; empty lines are not produced (two breaks in a row give
// one), nor is an empty last line; bytes that are not UTF-8 decode as U+FFFD, one for each
// maximal invalid subsequence, as `String(decoding:as:)` does. The properties are
// disfavoured overloads, so that a Foundation that declares them, or an app's own polyfill
// of them, is taken; the types would clash with a Foundation that declares them (then they go).

/// Lines of text decoded as UTF-8 from an asynchronous sequence of bytes (Apple:
/// `AsyncLineSequence`). Empty lines are skipped, as Apple's are.
public struct AsyncLineSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == UInt8 {
    /// A line, without its line break.
    public typealias Element = String

    let base: Base

    /// Produces the lines of the base sequence, reading it as they are asked for.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: Base.AsyncIterator
        /// A byte read to see whether a separator's lead byte began one, which did not: it
        /// is read again first.
        var pending: UInt8?
        var line: [UInt8] = []
        /// Whether the base sequence ended (it is not asked again).
        var finished = false

        mutating func nextByte() async throws -> UInt8? {
            if let byte = pending {
                pending = nil
                return byte
            }
            return try await baseByte()
        }

        /// The base sequence's next byte, `nil` once it ended.
        mutating func baseByte() async throws -> UInt8? {
            guard !finished else { return nil }
            guard let byte = try await bytes.next() else {
                finished = true
                return nil
            }
            return byte
        }

        /// The next line that is not empty, or `nil` at the end of the bytes.
        public mutating func next() async throws -> String? {
            while let byte = try await nextByte() {
                switch byte {
                case 0x0A...0x0D:
                    // LF, VT, FF, CR. CR LF is one break because the empty line between the
                    // two is skipped; a line ended by CR alone (a pipe's progress line) is
                    // produced at once, without waiting for the byte after it.
                    if let text = takeLine() { return text }
                case 0xC2:
                    // NEL is C2 85; C2 otherwise leads a two-byte character.
                    guard let following = try await baseByte() else {
                        line.append(byte)
                        return takeLine()
                    }
                    if following == 0x85 {
                        if let text = takeLine() { return text }
                    } else {
                        line.append(byte)
                        pending = following
                    }
                case 0xE2:
                    // LINE and PARAGRAPH SEPARATOR are E2 80 A8 and E2 80 A9.
                    guard let second = try await baseByte() else {
                        line.append(byte)
                        return takeLine()
                    }
                    guard second == 0x80 else {
                        line.append(byte)
                        pending = second
                        continue
                    }
                    guard let third = try await baseByte() else {
                        line += [byte, second]
                        return takeLine()
                    }
                    if third == 0xA8 || third == 0xA9 {
                        if let text = takeLine() { return text }
                    } else {
                        line += [byte, second]
                        pending = third
                    }
                default:
                    line.append(byte)
                }
            }
            return takeLine()
        }

        /// The line read so far, decoded, or `nil` when it is empty.
        mutating func takeLine() -> String? {
            guard !line.isEmpty else { return nil }
            defer { line.removeAll(keepingCapacity: true) }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// An iterator over the lines.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: base.makeAsyncIterator()) }
}

extension AsyncLineSequence: Sendable where Base: Sendable {}

/// Unicode scalars decoded as UTF-8 from an asynchronous sequence of bytes (Apple:
/// `AsyncUnicodeScalarSequence`); each maximal invalid subsequence decodes as U+FFFD.
public struct AsyncUnicodeScalarSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == UInt8 {
    /// A Unicode scalar.
    public typealias Element = Unicode.Scalar

    let base: Base

    /// Decodes the base sequence's bytes as they are asked for.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: Base.AsyncIterator
        var pending: UInt8?

        /// The next scalar, or `nil` at the end of the bytes.
        public mutating func next() async throws -> Unicode.Scalar? {
            let lead: UInt8
            if let byte = pending {
                pending = nil
                lead = byte
            } else {
                guard let byte = try await bytes.next() else { return nil }
                lead = byte
            }
            // How many continuation bytes the lead asks for, and the range the first must
            // fall in (Unicode's table of well-formed UTF-8: no overlong forms, no
            // surrogates, nothing past U+10FFFF).
            let count: Int
            var firstRange: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0x00...0x7F: return Unicode.Scalar(lead)
            case 0xC2...0xDF: count = 1
            case 0xE0: count = 2; firstRange = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: count = 2
            case 0xED: count = 2; firstRange = 0x80...0x9F
            case 0xF0: count = 3; firstRange = 0x90...0xBF
            case 0xF1...0xF3: count = 3
            case 0xF4: count = 3; firstRange = 0x80...0x8F
            default: return Unicode.Scalar.replacement
            }
            var value = UInt32(lead) & (count == 1 ? 0x1F : count == 2 ? 0x0F : 0x07)
            for index in 0..<count {
                guard let byte = try await bytes.next() else { return Unicode.Scalar.replacement }
                let allowed = index == 0 ? firstRange : 0x80...0xBF
                guard allowed.contains(byte) else {
                    // The byte that broke the sequence begins the next one.
                    pending = byte
                    return Unicode.Scalar.replacement
                }
                value = value << 6 | UInt32(byte & 0x3F)
            }
            return Unicode.Scalar(value) ?? Unicode.Scalar.replacement
        }
    }

    /// An iterator over the scalars.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: base.makeAsyncIterator()) }
}

extension AsyncUnicodeScalarSequence: Sendable where Base: Sendable {}

extension Unicode.Scalar {
    /// U+FFFD, what bytes that are not UTF-8 decode as.
    static let replacement = Unicode.Scalar(0xFFFD)!
}

/// Characters (extended grapheme clusters) decoded as UTF-8 from an asynchronous sequence of
/// bytes (Apple: `AsyncCharacterSequence`). A character is produced once the scalar after it
/// shows where it ends (a flag or an accented letter whose marks arrive later is one
/// character), or at the end of the bytes.
public struct AsyncCharacterSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == UInt8 {
    /// A character.
    public typealias Element = Character

    let base: Base

    /// Decodes the base sequence's bytes as they are asked for.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var scalars: AsyncUnicodeScalarSequence<Base>.AsyncIterator
        /// Scalars read; those from ``start`` on are not yet produced.
        var pending = ""
        /// Where the scalars not yet produced begin in ``pending``, in UTF-8 code units (an
        /// offset, not a `String.Index`: an index keeps the length of the character it was
        /// found at, which appending to that character makes wrong).
        var start = 0
        /// Whether the scalars not yet produced, all but the last one read, are known to be
        /// one character (so only whether the last one starts another is left to ask).
        var oneCharacterSoFar = false

        /// How many scalars not yet produced are asked of together, at most, whether the last
        /// one starts a new character: asking the whole character at every scalar cost its
        /// length each time, so one character of 40,000 combining marks took n² steps (an
        /// outside probe: 25 s for 80 KB).
        static var window: Int { 16 }

        /// The next character, or `nil` at the end of the bytes. A character is produced as
        /// soon as the scalar after it is read.
        public mutating func next() async throws -> Character? {
            while true {
                if let character = firstWholeCharacter() { return character }
                guard let scalar = try await scalars.next() else { return lastCharacter() }
                pending.unicodeScalars.append(scalar)
            }
        }

        /// The scalars not yet produced (a substring of ``pending``: not kept across a wait,
        /// where it would make the next append copy ``pending`` whole).
        private var unproduced: Substring { pending[pending.utf8.index(pending.startIndex, offsetBy: start)...] }

        /// The first character not yet produced, if a scalar after it shows it is whole.
        private mutating func firstWholeCharacter() -> Character? {
            let rest = unproduced
            guard !rest.isEmpty else { return nil }
            if oneCharacterSoFar {
                // The scalars before the last are one character: the last starts another only
                // if it does among the few before it. A break seen there may not be one in the
                // whole (a ZWJ emoji sequence or an Indic conjunct whose start is out of the
                // window), so it is asked of the whole; no rule joins across a break the
                // window shows, so a join seen there is one.
                let scalars = rest.unicodeScalars
                let from = scalars.index(scalars.endIndex, offsetBy: -Self.window, limitedBy: scalars.startIndex) ?? scalars.startIndex
                guard String(scalars[from...]).last?.unicodeScalars.count == 1 else { return nil }
            }
            let end = rest.index(after: rest.startIndex)
            guard end < rest.endIndex else {
                oneCharacterSoFar = true
                return nil
            }
            return produce(rest, upTo: end)
        }

        /// What is left at the end of the bytes, a character at a time.
        private mutating func lastCharacter() -> Character? {
            let rest = unproduced
            guard !rest.isEmpty else { return nil }
            return produce(rest, upTo: rest.index(after: rest.startIndex))
        }

        /// The first character of `rest`, which ends at `end`, taken from the scalars not yet
        /// produced (what was produced is dropped once it is most of ``pending``).
        private mutating func produce(_ rest: Substring, upTo end: String.Index) -> Character {
            let character = Character(String(rest[rest.startIndex..<end]))
            oneCharacterSoFar = false
            let produced = pending.utf8.distance(from: pending.startIndex, to: end)
            if produced > Swift.max(4_096, pending.utf8.count / 2) {
                pending = String(pending[end...])
                start = 0
            } else {
                start = produced
            }
            return character
        }
    }

    /// An iterator over the characters.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(scalars: AsyncUnicodeScalarSequence(base: base).makeAsyncIterator())
    }
}

extension AsyncCharacterSequence: Sendable where Base: Sendable {}

extension AsyncSequence where Element == UInt8 {
    /// The bytes decoded as UTF-8, line by line (Apple: `lines`, iOS 15): breaks are LF, VT,
    /// FF, CR, CR LF, NEL, U+2028 and U+2029; empty lines are skipped.
    @_disfavoredOverload
    public var lines: AsyncLineSequence<Self> { AsyncLineSequence(base: self) }

    /// The bytes decoded as UTF-8, character by character (Apple: `characters`, iOS 15).
    @_disfavoredOverload
    public var characters: AsyncCharacterSequence<Self> { AsyncCharacterSequence(base: self) }

    /// The bytes decoded as UTF-8, scalar by scalar (Apple: `unicodeScalars`, iOS 15).
    @_disfavoredOverload
    public var unicodeScalars: AsyncUnicodeScalarSequence<Self> { AsyncUnicodeScalarSequence(base: self) }
}
