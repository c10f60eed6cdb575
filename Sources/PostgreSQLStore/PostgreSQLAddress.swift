import CLibPQ
import Foundation
import SchedulerStore

/// Where a PostgreSQL store is: a libpq connection string, checked before anything connects
/// (docs/replicas.md, "Addresses and credentials").
///
/// Both of libpq's forms are accepted: a URI (`postgresql://user@host:5432/db?sslmode=require`,
/// or `postgres://`) and key/value pairs (`host=/run/postgresql port=5432 dbname=app`). The
/// password may be in the address, in `PGPASSWORD`, or in a pgpass file (`~/.pgpass`,
/// `PGPASSFILE`, or the `passfile` option): libpq looks for it itself when the server asks.
///
/// The value never shows a password: ``redacted`` (its ``description`` too) names the host,
/// port, database and user only, and is what every message of the store uses.
public struct PostgreSQLAddress: Sendable, Equatable, CustomStringConvertible {
    /// One libpq connection option (a keyword of `PQconndefaults` and its value).
    struct Option: Sendable, Equatable {
        var keyword: String
        var value: String
    }

    /// The options libpq parsed from the address, in libpq's order, credentials included:
    /// what ``connectionOptions(applicationName:)`` hands to `PQconnectdbParams`.
    let options: [Option]

    /// The server without credentials, as key=value pairs: `host`, `port`, `dbname` and
    /// `user`, from the address or else from `PGHOST`, `PGPORT`, `PGDATABASE` and `PGUSER`
    /// (what libpq falls back to). Never the password, nor any other option.
    public let redacted: String

    /// ``redacted``: an address is safe to interpolate into a log line.
    public var description: String { redacted }

    /// The longest address accepted, in UTF-8 bytes (4 KiB): a real one is a few hundred
    /// bytes, and anything longer is a mistake or an attack on the parser.
    public static let maximumLength = 4_096

    /// The connection timeout added when the address (or `PGCONNECT_TIMEOUT`) sets none, in
    /// seconds: opening a store never hangs on an unreachable server.
    public static let defaultConnectTimeout = 10

