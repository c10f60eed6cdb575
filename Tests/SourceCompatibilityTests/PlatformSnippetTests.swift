import BackgroundTasks
import BackgroundTasksTesting
import Testing

/// What PlatformSnippets.swift compiles, run where its behaviour is the library's.
@Suite struct PlatformSnippetTests {
    // MARK: NSError bridging (probe finding 3)

    @Test func anNSErrorOfTheDomainCastsToTheErrorAndMatchesItsCatch() throws {
        let nsError = NSError(domain: BGTaskSchedulerErrorDomain, code: 3)
        let typed = try #require(nsError as? BGTaskScheduler.Error)
        #expect(typed.code == .notPermitted)
        #expect(((nsError as any Error) as? BGTaskScheduler.Error)?.code == .notPermitted)
        #expect(NSError(domain: NSCocoaErrorDomain, code: 3) as? BGTaskScheduler.Error == nil, "another domain does not cast")
        #expect(BGTaskScheduler.Error(_nsError: nsError) == typed)
        // A test double's NSErrors, caught by code as iOS catches them.
        #expect(submitThroughFake(ThrowingFakeScheduler(code: 3)) == "notPermitted")
        #expect(submitThroughFake(ThrowingFakeScheduler(code: 2)) == "tooMany")
        #expect(submitThroughFake(ThrowingFakeScheduler(code: 1)) == "typed unavailable")
        #expect(submitThroughFake(ThrowingFakeScheduler(code: 100)) == "typed invalidRequest")
    }

    @Test func anErrorRoundTripsThroughNSErrorWithItsMessageAndUserInfo() throws {
        let original = BGTaskScheduler.Error(.tooManyPendingTaskRequests, userInfo: [NSLocalizedDescriptionKey: "full", "extra": 1])
        let bridged = original as NSError
        #expect(bridged.domain == BGTaskSchedulerErrorDomain && bridged.code == 2)
        let back = try #require((bridged as any Error) as? BGTaskScheduler.Error)
        #expect(back == original)
        #expect(back.message == "full")
        #expect(back.userInfo["extra"] as? Int == 1)
        #expect(printedUnderlyingError(original) == "BGTaskSchedulerErrorDomain 2")
        // Hashing stays the error's own (code and message), never the NSError's hash, which
        // swift-corelibs-foundation computes with CFHash and halts on.
        #expect(back.hashValue == original.hashValue)
        #expect(Set([original, back, BGTaskScheduler.Error(.notPermitted)]).count == 2)
    }

    @Test func aRefusedSubmissionKeptAsNSErrorIsReadBackTyped() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        let reporter = RefreshScheduleReporter()
        var completed: NSError?
        context.withCurrent {
            reporter.submit(BGAppRefreshTaskRequest(identifier: "com.example.compat.unlisted"), scheduler: BGTaskScheduler.shared.submit) { completed = $0 }
        }
        #expect(completed?.domain == BGTaskSchedulerErrorDomain)
        #expect(reporter.lastErrorSummary() == "not permitted")
        reporter.submit(BGAppRefreshTaskRequest(identifier: ModernAppDelegate.refreshIdentifier), scheduler: ThrowingFakeScheduler(code: 4).submit) { _ in }
        #expect(reporter.lastErrorSummary() == "cannot run now")
    }

    // MARK: File protection types (probe finding 7)

    @Test func fileProtectionTypesSwitchAndHashAsApplesDo() throws {
        #expect(StudyUploadScheduler.request(protection: .complete) == nil)
        let request = try #require(StudyUploadScheduler.request(protection: .completeUnlessOpen))
        #expect(StudyUploadScheduler.describe(request) == "unlessOpen")
        #expect(StudyUploadScheduler.describe(BGHealthResearchTaskRequest(identifier: "com.example.study.other")) == "untilFirstAuth", "the default")
        #expect(Set([FileProtectionType.complete, FileProtectionType(rawValue: "NSFileProtectionComplete"), .none]).count == 2)
    }
}
