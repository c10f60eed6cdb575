import Foundation
import Testing

/// The ThreadSanitizer build (docs/testing.md) swaps every module's `Mutex` for a pthread
/// mutex through a `SanitizerMutex.swift` in that module; a module that takes a `Mutex`
/// without one would silently keep the futex there, which the sanitizer reads as races.
@Suite struct SanitizerBuildTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift modules under `directory` (Sources or Tests) that declare a `Mutex` in code
    /// (not in a comment) and have no `SanitizerMutex.swift`.
    static func modulesMissingTheSwap(under directory: String) throws -> [String] {
        let base = root.appendingPathComponent(directory)
        let fileManager = FileManager.default
        var missing: [String] = []
        for module in try fileManager.contentsOfDirectory(atPath: base.path).sorted() {
            let moduleURL = base.appendingPathComponent(module)
            guard let files = fileManager.enumerator(atPath: moduleURL.path) else { continue }
            var usesMutex = false
            for case let file as String in files where file.hasSuffix(".swift") && !file.hasSuffix("SanitizerMutex.swift") && !file.hasSuffix("PthreadMutex.swift") {
                let text = try String(contentsOf: moduleURL.appendingPathComponent(file), encoding: .utf8)
                let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                if code.contains(where: { $0.contains("Mutex(") || $0.contains("Mutex<") }) {
                    usesMutex = true
                    break
                }
            }
            if usesMutex, !fileManager.fileExists(atPath: moduleURL.appendingPathComponent("SanitizerMutex.swift").path) {
                missing.append("\(directory)/\(module)")
            }
        }
        return missing
    }

    @Test func everyModuleThatTakesAMutexSwapsItInTheSanitizerBuild() throws {
        let missing = try Self.modulesMissingTheSwap(under: "Sources") + Self.modulesMissingTheSwap(under: "Tests")
        #expect(missing.isEmpty, "add a SanitizerMutex.swift (as Sources/BackgroundTasks has) to: \(missing.joined(separator: ", "))")
    }
}