    /// Parses and checks `text` with libpq's own parser (`PQconninfoParse`), plus the checks
    /// libpq leaves to the moment it connects (ports, timeouts).
    ///
    /// - Throws: ``StoreError/Code/invalidAddress`` when the text is empty, longer than
    ///   ``maximumLength``, holds a NUL byte, a line break or another control character, is
    ///   neither form, names an unknown option, has a malformed URI part or percent-encoding,
    ///   a port outside 1-65535, or a `connect_timeout` that is not 1 to 86,400 seconds. The
    ///   message names the part at fault and never contains the password (what libpq says
    ///   is cleaned of every value that may hold it before it is quoted).
    public static func parse(_ text: String) throws(StoreError) -> PostgreSQLAddress {
        try checkCharacters(of: text)
        let isURI = try checkForm(of: text)
        let secrets = AddressSecrets.candidates(in: text, isURI: isURI)
        var options: [Option] = []
        var failure: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(text, &failure) else {
            var said = "libpq could not parse it"
            if let failure {
                said = String(cString: failure).trimmingCharacters(in: .whitespacesAndNewlines)
                PQfreemem(failure)
            }
            throw invalid(secrets.scrub(said))
        }
        defer { PQconninfoFree(parsed) }
        var option = parsed
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                options.append(Option(keyword: String(cString: keyword), value: String(cString: value)))
            }
            option += 1
        }
        let address = PostgreSQLAddress(options: options, environment: ProcessInfo.processInfo.environment)
        try address.checkValues()
        return address
    }

    init(options: [Option], environment: [String: String]) {
        self.options = options
        self.redacted = Self.redact(options, environment: environment)
    }

    /// The value of the option `keyword`, when the address sets it.
    func value(of keyword: String) -> String? {
        options.first { $0.keyword == keyword }?.value
    }

    /// The TCP settings a connection gets unless the address sets them (libpq ignores them
    /// on a Unix socket). Without them a server gone silently (a partition, a host that
    /// died, a dropped NAT entry) holds a call for as long as the system's TCP takes to give
    /// up: two hours for a connection waiting for an answer, about 15 minutes for one whose
    /// request was never acknowledged. Keepalives find the first in about 25 s (10 s idle,
    /// then 3 probes 5 s apart), `tcp_user_timeout` the second in 30 s; the call then
    /// fails as unavailable, naming the server, and the replica reconnects.
    static let defaultTCPOptions: [Option] = [
        Option(keyword: "keepalives", value: "1"),
        Option(keyword: "keepalives_idle", value: "10"),
        Option(keyword: "keepalives_interval", value: "5"),
        Option(keyword: "keepalives_count", value: "3"),
        Option(keyword: "tcp_user_timeout", value: "30000"),
    ]

    /// What to connect with: the address's options, `client_encoding` forced to UTF8 (Swift
    /// strings are UTF-8; another encoding would garble every name), ``defaultConnectTimeout``
    /// when nothing sets a timeout, ``defaultTCPOptions`` the address does not set, and
    /// `applicationName` as the fallback application name (so `pg_stat_activity` shows which
    /// replica a connection is).
    func connectionOptions(applicationName: String) -> [Option] {
        var result = options.filter { $0.keyword != "client_encoding" }
        result.append(Option(keyword: "client_encoding", value: "UTF8"))
        let fromEnvironment = ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"].flatMap { Int($0) }
        if value(of: "connect_timeout") == nil, !(fromEnvironment.map { (1...86_400).contains($0) } ?? false) {
            result.append(Option(keyword: "connect_timeout", value: String(Self.defaultConnectTimeout)))
        }
        if value(of: "fallback_application_name") == nil {
            result.append(Option(keyword: "fallback_application_name", value: applicationName))
        }
        // keepalives=0 turns them off: their timings are not added either.
        let keepalivesOff = value(of: "keepalives") == "0"
        result += Self.defaultTCPOptions.filter { value(of: $0.keyword) == nil && !(keepalivesOff && $0.keyword.hasPrefix("keepalives")) }
        return result
    }

    /// A libpq connection made with ``connectionOptions(applicationName:)``
    /// (`PQconnectdbParams`, blocking up to the connect timeout), whatever its status; `nil`
    /// only when libpq is out of memory. The caller checks `PQstatus` and finishes it.
    func openHandle(applicationName: String) -> OpaquePointer? {
        let options = connectionOptions(applicationName: applicationName)
        let keywords = options.map { strdup($0.keyword) } + [nil]
        let values = options.map { strdup($0.value) } + [nil]
        defer { for pointer in keywords + values { free(pointer) } }
        return keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywordPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                // expand_dbname 0: a dbname is a name, never a second connection string.
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 0)
            }
        }
    }

    // MARK: Checks

    private static func invalid(_ why: String) -> StoreError {
        StoreError(code: .invalidAddress, path: nil, message: "the PostgreSQL address is invalid: \(why)")
    }

    /// Length and characters: no NUL (libpq would stop reading there, silently dropping the
    /// rest), and no control character or line break (nothing legitimate needs one, and a
    /// line break in an address would forge lines in a log that quotes it).
    private static func checkCharacters(of text: String) throws(StoreError) {
        guard !text.isEmpty else { throw invalid("it is empty") }
        let length = text.utf8.count
        guard length <= maximumLength else {
            throw invalid("it is \(length) bytes long; at most \(maximumLength) (4 KiB) are accepted")
        }
        for (position, scalar) in text.unicodeScalars.enumerated() {
            let what: String
            switch scalar.properties.generalCategory {
            case _ where scalar.value == 0: what = "a NUL byte"
            case _ where scalar == "\n" || scalar == "\r": what = "a line break"
            case .control: what = "the control character U+\(String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4))"
            case .lineSeparator, .paragraphSeparator: what = "a line break"
            default: continue
            }
            throw invalid("it contains \(what) at character \(position + 1)")
        }
    }

    /// Which form `text` is in: a URI (`true`) or key/value pairs. Anything else is refused
    /// here, with a clearer message than libpq's ("missing \"=\" after ...", which would
    /// quote the text).
    private static func checkForm(of text: String) throws(StoreError) -> Bool {
        if text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") { return true }
        if let scheme = text.range(of: "://"), !text[..<scheme.lowerBound].contains(where: { $0 == "=" || $0 == " " }) {
            let name = text[..<scheme.lowerBound].prefix(20)
            throw invalid("its scheme \"\(name)://\" is not postgresql:// or postgres://")
        }
        guard text.contains("=") else {
            throw invalid("it is neither a postgresql:// (or postgres://) URL nor key=value pairs such as \"host=/run/postgresql dbname=app\"")
        }
        return false
    }

    /// What libpq checks only when it connects: each port of the host list, and the timeout.
    /// The message names the option but not its value, which a malformed URI may have taken
    /// from the password's place.
    private func checkValues() throws(StoreError) {
        if let ports = value(of: "port") {
            let list = ports.split(separator: ",", omittingEmptySubsequences: false)
            for (index, port) in list.enumerated() where !port.isEmpty {
                guard port.allSatisfy(\.isASCII), let number = Int(port), (1...65_535).contains(number) else {
                    let which = list.count > 1 ? " (number \(index + 1) of \(list.count))" : ""
                    throw Self.invalid("the port\(which) is not a TCP port number from 1 to 65535")
                }
            }
        }
        if let timeout = value(of: "connect_timeout") {
            guard timeout.allSatisfy(\.isASCII), let seconds = Int(timeout), (1...86_400).contains(seconds) else {
                throw Self.invalid("connect_timeout must be a whole number of seconds from 1 to 86400 (0 or none would let opening wait forever)")
            }
        }
    }

    // MARK: Redaction

    /// The server's parts, never a credential (see ``redacted``).
    private static func redact(_ options: [Option], environment: [String: String]) -> String {
        let parts: [(keyword: String, variable: String)] = [
            ("host", "PGHOST"), ("hostaddr", "PGHOSTADDR"), ("port", "PGPORT"), ("dbname", "PGDATABASE"), ("user", "PGUSER"),
        ]
        var shown: [String] = []
        for part in parts {
            let given = options.first { $0.keyword == part.keyword }?.value ?? environment[part.variable]
            guard let given, !given.isEmpty else { continue }
            shown.append("\(part.keyword)=\(quoted(given))")
        }
        // Not "the default PostgreSQL server": messages say "the PostgreSQL server \(redacted)".
        return shown.isEmpty ? "(libpq's defaults)" : shown.joined(separator: " ")
    }

    /// A value as libpq's key/value form writes it: bare when it is plain, else in single
    /// quotes with `\` and `'` escaped.
    private static func quoted(_ value: String) -> String {
        let plain = value.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && !" '\\\"".unicodeScalars.contains(scalar) && scalar.properties.generalCategory != .control
        }
        if plain { return value }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

