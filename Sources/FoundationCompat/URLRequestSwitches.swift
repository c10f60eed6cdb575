import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The per-request switches iOS code sets on a `URLRequest` that swift-corelibs-foundation's
// has no property for (docs/porting.md, "Background URL sessions"): which networks a request
// may use, its HTTP/3 and DNS hints, who asked for it. A corelibs `URLRequest` is a
// copy-on-write box around an `NSMutableURLRequest`, which it copies with `copy()` whenever a
// shared box is changed (a copy keeps only the fields corelibs knows; its protocol properties
// are dropped). So the switches live in a subclass of `NSMutableURLRequest` whose copies are of
// the subclass and carry them: setting one puts the request in such a box, and every later
// copy, change and bridge keeps them, with `URLRequest`'s value semantics (a copy taken before
// the change keeps the old value). They are kept and read back; the transfers do not obey
// them (curl here has no notion of an expensive or constrained network), as the session
// configuration's own switches.

/// Who asked for a request (Apple: `NSURLRequest.Attribution`, Apple's raw values).
extension NSURLRequest {
    public enum Attribution: UInt, Sendable {
        /// The app made the request (the default).
        case developer = 0
        /// The user asked for it (typed or tapped the URL).
        case user = 1
    }
}

extension URLRequest {
    /// Who asked for a request (Apple: `URLRequest.Attribution`).
    public typealias Attribution = NSURLRequest.Attribution

    /// Whether the request may use an expensive network, cellular or a hotspot (Apple:
    /// `allowsExpensiveNetworkAccess`, `true` by default). Kept with the request and its
    /// copies, not enforced: check `NWPathMonitor`'s `isExpensive` before a large transfer.
    @_disfavoredOverload
    public var allowsExpensiveNetworkAccess: Bool {
        get { RequestSwitches.of(self).allowsExpensiveNetworkAccess }
        set { RequestSwitches.change(&self) { $0.allowsExpensiveNetworkAccess = newValue } }
    }

    /// Whether the request may use a network in Low Data Mode (Apple:
    /// `allowsConstrainedNetworkAccess`, `true` by default). Kept, not enforced (Linux has no
    /// Low Data Mode: `NWPath.isConstrained` is always `false`).
    @_disfavoredOverload
    public var allowsConstrainedNetworkAccess: Bool {
        get { RequestSwitches.of(self).allowsConstrainedNetworkAccess }
        set { RequestSwitches.change(&self) { $0.allowsConstrainedNetworkAccess = newValue } }
    }

    /// Whether the server is taken to speak HTTP/3 from the first request (Apple:
    /// `assumesHTTP3Capable`, `false` by default). Kept; the transfer uses what curl
    /// negotiates.
    @_disfavoredOverload
    public var assumesHTTP3Capable: Bool {
        get { RequestSwitches.of(self).assumesHTTP3Capable }
        set { RequestSwitches.change(&self) { $0.assumesHTTP3Capable = newValue } }
    }

    /// Who asked for the request (Apple: `attribution`, `.developer` by default). Kept; iOS
    /// uses it for its privacy report, which Linux has not.
    @_disfavoredOverload
    public var attribution: Attribution {
        get { RequestSwitches.of(self).attribution }
        set { RequestSwitches.change(&self) { $0.attribution = newValue } }
    }

    /// Whether the host's name must be resolved with DNSSEC validation (Apple:
    /// `requiresDNSSECValidation`, `false` by default). Kept, not enforced: the system's
    /// resolver decides.
    @_disfavoredOverload
    public var requiresDNSSECValidation: Bool {
        get { RequestSwitches.of(self).requiresDNSSECValidation }
        set { RequestSwitches.change(&self) { $0.requiresDNSSECValidation = newValue } }
    }

    /// Whether the host's addresses may be kept in a per-process cache across networks
    /// (Apple: `allowsPersistentDNS`, `false` by default). Kept; nothing is cached here.
    @_disfavoredOverload
    public var allowsPersistentDNS: Bool {
        get { RequestSwitches.of(self).allowsPersistentDNS }
        set { RequestSwitches.change(&self) { $0.allowsPersistentDNS = newValue } }
    }

    /// The partition of cookies the request uses (Apple: `cookiePartitionIdentifier`, `nil`
    /// by default). Kept; the session's cookie storage is not partitioned here.
    @_disfavoredOverload
    public var cookiePartitionIdentifier: String? {
        get { RequestSwitches.of(self).cookiePartitionIdentifier }
        set { RequestSwitches.change(&self) { $0.cookiePartitionIdentifier = newValue } }
    }
}

/// The switches of one request, with Apple's defaults.
struct RequestSwitches: Equatable, Sendable {
    var allowsExpensiveNetworkAccess = true
    var allowsConstrainedNetworkAccess = true
    var assumesHTTP3Capable = false
    var attribution = NSURLRequest.Attribution.developer
    var requiresDNSSECValidation = false
    var allowsPersistentDNS = false
    var cookiePartitionIdentifier: String?

