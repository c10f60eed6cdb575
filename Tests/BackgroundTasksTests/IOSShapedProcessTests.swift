import Foundation
import Testing

extension ProcessTests {
    /// The iOS-shaped app (Tests/ios-shaped-app, Swift 5 mode) as a real process, installed
    /// with its manifest as Info.plist beside the executable (docs/porting.md): identifiers
    /// from Bundle.main.bundleIdentifier, submit-then-simulateLaunch under
    /// BGTASK_MANUAL_LAUNCH=1, a main-actor handler on the main queue, and the diagnostic for
    /// a main thread that never drains it.
    @Suite struct IOSShapedProcess {
        /// Copies the executable into `<scratch>/app/` beside an Info.plist, as an install does.
        private func install(in scratch: ScratchDirectory) throws -> URL {
            let directory = scratch.url.appendingPathComponent("app", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let executable = directory.appendingPathComponent("ios-shaped-app")
            try Self.copyExecutable(from: try ProductBinary.locate("ios-shaped-app"), to: executable)
            let manifest: [String: Any] = [
                "CFBundleIdentifier": "com.example.shaped",
                "BGTaskSchedulerPermittedIdentifiers": ["com.example.shaped.refresh"],
                "UIBackgroundModes": ["fetch"],
            ]
            let data = try PropertyListSerialization.data(fromPropertyList: manifest, format: .xml, options: 0)
            try data.write(to: directory.appendingPathComponent("Info.plist"))
            return executable
        }

        /// Copies an executable through a close-on-exec descriptor. FileManager.copyItem's
        /// descriptor is inherited by any child another test spawns meanwhile, and a child
        /// that keeps a file open for writing makes its exec fail with ETXTBSY (Text file
        /// busy) until that child exits.
        static func copyExecutable(from source: URL, to destination: URL) throws {
            let bytes = try Data(contentsOf: source)
            let descriptor = open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            defer { close(descriptor) }
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    }
                    offset += written
                }
            }
        }

        /// Only what the child needs: its state under the scratch directory, the switch on.
        private func environment(_ scratch: ScratchDirectory) -> [String: String] {
            ["HOME": scratch.url.path, "XDG_STATE_HOME": scratch.url.appendingPathComponent("state").path, "BGTASK_MANUAL_LAUNCH": "1"]
        }

        @Test func aMainActorHandlerRunsAfterSubmitAndSimulateLaunch() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let child = try ChildProcess(try install(in: scratch), arguments: ["launch"], scratch: scratch.url, environment: environment(scratch))
            let termination = await child.termination()
            // The exit can come before the reader has the last lines: read to the end.
            await child.output.waitForEndOfFile()
            #expect(termination.reason == .exit && termination.status == 0, "\(termination); stderr: \(child.standardError())")
            #expect(child.output.lines == [
                "identifier com.example.shaped.refresh",
                "pending true",
                "simulated",
                "event refresh main=true",
            ])
        }

        @Test func aMainThreadThatNeverDrainsTheMainQueueIsDiagnosed() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let child = try ChildProcess(try install(in: scratch), arguments: ["no-main-loop"], scratch: scratch.url, environment: environment(scratch))
            let termination = await child.termination()
            await child.output.waitForEndOfFile()
            #expect(termination.reason == .exit && termination.status == 4, "\(termination)")
            #expect(child.output.lines.last == "main queue never drained")
            let stderr = child.standardError()
            #expect(stderr.contains("the launch handler of task 'com.example.shaped.refresh' is isolated to the main actor and has not started after 5 s"), "stderr: \(stderr)")
            #expect(stderr.contains("dispatchMain()"))
        }
    }
}
