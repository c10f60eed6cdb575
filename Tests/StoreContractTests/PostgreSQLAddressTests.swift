import Foundation
@testable import PostgreSQLStore
import SchedulerStore
import Testing

/// Addresses are parsed without a server: libpq's parser and the store's own checks.
@Suite("PostgreSQL addresses")
struct PostgreSQLAddressTests {
    /// The password every hostile address carries somewhere: it must never be echoed.
    static let secret = "Hunter2-S3cret"

    /// Hostile or malformed addresses, each with a word its message must contain (the part
    /// at fault).
    static let refused: [(address: String, names: String)] = [
        ("", "empty"),
        ("garbage \(secret)", "neither a postgresql://"),
        ("ℙ𝕠𝕤𝕥𝕘𝕣𝕖𝕤://\(secret)", "scheme"),
        ("mysql://root:\(secret)@db/app", "scheme \"mysql://\""),
        ("host=/tmp password=\(secret) dbname=" + String(repeating: "x", count: 4_100), "4 KiB"),
        ("host=/tmp password=\(secret)\0 dbname=other", "NUL byte"),
        ("postgresql://app:\(secret)@db/app\nX-Forged: log line", "line break"),
        ("postgresql://app:\(secret)@db/app\r", "line break"),
        ("host=/tmp\u{2028}password=\(secret)", "line break"),
        ("host=/tmp\tpassword=\(secret)", "control character U+0009"),
        ("host=/tmp password=\(secret)\u{7F}", "control character U+007F"),
        ("host=/tmp password=\(secret) bogus=1", "invalid connection option \"bogus\""),
        ("postgresql://app:\(secret)@db/app?bogus=1", "bogus"),
        ("host=/tmp password='\(secret)", "unterminated quoted string"),
        ("postgresql://app:\(secret)@[::1/app", "IPv6"),
        ("postgresql://app:\(secret)%zz@db/app", "percent-encoded"),
        ("postgresql://app:\(secret)%00@db/app", "%00"),
        ("postgresql://app:\(secret)@db:99999/app", "port"),
        ("postgresql://app:\(secret)@db:0/app", "port"),
        ("postgresql://app:\(secret)@db:http/app", "port"),
        // No "@" before the first "/": libpq reads the password's place as the port.
        ("postgresql://app:\(secret)/x@db/app", "port"),
        ("host=a,b port=5432,70000 password=\(secret)", "port (number 2 of 2)"),
        ("postgresql://app:\(secret)@db/app?connect_timeout=0", "connect_timeout"),
        ("host=/tmp connect_timeout=-5 password=\(secret)", "connect_timeout"),
        ("host=/tmp connect_timeout=ten password=\(secret)", "connect_timeout"),
    ]

    @Test("hostile and malformed addresses are refused, naming the part at fault, never showing the password", arguments: refused)
    func refusedAddresses(address: String, names: String) throws {
        let error = try #require(throws: StoreError.self) { try PostgreSQLAddress.parse(address) }
        #expect(error.code == .invalidAddress)
        #expect(error.message.hasPrefix("the PostgreSQL address is invalid: "))
        #expect(error.message.contains(names), "\(error.message)")
        #expect(!error.message.contains("Hunter2") && !error.message.contains("S3cret"), "\(error.message)")
        #expect(!error.message.contains("\n") && !error.message.contains("\0"))
        #expect(error.path == nil)
    }

