import Testing
@Test func DaemonTestsPlaceholder() { #expect(Bool(true)) }
