import Foundation
import Testing

extension ProcessTests {
    /// The figures tables of README.md and BENCHMARKS.md are generated from
    /// Benchmarks/results/results.json by Benchmarks/report.py; these tests keep them from
    /// drifting from what was measured (an edit by hand, or a new run whose tables were not
    /// regenerated, fails here).
    @Suite struct BenchmarkFigures {
        /// The package's root, from this file's place in it.
        static let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

        /// The Python interpreter, from fixed places (not from `PATH`: the test must not
        /// depend on the developer's environment). `.ci/run` installs python3.
        static func python() throws -> URL {
            for candidate in ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"]
            where FileManager.default.isExecutableFile(atPath: candidate) {
                return URL(fileURLWithPath: candidate)
            }
            throw CheckError(message: "python3 is not installed in /usr/bin or /usr/local/bin (apt-get install python3)")
        }

        struct CheckError: Error, CustomStringConvertible {
            var message: String
            var description: String { message }
        }

        /// Runs `report.py check RESULTS FILES...`; its exit status and standard error.
        static func check(results: URL, files: [URL], scratch: URL) async throws -> (status: Int32, standardError: String) {
            let child = try ChildProcess(
                try python(),
                arguments: [root.appendingPathComponent("Benchmarks/report.py").path, "check", results.path] + files.map(\.path),
                scratch: scratch, environment: ["LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"]
            )
            let termination = await child.termination()
            #expect(termination.reason == .exit, "report.py check: \(termination)")
            return (termination.status, child.standardError())
        }

        @Test func generatedTablesAgreeWithTheMeasuredResults() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let outcome = try await Self.check(
                results: Self.root.appendingPathComponent("Benchmarks/results/results.json"),
                files: [Self.root.appendingPathComponent("README.md"), Self.root.appendingPathComponent("BENCHMARKS.md")],
                scratch: scratch.url)
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }

        /// The check is not one that cannot fail: a README whose table says one figure
        /// differently is named.
        @Test func aFigureEditedByHandIsNamed() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
            let begin = try #require(readme.range(of: "<!-- BEGIN GENERATED"))
            let end = try #require(readme.range(of: "<!-- END GENERATED -->"))
            let block = readme[begin.upperBound..<end.lowerBound]
            // Change the first verdict of the table, as someone tidying the README might.
            let verdict = try #require(block.range(of: "PASS") ?? block.range(of: "MISS"))
            var edited = readme
            edited.replaceSubrange(verdict, with: readme[verdict] == "PASS" ? "MISS" : "PASS")
            let copy = scratch.url.appendingPathComponent("README.md")
            try edited.write(to: copy, atomically: true, encoding: .utf8)
            let outcome = try await Self.check(results: Self.root.appendingPathComponent("Benchmarks/results/results.json"), files: [copy], scratch: scratch.url)
            #expect(outcome.status == 1)
            // Named as a block that differs, not refused for another reason (a missing block).
            #expect(outcome.standardError.contains("the generated block of \(copy.path) differs"), "\(outcome.standardError)")
        }
    }
}
