import BGTaskDaemon
import DaemonProtocol
import Foundation
import ProcessSupervision
import SchedulerCore
import Testing

/// The pure state machine of one app under bgtaskd: every rule of docs/daemon.md,
/// "Launching for tasks", as events in and actions out.
@Suite struct AppSupervisionTests {
    let app = AppID("org.example.feeds")
    let start = Date(timeIntervalSince1970: 1_000_000)

    func run(_ number: Int64, _ identifier: String = "org.example.feeds.refresh") -> RunRecord {
        let request = PendingRequest(app: app, identifier: identifier, kind: .appRefresh, submittedAt: start)
        return RunRecord(id: RunID(number), request: request, startedAt: start)
    }

    /// A supervision (with `timing`) whose app the daemon launched for run 1, connected and launched.
    func launched(timing: AppSupervision.Timing = .init()) -> (AppSupervision, RunRecord) {
        var machine = AppSupervision(timing: timing)
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        _ = machine.handle(.connected(pid: 100))
        _ = machine.handle(.finishedLaunching)
        return (machine, first)
    }

    @Test func aColdLaunchSpawnsAndWaitsForTheRegistrationWindow() {
        var machine = AppSupervision()
        let first = run(1)
        #expect(machine.handle(.launch(first, budget: 30)) == [.spawn, .arm(.launch, after: 10)])
        #expect(machine.phase == .starting)
        #expect(machine.handle(.spawned(pid: 100)).isEmpty)
        // Connected is not launched: nothing is handed over before the window closes.
        #expect(machine.handle(.connected(pid: 100)).isEmpty)
        #expect(machine.handle(.finishedLaunching) == [.disarm, .push(.launch(first, budget: 30)), .armDeadline(first.id, at: start + 30)])
        #expect(machine.phase == .ready)
        #expect(machine.active == [first.id])
    }

    @Test func aSecondRunGoesStraightToTheLaunchedApp() {
        var (machine, _) = launched()
        let second = run(2, "org.example.feeds.cleanup")
        #expect(machine.handle(.launch(second, budget: nil)) == [.disarm, .push(.launch(second, budget: nil))])
    }

    @Test func whenItsRunsAreDoneTheAppIsSuspendedThenEndedWhenIdle() {
        var (machine, first) = launched()
        var finished = first
        finished.outcome = .success
        #expect(machine.handle(.finished(finished)) == [.disarmDeadline(first.id), .push(.finished(finished)), .arm(.suspend, after: 1)])
        #expect(machine.handle(.suspendDue) == [.suspend, .arm(.idle, after: 300)])
        #expect(machine.phase == .suspended)
        #expect(machine.handle(.idleDue) == [.resume, .disarm, .terminateProcess(reason: "idle for 5 min")])
        #expect(machine.phase == .ending)
    }

    @Test func onlyThisDaemonsAppCgroupsAreKilledForOrphans() {
        let apps = "/sys/fs/cgroup/user.slice/bgtaskd/apps"
        #expect(CgroupDelegation.isAppCgroup(apps + "/com.example.reader", of: apps))
        for path in [apps, apps + "/", apps + "/..", apps + "/a/b", apps + "/../../init.scope", "/sys/fs/cgroup/system.slice", "/tmp/fake", apps + "x/y"] {
            #expect(!CgroupDelegation.isAppCgroup(path, of: apps), "\(path)")
        }
        #expect(!CgroupDelegation.isAppCgroup(apps + "/com.example.reader", of: nil), "no cgroups (--no-cgroups): none is")
    }

    @Test func anAppHoldingBackgroundAssertionsIsSuspendedOnlyAfterTheirWindow() {
        var (machine, first) = launched()
        #expect(machine.handle(.assertions(held: true)).isEmpty, "a run is in progress: nothing to arm")
        // Its run is done, its assertion is not: the suspension waits out the window.
        #expect(machine.handle(.finished(first)).contains(.arm(.suspend, after: 40)))
        // It ends its last assertion: suspended after the usual delay.
        #expect(machine.handle(.assertions(held: false)) == [.arm(.suspend, after: 1)])
        // Its window was granted in this idle period: beginning another does not grant it again.
        #expect(machine.handle(.assertions(held: true)).isEmpty)
        // An app that never says it ended them is suspended when the window is over.
        #expect(machine.handle(.suspendDue) == [.suspend, .arm(.idle, after: 300)])
        #expect(machine.phase == .suspended)
        // The next process holds none.
        _ = machine.handle(.processExited("exited with code 0"))
        #expect(!machine.assertionsHeld)
    }

    @Test func beginningAndEndingAssertionsOverAndOverDoesNotKeepAnAppRunning() {
        var (machine, first) = launched()
        _ = machine.handle(.assertions(held: true))
        #expect(machine.handle(.finished(first)).contains(.arm(.suspend, after: 40)))
        for _ in 0..<100 {
            // Never a window again in this idle period; the end of one still shortens it.
            #expect(machine.handle(.assertions(held: true)).isEmpty)
            #expect(machine.handle(.assertions(held: false)) == [.arm(.suspend, after: 1)])
        }
        #expect(machine.handle(.suspendDue) == [.suspend, .arm(.idle, after: 300)])
    }

    @Test func aNewRunGrantsANewAssertionWindowAfterIt() {
        var (machine, first) = launched()
        _ = machine.handle(.assertions(held: true))
        _ = machine.handle(.finished(first))
        let second = run(2)
        _ = machine.handle(.launch(second, budget: 30))
        #expect(machine.handle(.finished(second)).contains(.arm(.suspend, after: 40)), "the system gave the app new time")
    }

