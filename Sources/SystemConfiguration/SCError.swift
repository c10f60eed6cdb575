// The status of the last SystemConfiguration call on a thread, as reachability code reads it
// after a call fails (the nineteenth outside probe: the widely vendored Reachability.swift,
// in Stream Chat's and Notificare's SDKs, passes `SCError()` into every error it throws).
// docs/porting.md, "Network reachability".
import Foundation
import Glibc

/// The call succeeded (Apple's SystemConfiguration; the status a thread starts with).
public let kSCStatusOK: Int = 0
/// Non-specific failure.
public let kSCStatusFailed: Int = 1001
/// An argument was not valid (a target made from an empty name or an address of another
/// family, a second queue for a scheduled target).
public let kSCStatusInvalidArgument: Int = 1002
/// Permission denied.
public let kSCStatusAccessError: Int = 1003
/// No such key.
public let kSCStatusNoKey: Int = 1004
/// The key is already defined.
public let kSCStatusKeyExists: Int = 1005
/// A lock is already held.
public let kSCStatusLocked: Int = 1006
/// The operation needs a lock.
public let kSCStatusNeedLock: Int = 1007
/// The configuration daemon's session is not active.
public let kSCStatusNoStoreSession: Int = 2001
/// The configuration daemon is not (no longer) available.
public let kSCStatusNoStoreServer: Int = 2002
/// A notifier is active.
public let kSCStatusNotifierActive: Int = 2003
/// The preferences session is not active.
public let kSCStatusNoPrefsSession: Int = 3001
/// A preferences update is in progress.
public let kSCStatusPrefsBusy: Int = 3002
/// The configuration file was not found.
public let kSCStatusNoConfigFile: Int = 3003
/// No such link.
public let kSCStatusNoLink: Int = 3004
/// A write was attempted on a stale version of an object.
public let kSCStatusStale: Int = 3005
/// The maximum link count was exceeded.
public let kSCStatusMaxLink: Int = 3006
/// Network reachability cannot be determined.
public let kSCStatusReachabilityUnknown: Int = 4001
/// The network service for a connection is not available.
public let kSCStatusConnectionNoService: Int = 5001
/// Network connection information is not available at this time.
public let kSCStatusConnectionIgnore: Int = 5002

/// The status of the last SystemConfiguration call on this thread that failed (Apple's
/// SystemConfiguration): ``kSCStatusOK`` until one fails, then that call's status, until
/// another fails. Each thread has its own, as Apple's.
public func SCError() -> Int32 {
    (Thread.current.threadDictionary[SCStatusRecord.key] as? SCStatusRecord)?.status ?? Int32(kSCStatusOK)
}

/// The message of `status` (Apple's SystemConfiguration, Apple's wording for its own
/// statuses): an errno value's `strerror` text otherwise. The text is not to be freed.
public func SCErrorString(_ status: Int32) -> UnsafePointer<CChar> {
    if let message = SCStatusRecord.messages[status] { return message }
    return UnsafePointer(strerror(status))
}

/// Sets this thread's ``SCError()`` for a call that failed.
func setSCError(_ status: Int) {
    Thread.current.threadDictionary[SCStatusRecord.key] = SCStatusRecord(status: Int32(status))
}

/// A thread's last status, kept in its thread dictionary (a thread's own: no lock needed).
private final class SCStatusRecord {
    static let key = "SystemConfiguration.SCError"

    let status: Int32

    init(status: Int32) { self.status = status }

    /// The messages, made once as C strings that live as long as the process (nothing frees
    /// them; `SCErrorString` hands out pointers into them). `nonisolated(unsafe)`: written
    /// once by the lazy global initializer, read-only after.
    nonisolated(unsafe) static let messages: [Int32: UnsafePointer<CChar>] = {
        let texts: [Int: String] = [
            kSCStatusOK: "Success!",
            kSCStatusFailed: "Failed!",
            kSCStatusInvalidArgument: "Invalid argument",
            kSCStatusAccessError: "Permission denied",
            kSCStatusNoKey: "No such key",
            kSCStatusKeyExists: "Key already defined",
            kSCStatusLocked: "Lock already held",
            kSCStatusNeedLock: "Lock required for this operation",
            kSCStatusNoStoreSession: "Configuration daemon session not active",
            kSCStatusNoStoreServer: "Configuration daemon not (no longer) available",
            kSCStatusNotifierActive: "Notifier is currently active",
            kSCStatusNoPrefsSession: "Preference session not active",
            kSCStatusPrefsBusy: "Preferences update currently in progress",
            kSCStatusNoConfigFile: "Configuration file not found",
            kSCStatusNoLink: "No such link",
            kSCStatusStale: "Write attempted on stale version of object",
            kSCStatusMaxLink: "Maximum link count exceeded",
            kSCStatusReachabilityUnknown: "Network reachability cannot be determined",
            kSCStatusConnectionNoService: "Network service for connection not available",
            kSCStatusConnectionIgnore: "Network connection information not available at this time",
        ]
        var messages: [Int32: UnsafePointer<CChar>] = [:]
        for (status, text) in texts {
            guard let copy = strdup(text) else { continue }
            messages[Int32(status)] = UnsafePointer(copy)
        }
        return messages
    }()
}
