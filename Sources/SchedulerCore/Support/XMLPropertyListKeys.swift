import Foundation

/// Finds a `<key>` repeated inside one `<dict>` of an XML property list, which
/// `PropertyListSerialization` accepts silently (the last one wins). A light scan of the
/// tags, not an XML parser: the document is parsed by Foundation afterwards, and this pass
/// only needs the nesting of `dict` and `array` and the text of each `key`. Iterative,
/// linear, and limited to ``StrictJSON/maximumDepth`` levels like JSON documents.
public enum XMLPropertyListKeys {
    /// A repeated key: its text and its path (`CFBundleIdentifier`, `Root.items[2].name`).
    public struct Duplicate: Hashable, Sendable {
        /// The key as written (entities decoded).
        public var key: String
        /// Where, as a path of keys and array indices without a leading `$`.
        public var path: String
    }

    private enum Frame {
        case dict(key: String?)
        case array(index: Int)
    }

    /// The first repeated key, or `nil`. Malformed XML is left for Foundation to report.
    /// Throws nothing; nesting beyond the limit is reported as `tooDeep`.
    public static func firstDuplicate(in data: Data) -> (duplicate: Duplicate?, tooDeep: Bool) {
        let bytes = [UInt8](data)
        var stack: [Frame] = []
        // Apart from the frames so inserts mutate in place (see StrictJSON).
        var dictKeys: [Set<String>] = []
        var index = 0
        var keyStart: Int?
        func path(_ frames: [Frame]) -> String {
            var text = ""
            for frame in frames {
                switch frame {
                case .dict(let key): if let key { text += (text.isEmpty ? "" : ".") + key }
                case .array(let index): text += "[\(index - 1)]"
                }
            }
            return text
        }
        /// A value element starts inside the container on top of the stack.
        func noteChild(_ name: ArraySlice<UInt8>) {
            guard case .array(let count) = stack.last, !name.elementsEqual("key".utf8) else { return }
            stack[stack.count - 1] = .array(index: count + 1)
        }
        func find(_ needle: [UInt8], from start: Int) -> Int? {
            guard !needle.isEmpty, bytes.count >= needle.count else { return nil }
            var position = start
            while position + needle.count <= bytes.count {
                if bytes[position] == needle[0], bytes[position..<position + needle.count].elementsEqual(needle) { return position }
                position += 1
            }
            return nil
        }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            let rest = bytes[index...]
            if rest.starts(with: "<!--".utf8) {
                guard let end = find(Array("-->".utf8), from: index + 4) else { return (nil, false) }
                index = end + 3
                continue
            }
            if rest.starts(with: "<![CDATA[".utf8) {
                guard let end = find(Array("]]>".utf8), from: index + 9) else { return (nil, false) }
                index = end + 3
                continue
            }
            if rest.starts(with: "<?".utf8) || rest.starts(with: "<!".utf8) {
                guard let end = find([UInt8(ascii: ">")], from: index + 2) else { return (nil, false) }
                index = end + 1
                continue
            }
            guard let close = find([UInt8(ascii: ">")], from: index + 1) else { return (nil, false) }
            let closing = bytes[index + 1] == UInt8(ascii: "/")
            let selfClosing = close > index + 1 && bytes[close - 1] == UInt8(ascii: "/")
            let nameStart = index + (closing ? 2 : 1)
            var nameEnd = nameStart
            while nameEnd < close, ![UInt8(ascii: " "), 0x09, 0x0A, 0x0D, UInt8(ascii: "/")].contains(bytes[nameEnd]) { nameEnd += 1 }
            let name = bytes[nameStart..<nameEnd]
            if closing {
                if name.elementsEqual("key".utf8), let start = keyStart {
                    let key = decodeEntities(bytes[start..<index])
                    keyStart = nil
                    if case .dict = stack.last {
                        let isNew = dictKeys[dictKeys.count - 1].insert(key).inserted
                        stack[stack.count - 1] = .dict(key: key)
                        if !isNew { return (Duplicate(key: key, path: path(stack)), false) }
                    }
                } else if name.elementsEqual("dict".utf8) || name.elementsEqual("array".utf8) {
                    if case .dict = stack.last { dictKeys.removeLast() }
                    if !stack.isEmpty { stack.removeLast() }
                }
            } else {
                noteChild(name)
                if name.elementsEqual("key".utf8), !selfClosing {
                    keyStart = close + 1
                } else if !selfClosing, name.elementsEqual("dict".utf8) || name.elementsEqual("array".utf8) {
                    guard stack.count < StrictJSON.maximumDepth else { return (nil, true) }
                    if name.elementsEqual("dict".utf8) {
                        stack.append(.dict(key: nil))
                        dictKeys.append([])
                    } else {
                        stack.append(.array(index: 0))
                    }
                }
            }
            index = close + 1
        }
        return (nil, false)
    }

    /// What follows the root element (`<plist>...</plist>`) besides whitespace, comments and
    /// processing instructions, which is all XML allows there: its first characters (at
    /// most 24, escaped for a message), its 1-based line and the root's name; `nil` when
    /// nothing does, or when the root never closes (malformed XML is left for Foundation to
    /// report). `PropertyListSerialization` stops at `</plist>` and ignores the rest
    /// silently, so a second `<plist>` or a half-pasted edit after it would be lost unseen.
    public static func contentAfterRoot(in data: Data) -> (text: String, line: Int, root: String)? {
        let bytes = [UInt8](data)
        func find(_ needle: String, from start: Int) -> Int? { Self.find(needle, in: bytes, from: start) }
        /// Where a comment, processing instruction, CDATA section or declaration starting at
        /// `index` ends (after its closing delimiter); `nil` when `index` starts none of them.
        func endOfSkipped(at index: Int) -> Int?? {
            let rest = bytes[index...]
            for (open, close) in [("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"), ("<!", ">")] where rest.starts(with: open.utf8) {
                return .some(find(close, from: index + open.utf8.count).map { $0 + close.utf8.count })
            }
            return .none
        }
        // Find where the root element ends: its depth returns to 0.
        var index = 0
        var depth = 0
        var root: String?
        var rootEnd: Int?
        while index < bytes.count, rootEnd == nil {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            if let skipped = endOfSkipped(at: index) {
                guard let end = skipped else { return nil }
                index = end
                continue
            }
            guard let close = find(">", from: index + 1) else { return nil }
            let closing = bytes[index + 1] == UInt8(ascii: "/")
            let selfClosing = bytes[close - 1] == UInt8(ascii: "/")
            if root == nil, !closing {
                let nameStart = index + 1
                var nameEnd = nameStart
                while nameEnd < close, ![UInt8(ascii: " "), 0x09, 0x0A, 0x0D, UInt8(ascii: "/")].contains(bytes[nameEnd]) { nameEnd += 1 }
                root = String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self)
            }
            if closing { depth -= 1 } else if !selfClosing { depth += 1 }
            index = close + 1
            if depth <= 0 { rootEnd = index }
        }
        guard let rootEnd, let root else { return nil }
        // After it: only whitespace, comments and processing instructions.
        index = rootEnd
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
                continue
            case UInt8(ascii: "<") where bytes[index...].starts(with: "<!--".utf8) || bytes[index...].starts(with: "<?".utf8):
                guard let skipped = endOfSkipped(at: index), let end = skipped else { return nil }
                index = end
                continue
            default:
                break
            }
            let line = 1 + bytes[..<index].count(where: { $0 == 0x0A })
            let shown = String(decoding: bytes[index...].prefix(24), as: UTF8.self).prefix { $0 != "\n" && $0 != "\r\n" }
            return (StrictJSON.escaped(String(shown)), line, root)
        }
        return nil
    }

    /// A byte sequence that is not UTF-8 in an XML property list, and where it starts.
    public struct InvalidUTF8: Hashable, Sendable {
        /// Its first byte.
        public var byte: UInt8
        /// Its offset from the start of the file, from 0 (as `od` and `xxd` count).
        public var offset: Int
        /// Its line, from 1.
        public var line: Int
        /// Its column in bytes, from 1.
        public var column: Int

        /// A sequence found at `offset`, on `line` at `column`, starting with `byte`.
        public init(byte: UInt8, offset: Int, line: Int, column: Int) {
            self.byte = byte
            self.offset = offset
            self.line = line
            self.column = column
        }
    }

    /// The first byte sequence of `data` that is not UTF-8 (a stray continuation byte, a
    /// sequence cut short, an overlong form, a surrogate, a value beyond U+10FFFF), outside
    /// comments, which the property list parser skips unread; `nil` when there is none, or
    /// when the XML declaration names another encoding (the parser then reads the bytes in
    /// that one: `ISO-8859-1`...). Foundation refuses such a byte with "Unable to convert
    /// string to correct encoding" and no place, so a manifest's error names it instead.
    public static func firstInvalidUTF8(in data: Data) -> InvalidUTF8? {
        let bytes = [UInt8](data)
        if let encoding = declaredEncoding(bytes), !["utf-8", "utf8"].contains(encoding.lowercased()) { return nil }
        func invalid(at offset: Int) -> InvalidUTF8 {
            var lineStart = 0
            var line = 1
            for index in 0..<offset where bytes[index] == 0x0A {
                line += 1
                lineStart = index + 1
            }
            return InvalidUTF8(byte: bytes[offset], offset: offset, line: line, column: offset - lineStart + 1)
        }
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                if lead == UInt8(ascii: "<"), bytes[index...].starts(with: "<!--".utf8) {
                    // Unclosed: malformed XML, left for the parser to report.
                    guard let end = find("-->", in: bytes, from: index + 4) else { return nil }
                    index = end + 3
                } else {
                    index += 1
                }
                continue
            }
            // The standard library's UTF-8 parser (the one `String(validating:)` uses):
            // it refuses overlong forms, surrogates and values beyond U+10FFFF.
            var parser = Unicode.UTF8.ForwardParser()
            var rest = bytes[index...].makeIterator()
            guard case .valid(let scalar) = parser.parseScalar(from: &rest) else { return invalid(at: index) }
            index += scalar.count
        }
        return nil
    }

    /// The `encoding` the XML declaration at the start names (after a byte-order mark and
    /// whitespace), or `nil` when there is no declaration or it names none.
    private static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard bytes[start...].starts(with: "<?xml".utf8), let end = find("?>", in: bytes, from: start) else { return nil }
        let declaration = String(decoding: bytes[start..<end], as: UTF8.self)
        guard let name = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[name.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    /// Where `needle` first starts in `bytes` at or after `start`.
    private static func find(_ needle: String, in bytes: [UInt8], from start: Int) -> Int? {
        let needle = Array(needle.utf8)
        var position = start
        while position + needle.count <= bytes.count {
            if bytes[position] == needle[0], bytes[position..<position + needle.count].elementsEqual(needle) { return position }
            position += 1
        }
        return nil
    }

    /// The five predefined entities and numeric character references.
    private static func decodeEntities(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";"), rest.distance(from: ampersand, to: semicolon) <= 10 else {
                result += rest[ampersand...]
                return result
            }
            let entity = rest[rest.index(after: ampersand)..<semicolon]
            switch entity {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                var scalar: Unicode.Scalar?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init)
                }
                if let scalar { result.unicodeScalars.append(scalar) } else { result += "&" + entity + ";" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}