    /// The switches `request` carries (the defaults for a request none was set on, and for
    /// one whose URL was set to nil: corelibs cannot copy such a request out of its box).
    static func of(_ request: URLRequest) -> RequestSwitches {
        guard request.url != nil else { return RequestSwitches() }
        // A copy of the box's request (corelibs hands out no other view of it): of the
        // subclass when a switch was set. One allocation per read; switches are read rarely.
        return (request._bridgeToObjectiveC() as? SwitchedURLRequest)?.switches ?? RequestSwitches()
    }

    /// Changes the switches of `request`, which from then on is boxed in a
    /// ``SwitchedURLRequest`` (every field corelibs copies kept).
    static func change(_ request: inout URLRequest, _ body: (inout RequestSwitches) -> Void) {
        var switches = of(request)
        body(&switches)
        let timeout = request.timeoutInterval
        // Made from the value's own fields (not a copy out of its box, which corelibs cannot
        // make of a request without a URL); corelibs boxes a copy of it, made by
        // `mutableCopy`: of the subclass, switches kept.
        request = URLRequest._unconditionallyBridgeFromObjectiveC(SwitchedURLRequest.copying(request, switches: switches))
        // corelibs' URLRequest remembers beside its box whether the timeout was set (only a
        // set one overrides the session's `timeoutIntervalForRequest`); a new value starts
        // without, so a timeout other than the default is set again. (One set to the default,
        // 60 s, is taken as not set: the session's then applies.)
        if timeout != 60 { request.timeoutInterval = timeout }
    }
}

/// The fields swift-corelibs-foundation copies from one request to another (its
/// `setValues(from:)`), read alike from a `URLRequest` and an `NSURLRequest`.
protocol CopiedRequestFields {
    var url: URL? { get }
    var mainDocumentURL: URL? { get }
    var cachePolicy: NSURLRequest.CachePolicy { get }
    var timeoutInterval: TimeInterval { get }
    var httpMethod: String? { get }
    var allHTTPHeaderFields: [String: String]? { get }
    var httpBody: Data? { get }
    var httpBodyStream: InputStream? { get }
    var networkServiceType: NSURLRequest.NetworkServiceType { get }
    var allowsCellularAccess: Bool { get }
    var httpShouldHandleCookies: Bool { get }
    var httpShouldUsePipelining: Bool { get }
}

extension URLRequest: CopiedRequestFields {}
extension NSURLRequest: CopiedRequestFields {}

/// The deprecated pipelining switch, set without the deprecation's warning.
protocol SettablePipelining {
    var httpShouldUsePipelining: Bool { get set }
}

extension NSMutableURLRequest: SettablePipelining {}

/// An `NSMutableURLRequest` that carries ``RequestSwitches`` through every copy, so that a
/// `URLRequest` boxing it keeps them when corelibs copies its box.
/// Not `Sendable`, as `NSMutableURLRequest`: `URLRequest`'s copy-on-write box confines it.
final class SwitchedURLRequest: NSMutableURLRequest {

    /// The switches.
    var switches = RequestSwitches()

    /// A request of this class with every field of `source` that corelibs copies, and
    /// `switches`.
    static func copying(_ source: some CopiedRequestFields, switches: RequestSwitches) -> SwitchedURLRequest {
        // A request whose URL was set to nil: corelibs' own copy would stop the program; this
        // one keeps the nil.
        let copy = SwitchedURLRequest(url: source.url ?? URL(fileURLWithPath: "/"), cachePolicy: source.cachePolicy, timeoutInterval: source.timeoutInterval)
        copy.url = source.url
        copy.mainDocumentURL = source.mainDocumentURL
        copy.httpMethod = source.httpMethod
        copy.allHTTPHeaderFields = source.allHTTPHeaderFields
        if let stream = source.httpBodyStream {
            copy.httpBodyStream = stream
        } else {
            copy.httpBody = source.httpBody
        }
        copy.networkServiceType = source.networkServiceType
        copy.allowsCellularAccess = source.allowsCellularAccess
        copy.httpShouldHandleCookies = source.httpShouldHandleCookies
        // Through a protocol: the field is deprecated, and copying it is not using it.
        var pipelining: any SettablePipelining = copy
        pipelining.httpShouldUsePipelining = source.httpShouldUsePipelining
        copy.switches = switches
        return copy
    }

    /// A copy of this class, switches kept (corelibs' `copy()` of a mutable request and
    /// `URLRequest`'s boxing both come here).
    override func mutableCopy(with zone: NSZone? = nil) -> Any {
        SwitchedURLRequest.copying(self, switches: switches)
    }
    // Equality stays corelibs' (the fields it compares): the switches are not part of it,
    // so that a plain request and a switched one compare the same way round either side.
}
