import Foundation

/// A usage error of a command line (`bgtask`, `bgtaskd`): the message names the flag and
/// the value; the program prints it with its usage and exits 64.
public struct CommandLineUsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public var message: String
    /// An error saying `message`.
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// Reading option values the same way in every command: a value flag needs a value, and
/// an empty string or another option (`--json`) in its place is refused rather than taken
/// as a file name; numbers are whole decimal numbers within a stated range.
public enum CommandLineValue {
    /// The value after the option at `index` (which is advanced past it). `what` names the
    /// kind of value for the message ("a file path", "a number").
    public static func take(_ arguments: [String], at index: inout Int, for option: String, what: String) -> Result<String, CommandLineUsageError> {
        guard index + 1 < arguments.count else { return .failure(CommandLineUsageError(message: "\(option) needs \(what)")) }
        let value = arguments[index + 1]
        if value.isEmpty { return .failure(CommandLineUsageError(message: "\(option) needs \(what), got an empty string")) }
        if value.hasPrefix("--") { return .failure(CommandLineUsageError(message: "\(option) needs \(what), got the option '\(value)'")) }
        index += 1
        return .success(value)
    }

    /// A whole decimal number in `range` (`Int(text)` alone would accept `+5`).
    public static func integer(_ text: String, for option: String, in range: ClosedRange<Int>) -> Result<Int, CommandLineUsageError> {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(text), range.contains(number) else {
            return .failure(CommandLineUsageError(message: "\(option) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'"))
        }
        return .success(number)
    }

    /// A number of seconds in `range` (decimals allowed; NaN, infinities and `1e999` are
    /// refused before anything is converted).
    public static func seconds(_ text: String, for option: String, in range: ClosedRange<Double>) -> Result<Double, CommandLineUsageError> {
        // Plain decimal notation only (`30`, `0.5`): no sign, exponent, hex (`0x10`, `0x1p3`)
        // or digits of other scripts, as bgtask's other numbers.
        guard isPlainDecimal(text), let number = Double(text), number.isFinite, range.contains(number) else {
            return .failure(CommandLineUsageError(message: "\(option) must be a number of seconds from \(boundText(range.lowerBound)) to \(boundText(range.upperBound)), got '\(text)'"))
        }
        return .success(number)
    }

    /// Whether `text` is digits with at most one decimal point between digits (`30`, `0.5`;
    /// not `+3`, `1e3`, `0x10`, `.5` or digits of other scripts).
    public static func isPlainDecimal(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        return parts.allSatisfy { part in !part.isEmpty && part.allSatisfy { (0x30...0x39).contains($0) } }
    }

    /// A bound as a person writes it: `3600`, `0.1`.
    static func boundText(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }

    /// A seed: a whole decimal number from 0 to `UInt64.max`.
    public static func seed(_ text: String, for option: String) -> Result<UInt64, CommandLineUsageError> {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seed = UInt64(text) else {
            return .failure(CommandLineUsageError(message: "\(option) must be a whole number from 0 to \(UInt64.max), got '\(text)'"))
        }
        return .success(seed)
    }

    /// An app identifier given on the command line (``AppID/problem(with:)``): one that
    /// could name another directory (`../x`) or hold control characters is refused here,
    /// before it becomes a path or reaches the terminal.
    public static func app(_ text: String, for option: String) -> Result<AppID, CommandLineUsageError> {
        if let problem = AppID.problem(with: text) { return .failure(CommandLineUsageError(message: "\(option): \(problem)")) }
        return .success(AppID(text))
    }

    /// A task identifier given on the command line: empty, longer than
    /// ``TaskIdentifierRules/maximumLength`` bytes or holding a control character, it could
    /// never name a request, so it is a usage error (its shape is left to the store's answer:
    /// a diagnostic may be asked about any row there is).
    public static func taskIdentifier(_ text: String, for option: String) -> Result<String, CommandLineUsageError> {
        if text.isEmpty { return .failure(CommandLineUsageError(message: "\(option): a task identifier cannot be empty")) }
        if text.utf8.count > TaskIdentifierRules.maximumLength {
            return .failure(CommandLineUsageError(message: "\(option): a task identifier is at most \(TaskIdentifierRules.maximumLength) bytes of UTF-8; this one has \(text.utf8.count)"))
        }
        if let control = StrictJSON.firstControlCharacter(in: text) {
            return .failure(CommandLineUsageError(message: "\(option): a task identifier cannot contain control characters; this one has \(StrictJSON.codePoint(control))"))
        }
        return .success(text)
    }

    /// The process's arguments after the program's name, each read as UTF-8; the usage
    /// error naming the first that is not (``arguments(_:)``).
    public static func processArguments() -> Result<[String], CommandLineUsageError> {
        let count = Int(CommandLine.argc)
        guard count > 1 else { return .success([]) }
        return arguments((1..<count).map { index in
            CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))).map { UInt8(bitPattern: $0) } } ?? []
        })
    }

    /// `raw` (arguments as the kernel passed them) as strings, or the usage error naming
    /// the first that is not valid UTF-8: `argument 2 is not valid UTF-8 ('/tmp/Inf\xFF.json')`.
    /// Swift's `CommandLine.arguments` decodes such bytes as U+FFFD, and the altered path
    /// named a file that does not exist (or an app that is not installed) beside the one
    /// the user can see; a path is never opened from its bytes, so such a name is refused.
    public static func arguments(_ raw: [[UInt8]]) -> Result<[String], CommandLineUsageError> {
        var decoded: [String] = []
        for (offset, bytes) in raw.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                return .failure(CommandLineUsageError(message: "argument \(offset + 1) is not valid UTF-8 ('\(escapingInvalidUTF8(bytes))'); names and paths are read as UTF-8 (rename the file)"))
            }
            decoded.append(text)
        }
        return .success(decoded)
    }

    /// `bytes` as text, each byte that is not part of valid UTF-8 written as `\xFF`.
    static func escapingInvalidUTF8(_ bytes: [UInt8]) -> String {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var position = 0
        var text = ""
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                text.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<position + length] { text += "\\x" + String(byte, radix: 16, uppercase: true) }
                position += length
            case .emptyInput:
                return text
            }
        }
    }

    /// `text` as one word a POSIX shell reads back as it is: unchanged when it holds only
    /// letters, digits and `_ . / = , : + - @ %`, else in single quotes (a quote inside as
    /// `'\''`). For the "reproduce:" lines of reports, whose paths may hold spaces.
    public static func shellWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "_./=,:+-@%".unicodeScalars.contains(scalar))
        }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A positional argument that must say something: not empty, not an option.
    public static func positional(_ text: String, what: String, command: String) -> CommandLineUsageError? {
        if text.isEmpty { return CommandLineUsageError(message: "\(command) needs \(what), got an empty string") }
        return nil
    }
}
