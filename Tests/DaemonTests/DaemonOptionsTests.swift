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

    @Test("seconds are plain decimals within the range the message states; an option given twice is refused")
    func secondsAndRepeatedOptions() {
        guard case .success(.run(let options)) = DaemonOptions.parse(["--launch-timeout", "0.5", "--suspend-delay", "12"], environment: [:]) else {
            Issue.record("not parsed")
            return
        }
        #expect(options.timing.launchTimeout == 0.5)
        #expect(options.timing.suspendDelay == 12)
        for bad in ["0", "0.05", "0x10", "0x1p3", "1e2", "+3", "-1", ".5", "5.", "3601", "١٢"] {
            guard case .failure(let error) = DaemonOptions.parse(["--launch-timeout", bad], environment: [:]) else {
                Issue.record("'\(bad)' accepted")
                continue
            }
            #expect(error.message == "--launch-timeout must be a number of seconds from 0.1 to 3600, got '\(bad)'")
        }
        guard case .failure(let tiny) = DaemonOptions.parse(["--suspend-delay", "1e-320"], environment: [:]) else {
            Issue.record("a subnormal exponent accepted")
            return
        }
        #expect(tiny.message.contains("from 0 to 86400"))
        for repeated in [["--launch-timeout", "5", "--launch-timeout", "6"], ["--no-cgroups", "--no-cgroups"], ["--socket", "/a", "--socket", "/b"]] {
            guard case .failure(let error) = DaemonOptions.parse(repeated, environment: [:]) else {
                Issue.record("\(repeated) accepted")
                continue
            }
            #expect(error.message == "\(repeated[0]) given more than once")
        }
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
