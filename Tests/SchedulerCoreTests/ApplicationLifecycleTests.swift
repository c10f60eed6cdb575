import Foundation
import Testing
@testable import SchedulerCore

/// The app's lifecycle and background assertions (docs/system.md, "Assertions"): suspension, the 30 s window,
/// expiration, the watchdog terminations, the budget policies and `endBackgroundTask` errors.
@Suite("Application lifecycle")
struct ApplicationLifecycleTests {
    let t0 = EngineFixtures.t0

    /// A launched, active app.
    private func activeApp(_ configuration: AssertionConfiguration = .init()) -> ApplicationLifecycle {
        var lifecycle = ApplicationLifecycle(configuration: configuration)
        _ = lifecycle.finishLaunching(at: t0 - 100)
        return lifecycle
    }

    /// `beginAssertion`, requiring that it grants an identifier.
    private func begin(_ lifecycle: inout ApplicationLifecycle, name: String?, hasExpirationHandler: Bool, at now: Date) throws -> Int {
        let identifier = lifecycle.beginAssertion(name: name, hasExpirationHandler: hasExpirationHandler, at: now)
        return try #require(identifier, "beginAssertion granted no time")
    }

    private func terminations(_ effects: [LifecycleEffect]) -> [TerminationReason] {
        effects.compactMap { if case .terminate(let reason) = $0 { reason } else { nil } }
    }

    /// `.invalid` says why: the cap of outstanding assertions is named as such, not blamed on
    /// the app's state (found by an outside probe: "cannot be granted (state active)").
    @Test func aRefusedAssertionSaysWhy() throws {
        var lifecycle = activeApp(AssertionConfiguration(maximumAssertions: 2))
        #expect(lifecycle.assertionRefusal(at: t0) == nil)
        _ = try begin(&lifecycle, name: "a", hasExpirationHandler: true, at: t0)
        _ = try begin(&lifecycle, name: "b", hasExpirationHandler: true, at: t0)
        #expect(lifecycle.beginAssertion(name: "c", hasExpirationHandler: true, at: t0) == nil)
        #expect(lifecycle.assertionRefusal(at: t0) == "2 background tasks are outstanding, the most at once; end some with endBackgroundTask(_:)")
        var suspended = activeApp()
        _ = suspended.enterBackground(at: t0)
        _ = suspended.tick(at: t0 + 5)
        #expect(suspended.assertionRefusal(at: t0 + 6) == "the app is suspended")
    }

    // MARK: Launch

    @Test func launchMovesToInactiveAndFinishLaunchingToActive() {
        var lifecycle = ApplicationLifecycle()
        #expect(lifecycle.state == .notRunning)
        #expect(!lifecycle.hasFinishedLaunching)

        #expect(lifecycle.launch(at: t0) == [.stateChanged(from: .notRunning, to: .inactive)])
        #expect(lifecycle.state == .inactive)
        #expect(!lifecycle.hasFinishedLaunching, "launching is not finishing")
        #expect(lifecycle.launch(at: t0).isEmpty, "a second launch does nothing")

        #expect(lifecycle.finishLaunching(at: t0 + 1) == [.stateChanged(from: .inactive, to: .active)])
        #expect(lifecycle.state == .active)
        #expect(lifecycle.hasFinishedLaunching)
    }

