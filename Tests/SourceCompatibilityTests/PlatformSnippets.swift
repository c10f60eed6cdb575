// Background-task code that leans on the platform around BackgroundTasks (NSError
// bridging, Foundation's file protection types), in the shapes public iOS apps write it,
// compiled here in Swift 6 language mode with warnings as errors. An outside probe found
// each missing (its findings 3 and 7); PlatformSnippetTests runs them.
import BackgroundTasks
import UIKit

// MARK: 1. Submit errors kept as NSError and cast back (completion handlers typed `NSError?`,
// a stored last error, a test double that throws NSErrors of the domain)

final class RefreshScheduleReporter: @unchecked Sendable {
    // @unchecked: a test shape, touched from one thread at a time.
    private(set) var lastError: NSError?

    func submit(_ request: BGTaskRequest, scheduler: (BGTaskRequest) throws -> Void, completion: (NSError?) -> Void) {
        do {
            try scheduler(request)
            completion(nil)
        } catch {
            lastError = error as NSError
            completion(error as NSError)
        }
    }

    /// What the app shows for its last error: the typed error when it is one.
    func lastErrorSummary() -> String {
        guard let lastError else { return "none" }
        guard let typed = lastError as? BGTaskScheduler.Error else { return "other: \(lastError.domain)" }
        switch typed.code {
        case .unavailable: return "refresh off"
        case .tooManyPendingTaskRequests: return "too many"
        case .notPermitted: return "not permitted"
        case .immediateRunIneligible: return "cannot run now"
        @unknown default: return "code \(typed.code.rawValue)"
        }
    }
}

/// A fake scheduler for unit tests that throws what iOS would, as NSErrors.
struct ThrowingFakeScheduler {
    let code: Int
    func submit(_ request: BGTaskRequest) throws {
        throw NSError(domain: BGTaskSchedulerErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: "fake"])
    }
}

func submitThroughFake(_ fake: ThrowingFakeScheduler) -> String {
    do {
        try fake.submit(BGAppRefreshTaskRequest(identifier: "com.example.app.refresh"))
        return "ok"
    } catch BGTaskScheduler.Error.notPermitted {
        return "notPermitted"
    } catch BGTaskScheduler.Error.tooManyPendingTaskRequests {
        return "tooMany"
    } catch let error as BGTaskScheduler.Error {
        return "typed \(error.code)"
    } catch {
        return "untyped"
    }
}

func printedUnderlyingError(_ error: BGTaskScheduler.Error) -> String {
    "\(error._nsError.domain) \(error._nsError.code)"
}

// MARK: 2. A study app's health-research request, its protection type switched over and kept in a set

enum StudyUploadScheduler {
    static let identifier = "com.example.study.upload"
    static let acceptedProtection: Set<FileProtectionType> = [.completeUnlessOpen, .completeUntilFirstUserAuthentication]

    static func request(protection: FileProtectionType) -> BGHealthResearchTaskRequest? {
        guard acceptedProtection.contains(protection) else { return nil }
        let request = BGHealthResearchTaskRequest(identifier: identifier)
        request.protectionTypeOfRequiredData = protection
        return request
    }

    static func describe(_ request: BGHealthResearchTaskRequest) -> String {
        switch request.protectionTypeOfRequiredData {
        case .complete: return "complete"
        case .completeUnlessOpen: return "unlessOpen"
        case .completeUntilFirstUserAuthentication: return "untilFirstAuth"
        case .none: return "none"
        default: return "other"
        }
    }
}