/// The parts of an address that may hold a password, found without trusting the address to
/// be well formed, so that what libpq says about a malformed address can be cleaned of them
/// before it is shown.
struct AddressSecrets {
    /// The raw and percent-decoded texts that may be a password.
    var values: [String]

    /// What may be a secret in `text`: for a URI, everything between `://` and each `@` (its
    /// user information however libpq would split it; the user name goes too, a small loss);
    /// then the value of every option or query parameter whose name ends in `password`.
    static func candidates(in text: String, isURI: Bool) -> AddressSecrets {
        var found: [String] = []
        if isURI, let start = text.range(of: "://")?.upperBound {
            let rest = text[start...]
            var index = rest.startIndex
            while let at = rest[index...].firstIndex(of: "@") {
                found.append(String(rest[..<at]))
                index = rest.index(after: at)
            }
        }
        found += passwordValues(in: text, isURI: isURI)
        var values: [String] = []
        for value in found where !value.isEmpty {
            values.append(value)
            if let decoded = value.removingPercentEncoding, decoded != value, !decoded.isEmpty { values.append(decoded) }
            // The part after the user name's colon, alone, as libpq quotes a password token.
            if isURI, let colon = value.firstIndex(of: ":") {
                let password = String(value[value.index(after: colon)...])
                if !password.isEmpty { values.append(password) }
            }
        }
        // Longest first, so a longer secret is not left half-replaced by a shorter one.
        return AddressSecrets(values: Array(Set(values)).sorted { $0.count > $1.count })
    }