/// Checks a binary property list (`bplist00`) before `PropertyListSerialization` reads it:
/// its structure, the kinds of its objects, and, in one walk over the objects reachable from
/// the top, a dictionary whose keys repeat (which Foundation accepts silently), shared
/// references that stand for too many objects, loops and nesting. Every check is linear in
/// the file's size, and every offset, count and reference is bounds-checked: malformed
/// data the checks cannot judge yields `nil` and is left for Foundation to report.
public enum BinaryPropertyListKeys {
    /// The first object of a kind a manifest cannot hold and Foundation must not be given,
    /// named (`"a set"`, `"a UID"`, `"an object of unknown type 0x7"`), or `nil`. A set
    /// (marker `0xC`) makes `PropertyListSerialization` on Linux crash the process while it
    /// bridges it (seen with swift-corelibs-foundation of Swift 6.3), so it is refused before
    /// parsing; UIDs (keyed archives) and markers no version of the format defines go too.
    public static func firstUnsupportedObject(in data: Data) -> String? {
        let bytes = [UInt8](data)
        guard let table = ObjectTable(bytes) else { return nil }
        for index in 0..<table.objectCount {
            guard let offset = table.objectOffset(index) else { continue }
            switch bytes[offset] >> 4 {
            case 0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0xA, 0xD: continue
            case 0xC: return "a set"
            case 0x8: return "a UID"
            case let other: return "an object of unknown type 0x\(String(other, radix: 16, uppercase: true))"
            }
        }
        return nil
    }

