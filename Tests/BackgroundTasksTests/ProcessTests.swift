import Testing

/// The parent of every suite that spawns processes, sends signals or changes the process
/// environment. Swift Testing runs tests in parallel in one process; these must not, so
/// they live in extensions of this serialized suite (for example
/// `extension ProcessTests { @Suite struct Durability { ... } }`).
@Suite(.serialized) struct ProcessTests {}
