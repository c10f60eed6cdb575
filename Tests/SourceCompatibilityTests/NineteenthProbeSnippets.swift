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
final class VendoredReachability: Sendable {
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
        // Each failing call on a thread of its own, which starts at kSCStatusOK: the status
        // read after it is that call's.
        let hostname = Thread.statusAfter { Self.thrown { _ = try VendoredReachability(hostname: "") } }
        #expect(hostname.thrown == .failedToCreateWithHostname("", invalid) && hostname.status == invalid)
        let address = Thread.statusAfter { Self.thrown { _ = try VendoredReachability(family: AF_UNIX) } }
        #expect(address.thrown == .failedToCreateWithAddress(invalid) && address.status == invalid)
        let fine = Thread.statusAfter { Self.thrown { _ = try VendoredReachability(family: AF_INET).flags() } }
        #expect(fine.thrown == nil && fine.status == Int32(kSCStatusOK))
        // A second queue for a target already on one is refused, with its status.
        let reachability = try VendoredReachability(family: AF_INET)
        try reachability.start(on: DispatchQueue(label: "first"))
        defer { reachability.stop() }
        let second = Thread.statusAfter { Self.thrown { try reachability.start(on: DispatchQueue(label: "second")) } }
        #expect(second.thrown == .unableToSetDispatchQueue(invalid) && second.status == invalid)
        // A call that succeeds leaves the last failure's status, as Apple's.
        let kept = Thread.statusAfter { () -> VendoredReachabilityError? in
            _ = SCNetworkReachabilityCreateWithName(nil, "")
            _ = SCNetworkReachabilityCreateWithName(nil, "example.com")
            return nil
        }
        #expect(kept.status == invalid)
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
        let invalid = Int32(kSCStatusInvalidArgument)
        let neither = Thread.statusAfter { () -> Bool? in SCNetworkReachabilityCreateWithAddressPair(nil, nil, nil) == nil }
        #expect(neither.thrown == true && neither.status == invalid)
        let (localCopy, unixFamily) = (local, sa_family_t(AF_UNIX))
        let unix = Thread.statusAfter { () -> Bool? in
            var local = localCopy
            var unix = sockaddr()
            unix.sa_family = unixFamily
            return SCNetworkReachabilityCreateWithAddressPair(nil, &local, &unix) == nil
        }
        #expect(unix.thrown == true && unix.status == invalid)
    }

    /// The reachability error `body` throws, if any.
    static func thrown(_ body: () throws -> Void) -> VendoredReachabilityError? {
        do { try body() } catch let error as VendoredReachabilityError { return error } catch { return nil }
        return nil
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
    /// What `body` returns and `SCError()` as read after it, on a new thread (handed back
    /// through the semaphore, which orders the write before the read).
    static func statusAfter<Result: Sendable>(_ body: @escaping @Sendable () -> Result?) -> (thrown: Result?, status: Int32) {
        let box = Box<(thrown: Result?, status: Int32)>((nil, -1))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = body()
            box.value = (result, SCError())
            done.signal()
        }
        done.wait()
        return box.value
    }
}
