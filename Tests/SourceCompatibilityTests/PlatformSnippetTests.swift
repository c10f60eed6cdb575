import BackgroundTasks
import BackgroundTasksTesting
import Synchronization
import FoundationOnlyFiles
import Testing
import SchedulerCore

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
        #expect(submitThroughFake(ThrowingFakeScheduler(code: 100)) == "typed code 100")
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

    // MARK: Remote-notification registration and the badge (probe finding 5)

    let reader = AppID("com.example.reader")

    func readerManifest(modes: Set<String>) -> AppManifest {
        AppManifest(appID: reader, permittedIdentifiers: [PushRegisteringAppDelegate.refreshIdentifier], backgroundModes: modes)
    }

    /// The push app launched by the user as UIApplicationMain launches it (its delegate set,
    /// its launch method called, on the main actor), once what it started has settled.
    func launchPushApp(on device: SimulatedDevice, modes: Set<String>) async -> (PushRegisteringAppDelegate, BGAppContext) {
        let launched = await MainActor.run {
            let delegate = PushRegisteringAppDelegate()
            let context = device.install(app: reader, manifest: readerManifest(modes: modes), launchedByUser: true) {
                MainActor.assumeIsolated {
                    UIApplication.shared.delegate = delegate
                    _ = delegate.application(UIApplication.shared, didFinishLaunchingWithOptions: nil)
                }
            }
            return (delegate, context)
        }
        await device.settle()
        return launched
    }

    @Test func registeringGivesTheDelegateTheAppsTokenAndTheRefreshSetsTheBadge() async throws {
        let device = try compatDevice()
        let (delegate, context) = await launchPushApp(on: device, modes: ["fetch", "remote-notification"])
        let expectedHex = Data("com.example.reader".utf8).map { String(format: "%02x", $0) }.joined()
        #expect(await MainActor.run { delegate.deviceTokenHex } == expectedHex, "the token, on the main actor, after didFinishLaunching")
        #expect(await MainActor.run { delegate.registrationError == nil })
        #expect(context.application.isRegisteredForRemoteNotifications)
        #expect(String(decoding: context.application.remoteNotificationDeviceToken, as: UTF8.self) == "com.example.reader", "what bgtask push takes")
        #expect(context.application.applicationIconBadgeNumber == 0)
        try context.withCurrent {
            try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: PushRegisteringAppDelegate.refreshIdentifier))
        }
        await device.run(for: 60)
        #expect(device.runs(of: PushRegisteringAppDelegate.refreshIdentifier).map(\.outcome) == [.success])
        #expect(context.application.applicationIconBadgeNumber == 3)
        await MainActor.run { context.withCurrent { delegate.logOut() } }
        #expect(!context.application.isRegisteredForRemoteNotifications)
        #expect(context.application.applicationIconBadgeNumber == 0)
    }

    @Test func registeringWithoutTheRemoteNotificationModeFailsNamingIt() async throws {
        let device = try compatDevice()
        let (delegate, context) = await launchPushApp(on: device, modes: ["fetch"])
        let failure = await MainActor.run { delegate.registrationError.map { $0 as NSError } }
        #expect(failure?.domain == NSCocoaErrorDomain && failure?.code == 3000, "iOS's error for an app without the push entitlement")
        #expect(failure?.localizedDescription.contains("\"remote-notification\"") == true, "\(failure?.localizedDescription ?? "")")
        #expect(await MainActor.run { delegate.deviceTokenHex } == nil)
        #expect(!context.application.isRegisteredForRemoteNotifications)
    }

    // MARK: Settings and the device (probe finding 5)

    @Test @MainActor func openingSettingsOpensNothingAndSaysSoOnTheMainActor() async throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        let row = BackgroundRefreshSettingsRow()
        context.withCurrent { row.openSettings() }
        await device.settle()
        #expect(row.openedSettings == false, "the completion handler was called with false")
        #expect(await context.withCurrent { Task { await row.openSettingsAsync() } }.value == false)
        #expect(UIApplication.openSettingsURLString == "app-settings:")
        #expect(!context.application.canOpenURL(try #require(URL(string: "https://example.com"))))
    }

    @Test func theDeviceReportsTheBatteryTheSchedulerSeesOnceMonitoringIsOn() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        device.setConditions(Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.42))
        context.withCurrent {
            let current = UIDevice.current
            #expect(current === context.device)
            #expect(current.batteryLevel == -1 && current.batteryState == .unknown, "monitoring is off by default, as on iOS")
            #expect(!HeavyWorkGate.shouldRunHeavyWork(), "42 % and unplugged")
            current.isBatteryMonitoringEnabled = true
            #expect(abs(current.batteryLevel - 0.42) < 0.0001)
            #expect(current.batteryState == .unplugged)
            #expect(current.isMultitaskingSupported)
        }
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, batteryLevel: 0.3))
        context.withCurrent {
            #expect(UIDevice.current.batteryState == .charging)
            #expect(HeavyWorkGate.shouldRunHeavyWork())
        }
        device.setConditions(Conditions(externalPower: true, networkAvailable: true, batteryLevel: 1, batteryState: .full))
        context.withCurrent {
            UIDevice.current.isBatteryMonitoringEnabled = true
            #expect(UIDevice.current.batteryState == .full)
        }
        // A machine without a battery (a server): unknown, as the iOS Simulator reports it.
        device.setConditions(Conditions(externalPower: true, networkAvailable: true))
        context.withCurrent {
            #expect(UIDevice.current.batteryLevel == -1 && UIDevice.current.batteryState == .unknown)
        }
        #expect("\(UIDevice.BatteryState.unplugged)" == "unplugged", "the app's own description (PlatformSnippets.swift)")
        #expect("\(UIBackgroundTaskIdentifier(rawValue: 3))" == "bgTask#3")
    }
}

