#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore
import Testing

extension ProcessTests {
    /// What `bgtask` does with a start that is not quite right: a closed standard output, a
    /// value with a line feed echoed in an error, a relative `XDG_RUNTIME_DIR` (from an
    /// outside robustness probe).
    @Suite struct CommandLineHygiene {
        @Test("with standard output closed, bgtask does nothing and says why (a socket it opened would have taken its place)")
        func closedStandardOutput() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let bgtask = try ProductBinary.locate("bgtask")
            let environment = ["HOME": scratch.url.path, "XDG_RUNTIME_DIR": scratch.url.path, "PATH": "/usr/bin:/bin"]
            let child = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exec \"$0\" status >&-", bgtask.path], scratch: scratch.url, environment: environment)
            let termination = await child.termination()
            #expect(termination.status == 1, "\(termination)")
            #expect(child.standardError() == "bgtask: standard output is closed: nothing could be printed, so nothing was done\n")
        }

        @Test("a line feed in a value bgtask echoes cannot forge a line of its own; a relative XDG_RUNTIME_DIR is said to be ignored")
        func echoedValuesAndIgnoredVariables() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let forged = try await ProcessTests.bgtask(["simulate", "nosuch\nbgtask simulate: all 7 days passed"], scratch: scratch.url)
            #expect(!forged.error.components(separatedBy: "\n").contains { $0.hasPrefix("bgtask simulate: all 7 days passed") }, "\(forged.error)")
            #expect(forged.error.contains(#"'nosuch\nbgtask simulate: all 7 days passed'"#), "\(forged.error)")

            let relative = try await ProcessTests.bgtask(["status"], scratch: scratch.url, environment: ["HOME": scratch.url.path, "XDG_RUNTIME_DIR": "run", "PATH": "/usr/bin:/bin"])
            #expect(relative.error.hasPrefix("bgtask: warning: XDG_RUNTIME_DIR=run is not an absolute path; ignored\n"), "\(relative.error)")
            // The everyday case says nothing.
            let unset = try await ProcessTests.bgtask(["status"], scratch: scratch.url, environment: ["HOME": scratch.url.path, "PATH": "/usr/bin:/bin"])
            #expect(!unset.error.contains("warning"), "\(unset.error)")
        }
    }
}

@Suite struct OneLineMessages {
    @Test func aLineFeedInAMessageIsWrittenAsAnEscape() {
        #expect(StandardStream.oneLine("bgtask: 'a\nb'\tc") == #"bgtask: 'a\nb'"# + "\tc")
        #expect(StandardStream.oneLine("x\u{1B}[2J") == #"x\u001B[2J"#)
    }
}
