import BackgroundTasks
import BackgroundTasksTesting
import Foundation
import SchedulerCore
import Testing

/// Real drivers salt herd spreading with the machine's identity; simulations never read it.
@Suite struct DeviceSaltTests {
    @Test func theSaltComesFromTheMachineIDFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("machine-id-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("0123456789abcdef0123456789abcdef\n".utf8).write(to: file)
        let salted = EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: file.path)
        #expect(salted.deviceSalt != 0)
        #expect(EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: file.path).deviceSalt == salted.deviceSalt, "stable across processes")
        try Data("fedcba9876543210fedcba9876543210\n".utf8).write(to: file)
        #expect(EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: file.path).deviceSalt != salted.deviceSalt)
        #expect(EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: file.path + ".missing").deviceSalt == 0)
        #expect(EmbeddedScheduler.defaultSchedulerConfiguration(environment: [:], machineIDFile: nil).deviceSalt == 0)
    }

    @Test func simulationsDoNotReadTheMachine() {
        #expect(SchedulerConfiguration.simulation(environment: [:]).deviceSalt == 0)
        #expect(SchedulerConfiguration.simulation(environment: ["BACKGROUND_TASK_SIMULATE_EXPIRATION": "YES"]).simulatedExpirationAfter == 5)
    }
}
