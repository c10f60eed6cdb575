import Foundation
import SchedulerCore

/// The domain of ``BGTaskScheduler/Error`` as an `NSError` (Apple: `BGTaskSchedulerErrorDomain`).
public let BGTaskSchedulerErrorDomain = "BGTaskSchedulerErrorDomain"

extension BGTaskScheduler {
    /// The domain of ``BGTaskScheduler/Error`` as an `NSError`: `"BGTaskSchedulerErrorDomain"`.
    public static var errorDomain: String { BGTaskSchedulerErrorDomain }

    /// An error from submitting a request (Apple: `BGTaskScheduler.Error`).
    ///
    /// Catch it as on iOS: `catch let error as BGTaskScheduler.Error { switch error.code ... }`
    /// or `catch BGTaskScheduler.Error.notPermitted`. ``message`` says exactly what was wrong.
    /// It bridges to and from `NSError` as Apple's does: `(error as NSError).domain` is
    /// `"BGTaskSchedulerErrorDomain"`, `.code` is ``Code-swift.enum``'s raw value, and the
    /// message is the `NSLocalizedDescriptionKey` of `userInfo`; an `NSError` of that domain
    /// casts back (`as? BGTaskScheduler.Error`) and matches `catch BGTaskScheduler.Error.notPermitted`
    /// (see the `_BridgedStoredNSError` extension below).
    public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible, LocalizedError, CustomNSError {
        /// The code (Apple: `BGTaskScheduler.Error.Code`): Apple's four, imported from C as on
        /// iOS (`Sources/CUIKitTypes`), so a `switch` over them takes `@unknown default:` or
        /// `default:` without a warning, and this project's ``BGTaskSchedulerErrorCode/invalidRequest``
        /// (100) reaches that `default`. `rawValue` is the `NSError` code.
        public typealias Code = BGTaskSchedulerErrorCode

        /// The code.
        public let code: Code
        /// What was wrong, naming the identifier and the file or key concerned.
        public let message: String
        private let extraUserInfo: UserInfo

        /// Creates an error with a message (also its `NSLocalizedDescriptionKey`).
        public init(_ code: Code, message: String) {
            self.code = code
            self.message = message
            self.extraUserInfo = UserInfo([:])
        }

        /// Creates an error as Apple's initializer does; a `String` under
        /// `NSLocalizedDescriptionKey` becomes ``message``.
        public init(_ code: Code, userInfo: [String: Any] = [:]) {
            self.code = code
            self.message = userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            self.extraUserInfo = UserInfo(userInfo)
        }

        /// Background refresh off, or the system cannot schedule.
        public static var unavailable: Code { .unavailable }
        /// Too many pending requests of this kind.
        public static var tooManyPendingTaskRequests: Code { .tooManyPendingTaskRequests }
        /// Not permitted by the manifest.
        public static var notPermitted: Code { .notPermitted }
        /// Cannot start now.
        public static var immediateRunIneligible: Code { .immediateRunIneligible }
        /// Malformed request.
        public static var invalidRequest: Code { .invalidRequest }

        /// The error domain Apple uses: `"BGTaskSchedulerErrorDomain"`.
        public static var errorDomain: String { BGTaskSchedulerErrorDomain }
        /// The code's raw value (`NSError.code`).
        public var errorCode: Int { code.rawValue }
        /// The user info given at creation, with ``message`` under `NSLocalizedDescriptionKey`.
        public var userInfo: [String: Any] {
            var info = extraUserInfo.values
            if !message.isEmpty { info[NSLocalizedDescriptionKey] = message }
            return info
        }
        /// `CustomNSError`: what `(error as NSError).userInfo` holds (``userInfo``).
        public var errorUserInfo: [String: Any] { userInfo }

        public var description: String { "BGTaskScheduler.Error(\(code.name)): \(message)" }
        public var errorDescription: String? { message }

        /// Equal when code and message are (user info is not compared: its values are `Any`).
        public static func == (lhs: Error, rhs: Error) -> Bool {
            lhs.code == rhs.code && lhs.message == rhs.message
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(code)
            hasher.combine(message)
        }

        /// The hash of ``hash(into:)``. Written out because `_BridgedStoredNSError` (below)
        /// supplies a `hashValue` of its own, `_nsError.hash`, which would otherwise be this
        /// type's and which swift-corelibs-foundation computes with `CFHash` on the NSError:
        /// it halts the process.
        public var hashValue: Int {
            var hasher = Hasher()
            hash(into: &hasher)
            return hasher.finalize()
        }

        init(_ rejection: SubmitRejection) {
            self.init(Code(rawValue: rejection.code.rawValue) ?? .unavailable, message: rejection.message)
        }

        /// The app's user info, immutable once the error exists.
        private struct UserInfo: @unchecked Sendable {
            // @unchecked: a `let` never mutated after init; the values are whatever the app
            // put in, as in an NSError (which Foundation also treats as Sendable).
            let values: [String: Any]
            init(_ values: [String: Any]) { self.values = values }
        }
    }
}