    /// The values of `...password` options: `password=...` in key/value form (quoted or
    /// bare) or in a URI's query.
    private static func passwordValues(in text: String, isURI: Bool) -> [String] {
        var values: [String] = []
        var search = text.startIndex
        while let found = text.range(of: "password", options: .caseInsensitive, range: search..<text.endIndex) {
            search = found.upperBound
            var index = found.upperBound
            while index < text.endIndex, text[index] == " " { index = text.index(after: index) }
            guard index < text.endIndex, text[index] == "=" else { continue }
            index = text.index(after: index)
            while index < text.endIndex, text[index] == " " { index = text.index(after: index) }
            let value: Substring
            if !isURI, index < text.endIndex, text[index] == "'" {
                let start = text.index(after: index)
                var end = start
                while end < text.endIndex, text[end] != "'" {
                    if text[end] == "\\", text.index(after: end) < text.endIndex { end = text.index(after: end) }
                    end = text.index(after: end)
                }
                value = text[start..<end]
            } else {
                let stops: Set<Character> = isURI ? ["&", "#"] : [" "]
                let end = text[index...].firstIndex { stops.contains($0) } ?? text.endIndex
                value = text[index..<end]
            }
            values.append(String(value))
        }
        return values
    }

    /// `text` with `value` replaced by `(hidden)`. A value of 6 characters or more is
    /// replaced wherever it appears; a shorter one only where it stands alone (no letter or
    /// digit on either side): replacing a password "e" inside every word made the message
    /// unreadable and gave the password away by elimination.
    static func hide(_ value: String, in text: String) -> String {
        guard value.count < 6 else { return text.replacingOccurrences(of: value, with: "(hidden)") }
        func isWordCharacter(_ character: Character?) -> Bool {
            guard let character else { return false }
            return character.isLetter || character.isNumber
        }
        var result = ""
        var rest = Substring(text)
        while let found = rest.range(of: value) {
            let before = found.lowerBound > text.startIndex ? text[text.index(before: found.lowerBound)] : nil
            let after = found.upperBound < text.endIndex ? text[found.upperBound] : nil
            result += rest[..<found.lowerBound]
            result += isWordCharacter(before) || isWordCharacter(after) ? String(rest[found]) : "(hidden)"
            rest = rest[found.upperBound...]
        }
        return result + rest
    }

    /// `message` with every candidate replaced, and every quoted piece of it that is part of
    /// a candidate (libpq quotes the token it stumbled on, which may be a slice of the
    /// password) hidden.
    func scrub(_ message: String) -> String {
        var result = message
        for value in values where !value.isEmpty {
            result = Self.hide(value, in: result)
        }
        var cleaned = ""
        var rest = Substring(result)
        while let open = rest.firstIndex(of: "\"") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "\"") else { break }
            let quoted = rest[afterOpen..<close]
            cleaned += rest[...open]
            if !quoted.isEmpty, values.contains(where: { $0.contains(quoted) }) {
                cleaned += "(hidden)"
            } else {
                cleaned += quoted
            }
            cleaned += "\""
            rest = rest[rest.index(after: close)...]
        }
        return cleaned + rest
    }
}

extension String {
    /// The string with `0`s in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
