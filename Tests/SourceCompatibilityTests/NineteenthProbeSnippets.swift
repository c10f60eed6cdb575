// Shapes a nineteenth outside compile probe found in public SDKs (written here in their shape,
// not copied), in Swift 6 mode with warnings as errors, and what they do here.
import Foundation
import Glibc
import SystemConfiguration
import Testing

/// The errors of the Reachability.swift that SDKs vendor (Stream Chat, Notificare): each
/// carries `SCError()` from the call that failed.
enum VendoredReachabilityError: Error, Equatable {
    case failedToCreateWithAddress(Int32)
    case failedToCreateWithHostname(String, Int32)
    case unableToSetDispatchQueue(Int32)
    case unableToGetFlags(Int32)
}

/// The vendored Reachability's shape: made from a host name or the zero address, started on a
/// queue, its failures thrown with the framework's status.
final class VendoredReachability {
    let target: SCNetworkReachability

    init(hostname: String) throws {
        guard let target = SCNetworkReachabilityCreateWithName(nil, hostname) else {
            throw VendoredReachabilityError.failedToCreateWithHostname(hostname, SCError())
        }
        self.target = target
    }

    init(family: Int32) throws {
        var zeroAddress = sockaddr()
        zeroAddress.sa_family = sa_family_t(family)
        guard let target = SCNetworkReachabilityCreateWithAddress(nil, &zeroAddress) else {
            throw VendoredReachabilityError.failedToCreateWithAddress(SCError())
        }
        self.target = target
    }

    func start(on queue: DispatchQueue) throws {
        if !SCNetworkReachabilitySetDispatchQueue(target, queue) {
            throw VendoredReachabilityError.unableToSetDispatchQueue(SCError())
        }
    }

    func stop() { SCNetworkReachabilitySetDispatchQueue(target, nil) }

    func flags() throws -> SCNetworkReachabilityFlags {
        var flags = SCNetworkReachabilityFlags()
        if !SCNetworkReachabilityGetFlags(target, &flags) {
            throw VendoredReachabilityError.unableToGetFlags(SCError())
        }
        return flags
    }

    /// How such SDKs log a failure: the status's message.
    static func describe(_ status: Int32) -> String { String(cString: SCErrorString(status)) }
}

@Suite struct NineteenthProbeSCErrorTests {
    @Test func aFailedCallLeavesItsStatusForSCErrorOnItsThread() throws {
        let invalid = Int32(kSCStatusInvalidArgument)
        #expect(throws: VendoredReachabilityError.failedToCreateWithHostname("", invalid)) { try VendoredReachability(hostname: "") }
        #expect(throws: VendoredReachabilityError.failedToCreateWithAddress(invalid)) { try VendoredReachability(family: AF_UNIX) }
        // A call that succeeds leaves the last failure's status, as Apple's.
        let reachability = try VendoredReachability(family: AF_INET)
        #expect(SCError() == invalid)
        _ = try reachability.flags()
        // Each thread has its own: a thread that made no failing call reads kSCStatusOK.
        let other = Thread.detachedStatus()
        #expect(other == Int32(kSCStatusOK))
        // A second queue for a target already on one is refused, with its status.
        try reachability.start(on: DispatchQueue(label: "first"))
        defer { reachability.stop() }
        #expect(throws: VendoredReachabilityError.unableToSetDispatchQueue(invalid)) {
            try reachability.start(on: DispatchQueue(label: "second"))
        }
    }

    @Test func aTargetForAnAddressPairNeedsOneAddressOfAnInternetFamily() throws {
        var local = sockaddr()
        local.sa_family = sa_family_t(AF_INET)
        var remote = sockaddr()
        remote.sa_family = sa_family_t(AF_INET6)
        let pair = try #require(SCNetworkReachabilityCreateWithAddressPair(nil, &local, &remote))
        var flags = SCNetworkReachabilityFlags()
        #expect(SCNetworkReachabilityGetFlags(pair, &flags))
        #expect(SCNetworkReachabilityCreateWithAddressPair(nil, nil, &remote) != nil)
        #expect(SCNetworkReachabilityCreateWithAddressPair(nil, nil, nil) == nil)
        #expect(SCError() == Int32(kSCStatusInvalidArgument))
        var unix = sockaddr()
        unix.sa_family = sa_family_t(AF_UNIX)
        #expect(SCNetworkReachabilityCreateWithAddressPair(nil, &local, &unix) == nil)
    }

    @Test func theStatusesHaveApplesValuesAndMessages() {
        let statuses: [Int] = [kSCStatusOK, kSCStatusFailed, kSCStatusInvalidArgument, kSCStatusNoStoreServer,
                               kSCStatusReachabilityUnknown, kSCStatusConnectionIgnore]
        #expect(statuses == [0, 1001, 1002, 2002, 4001, 5002])
        #expect(VendoredReachability.describe(Int32(kSCStatusOK)) == "Success!")
        #expect(VendoredReachability.describe(Int32(kSCStatusInvalidArgument)) == "Invalid argument")
        #expect(VendoredReachability.describe(Int32(kSCStatusReachabilityUnknown)) == "Network reachability cannot be determined")
        // An errno value reads as the C library words it.
        #expect(VendoredReachability.describe(ENOENT) == String(cString: strerror(ENOENT)))
        // The same pointer each time: nothing for the caller to free.
        let first = UnsafeRawPointer(SCErrorString(Int32(kSCStatusFailed)))
        let again = UnsafeRawPointer(SCErrorString(Int32(kSCStatusFailed)))
        #expect(first == again)
    }
}

private extension Thread {
    /// `SCError()` as a new thread reads it.
    static func detachedStatus() -> Int32 {
        let box = StatusBox()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            box.set(SCError())
            done.signal()
        }
        done.wait()
        return box.value
    }
}

/// One status handed from a thread to the test (its lock makes the hand-over safe).
private final class StatusBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Int32 = -1
    var value: Int32 { lock.withLock { stored } }
    func set(_ value: Int32) { lock.withLock { stored = value } }
}
