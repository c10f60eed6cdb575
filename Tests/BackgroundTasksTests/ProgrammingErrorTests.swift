import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import Testing

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
