import BGTaskDaemon
import Foundation
import Testing

/// bgtaskd's command line, as a pure function.
@Suite struct DaemonOptionsTests {
    @Test("--first-frame-timeout takes whole seconds from 1 to 3600 and names itself when refused")
    func firstFrameTimeout() {
        guard case .success(.run(let options)) = DaemonOptions.parse(["--first-frame-timeout", "3"], environment: [:]) else {
            Issue.record("not parsed")
            return
        }
        #expect(options.firstFrameTimeout == 3)
        #expect(DaemonOptions().firstFrameTimeout == 10)
        for bad in ["0", "3601", "1.5", "-1", "1e3", "99999999999999999999", " 2"] {
            guard case .failure(let error) = DaemonOptions.parse(["--first-frame-timeout", bad], environment: [:]) else {
                Issue.record("'\(bad)' accepted")
                continue
            }
            #expect(error.message.contains("--first-frame-timeout"), "\(error)")
        }
        #expect(DaemonOptions.usage.contains("--first-frame-timeout"))
    }

    @Test("--policy takes a file; without a value it is a usage error naming it")
    func policyFile() {
        guard case .success(.run(let options)) = DaemonOptions.parse(["--policy", "/etc/bgtask/policy.json"], environment: [:]) else {
            Issue.record("not parsed")
            return
        }
        #expect(options.policyFile == "/etc/bgtask/policy.json")
        // A relative path is made absolute at once: SIGHUP reads the same file later.
        guard case .success(.run(let relative)) = DaemonOptions.parse(["--policy", "conf/policy.json"], environment: [:]) else {
            Issue.record("not parsed")
            return
        }
        #expect(relative.policyFile == URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("conf/policy.json").path)
        #expect(DaemonOptions().policyFile == nil, "the defaults without it")
        for bad in [["--policy"], ["--policy", ""], ["--policy", "--no-cgroups"]] {
            guard case .failure(let error) = DaemonOptions.parse(bad, environment: [:]) else {
                Issue.record("\(bad) accepted")
                continue
            }
            #expect(error.message.contains("--policy"), "\(error)")
        }
        #expect(DaemonOptions.usage.contains("--policy FILE"))
    }
}
