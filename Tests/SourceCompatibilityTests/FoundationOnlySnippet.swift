// A library file that imports Foundation alone and asks for expiring background time, as
// shared modules of public apps do (the fifth outside probe: TweetNestKit, Canvas, Wire).
// `performExpiringActivity` is the package's (Linux's Foundation has none), FoundationCompat's:
// it is visible here because another file of this target imports BackgroundTasks, which
// re-exports FoundationCompat, as Swift makes an imported module's extension members visible
// in every file of the importing module (unless the target turns on the upcoming feature
// MemberImportVisibility: then the target imports FoundationCompat into every file, as
// Tests/FoundationOnlyFiles does). docs/porting.md, "Foundation beside the API".
import Foundation

/// Flushes `work` under an expiring activity; returns whether it was told to stop first.
func flushUnderExpiringActivity(_ work: @escaping @Sendable () -> Void) {
    ProcessInfo.processInfo.performExpiringActivity(withReason: "flush the outbox") { expired in
        guard !expired else { return }
        work()
    }
}
