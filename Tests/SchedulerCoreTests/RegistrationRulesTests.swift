import Testing
@testable import SchedulerCore

/// `register(forTaskWithIdentifier:using:launchHandler:)` (docs/system.md, "Register").
@Suite("Registration rules")
struct RegistrationRulesTests {
    static let refreshID = "com.example.app.refresh"
    static let manifest = AppManifest(
        permittedIdentifiers: [refreshID, "com.example.app.export.*"],
        backgroundModes: ["fetch"],
        source: "fixtures/Info.plist"
    )

    private func verdict(
        _ identifier: String, manifest: AppManifest = manifest, launched: Bool = false, registered: Bool = false
    ) -> RegistrationVerdict {
        RegistrationRules.verdict(for: identifier, manifest: manifest, hasFinishedLaunching: launched, alreadyRegistered: registered)
    }

    private func message(_ verdict: RegistrationVerdict) -> String? {
        switch verdict {
        case .accept: return nil
        case .notPermitted(let message), .programmingError(let message): return message
        }
    }

    private func isNotPermitted(_ verdict: RegistrationVerdict) -> Bool {
        if case .notPermitted = verdict { true } else { false }
    }

    private func isProgrammingError(_ verdict: RegistrationVerdict) -> Bool {
        if case .programmingError = verdict { true } else { false }
    }

    @Test func permittedIdentifierIsAcceptedBeforeLaunchFinishes() {
        #expect(verdict(Self.refreshID) == .accept)
    }

    @Test func identifierNotInManifestIsNotPermitted() {
        let result = verdict("com.example.app.unlisted")
        #expect(isNotPermitted(result))
        #expect(message(result)?.contains("'com.example.app.unlisted'") == true)
        #expect(message(result)?.contains("fixtures/Info.plist") == true)
    }

    @Test("malformed identifier is not permitted", arguments: ["", "refresh", "com..example", "com.example.app.refresh "])
    func malformedIdentifierIsNotPermitted(identifier: String) {
        let result = verdict(identifier)
        #expect(isNotPermitted(result))
        #expect(message(result)?.contains("identifier rejected") == true)
    }

    @Test func duplicateRegistrationIsProgrammingErrorNamingIdentifier() {
        let result = verdict(Self.refreshID, registered: true)
        #expect(isProgrammingError(result))
        #expect(message(result)?.contains("'\(Self.refreshID)'") == true)
        #expect(message(result)?.contains("already been registered") == true)
    }

    @Test func registrationAfterLaunchIsProgrammingErrorNamingIdentifier() {
        let result = verdict(Self.refreshID, launched: true)
        #expect(isProgrammingError(result))
        #expect(message(result)?.contains("'\(Self.refreshID)'") == true)
        #expect(message(result)?.contains("before application finishes launching") == true)
    }

    @Test func continuedProcessingIdentifierMatchedByWildcardMayRegisterAfterLaunch() {
        #expect(verdict("com.example.app.export.photos", launched: true) == .accept)
    }

    @Test func wildcardEntryItselfMayRegisterAfterLaunch() {
        #expect(verdict("com.example.app.export.*", launched: true) == .accept)
    }

    @Test func continuedProcessingDuplicateIsStillProgrammingError() {
        #expect(isProgrammingError(verdict("com.example.app.export.photos", launched: true, registered: true)))
    }

    @Test func wildcardDoesNotMatchItsBarePrefix() {
        #expect(isNotPermitted(verdict("com.example.app.export")))
    }

    @Test func notPermittedIsReportedBeforeDuplicateOrLateRegistration() {
        #expect(isNotPermitted(verdict("com.example.app.unlisted", launched: true, registered: true)))
    }
}
