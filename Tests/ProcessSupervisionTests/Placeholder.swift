import Testing
@Test func ProcessSupervisionTestsPlaceholder() { #expect(Bool(true)) }
