import BackgroundTasks
import Foundation
// `WidgetFamily` is a C enum, imported as an open enum as on iOS.
@_exported import CWidgetKitTypes
// What Apple's Foundation brings beside it (Combine, Observation, os_unfair_lock, Dispatch's
// time constants, `ProcessInfo()`): Sources/FoundationCompat.
@_exported import FoundationCompat

// `import WidgetKit` for the app's side of widgets: a refresh handler that found new content
// asks WidgetKit to reload the widgets' timelines (`WidgetCenter.shared.reloadAllTimelines()`).
// Linux has no Home Screen and no widgets (docs/porting.md, "Widgets"): the requests are
// recorded as the app's `info` diagnostics, and the app has no widget configured.

/// The app's widgets as the system knows them (Apple: `WidgetCenter`).
public final class WidgetCenter: Sendable {
    /// The center (Apple's shared instance); it acts for the app whose code runs.
    public static let shared = WidgetCenter()

    private init() {}

    /// Asks for the timelines of the app's widgets of `kind` to be reloaded. Linux has no
    /// widgets: the request is noted in the app's diagnostics (`info`), nothing reloads.
    public func reloadTimelines(ofKind kind: String) {
        note("reloadTimelines(ofKind: \"\(kind)\")")
    }

    /// Asks for the timelines of all the app's widgets to be reloaded: noted, as
    /// ``reloadTimelines(ofKind:)``.
    public func reloadAllTimelines() {
        note("reloadAllTimelines()")
    }

    /// Asks for the app's widget configuration recommendations to be made again: noted.
    public func invalidateConfigurationRecommendations() {
        note("invalidateConfigurationRecommendations()")
    }

    /// The widgets the user has configured: none on Linux (`.success([])`), on a queue of
    /// the system's, as iOS calls it.
    @preconcurrency
    public func getCurrentConfigurations(_ completion: @escaping @Sendable (Result<[WidgetInfo], any Error>) -> Void) {
        DispatchQueue.global().async { completion(.success([])) }
    }

    /// ``getCurrentConfigurations(_:)`` in its `async` form: none.
    public func currentConfigurations() async throws -> [WidgetInfo] {
        []
    }

    private func note(_ call: String) {
        noteReload("WidgetCenter.\(call): Linux has no widgets; nothing to reload")
    }
}

/// Notes a reload request as the running app's `info` diagnostic.
private func noteReload(_ message: String) {
    let context = BGAppContext.resolve()
    context.driver.log(.info, app: context.app, message)
}

/// The app's Control Center controls as the system knows them (Apple: `ControlCenter`, iOS
/// 18): a refresh handler that changed a control's state asks for it to be reloaded. Linux
/// has no Control Center: the requests are noted in the app's diagnostics (`info`), as
/// ``WidgetCenter``'s are, and no control is configured.
public final class ControlCenter: Sendable {
    /// The center; it acts for the app whose code runs.
    public static let shared = ControlCenter()

    private init() {}

    /// Asks for the app's controls of `kind` to be reloaded: noted, nothing reloads.
    public func reloadControls(ofKind kind: String) {
        noteReload("ControlCenter.reloadControls(ofKind: \"\(kind)\"): Linux has no Control Center; nothing to reload")
    }

    /// Asks for all the app's controls to be reloaded: noted.
    public func reloadAllControls() {
        noteReload("ControlCenter.reloadAllControls(): Linux has no Control Center; nothing to reload")
    }

    /// The controls the user added: none on Linux.
    public func currentControls() async throws -> [ControlInfo] {
        []
    }
}

/// A control the user added (Apple: `ControlInfo`). None exist on Linux.
public struct ControlInfo: Sendable, CustomStringConvertible {
    /// The control's kind, as its configuration names it.
    public let kind: String
    /// `ControlInfo(kind: ...)`.
    public var description: String { "ControlInfo(kind: \(kind))" }
}

/// A widget the user configured (Apple: `WidgetInfo`). None exist on Linux; the type is here
/// so that code reading ``WidgetCenter/currentConfigurations()`` compiles.
public struct WidgetInfo: Sendable, CustomStringConvertible {
    /// The widget's kind (its `Widget`'s `kind`).
    public let kind: String
    /// Its size.
    public let family: WidgetFamily

    public var description: String { "WidgetInfo(kind: \(kind), family: \(family.rawValue))" }
}
