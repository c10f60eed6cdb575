import Foundation

extension BGTaskScheduler {
    /// An error from submitting a request (Apple: `BGTaskScheduler.Error`).
    ///
    /// Catch it as on iOS: `catch let error as BGTaskScheduler.Error { switch error.code ... }`
    /// or `catch BGTaskScheduler.Error.notPermitted`. ``message`` says exactly what was wrong.
    public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
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

        /// Creates an error.
        public init(_ code: Code, message: String = "") {
            self.code = code
            self.message = message
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

        /// The error domain Apple uses.
        public static var errorDomain: String { "BGTaskSchedulerErrorDomain" }

        public var description: String { "BGTaskScheduler.Error(\(code)): \(message)" }
        public var errorDescription: String? { message }

        init(_ rejection: SubmitRejection) {
            self.init(Code(rawValue: rejection.code.rawValue) ?? .unavailable, message: rejection.message)
        }
    }
}

/// Lets `catch BGTaskScheduler.Error.notPermitted { ... }` match, as with Apple's error codes.
public func ~= (code: BGTaskScheduler.Error.Code, error: any Error) -> Bool {
    (error as? BGTaskScheduler.Error)?.code == code
}
