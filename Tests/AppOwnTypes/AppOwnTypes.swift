// An app's own framework with types whose names are common (a Mastodon client's `AppContext`,
// Alamofire's `RetryPolicy`) and also names of this package's engine: a file that imports it
// and UIKit must see them unambiguously (Tests/SourceCompatibilityTests/AppOwnTypesSnippet.swift;
// docs/porting.md, "Imports").

/// The app's dependency container.
public final class AppContext: Sendable {
    public let name: String
    public init(name: String) { self.name = name }
}

/// The app's network retry rule.
public struct RetryPolicy: Sendable {
    public var attempts: Int
    public init(attempts: Int) { self.attempts = attempts }
}

/// The app's own reading of the device.
public struct Conditions: Sendable {
    public var isOnline: Bool
    public init(isOnline: Bool) { self.isOnline = isOnline }
}

/// The app's identifier type.
public struct AppID: Sendable {
    public var value: String
    public init(_ value: String) { self.value = value }
}

/// The app's log.
public final class DiagnosticLog: Sendable {
    public init() {}
}

/// The app's kinds of work.
public enum TaskKind: Sendable { case sync, upload }

/// The app's store choice.
public enum StoreKind: Sendable { case disk, memory }