    @Test("a short password is hidden where it stands alone, not inside every word")
    func shortPasswordsAreHiddenAsWholeTokens() {
        let said = "connection to server on socket \"/nonexist/.s.PGSQL.5432\" failed: password e for user e rejected"
        #expect(AddressSecrets.hide("e", in: said)
            == "connection to server on socket \"/nonexist/.s.PGSQL.5432\" failed: password (hidden) for user (hidden) rejected")
        #expect(AddressSecrets.hide("e", in: "u:e@host") == "u:(hidden)@host")
        // Six characters or more: hidden wherever they appear, even inside a word.
        #expect(AddressSecrets.hide("secret", in: "xsecretx and secret") == "x(hidden)x and (hidden)")
    }

    @Test("both forms parse; the redacted address names the server and user, never the password")
    func redaction() throws {
        let forms = [
            "postgresql://app:\(Self.secret)@db.example.com:6543/scheduler?sslmode=require",
            "postgres://app:\(Self.secret)@db.example.com:6543/scheduler",
            "host=db.example.com port=6543 dbname=scheduler user=app password=\(Self.secret)",
            "host=db.example.com port=6543 dbname=scheduler user=app password='\(Self.secret)'",
            "postgresql://db.example.com:6543/scheduler?user=app&password=\(Self.secret)",
        ]
        for form in forms {
            let address = try PostgreSQLAddress.parse(form)
            #expect(address.redacted == "host=db.example.com port=6543 dbname=scheduler user=app", "\(form)")
            #expect("\(address)" == address.redacted)
            #expect(address.value(of: "password") == Self.secret, "libpq keeps it, to send when asked")
        }
        let odd = try PostgreSQLAddress.parse(#"host='/run/my postgres' dbname='it\'s'"#)
        #expect(odd.redacted == #"host='/run/my postgres' dbname='it\'s'"#)
    }

    /// Messages say "the PostgreSQL server \(redacted)": an address naming nothing read
    /// "the PostgreSQL server the default PostgreSQL server (libpq's defaults)".
    @Test("an address that names no server is described without repeating the words around it")
    func defaultServerDescription() {
        let address = PostgreSQLAddress(options: [], environment: [:])
        #expect(address.redacted == "(libpq's defaults)")
        #expect(!"the PostgreSQL server \(address.redacted)".contains("PostgreSQL server the"))
    }

    @Test("a connect timeout and TCP keepalives are added when the address has none, and kept when it has them")
    func connectTimeout() throws {
        func timeout(_ text: String) throws -> [String] {
            try PostgreSQLAddress.parse(text).connectionOptions(applicationName: "bgtask test")
                .filter { $0.keyword == "connect_timeout" }.map(\.value)
        }
        if ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] == nil {
            #expect(try timeout("host=/tmp dbname=x") == ["10"])
        }
        #expect(try timeout("postgresql:///x?connect_timeout=3") == ["3"])
        let options = try PostgreSQLAddress.parse("host=/tmp client_encoding=LATIN1").connectionOptions(applicationName: "bgtask a")
        #expect(options.filter { $0.keyword.hasPrefix("keepalives") || $0.keyword == "tcp_user_timeout" }.map { "\($0.keyword)=\($0.value)" }
            == ["keepalives=1", "keepalives_idle=10", "keepalives_interval=5", "keepalives_count=3", "tcp_user_timeout=30000"],
            "a server gone silently is found, not waited for")
        let own = try PostgreSQLAddress.parse("postgresql://db.example.com/x?keepalives_idle=60&tcp_user_timeout=5000").connectionOptions(applicationName: "bgtask a")
        #expect(own.filter { $0.keyword == "keepalives_idle" }.map(\.value) == ["60"], "the address's own is kept, once")
        #expect(own.filter { $0.keyword == "tcp_user_timeout" }.map(\.value) == ["5000"])
        let off = try PostgreSQLAddress.parse("host=db.example.com keepalives=0").connectionOptions(applicationName: "bgtask a")
        #expect(off.filter { $0.keyword.hasPrefix("keepalives") }.map { "\($0.keyword)=\($0.value)" } == ["keepalives=0"], "off means off")
        #expect(options.filter { $0.keyword == "client_encoding" }.map(\.value) == ["UTF8"])
        #expect(options.filter { $0.keyword == "fallback_application_name" }.map(\.value) == ["bgtask a"])
    }
}