/// The device's identity, power management and idle timer as the probe's apps use them.
@Suite struct DeviceIdentitySnippetTests {
    @Test func theDeviceSaysWhatItIsAndTheVendorIdentifierIsPerVendorAndDevice() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        let sibling = device.install(app: AppID("com.example.sibling"), manifest: AppManifest(appID: AppID("com.example.sibling"), permittedIdentifiers: [], backgroundModes: [])) {}
        let stranger = device.install(app: AppID("org.other.app"), manifest: AppManifest(appID: AppID("org.other.app"), permittedIdentifiers: [], backgroundModes: [])) {}
        let header = context.withCurrent { DiagnosticsHeader.line() }
        #expect(header.hasPrefix("Device: Linux Linux: 1.0 ("), "a simulated device reads nothing of the machine: \(header)")
        let own = try #require(context.withCurrent { UIDevice.current.identifierForVendor })
        #expect(context.withCurrent { UIDevice.current.identifierForVendor } == own, "stable")
        #expect(sibling.withCurrent { UIDevice.current.identifierForVendor } == own, "one vendor, one identifier")
        #expect(stranger.withCurrent { UIDevice.current.identifierForVendor } != own)
        #expect(own.uuidString.dropFirst(14).first == "4", "a version 4 UUID: \(own)")
        // Another device (another seed's salt) gives the same vendor another identifier.
        var configuration = SchedulerConfiguration.simulation()
        configuration.deviceSalt = 99
        let other = try SimulatedDevice(start: compatStart, configuration: configuration)
        let otherContext = other.install(app: compatApp, manifest: compatManifest) {}
        #expect(otherContext.withCurrent { UIDevice.current.identifierForVendor } != own)
        #expect(UIDevice.Identity.machine(machineIDFiles: []).systemVersion.split(separator: ".").count == 3)
    }

    @Test func aMachineWithoutAnIdentityHasNoVendorIdentifierAndTwoMachinesDiffer() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("vendor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let one = scratch.appendingPathComponent("one").path
        let two = scratch.appendingPathComponent("two").path
        try "0123456789abcdef0123456789abcdef\n".write(toFile: one, atomically: true, encoding: .utf8)
        try "fedcba9876543210fedcba9876543210\n".write(toFile: two, atomically: true, encoding: .utf8)
        func identifier(_ identity: UIDevice.Identity) throws -> UUID? {
            let device = try SimulatedDevice(start: compatStart, policies: .foundation)
            let context = device.install(app: compatApp, manifest: compatManifest) {}
            // The identity as a real machine's, through the device the context reports.
            let made = BGAppContext(app: AppID("com.example.vendorprobe"), manifest: AppManifest(appID: AppID("com.example.vendorprobe"), permittedIdentifiers: [], backgroundModes: []),
                                  driver: context.driver, deviceIdentity: identity)
            return made.device.identifierForVendor
        }
        #expect(try identifier(.machine(machineIDFiles: [scratch.appendingPathComponent("missing").path])) == nil, "no identity: nil, not a value every such machine shares")
        let first = try #require(try identifier(.machine(machineIDFiles: [one])))
        #expect(try identifier(.machine(machineIDFiles: [one])) == first, "stable")
        #expect(try identifier(.machine(machineIDFiles: ["/nonexistent/machine-id", two])) != first, "another machine (the second file read)")
    }


    @Test func lowPowerModeAndTheThermalStateAreTheDevicesOwn() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        #expect(context.withCurrent { PowerAwareWork.mayRunHeavyWork() })
        device.setConditions(Conditions(externalPower: false, networkAvailable: true, batteryLevel: 0.5, lowPowerMode: true))
        context.withCurrent {
            #expect(ProcessInfo.processInfo.isLowPowerModeEnabled)
            #expect(!PowerAwareWork.mayRunHeavyWork())
        }
        // A library module whose files import Foundation alone (Tests/FoundationOnlyFiles)
        // reads the same device: FoundationCompat declares ProcessInfo's power API and asks
        // BackgroundTasks through its hooks.
        let watch = FoundationOnlyFiles.DeviceWatch()
        context.withCurrent { #expect(watch.shouldDefer) }
        for (state, expected, heat) in [(ThermalState.fair, ProcessInfo.ThermalState.fair, DeviceHeat.warm), (.serious, .serious, .hot), (.critical, .critical, .critical), (.nominal, .nominal, .cool)] {
            device.setConditions(Conditions(externalPower: true, networkAvailable: true, thermalState: state))
            context.withCurrent {
                #expect(ProcessInfo.processInfo.thermalState == expected)
                #expect(!ProcessInfo.processInfo.isLowPowerModeEnabled)
                #expect(watch.heat == heat)
            }
        }
        #expect(PowerAwareWork.observedNames.map(\.rawValue) == ["NSProcessInfoPowerStateDidChangeNotification", "NSProcessInfoThermalStateDidChangeNotification"])
    }

    @MainActor
    @Test func theIdleTimerSwitchReadsBackWhatWasSet() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        let keeper = UploadProgressKeeper()
        #expect(context.application.isIdleTimerDisabled == false)
        context.withCurrent { keeper.uploadStarted() }
        #expect(context.application.isIdleTimerDisabled)
        context.withCurrent { keeper.uploadEnded() }
        #expect(context.application.isIdleTimerDisabled == false)
    }

    @Test func aSchedulerSeamSpelledWithDispatchQueueT() async throws {
        let device = try compatDevice()
        let ran = Mutex(false)
        let identifier = ModernAppDelegate.refreshIdentifier
        let context = device.install(app: compatApp, manifest: compatManifest) {
            let scheduler: any QueueSpelledScheduling = BGTaskScheduler.shared
            scheduler.register(forTaskWithIdentifier: identifier, using: nil) { task in
                ran.withLock { $0 = true }
                task.setTaskCompleted(success: true)
            }
        }
        try context.withCurrent { try (BGTaskScheduler.shared as any QueueSpelledScheduling).submit(BGAppRefreshTaskRequest(identifier: identifier)) }
        await device.run(for: 60)
        #expect(ran.withLock { $0 })
        await device.shutDown()
    }
}
