import Foundation
import Testing
@testable import SchedulerCore

/// `checkSubmit`: each rejection, its code and message, the documented order of the checks,
/// the per-app pending limits and replace-on-resubmit (docs/system.md, "Schedule").
@Suite("Scheduler engine: submission")
struct SchedulerEngineSubmitTests {
    typealias F = EngineFixtures
    let t0 = EngineFixtures.t0

    // MARK: Each check

    @Test("malformed identifier is notPermitted", arguments: ["", "refresh", "com..example", "com.example app.sync", "com.example.app.export.*"])
    func malformedIdentifierIsNotPermitted(identifier: String) {
        let engine = F.engine()
        let request = PendingRequest(app: F.app, identifier: identifier, kind: .appRefresh, submittedAt: t0)
        let rejection = F.rejection(of: request, by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(rejection?.message.contains("identifier rejected") == true)
    }

    @Test func unknownAppIsUnavailable() {
        let engine = F.engine()
        let stranger = AppID("org.unknown.app")
        let rejection = F.rejection(of: F.refresh("org.unknown.app.refresh", app: stranger), by: engine, at: t0)
        #expect(rejection?.code == .unavailable)
        #expect(rejection?.message.contains("org.unknown.app") == true)
    }

    @Test("background refresh off makes scheduled kinds unavailable", arguments: [TaskKind.appRefresh, .processing, .healthResearch])
    func backgroundRefreshOffIsUnavailable(kind: TaskKind) {
        var engine = F.engine()
        _ = engine.handle(.backgroundRefreshChanged(F.app, enabled: false), at: t0)
        let request = kind == .appRefresh ? F.refresh() : F.processing(kind == .processing ? F.syncID : F.researchID, kind: kind)
        let rejection = F.rejection(of: request, by: engine, at: t0)
        #expect(rejection?.code == .unavailable)
        #expect(rejection?.message.contains("Background App Refresh is off") == true)
    }

    @Test func backgroundRefreshOffStillAllowsContinuedProcessing() throws {
        var engine = F.engine()
        _ = engine.handle(.backgroundRefreshChanged(F.app, enabled: false), at: t0)
        #expect(F.rejection(of: F.continued(), by: engine, at: t0) == nil)
        #expect(try F.submit(F.continued(), to: &engine, at: t0).launched.count == 1)
    }

    @Test func backgroundRefreshSwitchCanBeTurnedBackOn() {
        var engine = F.engine()
        _ = engine.handle(.backgroundRefreshChanged(F.app, enabled: false), at: t0)
        _ = engine.handle(.backgroundRefreshChanged(F.app, enabled: true), at: t0)
        #expect(F.rejection(of: F.refresh(), by: engine, at: t0) == nil)
        #expect(engine.registration(of: F.app)?.backgroundRefreshEnabled == true)
    }

    @Test func identifierNotInManifestIsNotPermittedAndNamed() {
        let engine = F.engine()
        let rejection = F.rejection(of: F.refresh("com.example.app.unlisted"), by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(rejection?.message.contains("'com.example.app.unlisted'") == true)
        #expect(rejection?.message.contains("BGTaskSchedulerPermittedIdentifiers") == true)
        #expect(rejection?.message.contains("fixtures/app/Info.plist") == true, "names the manifest")
    }

    @Test func wildcardEntryDoesNotPermitScheduledKinds() {
        let engine = F.engine()
        let rejection = F.rejection(of: F.processing(F.exportID("x")), by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(F.rejection(of: F.continued("x"), by: engine, at: t0) == nil, "but it permits continued processing")
    }

    @Test func missingFetchBackgroundModeIsNotPermitted() {
        var engine = F.engine()
        let manifest = AppManifest(appID: F.app, permittedIdentifiers: [F.refreshID, F.syncID], backgroundModes: ["processing"])
        engine.register(AppRegistration(app: F.app, manifest: manifest))
        let rejection = F.rejection(of: F.refresh(), by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(rejection?.message.contains("\"fetch\"") == true)
        #expect(F.rejection(of: F.processing(), by: engine, at: t0) == nil)
    }

    @Test("missing processing background mode is notPermitted", arguments: [TaskKind.processing, .healthResearch])
    func missingProcessingBackgroundModeIsNotPermitted(kind: TaskKind) {
        var engine = F.engine()
        let manifest = AppManifest(appID: F.app, permittedIdentifiers: [F.refreshID, F.syncID], backgroundModes: ["fetch"])
        engine.register(AppRegistration(app: F.app, manifest: manifest))
        let rejection = F.rejection(of: F.processing(kind: kind), by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(rejection?.message.contains("\"processing\"") == true)
        #expect(F.rejection(of: F.refresh(), by: engine, at: t0) == nil)
    }

    @Test func continuedProcessingNeedsNoBackgroundMode() {
        var engine = F.engine()
        let manifest = AppManifest(appID: F.app, permittedIdentifiers: ["\(F.exportPrefix).*"], backgroundModes: [])
        engine.register(AppRegistration(app: F.app, manifest: manifest))
        #expect(F.rejection(of: F.continued(), by: engine, at: t0) == nil)
    }

    @Test func unsupportedResourceIsNotPermitted() {
        let engine = F.engine()
        let rejection = F.rejection(of: F.continued(resources: ["gpu"]), by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(rejection?.message.contains("'gpu'") == true)
    }

    @Test func supportedResourceIsAccepted() {
        let engine = F.engine(SchedulerConfiguration(supportedResources: ["gpu"]))
        #expect(F.rejection(of: F.continued(resources: ["gpu"]), by: engine, at: t0) == nil)
    }

    @Test("NaN or infinite earliestBeginDate is invalidRequest", arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteEarliestBeginDateIsInvalid(seconds: Double) {
        let engine = F.engine()
        let request = F.refresh(earliest: Date(timeIntervalSinceReferenceDate: seconds))
        let rejection = F.rejection(of: request, by: engine, at: t0)
        #expect(rejection?.code == .invalidRequest)
        #expect(rejection?.message.contains("not a finite date") == true)
    }

    @Test func earliestBeginDateMoreThan366DaysAheadIsInvalid() {
        let engine = F.engine()
        let limit = 366.0 * 86_400
        let rejection = F.rejection(of: F.processing(earliest: t0 + limit + 1), by: engine, at: t0)
        #expect(rejection?.code == .invalidRequest)
        #expect(rejection?.message.contains("366 days") == true)
        #expect(F.rejection(of: F.processing(earliest: t0 + limit), by: engine, at: t0) == nil, "366 days exactly is accepted")
        #expect(F.rejection(of: F.processing(earliest: t0 - 86_400), by: engine, at: t0) == nil, "a past date is accepted")
        #expect(F.rejection(of: F.processing(earliest: .distantPast), by: engine, at: t0) == nil, "so is Date.distantPast")
        // Before year 1 there is no date the tools can show: refused, naming the bound.
        let absurd = F.rejection(of: F.refresh(earliest: Date(timeIntervalSinceReferenceDate: -1e308)), by: engine, at: t0)
        #expect(absurd?.code == .invalidRequest)
        #expect(absurd?.message.contains("before 0001-01-01") == true, "\(String(describing: absurd))")
    }

    @Test func maximumEarliestBeginDelayIsConfigurable() {
        let engine = F.engine(SchedulerConfiguration(maximumEarliestBeginDelay: 3600))
        #expect(F.rejection(of: F.refresh(earliest: t0 + 3601), by: engine, at: t0)?.code == .invalidRequest)
        #expect(F.rejection(of: F.refresh(earliest: t0 + 3600), by: engine, at: t0) == nil)
    }

    @Test func continuedProcessingWithEmptyTitleIsInvalid() {
        let engine = F.engine()
        #expect(F.rejection(of: F.continued(title: ""), by: engine, at: t0)?.code == .invalidRequest)
    }

    /// A date Foundation cannot print is said in days, not as "<description unavailable>".
    @Test func aFarAwayEarliestBeginDateIsSaidInDays() {
        let engine = F.engine()
        let rejection = F.rejection(of: F.processing(earliest: Date(timeIntervalSinceReferenceDate: 1e308)), by: engine, at: t0)
        #expect(rejection?.code == .invalidRequest)
        #expect(rejection?.message.contains("is over a billion days away, more than 366 days") == true, "\(rejection?.message ?? "")")
        #expect(F.rejection(of: F.processing(earliest: t0 + 400 * 86_400), by: engine, at: t0)?.message.contains("is 400 d away, more than 366 days") == true)
        // Just over the limit is not shown as the limit itself.
        let justOver = F.rejection(of: F.processing(earliest: t0 + 366 * 86_400 + 23 * 3_600), by: engine, at: t0)?.message ?? ""
        #expect(justOver.contains("is 366 d 23 h away, more than 366 days"), "\(justOver)")
    }

    /// Text an app gives is stored and shown: a NUL (which PostgreSQL cannot store) or
    /// another control character, or an overlong value, is refused naming the field.
    @Test func requestTextWithControlCharactersIsInvalid() {
        let engine = F.engine()
        var protected = F.processing()
        protected.protectionTypeOfRequiredData = "NSFileProtection\u{0}Complete"
        #expect(F.rejection(of: protected, by: engine, at: t0)?.message.contains("protectionTypeOfRequiredData holds the control character U+0000") == true)
        protected.protectionTypeOfRequiredData = String(repeating: "p", count: 256)
        #expect(F.rejection(of: protected, by: engine, at: t0)?.message.contains("256 bytes") == true)
        protected.protectionTypeOfRequiredData = "NSFileProtectionComplete"
        #expect(F.rejection(of: protected, by: engine, at: t0) == nil)
        #expect(F.rejection(of: F.continued(title: "Export\u{1B}[2J"), by: engine, at: t0)?.message.contains("title holds the control character U+001B") == true)
        #expect(F.rejection(of: F.continued(title: "Export\nphotos"), by: engine, at: t0) == nil, "a line break in a title is fine")
    }

    // MARK: Order of the checks

    @Test func malformedIdentifierWinsOverUnknownApp() {
        let engine = F.engine()
        let request = F.refresh("bad", app: AppID("org.unknown.app"))
        #expect(F.rejection(of: request, by: engine, at: t0)?.code == .notPermitted)
    }

    @Test func backgroundRefreshOffWinsOverIdentifierNotInManifest() {
        var engine = F.engine()
        _ = engine.handle(.backgroundRefreshChanged(F.app, enabled: false), at: t0)
        #expect(F.rejection(of: F.refresh("com.example.app.unlisted"), by: engine, at: t0)?.code == .unavailable)
    }

    @Test func identifierNotInManifestWinsOverInvalidDate() {
        let engine = F.engine()
        let request = F.refresh("com.example.app.unlisted", earliest: Date(timeIntervalSinceReferenceDate: .nan))
        let rejection = F.rejection(of: request, by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(rejection?.message.contains("com.example.app.unlisted") == true)
    }

    @Test func missingBackgroundModeWinsOverInvalidDate() {
        var engine = F.engine()
        let manifest = AppManifest(appID: F.app, permittedIdentifiers: [F.refreshID], backgroundModes: [])
        engine.register(AppRegistration(app: F.app, manifest: manifest))
        let rejection = F.rejection(of: F.refresh(earliest: t0 + 400 * 86_400), by: engine, at: t0)
        #expect(rejection?.code == .notPermitted)
        #expect(rejection?.message.contains("fetch") == true)
    }

    @Test func unsupportedResourceWinsOverEmptyTitle() {
        let engine = F.engine()
        #expect(F.rejection(of: F.continued(title: "", resources: ["gpu"]), by: engine, at: t0)?.code == .notPermitted)
    }

    @Test func invalidDateWinsOverTooManyPending() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        let second = F.refresh(F.secondRefreshID, earliest: Date(timeIntervalSinceReferenceDate: .infinity))
        #expect(F.rejection(of: second, by: engine, at: t0)?.code == .invalidRequest)
    }

    @Test func tooManyPendingWinsOverImmediateRunIneligible() throws {
        var engine = F.engine(SchedulerConfiguration(pendingLimits: [.continuedProcessing: 1]))
        _ = try F.submit(F.continued("a"), to: &engine, at: t0)   // runs
        _ = try F.submit(F.continued("b"), to: &engine, at: t0)   // queued: 1 pending
        #expect(F.rejection(of: F.continued("c", strategy: .fail), by: engine, at: t0)?.code == .tooManyPendingTaskRequests)
    }

    // MARK: Pending limits and replacement

    @Test func atMostOnePendingRefreshPerApp() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        let rejection = F.rejection(of: F.refresh(F.secondRefreshID, earliest: t0 + 60), by: engine, at: t0)
        #expect(rejection?.code == .tooManyPendingTaskRequests)
        #expect(rejection?.message.contains(F.secondRefreshID) == true)
        #expect(F.rejection(of: F.refresh(F.otherRefreshID, app: F.otherApp, earliest: t0 + 60), by: engine, at: t0) == nil,
                "the limit is per app")
        #expect(F.rejection(of: F.processing(earliest: t0 + 60), by: engine, at: t0) == nil, "and per kind")
    }

    @Test func atMostTenPendingProcessingRequestsPerApp() throws {
        var engine = F.engine()
        for number in 0..<10 {
            _ = try F.submit(F.processing(F.processingID(number), earliest: t0 + 60), to: &engine, at: t0)
        }
        #expect(engine.pendingRequests(of: F.app).count == 10)
        let eleventh = F.rejection(of: F.processing(F.processingID(10), earliest: t0 + 60), by: engine, at: t0)
        #expect(eleventh?.code == .tooManyPendingTaskRequests)
        #expect(eleventh?.message.contains("10") == true)
    }

    @Test func healthResearchCountsAgainstTheProcessingLimit() throws {
        var engine = F.engine()
        for number in 0..<10 {
            _ = try F.submit(F.processing(F.processingID(number), earliest: t0 + 60), to: &engine, at: t0)
        }
        let research = F.processing(F.researchID, kind: .healthResearch, earliest: t0 + 60)
        #expect(F.rejection(of: research, by: engine, at: t0)?.code == .tooManyPendingTaskRequests)
    }

    @Test func replacingSameIdentifierDoesNotCountAgainstTheLimit() throws {
        var engine = F.engine()
        for number in 0..<10 {
            _ = try F.submit(F.processing(F.processingID(number), earliest: t0 + 60), to: &engine, at: t0)
        }
        #expect(F.rejection(of: F.processing(F.processingID(3), earliest: t0 + 120), by: engine, at: t0) == nil)
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        #expect(F.rejection(of: F.refresh(earliest: t0 + 90), by: engine, at: t0) == nil, "one refresh pending, replaced")
    }

    @Test func customPendingLimitsAreHonored() throws {
        var engine = F.engine(SchedulerConfiguration(pendingLimits: [.refresh: 2, .processing: 1]))
        _ = try F.submit(F.refresh(earliest: t0 + 60), to: &engine, at: t0)
        #expect(F.rejection(of: F.refresh(F.secondRefreshID, earliest: t0 + 60), by: engine, at: t0) == nil)
        _ = try F.submit(F.processing(earliest: t0 + 60), to: &engine, at: t0)
        #expect(F.rejection(of: F.processing(F.processingID(0), earliest: t0 + 60), by: engine, at: t0)?.code == .tooManyPendingTaskRequests)
    }

    @Test func resubmittingReplacesAndKeepsOnePendingRequest() throws {
        var engine = F.engine()
        _ = try F.submit(F.refresh(earliest: t0 + 600), to: &engine, at: t0)
        let replaced = try F.submit(F.refresh(submittedAt: t0 + 10, earliest: t0 + 1200), to: &engine, at: t0 + 10)
        let pending = engine.pendingRequests(of: F.app)
        #expect(pending.count == 1)
        #expect(pending.first?.earliestBeginDate == t0 + 1200)
        #expect(replaced.wake == t0 + 1200, "the replaced request's date no longer wakes the engine")
        #expect(Summary(engine.handle(.timerFired, at: t0 + 600)).launched.isEmpty)
        #expect(Summary(engine.handle(.timerFired, at: t0 + 1200)).launched.count == 1)
    }

    @Test func acceptedSubmissionReportsWhereTheRequestWent() throws {
        var engine = F.engine(conditions: F.noNetwork)
        let effects = try F.submit(F.processing(network: true), to: &engine, at: t0)
        #expect(effects.moves == [.init(key: F.key(F.syncID), location: .blocked(.network))])
    }

    private typealias Summary = EngineEffectSummary
}
