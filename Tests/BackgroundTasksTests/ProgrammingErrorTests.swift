import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Testing
import SchedulerCore

/// Programming errors stop the program, as Apple's uncatchable exceptions do. Exit tests
/// run each body in a child process, so they live under the serialized ``ProcessTests``.
extension ProcessTests {
    @Suite struct ProgrammingErrors {
        @Test func registeringAnIdentifierTwiceStopsTheProgram() async {
            await #expect(processExitsWith: .failure) {
                let device = try SimulatedDevice(start: Date(timeIntervalSince1970: 1_796_083_200))
                let manifest = AppManifest(permittedIdentifiers: ["com.example.twice"], backgroundModes: ["fetch"])
                device.install(app: AppID("com.example"), manifest: manifest) {
                    BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.twice", using: nil) { _ in }
                    BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.twice", using: nil) { _ in }
                }
            }
        }

        @Test func registeringAfterLaunchFinishedStopsTheProgram() async {
            await #expect(processExitsWith: .failure) {
                let device = try SimulatedDevice(start: Date(timeIntervalSince1970: 1_796_083_200))
                let manifest = AppManifest(permittedIdentifiers: ["com.example.late"], backgroundModes: ["fetch"])
                let context = device.install(app: AppID("com.example"), manifest: manifest) {}
                context.withCurrent {
                    BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.late", using: nil) { _ in }
                }
            }
        }

        @Test func continuedProcessingMayRegisterAfterLaunch() throws {
            let device = try SimulatedDevice(start: Date(timeIntervalSince1970: 1_796_083_200))
            let manifest = AppManifest(permittedIdentifiers: ["com.example.export.*"], backgroundModes: [])
            let context = device.install(app: AppID("com.example"), manifest: manifest) {}
            let accepted = context.withCurrent {
                BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.export.*", using: nil) { _ in }
            }
            #expect(accepted)
        }

        @Test func submittingWithoutARegisteredHandlerStopsTheProgram() async {
            await #expect(processExitsWith: .failure) {
                let device = try SimulatedDevice(start: Date(timeIntervalSince1970: 1_796_083_200))
                let manifest = AppManifest(permittedIdentifiers: ["com.example.nohandler"], backgroundModes: ["fetch"])
                let context = device.install(app: AppID("com.example"), manifest: manifest) {}
                try context.withCurrent {
                    try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: "com.example.nohandler"))
                }
            }
        }
    }
}

/// The stops app code can reach keep their message in an optimized build (how apps ship):
/// Swift drops the message of `precondition` and `preconditionFailure` under `-O` and prints
/// only "precondition failure", so these modules stop with `fatalError`. Exit tests run the
/// debug build, where both print; this reads the sources so a `precondition` cannot slip back.
@Suite struct ProgrammingErrorMessages {
    @Test func appFacingStopsUseFatalError() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let places = ["Sources/BackgroundTasks", "Sources/os", "Sources/UIKit", "Sources/SchedulerCore/Engine/RetryPolicy.swift"]
        var files: [URL] = []
        for place in places {
            let url = root.appendingPathComponent(place)
            if url.pathExtension == "swift" {
                files.append(url)
                continue
            }
            let walker = try #require(FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil))
            for case let file as URL in walker where file.pathExtension == "swift" { files.append(file) }
        }
        #expect(files.count > 20, "the sources were found: \(files.count) files")
        let stop = try #require(try? Regex(#"(^|[^\w.])(Swift\.)?precondition(Failure)?\("#))
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), !code.contains("func precondition(") else { continue }
                #expect(code.firstMatch(of: stop) == nil, "\(file.lastPathComponent):\(number + 1): \(code)")
            }
        }
    }
}