// Not `CustomStringConvertible`: Apple's imported enum is not, and an app that adds the
// conformance would get "redundant conformance", an error.
extension BGTaskSchedulerErrorCode {
    /// Beyond Apple: the request is malformed (`earliestBeginDate` NaN, infinite, or more
    /// than a year away; an empty continued-processing title), code 100. Not one of the
    /// enum's cases, as Apple's enum has no such case: a `switch` written for iOS handles
    /// it in its `default:` / `@unknown default:`; `error.code == .invalidRequest` and
    /// `case .invalidRequest:` match it.
    public static var invalidRequest: BGTaskSchedulerErrorCode { BGTaskSchedulerErrorCode(rawValue: 100)! }

    /// The code's name as Swift spells it.
    var name: String {
        switch self {
        case .unavailable: "unavailable"
        case .tooManyPendingTaskRequests: "tooManyPendingTaskRequests"
        case .notPermitted: "notPermitted"
        case .immediateRunIneligible: "immediateRunIneligible"
        default: rawValue == 100 ? "invalidRequest" : "code \(rawValue)"
        }
    }
}

// NSError bridging in both directions, as Apple's imported `BGTaskScheduler.Error` has it
// (an `NS_ERROR_ENUM` is imported as a `_BridgedStoredNSError` whose `Code` is an
// `_ErrorCodeProtocol`): `NSError(domain: BGTaskSchedulerErrorDomain, code: 3) as? BGTaskScheduler.Error`
// gives the error, `catch BGTaskScheduler.Error.notPermitted` matches such an NSError thrown
// as `any Error`, and an error that went through `as NSError` casts back. On Apple's
// platforms the runtime casts an NSError to a Swift error through `_ObjectiveCBridgeableError`;
// the Linux runtime has no such path (a type with only the `_BridgedStoredNSError`
// conformance does not cast), but it does cast a class instance to a type that is
// `_ObjectiveCBridgeable` to that class, which is how swift-corelibs-foundation makes its
// own `CocoaError` bridge (Sources/Foundation/NSError.swift): the same two conformances here.

extension BGTaskScheduler.Error: _BridgedStoredNSError, _ObjectiveCBridgeable {
    /// The error an `NSError` of `BGTaskSchedulerErrorDomain` stands for (Apple's initializer:
    /// the domain must be `BGTaskSchedulerErrorDomain`, or the program stops). Its `code` is
    /// the NSError's code, its ``message`` the `NSLocalizedDescriptionKey` of its user info
    /// (else empty), its ``userInfo`` the NSError's.
    public init(_nsError error: NSError) {
        guard error.domain == BGTaskSchedulerErrorDomain else {
            BGProgrammingError.raise("BGTaskScheduler.Error(_nsError:) was given an NSError of domain '\(error.domain)', not \(BGTaskSchedulerErrorDomain)")
        }
        // An imported C enum takes every raw value: the fallback is never used.
        self.init(Code(rawValue: error.code) ?? .unavailable, userInfo: error.userInfo)
    }

    /// The error as an `NSError` (what `as NSError` gives): domain `BGTaskSchedulerErrorDomain`,
    /// code ``errorCode``, user info ``userInfo``.
    public var _nsError: NSError {
        NSError(domain: BGTaskSchedulerErrorDomain, code: errorCode, userInfo: userInfo)
    }

    /// `BGTaskSchedulerErrorDomain`.
    public static var _nsErrorDomain: String { BGTaskSchedulerErrorDomain }

    public func _bridgeToObjectiveC() -> NSError { _nsError }

    public static func _forceBridgeFromObjectiveC(_ source: NSError, result: inout BGTaskScheduler.Error?) {
        result = BGTaskScheduler.Error(_nsError: source)
    }

    /// Only an NSError of `BGTaskSchedulerErrorDomain` casts (`as?` gives `nil` for another domain).
    public static func _conditionallyBridgeFromObjectiveC(_ source: NSError, result: inout BGTaskScheduler.Error?) -> Bool {
        result = source.domain == BGTaskSchedulerErrorDomain ? BGTaskScheduler.Error(_nsError: source) : nil
        return result != nil
    }

    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSError?) -> BGTaskScheduler.Error {
        guard let source else { BGProgrammingError.raise("a nil NSError cannot be a BGTaskScheduler.Error") }
        return BGTaskScheduler.Error(_nsError: source)
    }
}

/// The code of a bridged error: gives `catch BGTaskScheduler.Error.notPermitted { ... }` (and
/// `case BGTaskScheduler.Error.notPermitted:` over an `any Error`) its `~=`, which matches a
/// `BGTaskScheduler.Error` and an NSError of its domain alike, as with Apple's error codes.
extension BGTaskSchedulerErrorCode: @retroactive _ErrorCodeProtocol {
    public typealias _ErrorType = BGTaskScheduler.Error
}