    @Test func anAssertionBegunJustBeforeTheFreezeThawsTheAppForItsWindow() {
        var (machine, first) = launched()
        _ = machine.handle(.finished(first))
        _ = machine.handle(.suspendDue)
        #expect(machine.phase == .suspended)
        // Sent while it ran, read after the freeze.
        #expect(machine.handle(.assertions(held: true)) == [.resume, .disarm, .arm(.suspend, after: 40)])
        #expect(machine.phase == .ready)
        // Once its window is spent, a stale message does not thaw it again.
        _ = machine.handle(.suspendDue)
        _ = machine.handle(.assertions(held: false))
        #expect(machine.handle(.assertions(held: true)).isEmpty)
        #expect(machine.phase == .suspended)
    }

    @Test func anExpirationBeforeTheLaunchFinishedFollowsTheLaunch() {
        var machine = AppSupervision()
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        _ = machine.handle(.connected(pid: 100))
        // The engine expires the run (conditions failed) while the app is still launching.
        #expect(machine.handle(.expire(first.id, reason: "the network went away")).isEmpty)
        #expect(machine.handle(.finishedLaunching) == [.disarm, .push(.launch(first, budget: 30)), .push(.expire(run: first.id, reason: "the network went away"))])
        // Pushed once: neither its deadline nor the engine's next word pushes it again.
        #expect(machine.handle(.expire(first.id, reason: "again")).isEmpty)
        #expect(machine.handle(.deadlineDue(first.id)).isEmpty)
    }

    @Test func aSuspendedAppIsThawedForItsNextRun() {
        var (machine, first) = launched()
        _ = machine.handle(.finished(first))
        _ = machine.handle(.suspendDue)
        let second = run(2)
        #expect(machine.handle(.launch(second, budget: 30)) == [.resume, .disarm, .push(.launch(second, budget: 30)), .armDeadline(second.id, at: start + 30)])
        #expect(machine.phase == .ready)
    }

    @Test func anAppThatNeverFinishesLaunchingFailsItsRunsAndIsEnded() {
        var machine = AppSupervision()
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        let actions = machine.handle(.launchTimedOut)
        #expect(actions.first == .launchFailed(first.id, reason: "the app did not connect and finish launching within 10 s"))
        #expect(actions.contains(.terminateProcess(reason: "it did not finish launching in time")))
        // The exit that follows has nothing left to fail.
        #expect(machine.handle(.processExited("was killed by signal 15")) == [.disarm])
        #expect(machine.phase == .notRunning)
    }

    @Test func anAppThatExitsBeforeRegisteringFailsItsRuns() {
        var machine = AppSupervision()
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        let actions = machine.handle(.processExited("exited with status 1"))
        #expect(actions.contains(.launchFailed(first.id, reason: "the app's process exited with status 1 before it finished launching")))
    }

    /// Its connection's close may reach the daemon before its exit: the same failed
    /// launch, once, and no new process for the run (a loop of them, before this rule).
    @Test func anAppThatClosesItsConnectionBeforeRegisteringFailsItsRunsOnce() {
        var machine = AppSupervision()
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        _ = machine.handle(.connected(pid: 100))
        let closed = machine.handle(.disconnected("the peer closed the connection"))
        #expect(closed.first == .launchFailed(first.id, reason: "the app closed its connection before it finished launching (the peer closed the connection)"))
        #expect(closed.contains { if case .terminateProcess = $0 { true } else { false } })
        let exited = machine.handle(.processExited("exited with status 3"))
        #expect(!exited.contains(.spawn), "no new process for a run that already failed")
        #expect(!exited.contains { if case .launchFailed = $0 { true } else { false } })
        #expect(machine.phase == .notRunning)
        #expect(machine.queued.isEmpty)
    }

    @Test func aCrashDuringARunIsRecordedAsCrashed() {
        var (machine, first) = launched()
        let actions = machine.handle(.processExited("was killed by signal 11"))
        #expect(actions.contains(.runCrashed(first.id, reason: "the app's process was killed by signal 11 during the run")))
        #expect(actions.contains(.disconnect(reason: "its process was killed by signal 11")))
        #expect(machine.active.isEmpty)
    }

    /// A crashing process's connection may close before its exit is reported: its runs
    /// wait for the exit, so that their record says how it ended (a behaviour probe found
    /// "the app closed its connection" where the daemon's log had SIGABRT).
    @Test func aRunWhoseProcessClosesItsConnectionIsRecordedWithHowTheProcessEnded() {
        var (machine, first) = launched()
        let closed = machine.handle(.disconnected("the peer closed the connection"))
        #expect(!closed.contains { if case .runCrashed = $0 { true } else { false } }, "\(closed)")
        #expect(closed.contains(.disarmDeadline(first.id)))
        #expect(closed.contains(.terminateProcess(reason: "it closed its connection")))
        #expect(machine.runsAwaitingExit == [first.id])
        #expect(machine.active.isEmpty)
        let exited = machine.handle(.processExited("killed by signal 6 (SIGABRT)"))
        #expect(exited.first == .runCrashed(first.id, reason: "the app's connection closed during the run (the peer closed the connection) and its process killed by signal 6 (SIGABRT)"))
        #expect(exited.filter { if case .runCrashed = $0 { true } else { false } }.count == 1, "\(exited)")
        #expect(machine.runsAwaitingExit.isEmpty)
        #expect(machine.phase == .notRunning)
    }

