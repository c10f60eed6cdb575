// `import Network` brings Foundation, as Apple's module does, and what Apple's Foundation
// brings beside it (Combine, Observation, os_unfair_lock, Dispatch's time constants,
// `ProcessInfo()`): a path monitor's model declared `ObservableObject` or `@Observable` in a
// file that imports Foundation and Network compiles (Sources/FoundationCompat).
@_exported import FoundationCompat
