import Foundation

/// The domain of ``BGTaskScheduler/Error`` as an `NSError` (Apple: `BGTaskSchedulerErrorDomain`).
public let BGTaskSchedulerErrorDomain = "BGTaskSchedulerErrorDomain"

extension BGTaskScheduler {
    /// The domain of ``BGTaskScheduler/Error`` as an `NSError`: `"BGTaskSchedulerErrorDomain"`.
    public static var errorDomain: String { BGTaskSchedulerErrorDomain }

    /// An error from submitting a request (Apple: `BGTaskScheduler.Error`).
    ///
    /// Catch it as on iOS: `catch let error as BGTaskScheduler.Error { switch error.code ... }`
    /// or `catch BGTaskScheduler.Error.notPermitted`. ``message`` says exactly what was wrong.
    /// It bridges to `NSError` as Apple's does: `(error as NSError).domain` is
    /// `"BGTaskSchedulerErrorDomain"`, `.code` is ``Code-swift.enum``'s raw value, and the
    /// message is the `NSLocalizedDescriptionKey` of `userInfo`.
    public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible, LocalizedError, CustomNSError {
        /// Apple's codes, plus this project's `invalidRequest`.
        public enum Code: Int, Hashable, Sendable {
            /// Background refresh is off for the app, or the system cannot schedule now.
            case unavailable = 1
            /// The app already has the maximum number of pending requests of this kind
            /// (1 refresh, 10 processing).
            case tooManyPendingTaskRequests = 2
            /// The identifier is not in `BGTaskSchedulerPermittedIdentifiers`, the kind's
            /// background mode is missing from `UIBackgroundModes`, or a resource is unsupported.
            case notPermitted = 3
            /// A continued-processing request with strategy `.fail` cannot start now.
            case immediateRunIneligible = 4
            /// Beyond Apple: the request is malformed (`earliestBeginDate` NaN, infinite,
            /// or more than a year away; an empty continued-processing title).
            case invalidRequest = 100
        }

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

        public var description: String { "BGTaskScheduler.Error(\(code)): \(message)" }
        public var errorDescription: String? { message }

        /// Equal when code and message are (user info is not compared: its values are `Any`).
        public static func == (lhs: Error, rhs: Error) -> Bool {
            lhs.code == rhs.code && lhs.message == rhs.message
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(code)
            hasher.combine(message)
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

/// Lets `catch BGTaskScheduler.Error.notPermitted { ... }` match, as with Apple's error codes.
public func ~= (code: BGTaskScheduler.Error.Code, error: any Error) -> Bool {
    (error as? BGTaskScheduler.Error)?.code == code
}