    @Test func aRunTheEngineEndsWhileItsProcessIsEndedIsNotRecordedCrashedAfter() {
        var (machine, first) = launched()
        _ = machine.handle(.disconnected("the peer closed the connection"))
        _ = machine.handle(.finished(first))
        let exited = machine.handle(.processExited("killed by signal 15 (SIGTERM), sent by bgtaskd"))
        #expect(!exited.contains { if case .runCrashed = $0 { true } else { false } }, "\(exited)")
    }

    /// A process the user started is not the daemon's to watch: its runs end with its
    /// connection.
    @Test func aRunOfTheUsersProcessEndsWithItsConnection() {
        var machine = AppSupervision()
        _ = machine.handle(.connected(pid: 200))
        _ = machine.handle(.finishedLaunching)
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        #expect(machine.active == [first.id])
        let closed = machine.handle(.disconnected("the peer closed the connection"))
        #expect(closed.contains(.runCrashed(first.id, reason: "the app closed its connection during the run (the peer closed the connection)")))
        #expect(machine.runsAwaitingExit.isEmpty)
    }

    @Test func aRunThatOverrunsItsGraceEndsTheApp() {
        var (machine, first) = launched()
        #expect(machine.handle(.expire(first.id, reason: "budget exhausted")) == [.push(.expire(run: first.id, reason: "budget exhausted"))])
        let actions = machine.handle(.terminate(first.id, reason: "budget exhausted"))
        #expect(Array(actions.prefix(2)) == [.disarmDeadline(first.id), .push(.terminate(run: first.id, reason: "budget exhausted"))])
        #expect(actions.contains(.terminateProcess(reason: "run#1 overran its grace period: budget exhausted")))
        #expect(machine.phase == .ending)
    }

    @Test func anAppTheUserStartedIsNeverSuspendedOrEnded() {
        var machine = AppSupervision()
        #expect(machine.accepts(pid: 555))
        _ = machine.handle(.connected(pid: 555))
        _ = machine.handle(.finishedLaunching)
        #expect(machine.spawnedByDaemon == false)
        let first = run(1)
        #expect(machine.handle(.launch(first, budget: 30)) == [.disarm, .push(.launch(first, budget: 30)), .armDeadline(first.id, at: start + 30)])
        #expect(machine.handle(.finished(first)) == [.disarmDeadline(first.id), .push(.finished(first))])
        #expect(machine.handle(.suspendDue).isEmpty)
    }

