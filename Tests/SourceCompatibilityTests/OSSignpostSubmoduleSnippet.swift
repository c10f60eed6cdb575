// `import os.signpost` alone, as iOS code that measures a refresh writes it (the Clang
// submodule of Sources/COSModuleMap, which loads the Swift module os), in Swift 6 mode with
// warnings as errors.
import os.signpost

/// A refresh measured as an interval, as apps sign one post.
enum SubmoduleSignposts {
    static let signposter = OSSignposter(subsystem: "com.example.app", category: "refresh")

    static func measured(_ work: () -> Int) -> Int {
        let state = signposter.beginInterval("refresh")
        defer { signposter.endInterval("refresh", state) }
        return work()
    }
}