    @Test func finishLaunchingFromNotRunningPassesThroughInactive() {
        var lifecycle = ApplicationLifecycle()
        #expect(lifecycle.finishLaunching(at: t0) == [
            .stateChanged(from: .notRunning, to: .inactive),
            .stateChanged(from: .inactive, to: .active),
        ])
        #expect(lifecycle.hasFinishedLaunching)
    }

    // MARK: Launched into the background

    @Test func aBackgroundLaunchIsInTheBackgroundAndNeverSuspendsItself() {
        var lifecycle = ApplicationLifecycle()
        #expect(lifecycle.finishLaunchingIntoBackground(at: t0) == [.stateChanged(from: .notRunning, to: .background)])
        #expect(lifecycle.hasFinishedLaunching)
        #expect(lifecycle.launchedIntoBackground)
        // The system that launched it suspends it: no deadline of its own, no clock.
        #expect(lifecycle.nextDeadline == nil)
        #expect(lifecycle.tick(at: t0 + 3600).isEmpty)
        #expect(lifecycle.state == .background)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 3600) == .greatestFiniteMagnitude, "the task's budget is the system's")
        // Twice is nothing more.
        #expect(lifecycle.finishLaunchingIntoBackground(at: t0 + 1).isEmpty)
    }

    @Test func aBackgroundLaunchIsInTheBackgroundWhileTheLaunchMethodsRun() {
        var lifecycle = ApplicationLifecycle()
        #expect(lifecycle.launch(at: t0, intoBackground: true) == [.stateChanged(from: .notRunning, to: .background)])
        #expect(!lifecycle.hasFinishedLaunching, "registrations are still open")
        #expect(lifecycle.tick(at: t0 + 60).isEmpty, "not suspended by its own delay")
        #expect(lifecycle.finishLaunchingIntoBackground(at: t0 + 1).isEmpty)
        #expect(lifecycle.hasFinishedLaunching)
        // A process that launched as an ordinary one and is then told it is a background
        // launch moves from inactive.
        var ordinary = ApplicationLifecycle()
        _ = ordinary.launch(at: t0)
        #expect(ordinary.finishLaunchingIntoBackground(at: t0) == [.stateChanged(from: .inactive, to: .background)])
    }

    @Test func inABackgroundLaunchEachAssertionWindowStartsWithItsFirstAssertion() throws {
        var lifecycle = ApplicationLifecycle()
        _ = lifecycle.finishLaunchingIntoBackground(at: t0)
        // Ten minutes into the launch, an assertion still gets its whole 30 s.
        let first = try begin(&lifecycle, name: "save", hasExpirationHandler: true, at: t0 + 600)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 610) == 20)
        #expect(lifecycle.nextDeadline == t0 + 630)
        #expect(try lifecycle.endAssertion(first, at: t0 + 615).isEmpty, "ending the last assertion does not suspend")
        #expect(lifecycle.state == .background)
        #expect(lifecycle.nextDeadline == nil)
        // Thawed for another task an hour later: a fresh window, and its expiration as usual.
        _ = try begin(&lifecycle, name: "upload", hasExpirationHandler: true, at: t0 + 4200)
        #expect(lifecycle.tick(at: t0 + 4229.9).isEmpty)
        #expect(lifecycle.tick(at: t0 + 4230).contains { if case .expireAssertions = $0 { true } else { false } })
    }

    @Test func inABackgroundLaunchACumulativeBudgetStartsAgainWithEachWindow() throws {
        var lifecycle = ApplicationLifecycle(configuration: AssertionConfiguration(budgetPolicy: .cumulative))
        _ = lifecycle.finishLaunchingIntoBackground(at: t0)
        for window in 0..<3 {
            let start = t0 + Double(window) * 3600
            let first = try begin(&lifecycle, name: "a", hasExpirationHandler: true, at: start)
            let second = try begin(&lifecycle, name: "b", hasExpirationHandler: true, at: start)
            #expect(lifecycle.backgroundTimeRemaining(at: start) == 60, "two assertions, two windows, in window \(window)")
            _ = try lifecycle.endAssertion(first, at: start + 1)
            _ = try lifecycle.endAssertion(second, at: start + 1)
        }
    }

    @Test func openingABackgroundLaunchedAppMakesItAnOrdinaryForegroundApp() {
        var lifecycle = ApplicationLifecycle()
        _ = lifecycle.finishLaunchingIntoBackground(at: t0)
        #expect(lifecycle.enterForeground(at: t0 + 10) == [.stateChanged(from: .background, to: .active)])
        #expect(!lifecycle.launchedIntoBackground)
        // Back in the background it suspends itself as any app does.
        _ = lifecycle.enterBackground(at: t0 + 20)
        #expect(lifecycle.nextDeadline == t0 + 25)
        #expect(lifecycle.tick(at: t0 + 25) == [.stateChanged(from: .background, to: .suspended)])
    }

    // MARK: Suspension without assertions

    @Test func backgroundWithoutAssertionsSuspendsAtFiveSeconds() {
        var lifecycle = activeApp()
        #expect(lifecycle.enterBackground(at: t0) == [.stateChanged(from: .active, to: .background)])
        #expect(lifecycle.nextDeadline == t0 + 5)
        #expect(lifecycle.tick(at: t0 + 4.999).isEmpty)
        #expect(lifecycle.state == .background)
        #expect(lifecycle.tick(at: t0 + 5) == [.stateChanged(from: .background, to: .suspended)])
        #expect(lifecycle.state == .suspended)
        #expect(lifecycle.nextDeadline == nil)
    }

    // MARK: Scheduled tasks

    /// A task of a suspended app resumes it into the background, as iOS does: it may ask
    /// for background time there, is not suspended while the task runs, and is suspended
    /// again once the task is over.
    @Test func aTaskResumesASuspendedAppIntoTheBackgroundUntilItIsOver() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = lifecycle.tick(at: t0 + 5)
        #expect(lifecycle.state == .suspended)
        #expect(lifecycle.beginAssertion(name: "early", hasExpirationHandler: true, at: t0 + 6) == nil, "suspended: no time")
        #expect(lifecycle.taskStarted(at: t0 + 100) == [.stateChanged(from: .suspended, to: .background)])
        #expect(lifecycle.runningTasks == 1)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 100) == .greatestFiniteMagnitude, "the task's budget is the system's")
        #expect(lifecycle.nextDeadline == nil)
        #expect(lifecycle.tick(at: t0 + 200).isEmpty, "not suspended while the task runs")
        let id = try begin(&lifecycle, name: "save", hasExpirationHandler: true, at: t0 + 200)
        #expect(try lifecycle.endAssertion(id, at: t0 + 201).isEmpty)
        #expect(lifecycle.taskEnded(at: t0 + 300) == [.stateChanged(from: .background, to: .suspended)], "over after the suspend delay: suspended at once")
        #expect(lifecycle.runningTasks == 0)
    }

    /// An app in the background (not yet suspended) is not suspended while a task runs,
    /// may ask for background time during it however long it has run, and is suspended
    /// the suspend delay after the task's end.
    @Test func aRunningTaskKeepsABackgroundAppFromSuspending() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        #expect(lifecycle.taskStarted(at: t0 + 1).isEmpty)
        #expect(lifecycle.tick(at: t0 + 60).isEmpty)
        #expect(lifecycle.state == .background)
        let id = try begin(&lifecycle, name: "late", hasExpirationHandler: true, at: t0 + 60)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 60) == 30, "a window of its own from the first assertion")
        #expect(try lifecycle.endAssertion(id, at: t0 + 61).isEmpty)
        #expect(lifecycle.taskEnded(at: t0 + 62).isEmpty)
        #expect(lifecycle.tick(at: t0 + 65) == [.stateChanged(from: .background, to: .suspended)], "five seconds after the window began, as without a task")

        var resumed = activeApp()
        _ = resumed.enterBackground(at: t0)
        _ = resumed.tick(at: t0 + 5)
        _ = resumed.taskStarted(at: t0 + 10)
        #expect(resumed.taskEnded(at: t0 + 11).isEmpty)
        #expect(resumed.nextDeadline == t0 + 16, "the suspend delay from the task's end")
        #expect(resumed.tick(at: t0 + 16) == [.stateChanged(from: .background, to: .suspended)])
    }

    /// Starts and ends come from different threads: an end reported before its start
    /// leaves the count right (no task running), and two tasks keep the app up until both
    /// are over.
    @Test func taskStartsAndEndsInAnyOrderBalance() {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = lifecycle.tick(at: t0 + 5)
        #expect(lifecycle.taskEnded(at: t0 + 10).isEmpty)
        #expect(lifecycle.runningTasks == 0)
        _ = lifecycle.taskStarted(at: t0 + 10)
        #expect(lifecycle.runningTasks == 0)
        #expect(lifecycle.state == .suspended, "the balance is back at none: no resume")
        _ = lifecycle.taskStarted(at: t0 + 20)
        _ = lifecycle.taskStarted(at: t0 + 21)
        #expect(lifecycle.runningTasks == 2)
        #expect(lifecycle.taskEnded(at: t0 + 40).isEmpty)
        #expect(lifecycle.tick(at: t0 + 100).isEmpty, "one task still runs")
        #expect(lifecycle.taskEnded(at: t0 + 101).isEmpty)
        #expect(lifecycle.tick(at: t0 + 106) == [.stateChanged(from: .background, to: .suspended)])
    }

    @Test func suspendDelayIsConfigurable() {
        var lifecycle = activeApp(AssertionConfiguration(suspendDelay: 3))
        _ = lifecycle.enterBackground(at: t0)
        #expect(lifecycle.tick(at: t0 + 2.9).isEmpty)
        #expect(lifecycle.tick(at: t0 + 3) == [.stateChanged(from: .background, to: .suspended)])
    }

    // MARK: One assertion

    @Test func oneAssertionExtendsBackgroundTimeToThirtySeconds() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        let id = try begin(&lifecycle, name: "save", hasExpirationHandler: true, at: t0 + 1)
        #expect(lifecycle.tick(at: t0 + 5).isEmpty, "not suspended while an assertion is held")
        #expect(lifecycle.nextDeadline == t0 + 30)
        #expect(lifecycle.tick(at: t0 + 29.999).isEmpty)
        #expect(lifecycle.tick(at: t0 + 30) == [.expireAssertions([id])])
        #expect(lifecycle.state == .background)
    }

    @Test func unendedAssertionIsTerminatedWithBackgroundTaskNotFinishedCode() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        let id = try begin(&lifecycle, name: "upload", hasExpirationHandler: true, at: t0)
        _ = lifecycle.tick(at: t0 + 30)
        #expect(lifecycle.nextDeadline == t0 + 35)
        #expect(lifecycle.tick(at: t0 + 34.999).isEmpty, "the expiration handlers have 5 s")

        let effects = lifecycle.tick(at: t0 + 35)
        let reason = try #require(terminations(effects).first)
        #expect(reason.code == 0x2182_BAD2)
        #expect(reason.message.contains("'upload' (\(id))"))
        #expect(effects.contains(.stateChanged(from: .background, to: .notRunning)))
        #expect(lifecycle.state == .notRunning)
        #expect(lifecycle.outstandingAssertions.isEmpty)
    }

    /// A terminated app whose process lives on (embedded, nothing ended it).
    private func terminatedApp() throws -> ApplicationLifecycle {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = try begin(&lifecycle, name: "leak", hasExpirationHandler: false, at: t0)
        _ = lifecycle.tick(at: t0 + 30)
        #expect(terminations(lifecycle.tick(at: t0 + 35)).count == 1)
        #expect(lifecycle.outlivedTermination)
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0 + 36) == nil, "no time while not running")
        return lifecycle
    }

    @Test func aProcessThatOutlivedItsTerminationIsLaunchedAgainWhenTheUserOpensIt() throws {
        var lifecycle = try terminatedApp()
        #expect(lifecycle.enterForeground(at: t0 + 100) == [.stateChanged(from: .notRunning, to: .inactive), .stateChanged(from: .inactive, to: .active)])
        #expect(!lifecycle.outlivedTermination)
        // Alive again: a background with an assertion works as for any launched app.
        _ = lifecycle.enterBackground(at: t0 + 200)
        #expect(lifecycle.beginAssertion(name: "upload", hasExpirationHandler: true, at: t0 + 200) != nil)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 200) == 30)
    }

    @Test func aProcessThatOutlivedItsTerminationIsLaunchedIntoTheBackgroundForATask() throws {
        var lifecycle = try terminatedApp()
        #expect(lifecycle.taskStarted(at: t0 + 100) == [.stateChanged(from: .notRunning, to: .background)])
        let save = try begin(&lifecycle, name: "save", hasExpirationHandler: true, at: t0 + 101)
        _ = try lifecycle.endAssertion(save, at: t0 + 102)
        // The task ends: suspended after the delay, as a resumed app is.
        #expect(lifecycle.taskEnded(at: t0 + 103).isEmpty)
        #expect(lifecycle.nextDeadline == t0 + 106, "the suspend delay from the background time's start")
        #expect(lifecycle.tick(at: t0 + 106) == [.stateChanged(from: .background, to: .suspended)])
    }

    @Test func anAppNotYetLaunchedIsNotLaunchedByForegroundOrTask() {
        var lifecycle = ApplicationLifecycle()
        #expect(!lifecycle.outlivedTermination)
        #expect(lifecycle.enterForeground(at: t0).isEmpty)
        #expect(lifecycle.taskStarted(at: t0).isEmpty)
        #expect(lifecycle.state == .notRunning)
    }

    @Test func assertionWithoutExpirationHandlerIsTerminatedAsLeaked() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = try begin(&lifecycle, name: "leak", hasExpirationHandler: false, at: t0)
        _ = try begin(&lifecycle, name: "fine", hasExpirationHandler: true, at: t0)
        _ = lifecycle.tick(at: t0 + 30)
        let reason = try #require(terminations(lifecycle.tick(at: t0 + 35)).first)
        #expect(reason.code == 0x8BAD_F00D)
        #expect(reason.description.hasPrefix("0x8badf00d"))
    }

    @Test func expirationAllowanceIsConfigurable() throws {
        var lifecycle = activeApp(AssertionConfiguration(expirationAllowance: 1))
        _ = lifecycle.enterBackground(at: t0)
        _ = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        _ = lifecycle.tick(at: t0 + 30)
        #expect(terminations(lifecycle.tick(at: t0 + 31)).count == 1)
    }

    @Test func endingAssertionsDuringExpirationAllowanceSuspendsInsteadOfTerminating() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        let id = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        _ = lifecycle.tick(at: t0 + 30)
        #expect(try lifecycle.endAssertion(id, at: t0 + 31) == [.stateChanged(from: .background, to: .suspended)])
        #expect(lifecycle.tick(at: t0 + 35).isEmpty)
    }

    @Test func endingLastAssertionBeforeFiveSecondsSuspendsAtFiveSeconds() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        let id = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0 + 1)
        #expect(try lifecycle.endAssertion(id, at: t0 + 2).isEmpty)
        #expect(lifecycle.nextDeadline == t0 + 5)
        #expect(lifecycle.tick(at: t0 + 4.999).isEmpty)
        #expect(lifecycle.tick(at: t0 + 5) == [.stateChanged(from: .background, to: .suspended)])
    }

    @Test func endingLastAssertionAfterFiveSecondsSuspendsAtOnce() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        let first = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        let second = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        #expect(try lifecycle.endAssertion(first, at: t0 + 10).isEmpty, "one assertion is still held")
        #expect(lifecycle.state == .background)
        #expect(try lifecycle.endAssertion(second, at: t0 + 12) == [.stateChanged(from: .background, to: .suspended)])
    }

    // MARK: Dormant assertions and budget policies

    @Test func assertionBegunInForegroundIsDormantUntilBackground() throws {
        var lifecycle = activeApp()
        let id = try begin(&lifecycle, name: "draft", hasExpirationHandler: true, at: t0)
        #expect(lifecycle.tick(at: t0 + 1000).isEmpty, "no clock in the foreground")
        #expect(lifecycle.nextDeadline == nil)

        _ = lifecycle.enterBackground(at: t0 + 1000)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 1000) == 30)
        #expect(lifecycle.tick(at: t0 + 1029.999).isEmpty)
        #expect(lifecycle.tick(at: t0 + 1030) == [.expireAssertions([id])])
    }

    @Test func sharedWindowGivesTwoAssertionsThirtySecondsInTotal() throws {
        var lifecycle = activeApp()
        let first = try begin(&lifecycle, name: "a", hasExpirationHandler: true, at: t0 - 1)
        _ = lifecycle.enterBackground(at: t0)
        let second = try begin(&lifecycle, name: "b", hasExpirationHandler: true, at: t0 + 20)
        #expect(lifecycle.nextDeadline == t0 + 30)
        #expect(lifecycle.tick(at: t0 + 30) == [.expireAssertions([first, second])])
    }

    @Test func cumulativePolicyGivesThreeAssertionsNinetySeconds() throws {
        var lifecycle = activeApp(AssertionConfiguration(budgetPolicy: .cumulative))
        var ids: [Int] = []
        ids.append(try begin(&lifecycle, name: "a", hasExpirationHandler: true, at: t0 - 1))
        _ = lifecycle.enterBackground(at: t0)
        ids.append(try begin(&lifecycle, name: "b", hasExpirationHandler: true, at: t0 + 1))
        ids.append(try begin(&lifecycle, name: "c", hasExpirationHandler: true, at: t0 + 2))
        #expect(lifecycle.nextDeadline == t0 + 90)
        #expect(lifecycle.tick(at: t0 + 30).isEmpty)
        #expect(lifecycle.tick(at: t0 + 89.999).isEmpty)
        #expect(lifecycle.tick(at: t0 + 90) == [.expireAssertions(ids)])
    }

    // MARK: backgroundTimeRemaining

    @Test func backgroundTimeRemainingIsUnboundedInForeground() {
        var lifecycle = ApplicationLifecycle()
        _ = lifecycle.launch(at: t0)
        #expect(lifecycle.backgroundTimeRemaining(at: t0) == .greatestFiniteMagnitude, "inactive")
        _ = lifecycle.finishLaunching(at: t0)
        #expect(lifecycle.backgroundTimeRemaining(at: t0) == .greatestFiniteMagnitude, "active")
        #expect(ApplicationLifecycle().backgroundTimeRemaining(at: t0) == 0, "not running")
    }

    @Test func backgroundTimeRemainingFallsInBackgroundAndIsZeroWhenSuspended() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 1) == 4, "without assertion: until suspension")
        let id = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0 + 1)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 10) == 20)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 25) == 5)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 40) == 0, "never negative")
        _ = try lifecycle.endAssertion(id, at: t0 + 26)
        #expect(lifecycle.state == .suspended)
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 26) == 0)
    }

    // MARK: endBackgroundTask errors

    @Test func endingInvalidIdentifierThrowsInvalidIdentifier() {
        var lifecycle = activeApp()
        let error = #expect(throws: AssertionError.self) { _ = try lifecycle.endAssertion(0, at: t0) }
        #expect(error?.code == .invalidIdentifier)
    }

    @Test("ending an identifier never issued throws unknownIdentifier", arguments: [1, 42, -7])
    func endingNeverIssuedIdentifierThrowsUnknownIdentifier(identifier: Int) {
        var lifecycle = activeApp()
        let error = #expect(throws: AssertionError.self) { _ = try lifecycle.endAssertion(identifier, at: t0) }
        #expect(error?.code == .unknownIdentifier)
        #expect(error?.description.contains("\(identifier)") == true)
    }

    @Test func endingTwiceThrowsAlreadyEnded() throws {
        var lifecycle = activeApp()
        let id = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        _ = try lifecycle.endAssertion(id, at: t0 + 1)
        let error = #expect(throws: AssertionError.self) { _ = try lifecycle.endAssertion(id, at: t0 + 2) }
        #expect(error?.code == .alreadyEnded)
        #expect(error?.identifier == id)
    }

    // MARK: beginBackgroundTask refusals

    @Test func beginReturnsNilWhenSuspended() {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = lifecycle.tick(at: t0 + 5)
        #expect(lifecycle.state == .suspended)
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0 + 6) == nil)
    }

    @Test func beginReturnsNilWhenNotRunning() {
        var lifecycle = ApplicationLifecycle()
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0) == nil)
    }

    @Test func beginReturnsNilAfterExpiration() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        _ = lifecycle.tick(at: t0 + 30)
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0 + 31) == nil)
    }

    @Test func beginReturnsNilOnceTheWindowHasEndedEvenBeforeTick() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0 + 30) == nil)
    }

    @Test func beginReturnsNilBeyondMaximumAssertions() throws {
        var lifecycle = activeApp(AssertionConfiguration(maximumAssertions: 2))
        let first = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        _ = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0) == nil)
        _ = try lifecycle.endAssertion(first, at: t0)
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0) != nil, "room again after an end")
    }

    @Test func identifiersAreDistinctAndNamed() throws {
        var lifecycle = activeApp()
        let a = try begin(&lifecycle, name: "a", hasExpirationHandler: true, at: t0)
        let b = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        #expect(a != b && a != 0 && b != 0)
        #expect(lifecycle.name(of: a) == "a")
        #expect(lifecycle.name(of: b) == nil)
        #expect(lifecycle.outstandingAssertions == [a, b])
    }

    // MARK: Foreground

    @Test func enterForegroundResetsTheBackgroundClock() throws {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        let id = try begin(&lifecycle, name: nil, hasExpirationHandler: true, at: t0)
        _ = lifecycle.tick(at: t0 + 30)   // expired
        #expect(lifecycle.enterForeground(at: t0 + 32) == [.stateChanged(from: .background, to: .active)])
        #expect(lifecycle.tick(at: t0 + 100).isEmpty, "no termination once back in the foreground")
        #expect(lifecycle.backgroundTimeRemaining(at: t0 + 100) == .greatestFiniteMagnitude)
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0 + 100) != nil, "time can be granted again")

        _ = lifecycle.enterBackground(at: t0 + 200)
        #expect(lifecycle.nextDeadline == t0 + 230, "a fresh window from the new background entry")
        #expect(lifecycle.tick(at: t0 + 229).isEmpty)
        let held = lifecycle.outstandingAssertions
        #expect(held.count == 2 && held.contains(id))
        #expect(lifecycle.tick(at: t0 + 230) == [.expireAssertions(held)])
    }

    @Test func enterForegroundWakesASuspendedApp() {
        var lifecycle = activeApp()
        _ = lifecycle.enterBackground(at: t0)
        _ = lifecycle.tick(at: t0 + 5)
        #expect(lifecycle.enterForeground(at: t0 + 60) == [.stateChanged(from: .suspended, to: .active)])
        #expect(lifecycle.beginAssertion(name: nil, hasExpirationHandler: true, at: t0 + 61) != nil)
    }

    @Test func lifecycleTransitionsOutOfStateAreIgnored() {
        var lifecycle = ApplicationLifecycle()
        #expect(lifecycle.enterBackground(at: t0).isEmpty, "not running: cannot go to the background")
        #expect(lifecycle.enterForeground(at: t0).isEmpty)
        #expect(lifecycle.tick(at: t0).isEmpty)
        #expect(lifecycle.state == .notRunning)
    }
}
