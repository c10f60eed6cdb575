import Testing
@Test func DaemonProtocolTestsPlaceholder() { #expect(Bool(true)) }
