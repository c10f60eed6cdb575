// Shapes a fifth outside probe found missing (Swift 6 language mode, warnings as errors): a
// refresh orchestrator that signposts its stages (SkyAware's), and a SwiftUI root that
// prefers a colour scheme (PixlAudio's). Compiling is the test; SignpostTests runs signposts.
import BackgroundTasks
import os
import SwiftUI

/// Runs a refresh's stages inside signposted intervals, as public orchestrators do.
struct SignpostedRefresh: Sendable {
    private let signposter = OSSignposter(subsystem: "com.example.weather", category: "Refresh")
    private let logger = Logger(subsystem: "com.example.weather", category: "Refresh")

    func run(_ stages: [(StaticString, @Sendable () async throws -> Void)]) async -> Bool {
        let id = signposter.makeSignpostID()
        let whole = signposter.beginInterval("refresh", id: id, "\(stages.count) stages")
        defer { signposter.endInterval("refresh", whole) }
        for (name, stage) in stages {
            let state = signposter.beginInterval(name, id: id)
            do {
                try await stage()
            } catch {
                signposter.emitEvent("stage failed", id: id, "\(error.localizedDescription, privacy: .public)")
                logger.error("stage failed: \(error.localizedDescription, privacy: .public)")
                signposter.endInterval(name, state)
                return false
            }
            signposter.endInterval(name, state)
        }
        return true
    }
}

struct AppearanceRoot: View {
    @AppStorage("theme") private var dark = false
    var body: some View {
        Text("Radar")
            .preferredColorScheme(dark ? .dark : nil)
            .statusBarHidden()
    }
}