    /// What makes `data`, which starts with `bplist`, no readable binary property list
    /// (too short for a header and a trailer, a trailer whose sizes, count or offsets are out
    /// of range, an object offset outside the objects), or `nil` when its structure holds.
    /// Foundation, given a damaged one, falls back to reading the bytes as old-style text
    /// ("Unexpected character b", or the string "bplist00").
    public static func structuralProblem(in data: Data) -> String? {
        let bytes = [UInt8](data)
        guard bytes.starts(with: Array("bplist".utf8)) else { return nil }
        guard bytes.count >= 40 else {
            return "it is \(bytes.count) bytes, too short for the 8-byte header and the 32-byte trailer"
        }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            return "its trailer gives offsets of \(offsetSize) and references of \(referenceSize) bytes (each must be 1 to 8): the file is truncated or damaged"
        }
        guard let table = ObjectTable(bytes) else {
            return "its trailer's object count or offset table lies outside the file: the file is truncated or damaged"
        }
        guard let top = table.integer(at: trailer + 16, size: 8), top < table.objectCount else {
            return "its trailer names a top object that does not exist: the file is truncated or damaged"
        }
        for index in 0..<table.objectCount {
            // Objects lie between the 8-byte header and the offset table.
            guard let offset = table.objectOffset(index), offset >= 8, offset < table.tableOffset else {
                return "object \(index) of \(table.objectCount) lies outside the objects: the file is truncated or damaged"
            }
        }
        return nil
    }

    /// The most objects a binary property list may stand for once read, a reference counted
    /// each time it is used: far more than a manifest holds, far less than a parser given
    /// shared references can be made to build from a few hundred bytes.
    public static let maximumExpandedObjects = 200_000

    /// The most bytes of strings and data a binary property list may stand for once every
    /// shared reference is followed: 16 MiB. `PropertyListSerialization` on Linux makes a
    /// copy of a string for every reference to it, so 2,000 references to one 100 KB string
    /// (a 104 KB file) took 215 MB to read, and the 200,000 references a manifest may hold
    /// to one string of half a megabyte would stand for 100 GB.
    public static let maximumExpandedBytes = 16 << 20

    /// What makes the objects reachable from the top of `data` unfit to be read, or `nil`:
    /// an array or dictionary that contains itself, more than `maximumDepth` arrays and
    /// dictionaries inside one another (as in JSON and XML property lists: a string inside
    /// the innermost is no level), more than ``maximumExpandedObjects`` objects or
    /// ``maximumExpandedBytes`` of strings and data once every reference is followed, or
    /// dictionary keys that overlap one another in the file.
    ///
    /// The format lets objects share references, so 40 arrays of 240 bytes, each holding the
    /// next twice, stand for 2^40 objects: `PropertyListSerialization` builds them all (bgtaskd
    /// grew to 5 GB installing one such manifest). Each object is visited once here (its
    /// expanded size and depth kept), iteratively, with every read bounds-checked; the work
    /// and the memory are linear in the file's size, however its objects overlap.
    public static func expansionProblem(in data: Data, maximumDepth: Int = StrictJSON.maximumDepth) -> String? {
        walk(data, maximumDepth: maximumDepth).problem
    }

    /// The first key repeated in one dictionary reachable from the top object (as text), or
    /// `nil`: none, or the walk stopped first at a problem ``expansionProblem(in:maximumDepth:)``
    /// reports, which comes first. Dictionaries nothing reaches are not read by Foundation
    /// either, so they are not checked.
    public static func firstDuplicate(in data: Data) -> String? {
        walk(data).duplicate
    }

    /// What one walk over the objects reachable from a binary property list's top finds.
    struct Walk {
        /// As ``BinaryPropertyListKeys/expansionProblem(in:maximumDepth:)`` reports it.
        var problem: String?
        /// The first repeated key, as ``BinaryPropertyListKeys/firstDuplicate(in:)`` reports it.
        var duplicate: String?
        /// References read plus bytes of keys decoded: at most
        /// ``BinaryPropertyListKeys/maximumExpandedObjects`` plus the file's size (plus one), so
        /// a crafted file costs no more than a manifest-sized one (tests check it).
        var work = 0
    }

    /// Walks the arrays and dictionaries reachable from the top of `data` depth first, each
    /// once (an object is known by its offset: offset-table entries naming the same bytes
    /// are one object), checking expansion, depth, loops and repeated keys together. Nothing
    /// is read up front: a level of the walk keeps where its container's references start,
    /// how many there are and which is next, and reads each when it comes to it, so the
    /// memory grows with the depth and the objects visited, never with the size of
    /// containers that overlap in the file.
    ///
    /// The work is bounded without trusting the file's layout. Every reference read counts
    /// at least once in the expanded size (each container is visited once, and its size is
    /// part of the top's), so reading more than ``maximumExpandedObjects`` references means
    /// the file stands for more objects than that. Each key's text is decoded once per offset
    /// and interned, so a dictionary compares numbers, not strings; keys whose distinct texts
    /// add up to more bytes than the file holds must overlap, which no writer does, and are
    /// refused rather than decoded again and again.
    static func walk(_ data: Data, maximumDepth: Int = StrictJSON.maximumDepth) -> Walk {
        var result = Walk()
        let bytes = [UInt8](data)
        guard let table = ObjectTable(bytes), let top = table.integer(at: table.trailer + 16, size: 8), top < table.objectCount,
              let topOffset = table.objectOffset(top) else { return result }
        let limit = maximumExpandedObjects, referenceSize = table.referenceSize
        let tooDeep = "arrays and dictionaries are nested more than \(maximumDepth) deep"
        let tooMany = "it stands for more than \(limit) objects once its shared references are followed (each counts every time it is used), more than a manifest holds"
        let byteLimit = maximumExpandedBytes
        let tooLarge = "its strings and data stand for more than \(byteLimit >> 20) MiB once its shared references are followed (each counts every time it is used), more than a manifest holds"
        /// The bytes a leaf at `offset` is read into: a string's or data's length (UTF-16
        /// strings two per unit), nothing for any other object.
        func leafBytes(at offset: Int) -> Int {
            let marker = bytes[offset] >> 4
            guard marker == 0x4 || marker == 0x5 || marker == 0x6, let (length, _) = table.count(at: offset), length >= 0 else { return 0 }
            // Capped before doubling: a length the file states may be near Int.max.
            let capped = min(byteLimit + 1, length)
            return min(byteLimit + 1, marker == 0x6 ? capped * 2 : capped)
        }

        /// An array or dictionary being walked: where its references start, how many (a
        /// dictionary's keys first, then its values), how many of them are keys, the next
        /// one to read, its expanded size and depth so far, and the keys it has shown.
        struct Frame {
            let offset: Int
            let start: Int
            let references: Int
            let keys: Int
            var next = 0
            var size = 1
            var depth = 1
            /// Bytes of strings and data, each counted every time it is referenced.
            var expandedBytes = 0
            var shownKeys: Set<Int> = []
        }
        /// The array or dictionary at `offset`, or `nil` for any other object (a leaf) and for
        /// a container whose references would run past the objects (Foundation reports it).
        func container(at offset: Int) -> Frame? {
            let marker = bytes[offset] >> 4
            guard marker == 0xA || marker == 0xD, let (count, start) = table.count(at: offset) else { return nil }
            let (references, overflow) = marker == 0xD ? count.multipliedReportingOverflow(by: 2) : (count, false)
            guard !overflow, references >= 0, references <= (table.trailer - start) / max(1, referenceSize) else { return nil }
            return Frame(offset: offset, start: start, references: references, keys: marker == 0xD ? count : 0)
        }

        // Key texts, interned: a key object's offset to the number of its text (nil: not a
        // string), and the texts by number for the message.
        var keyNumbers: [Int: Int?] = [:]
        var numbersByText: [String: Int] = [:]
        var texts: [String] = []
        var keyBytes = 0
        /// The number of the text of the key at `offset`; `.none` when the keys decoded so far
        /// overlap (see above).
        func keyNumber(at offset: Int) -> Int?? {
            if let known = keyNumbers[offset] { return known }
            guard let (length, start) = table.count(at: offset) else { return .some(nil) }
            var text: String?
            switch bytes[offset] >> 4 {
            case 0x5 where length <= table.trailer - start:
                keyBytes += length
                guard keyBytes <= bytes.count else { return .none }
                text = String(decoding: bytes[start..<start + length], as: UTF8.self)
            case 0x6 where length <= (table.trailer - start) / 2:
                keyBytes += 2 * length
                guard keyBytes <= bytes.count else { return .none }
                text = String(decoding: (0..<length).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }, as: UTF16.self)
            default:
                break
            }
            var number: Int?
            if let text {
                number = numbersByText[text] ?? texts.count
                if number == texts.count {
                    numbersByText[text] = texts.count
                    texts.append(text)
                }
            }
            keyNumbers[offset] = number
            return .some(number)
        }

        enum Visit { case open, done(size: Int, depth: Int, expandedBytes: Int) }
        var visits: [Int: Visit] = [:]
        var referencesRead = 0
        guard let root = container(at: topOffset) else { return result }
        var stack = [root]
        visits[topOffset] = .open
        while let frame = stack.indices.last {
            guard stack[frame].next < stack[frame].references else {
                let finished = stack.removeLast()
                visits[finished.offset] = .done(size: finished.size, depth: finished.depth, expandedBytes: finished.expandedBytes)
                guard let parent = stack.indices.last else { break }
                stack[parent].size = min(limit + 1, stack[parent].size + finished.size)
                stack[parent].depth = max(stack[parent].depth, finished.depth + 1)
                stack[parent].expandedBytes = min(byteLimit + 1, stack[parent].expandedBytes + finished.expandedBytes)
                continue
            }
            let position = stack[frame].next
            stack[frame].next += 1
            referencesRead += 1
            result.work += 1
            guard referencesRead <= limit else {
                result.problem = tooMany
                return result
            }
            guard let child = table.integer(at: stack[frame].start + position * referenceSize, size: referenceSize),
                  child < table.objectCount, let offset = table.objectOffset(child) else {
                // Foundation refuses a reference to no object; counted like a leaf, so that
                // the references read stay within the expanded size.
                stack[frame].size = min(limit + 1, stack[frame].size + 1)
                continue
            }
            if position < stack[frame].keys, result.duplicate == nil {
                let before = keyBytes
                guard let number = keyNumber(at: offset) else {
                    result.problem = "its dictionary keys overlap one another in the file (they add up to more bytes than the file holds): the file is damaged"
                    return result
                }
                result.work += keyBytes - before
                if let number, !stack[frame].shownKeys.insert(number).inserted { result.duplicate = texts[number] }
            }
            guard let opened = container(at: offset) else {
                stack[frame].size = min(limit + 1, stack[frame].size + 1)
                stack[frame].expandedBytes = min(byteLimit + 1, stack[frame].expandedBytes + leafBytes(at: offset))
                guard stack[frame].expandedBytes <= byteLimit else {
                    // Too many objects, when that is so too, says more about such a file.
                    result.problem = stack[frame].size > limit ? tooMany : tooLarge
                    return result
                }
                continue
            }
            switch visits[offset] {
            case .open?:
                result.problem = "an array or dictionary contains itself"
                return result
            case .done(let size, let depth, let expandedBytes)?:
                // The levels open here plus the ones it holds.
                guard stack.count + depth <= maximumDepth else {
                    result.problem = tooDeep
                    return result
                }
                stack[frame].size = min(limit + 1, stack[frame].size + size)
                stack[frame].depth = max(stack[frame].depth, depth + 1)
                stack[frame].expandedBytes = min(byteLimit + 1, stack[frame].expandedBytes + expandedBytes)
                guard stack[frame].expandedBytes <= byteLimit else {
                    // Too many objects, when that is so too, says more about such a file.
                    result.problem = stack[frame].size > limit ? tooMany : tooLarge
                    return result
                }
            case nil:
                guard stack.count < maximumDepth else {
                    result.problem = tooDeep
                    return result
                }
                visits[offset] = .open
                stack.append(opened)
            }
        }
        if case .done(let size, let depth, let expandedBytes)? = visits[topOffset] {
            if depth > maximumDepth {
                result.problem = tooDeep
            } else if size > limit {
                result.problem = tooMany
            } else if expandedBytes > byteLimit {
                result.problem = tooLarge
            }
        }
        return result
    }

    /// A binary property list's trailer and offset table, every read bounds-checked.
    private struct ObjectTable {
        let bytes: [UInt8]
        let trailer: Int
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let tableOffset: Int

        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 40, bytes.starts(with: Array("bplist".utf8)) else { return nil }
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6])
            guard let count = Self.integer(in: bytes, at: trailer + 8, size: 8), let table = Self.integer(in: bytes, at: trailer + 24, size: 8),
                  count <= bytes.count, table < trailer,
                  count.multipliedReportingOverflow(by: offsetSize).partialValue <= trailer - table else { return nil }
            self.bytes = bytes
            self.trailer = trailer
            self.offsetSize = offsetSize
            self.referenceSize = Int(bytes[trailer + 7])
            self.objectCount = count
            self.tableOffset = table
        }

        func integer(at offset: Int, size: Int) -> Int? { Self.integer(in: bytes, at: offset, size: size) }

        static func integer(in bytes: [UInt8], at offset: Int, size: Int) -> Int? {
            guard size >= 1, size <= 8, offset >= 0, offset + size <= bytes.count else { return nil }
            var value: UInt64 = 0
            for index in offset..<offset + size { value = value << 8 | UInt64(bytes[index]) }
            return value > UInt64(Int.max) ? nil : Int(value)
        }

        func objectOffset(_ index: Int) -> Int? {
            guard index >= 0, index < objectCount, let offset = integer(at: tableOffset + index * offsetSize, size: offsetSize), offset < trailer else { return nil }
            return offset
        }

        /// The count in a marker's low nibble, or the integer object after it; and where the
        /// content starts.
        func count(at offset: Int) -> (count: Int, start: Int)? {
            let low = Int(bytes[offset] & 0x0F)
            if low != 0x0F { return (low, offset + 1) }
            guard offset + 1 < bytes.count, bytes[offset + 1] & 0xF0 == 0x10 else { return nil }
            let size = 1 << Int(bytes[offset + 1] & 0x0F)
            guard let value = integer(at: offset + 2, size: size) else { return nil }
            return (value, offset + 2 + size)
        }
    }
}