    @Test func oneConnectionPerAppAndOnlyFromTheDaemonsOwnProcess() {
        var machine = AppSupervision()
        _ = machine.handle(.launch(run(1), budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        #expect(machine.accepts(pid: 200) == false)
        #expect(machine.accepts(pid: 100))
        _ = machine.handle(.connected(pid: 100))
        #expect(machine.accepts(pid: 100) == false)
    }

    @Test func anOpenedAppIsNotSuspended() {
        var (machine, first) = launched()
        _ = machine.handle(.opened())
        #expect(machine.handle(.finished(first)) == [.disarmDeadline(first.id), .push(.finished(first))])
        #expect(machine.handle(.suspendDue).isEmpty)
        #expect(machine.handle(.backgrounded()) == [.arm(.suspend, after: 1)])
    }

    @Test func theUsersWordFromOutsideIsToldToTheAppAndItsOwnReportIsNotEchoed() {
        var (machine, _) = launched()
        #expect(machine.handle(.opened(tellApp: true)) == [.disarm, .push(.foreground)])
        #expect(machine.handle(.opened()) == [.disarm], "the app's own report")
        #expect(machine.handle(.backgrounded(tellApp: true)).first == .push(.background))
        #expect(!machine.handle(.backgrounded()).contains(.push(.background)))
        // With no process connected there is nobody to tell.
        var idle = AppSupervision()
        #expect(idle.handle(.opened(tellApp: true)).isEmpty)
        #expect(idle.handle(.backgrounded(tellApp: true)).isEmpty)
    }

    @Test func aNotificationResponseGoesToTheLaunchedProcessThawingAFrozenOne() {
        let response = NotificationResponseRequest(notification: "reminder")
        var (machine, first) = launched()
        var finished = first
        finished.outcome = .success
        _ = machine.handle(.finished(finished))
        #expect(AppSupervision.responseRefusal(machine) == nil)
        // Ready, idle: pushed, and suspended again once idle.
        #expect(machine.handle(.notificationResponse(response)) == [.push(.notificationResponse(response)), .arm(.suspend, after: 1)])
        _ = machine.handle(.suspendDue)
        #expect(machine.phase == .suspended)
        // Frozen: thawed for it; an assertion the delegate takes gets its window, as after a launch.
        #expect(machine.handle(.notificationResponse(response)) == [.resume, .push(.notificationResponse(response)), .arm(.suspend, after: 1)])
        #expect(machine.phase == .ready)
        #expect(machine.handle(.assertions(held: true)) == [.arm(.suspend, after: 40)])
        // A tap brings the app to the foreground, which it reports: not suspended then.
        #expect(machine.handle(.opened()) == [.disarm])
        #expect(machine.handle(.notificationResponse(response)) == [.push(.notificationResponse(response))])
    }

    @Test func aNotificationResponseStartsTheAppWhenNoneRunsAndFollowsItsLaunch() {
        let response = NotificationResponseRequest(notification: "reminder")
        var idle = AppSupervision()
        #expect(AppSupervision.responseRefusal(idle) == nil)
        #expect(idle.handle(.notificationResponse(response)) == [.spawnOpened, .arm(.launch, after: 10)], "started for it in the foreground, as iOS launches an app for a tap")
        #expect(idle.waitingResponses == [response])
        _ = idle.handle(.spawned(pid: 100))
        _ = idle.handle(.connected(pid: 100))
        #expect(idle.handle(.finishedLaunching) == [.disarm, .push(.notificationResponse(response)), .arm(.suspend, after: 1)])
        #expect(idle.waitingResponses.isEmpty)

        // Another action is the app's to bring forward if it says so: a background start.
        var snoozing = AppSupervision()
        #expect(snoozing.handle(.notificationResponse(NotificationResponseRequest(notification: "reminder", action: "snooze"))) == [.spawn, .arm(.launch, after: 10)])

        // One launching for a run: the response follows the run's launch.
        var launching = AppSupervision()
        let first = run(1)
        _ = launching.handle(.launch(first, budget: 30))
        _ = launching.handle(.spawned(pid: 100))
        #expect(launching.handle(.notificationResponse(response)).isEmpty)
        _ = launching.handle(.connected(pid: 100))
        #expect(launching.handle(.finishedLaunching) == [.disarm, .push(.launch(first, budget: 30)), .armDeadline(first.id, at: start + 30), .push(.notificationResponse(response))])
    }

    @Test func aResponseWaitingForTheUsersProcessThatWentStartsOneOfTheDaemonsAndNoMoreThanSixteenWait() {
        let response = NotificationResponseRequest(notification: "reminder")
        var machine = AppSupervision()
        _ = machine.handle(.connected(pid: 200))
        #expect(machine.phase == .starting)
        #expect(machine.handle(.notificationResponse(response)) == [.arm(.launch, after: 10)])
        #expect(machine.handle(.notificationResponse(response)).isEmpty, "the deadline is not put off")
        // The user's process went before it finished launching: the responses are not left
        // for a later launch to replay; a process of the daemon's is started for them.
        #expect(machine.handle(.disconnected("closed")) == [.disarm, .spawnOpened, .arm(.launch, after: 10)])
        #expect(machine.waitingResponses.count == 2)
        for _ in 2..<AppSupervision.maximumWaitingResponses { _ = machine.handle(.notificationResponse(response)) }
        #expect(AppSupervision.responseRefusal(machine)?.contains("16 responses already wait") == true)
    }

    @Test func aResponseThatWaitedIsDroppedWithAFailedLaunchAndRefusedWhileTheAppIsEnded() {
        let response = NotificationResponseRequest(notification: "reminder")
        var failing = AppSupervision()
        _ = failing.handle(.notificationResponse(response))
        #expect(failing.handle(.spawnFailed("ENOENT")) == [.disarm, .responseDropped(response, reason: "the app could not be started: ENOENT")])
        #expect(failing.waitingResponses.isEmpty)
        var (machine, _) = launched()
        _ = machine.handle(.quit("the user force-quit the app"))
        #expect(machine.phase == .ending)
        #expect(AppSupervision.responseRefusal(machine)?.contains("being ended") == true)
        #expect(machine.handle(.notificationResponse(response)).isEmpty)
    }

    @Test func forceQuitEndsTheAppAndFailsWhatWaited() {
        var machine = AppSupervision()
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        let actions = machine.handle(.quit("the user force-quit the app"))
        #expect(actions.first == .launchFailed(first.id, reason: "the app was stopped before the task could start: the user force-quit the app"))
        #expect(actions.contains(.terminateProcess(reason: "the user force-quit the app")))
    }

    @Test func aStoppingDaemonEndsItsOwnProcessButLeavesTheUsersToReconnect() {
        // The daemon's own process: told to quit and ended, as on a force-quit.
        var (ours, _) = launched()
        let ended = ours.handle(.daemonStopping("bgtaskd is stopping"))
        #expect(ended.contains(.push(.quit(reason: "bgtaskd is stopping"))))
        #expect(ended.contains(.terminateProcess(reason: "bgtaskd is stopping")))
        // A process the user started: neither told to quit (it would stop reconnecting for
        // good) nor disconnected here; a run waiting for it fails.
        var users = AppSupervision()
        _ = users.handle(.connected(pid: 555))
        let waiting = run(2)
        _ = users.handle(.launch(waiting, budget: 30))
        let left = users.handle(.daemonStopping("bgtaskd is stopping"))
        #expect(left == [.launchFailed(waiting.id, reason: "the app was stopped before the task could start: bgtaskd is stopping")])
        #expect(users.connected)
    }

    @Test func aLostConnectionOfAUserProcessStartsOneOfOursForWaitingRuns() {
        var machine = AppSupervision()
        _ = machine.handle(.connected(pid: 555))
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        // Not launched yet: the run waits in the queue.
        #expect(machine.queued == [first])
        #expect(machine.handle(.disconnected("peer closed")) == [.disarm, .spawn, .arm(.launch, after: 10)])
    }

    @Test func aProcessTheDaemonStartsAfterTheUserClosedTheAppIsSuspendedWhenDone() {
        var machine = AppSupervision()
        // The user ran the app and opened it, then quit it.
        _ = machine.handle(.connected(pid: 50))
        _ = machine.handle(.opened())
        _ = machine.handle(.finishedLaunching)
        _ = machine.handle(.disconnected("peer closed"))
        #expect(!machine.foreground)
        // Later the daemon launches it for a run: in the background, suspended when done.
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        _ = machine.handle(.connected(pid: 100))
        _ = machine.handle(.finishedLaunching)
        var finished = first
        finished.outcome = .success
        #expect(machine.handle(.finished(finished)) == [.disarmDeadline(first.id), .push(.finished(finished)), .arm(.suspend, after: 1)])
        #expect(machine.handle(.suspendDue) == [.suspend, .arm(.idle, after: 300)])
    }

    @Test func anOpenedProcessThatExitsLeavesTheAppInTheBackground() {
        var (machine, first) = launched()
        _ = machine.handle(.opened())
        _ = machine.handle(.processExited("exited with status 0"))
        #expect(!machine.foreground)
        _ = first
    }

    // Found in review: each of these wedged an app or punished it for the daemon's doing.

    @Test func aForceQuitOfAUserProcessLetsItsNextProcessConnect() {
        var machine = AppSupervision()
        _ = machine.handle(.connected(pid: 555))
        _ = machine.handle(.finishedLaunching)
        let actions = machine.handle(.quit("the user force-quit the app"))
        #expect(actions.contains(.disconnect(reason: "the user force-quit the app")))
        // Ended too (SIGTERM to its process, not its group), while its pid is the connection's.
        let ended = actions.firstIndex(of: .terminateUsersProcess(reason: "the user force-quit the app"))
        #expect(ended != nil && ended! < actions.firstIndex(of: .disconnect(reason: "the user force-quit the app"))!, "\(actions)")
        #expect(!actions.contains(.terminateProcess(reason: "the user force-quit the app")), "its group is not the daemon's")
        #expect(machine.connected == false)
        #expect(machine.accepts(pid: 556), "the user opens the app again")
    }

    @Test func aTerminatedRunOfAUserProcessLetsItsNextProcessConnect() {
        var machine = AppSupervision()
        _ = machine.handle(.connected(pid: 555))
        _ = machine.handle(.finishedLaunching)
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.terminate(first.id, reason: "budget exhausted"))
        #expect(machine.accepts(pid: 556))
    }

    @Test func aRunTheEngineFinishedWhileItWaitedIsNeverHandedOver() {
        var machine = AppSupervision()
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        _ = machine.handle(.connected(pid: 100))
        var over = first
        over.outcome = .terminated
        _ = machine.handle(.finished(over))
        #expect(machine.queued.isEmpty)
        #expect(!machine.handle(.finishedLaunching).contains(.push(.launch(first, budget: 30))))
        #expect(machine.active.isEmpty)
    }

    @Test func aUserProcessThatNeverFinishesLaunchingHasItsRunsFailedInTime() {
        var machine = AppSupervision()
        #expect(machine.handle(.connected(pid: 555)) == [.arm(.launch, after: 10)])
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        #expect(machine.handle(.launchTimedOut).first == .launchFailed(first.id, reason: "the app did not connect and finish launching within 10 s"))
    }

    @Test func aRunArrivingWhileTheAppIsEndedStartsAFreshProcessInsteadOfFailing() {
        var (machine, first) = launched()
        _ = machine.handle(.finished(first))
        _ = machine.handle(.suspendDue)
        _ = machine.handle(.idleDue)
        #expect(machine.phase == .ending)
        let second = run(2)
        _ = machine.handle(.launch(second, budget: 30))
        let actions = machine.handle(.processExited("was killed by signal 15"))
        #expect(!actions.contains { if case .launchFailed = $0 { true } else { false } })
        #expect(actions.contains(.spawn))
        #expect(machine.queued == [second])
    }

    @Test func openingAnAppThatIsNotRunningLeavesItsNextBackgroundProcessSuspendable() {
        var machine = AppSupervision()
        _ = machine.handle(.opened())
        #expect(machine.foreground == false)
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        _ = machine.handle(.connected(pid: 100))
        _ = machine.handle(.finishedLaunching)
        #expect(machine.handle(.finished(first)).contains(.arm(.suspend, after: 1)))
    }

    @Test func theUserStartingTheAppTakesItOverFromTheDaemonsIdleProcess() {
        var (machine, first) = launched()
        _ = machine.handle(.finished(first))
        _ = machine.handle(.suspendDue)
        #expect(machine.accepts(pid: 777) == false)
        #expect(machine.canHandOver(to: 777))
        let actions = machine.handle(.handOver(to: 777))
        #expect(actions.contains(.resume))
        #expect(actions.contains(.terminateProcess(reason: "the user started another process of the app")))
        #expect(machine.connected && !machine.spawnedByDaemon && machine.pid == nil)
        _ = machine.handle(.finishedLaunching)
        let second = run(2)
        #expect(machine.handle(.launch(second, budget: 30)).contains(.push(.launch(second, budget: 30))))
    }

    @Test func noTakeOverWhileTheDaemonsProcessWorks() {
        let (machine, _) = launched()
        #expect(machine.canHandOver(to: 777) == false, "run 1 is in progress in the daemon's process")
    }

    @Test func aUserProcessArrivingWhileTheDaemonsWorksWaitsAndItsRunsAreExpired() {
        var (machine, first) = launched()
        #expect(machine.isBusy(for: 777))
        #expect(!machine.isBusy(for: 100), "the daemon's own process is never busy for itself")
        #expect(machine.handle(.userWaiting) == [.expireRuns(reason: "the user started another process of the app")])
        // The engine expires run 1; the daemon's process completes it: now it is idle, and
        // the user's process, asking again, takes over.
        _ = machine.handle(.expire(first.id, reason: "the user started another process of the app"))
        _ = machine.handle(.finished(first))
        #expect(!machine.isBusy(for: 777))
        #expect(machine.canHandOver(to: 777))
        // Asked while nothing runs: nothing to expire.
        #expect(machine.handle(.userWaiting).isEmpty)
    }

    @Test func aProcessBeingEndedIsBusyUntilItExits() {
        var (machine, first) = launched()
        _ = machine.handle(.terminate(first.id, reason: "overran its grace"))
        #expect(machine.phase == .ending)
        #expect(machine.isBusy(for: 777))
        #expect(machine.handle(.userWaiting).isEmpty, "already being ended: nothing more to ask")
        _ = machine.handle(.processExited("was killed by signal 9"))
        #expect(machine.accepts(pid: 777))
    }

    @Test func theBudgetsDeadlinePushesTheExpirationOnceWhateverTheEngineDoesAfter() {
        var (machine, first) = launched()
        #expect(machine.handle(.deadlineDue(first.id)) == [.push(.expire(run: first.id, reason: "budget of 30 s exhausted"))])
        #expect(machine.expirationPushed == [first.id])
        #expect(machine.handle(.expire(first.id, reason: "budget of 30 s exhausted")).isEmpty, "the engine's expiration is not pushed again")
        #expect(machine.handle(.deadlineDue(first.id)).isEmpty)
        // The run ends: its deadline goes with it, and a late timer changes nothing.
        #expect(machine.handle(.finished(first)).contains(.disarmDeadline(first.id)))
        #expect(machine.expirationPushed.isEmpty)
        #expect(machine.handle(.deadlineDue(first.id)).isEmpty)
        // An expiration the engine decides first (conditions changed) is pushed by it, once.
        let second = run(2)
        _ = machine.handle(.launch(second, budget: 30))
        #expect(machine.handle(.expire(second.id, reason: "the user started using the device")) == [.push(.expire(run: second.id, reason: "the user started using the device"))])
        #expect(machine.handle(.deadlineDue(second.id)).isEmpty)
        // A run without a budget (continued processing) has no deadline; a crash disarms one.
        let third = run(3)
        #expect(!machine.handle(.launch(third, budget: nil)).contains { if case .armDeadline = $0 { true } else { false } })
        let fourth = run(4)
        _ = machine.handle(.launch(fourth, budget: 30))
        #expect(machine.handle(.processExited("was killed by signal 9")).contains(.disarmDeadline(fourth.id)))
    }

    /// A supervision with the engine's grace (2 s), launched for run 1 (budget 30 s) as
    /// ``launched()`` is.
    func launchedWithGrace() -> (AppSupervision, RunRecord) {
        var timing = AppSupervision.Timing()
        timing.terminationGrace = 2
        return launched(timing: timing)
    }

    @Test func aRunThatOverrunsItsGraceIsEndedWhenTheGraceEndsNotWhenTheEngineSaysSo() {
        var (machine, first) = launchedWithGrace()
        #expect(machine.handle(.deadlineDue(first.id)) == [
            .push(.expire(run: first.id, reason: "budget of 30 s exhausted")),
            .armGraceEnd(first.id, after: 2),
        ])
        let actions = machine.handle(.graceEnded(first.id))
        #expect(Array(actions.prefix(2)) == [.disarmDeadline(first.id), .push(.terminate(run: first.id, reason: "budget of 30 s exhausted"))])
        #expect(actions.contains(.terminateProcess(reason: "run#1 overran its grace period: budget of 30 s exhausted")))
        #expect(machine.phase == .ending)
        #expect(machine.active.isEmpty)
        // The engine's own termination, and its record of the end, come later: nothing more.
        #expect(machine.handle(.terminate(first.id, reason: "budget of 30 s exhausted")).isEmpty)
        var over = first
        over.outcome = .terminated
        #expect(!machine.handle(.finished(over)).contains { if case .push = $0 { true } else { false } })
    }

    @Test func aRunThatEndsWithinItsGraceIsNotEnded() {
        var (machine, first) = launchedWithGrace()
        _ = machine.handle(.deadlineDue(first.id))
        var finished = first
        finished.outcome = .success
        #expect(machine.handle(.finished(finished)).contains(.disarmDeadline(first.id)))
        // A grace timer that fired as the run ended finds it over.
        #expect(machine.handle(.graceEnded(first.id)).isEmpty)
        #expect(machine.phase == .ready)
    }

    @Test func aRunTheAppSaidItCompletedIsLeftToTheEngineAtTheGracesEnd() {
        var (machine, first) = launchedWithGrace()
        _ = machine.handle(.deadlineDue(first.id))
        // The completion is on its way to the engine, which records it before saying so.
        #expect(machine.handle(.completing(first.id)).isEmpty)
        #expect(machine.handle(.graceEnded(first.id)).isEmpty)
        #expect(machine.active == [first.id] && machine.phase == .ready)
        // The engine judged it too late after all: its termination still ends the run.
        #expect(machine.handle(.terminate(first.id, reason: "budget of 30 s exhausted")).contains(.push(.terminate(run: first.id, reason: "budget of 30 s exhausted"))))
        // A completion said before the deadline arms no grace end.
        var (early, run) = launchedWithGrace()
        _ = early.handle(.completing(run.id))
        #expect(early.handle(.deadlineDue(run.id)) == [.push(.expire(run: run.id, reason: "budget of 30 s exhausted"))])
    }

    @Test func theAppsOtherRunsCrashWithTheProcessTheGracesEndEndedButNotTheRunItEnded() {
        var (machine, first) = launchedWithGrace()
        let second = run(2, "org.example.feeds.cleanup")
        _ = machine.handle(.launch(second, budget: nil))
        _ = machine.handle(.deadlineDue(first.id))
        _ = machine.handle(.graceEnded(first.id))
        let exited = machine.handle(.processExited("exited with status 0"))
        #expect(exited.contains { if case .runCrashed(second.id, _) = $0 { true } else { false } }, "\(exited)")
        #expect(!exited.contains { if case .runCrashed(first.id, _) = $0 { true } else { false } }, "the engine records it terminated: \(exited)")
    }

    @Test func theGraceEndsAfterTheDeadlineEvenWhenTheEngineExpiredTheRunFirst() {
        var (machine, first) = launchedWithGrace()
        // The engine expired the run early (its conditions failed): pushed once, by it.
        #expect(machine.handle(.expire(first.id, reason: "the network went away")) == [.push(.expire(run: first.id, reason: "the network went away"))])
        // Its own termination comes a grace after that; the deadline's grace is only a bound.
        #expect(machine.handle(.deadlineDue(first.id)) == [.armGraceEnd(first.id, after: 2)])
        #expect(machine.handle(.terminate(first.id, reason: "the network went away")).contains(.push(.terminate(run: first.id, reason: "the network went away"))))
        #expect(machine.handle(.graceEnded(first.id)).isEmpty)
    }

    @Test func withoutTheEnginesGraceTheSupervisionWaitsForTheEngine() {
        var (machine, first) = launched()
        #expect(machine.handle(.deadlineDue(first.id)) == [.push(.expire(run: first.id, reason: "budget of 30 s exhausted"))])
        #expect(machine.active == [first.id], "the run is the app's until the engine ends it")
    }

    @Test func aUserProcessSlowToLaunchFailsWhatWaitedButStaysTheAppAndLaunchesLater() {
        var machine = AppSupervision()
        _ = machine.handle(.connected(pid: 777))
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        let timedOut = machine.handle(.launchTimedOut)
        #expect(timedOut.contains(.launchFailed(first.id, reason: "the app did not connect and finish launching within 10 s")))
        #expect(!timedOut.contains { if case .terminateProcess = $0 { true } else { false } }, "the daemon never ends what it did not start")
        #expect(!timedOut.contains { if case .disconnect = $0 { true } else { false } })
        #expect(machine.connected && machine.phase == .starting)
        // A run arriving now waits its own launch timeout, then the process launches and gets it.
        let second = run(2)
        #expect(machine.handle(.launch(second, budget: 30)).contains(.arm(.launch, after: 10)))
        #expect(machine.handle(.finishedLaunching).contains(.push(.launch(second, budget: 30))))
        #expect(machine.phase == .ready)
    }

    @Test func runsWaitingForTheDaemonsProcessToLaunchGoToTheUsersProcessInstead() {
        var machine = AppSupervision()
        let first = run(1)
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        // The user starts the app before the daemon's process finished launching.
        #expect(!machine.isBusy(for: 777))
        #expect(machine.canHandOver(to: 777))
        let actions = machine.handle(.handOver(to: 777))
        #expect(actions.contains(.terminateProcess(reason: "the user started another process of the app")))
        #expect(machine.queued == [first], "run 1 waits for the user's process")
        #expect(machine.handle(.finishedLaunching) == [.disarm, .push(.launch(first, budget: 30)), .armDeadline(first.id, at: start + 30)])
        #expect(machine.active == [first.id])
        // The ended process's exit is no longer the app's (the shell forgets it): nothing crashes.
        #expect(!machine.spawnedByDaemon)
    }

    // MARK: The device's conditions (AppPush.deviceConditions)

    static let onBattery = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5)
    static let lowPower = Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5, lowPowerMode: true)

    @Test func aLaunchedAppIsToldHowTheDeviceIsThenEachChangeOnce() {
        var machine = AppSupervision()
        let first = run(1)
        #expect(machine.handle(.deviceChanged(Self.onBattery)).isEmpty, "no process yet")
        _ = machine.handle(.launch(first, budget: 30))
        _ = machine.handle(.spawned(pid: 100))
        #expect(machine.handle(.connected(pid: 100)).isEmpty, "connected, not launched: it registers its handlers first")
        #expect(machine.handle(.finishedLaunching) == [.disarm, .push(.launch(first, budget: 30)), .armDeadline(first.id, at: start + 30), .push(.deviceConditions(Self.onBattery))],
                "after the runs it was started for")
        #expect(machine.handle(.deviceChanged(Self.lowPower)) == [.push(.deviceConditions(Self.lowPower))])
        #expect(machine.handle(.deviceChanged(Self.lowPower)).isEmpty, "told once")
        // Other events do not tell it again.
        #expect(machine.handle(.opened()) == [.disarm])
    }

    @Test func aFrozenAppHearsOnlyTheLatestChangeOnceThawed() {
        var (machine, first) = launched()
        _ = machine.handle(.deviceChanged(Self.onBattery))
        _ = machine.handle(.finished(first))
        _ = machine.handle(.suspendDue)
        #expect(machine.phase == .suspended)
        #expect(machine.handle(.deviceChanged(Self.lowPower)).isEmpty, "frozen: it cannot read")
        #expect(machine.handle(.deviceChanged(Self.onBattery)).isEmpty)
        #expect(machine.handle(.deviceChanged(Self.lowPower)).isEmpty)
        let second = run(2)
        // Thawed for a run: the run, then the latest conditions, not the ones in between.
        #expect(machine.handle(.launch(second, budget: nil)) == [.resume, .disarm, .push(.launch(second, budget: nil)), .push(.deviceConditions(Self.lowPower))])
        // Back where it was before the freeze: no news, nothing pushed.
        var again = launched().0
        _ = again.handle(.deviceChanged(Self.onBattery))
        _ = again.handle(.finished(first))
        _ = again.handle(.suspendDue)
        _ = again.handle(.deviceChanged(Self.lowPower))
        _ = again.handle(.deviceChanged(Self.onBattery))
        #expect(again.handle(.launch(second, budget: nil)) == [.resume, .disarm, .push(.launch(second, budget: nil))])
    }

    @Test func aNewConnectionIsToldAgainAndAnEndingOneIsNot() {
        // A process the user started: told once it finished launching.
        var machine = AppSupervision()
        _ = machine.handle(.deviceChanged(Self.onBattery))
        #expect(machine.handle(.connected(pid: 200)) == [.arm(.launch, after: 10)])
        #expect(machine.handle(.finishedLaunching) == [.disarm, .push(.deviceConditions(Self.onBattery))])
        // It leaves and comes back (the same conditions): a new process knows nothing yet.
        _ = machine.handle(.disconnected("closed"))
        #expect(machine.handle(.deviceChanged(Self.lowPower)).isEmpty, "nobody to tell")
        _ = machine.handle(.connected(pid: 201))
        #expect(machine.handle(.finishedLaunching) == [.disarm, .push(.deviceConditions(Self.lowPower))])
        // Again, with nothing changed: the new process was told nothing yet.
        _ = machine.handle(.disconnected("closed"))
        _ = machine.handle(.connected(pid: 202))
        #expect(machine.handle(.finishedLaunching) == [.disarm, .push(.deviceConditions(Self.lowPower))])
        // Force-quit: told to leave, not of the device.
        let quit = machine.handle(.quit("force-quit"))
        #expect(!quit.contains { if case .push(.deviceConditions) = $0 { true } else { false } }, "\(quit)")
        #expect(machine.handle(.deviceChanged(Self.onBattery)).isEmpty)
        // The daemon's own process, still connected while it is being ended: not told either.
        var ending = launched().0
        _ = ending.handle(.deviceChanged(Self.onBattery))
        _ = ending.handle(.quit("uninstalled"))
        #expect(ending.phase == .ending && ending.connected)
        #expect(ending.handle(.deviceChanged(Self.lowPower)).isEmpty)
    }

    @Test func whatTheAppDoesNotHearOfTheDeviceDoesNotWakeIt() {
        var (machine, _) = launched()
        var device = Self.onBattery
        _ = machine.handle(.deviceChanged(device))
        // The network, idleness, CPU pressure, a level within the same whole percent: the
        // app posts nothing for them, so it is not sent them.
        device.networkAvailable = false
        device.networkMetered = true
        device.deviceIdle = false
        device.cpuPressure = 0.9
        device.batteryLevel = 0.5004
        #expect(machine.handle(.deviceChanged(device)).isEmpty)
        // A percent, or the power plugged in: sent, whole (with what changed meanwhile).
        device.batteryLevel = 0.49
        #expect(machine.handle(.deviceChanged(device)) == [.push(.deviceConditions(device))])
        device.externalPower = true
        #expect(machine.handle(.deviceChanged(device)) == [.push(.deviceConditions(device))])
        // A level no battery has is sent as none (JSON has no NaN), and does not make every
        // look a change.
        device.batteryLevel = .nan
        device.cpuPressure = .infinity
        var sent = device
        sent.batteryLevel = nil
        sent.cpuPressure = nil
        #expect(machine.handle(.deviceChanged(device)) == [.push(.deviceConditions(sent))])
        #expect(machine.handle(.deviceChanged(device)).isEmpty)
    }
}

/// An app's words for a run it could not start go into the run log bounded and escaped.
@Suite struct RecordedReasonTests {
    @Test func aLaunchFailureReasonIsBoundedAndEscaped() {
        #expect(DaemonService.recordedReason("no handler") == "no handler")
        let hostile = DaemonService.recordedReason(String(repeating: "\u{1B}[2J", count: 1_000))
        #expect(!hostile.unicodeScalars.contains { $0.value == 0x1B })
        #expect(hostile.hasPrefix(#"\u001B[2J"#))
        #expect(DaemonService.recordedReason(String(repeating: "x", count: 5_000)).count == 1_003)
        // One character of half a million combining marks is bounded too: by scalars.
        let cluster = "a" + String(repeating: "\u{301}", count: 500_000)
        #expect(cluster.count == 1)
        #expect(DaemonService.recordedReason(cluster).utf8.count <= 1_000 * 4 + 3)
    }
}
