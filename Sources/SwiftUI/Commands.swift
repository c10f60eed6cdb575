import Foundation
import UIKit

// Menu commands and keyboard shortcuts (Apple: `Commands`, `Scene.commands(content:)`,
// `View.keyboardShortcut`), which apps declare on the scene that also runs their background
// tasks (an audiobook player's `.commands { PlaybackCommands() }`, found by an outside
// compile probe). Linux shows no menu bar and takes no key commands: the commands are
// accepted, built as values and never shown or invoked (docs/porting.md, "A SwiftUI app").

/// Commands for the app's menus and key commands (Apple: `Commands`, main-actor isolated as
/// Apple's).
@MainActor @preconcurrency
public protocol Commands {
    /// The commands this one is made of.
    associatedtype Body: Commands
    /// The commands this one is made of (`Never` for the primitive ones here).
    @CommandsBuilder var body: Body { get }
}

extension Never: Commands {}

/// Commands with no body of their own.
public protocol PrimitiveCommands: Commands where Body == Never {}

extension PrimitiveCommands {
    /// A primitive command has no body.
    public var body: Never { fatalError("\(Self.self) is a primitive command: it has no body") }
}

/// Builds commands from a block (Apple: `CommandsBuilder`).
@resultBuilder
public enum CommandsBuilder {
    /// No commands.
    public static func buildBlock() -> EmptyCommands { EmptyCommands() }
    /// A block of one command: that command.
    public static func buildBlock<Content: Commands>(_ content: Content) -> Content { content }
    /// The commands of a block, in order.
    public static func buildBlock<each Content: Commands>(_ content: repeat each Content) -> TupleCommands<(repeat each Content)> {
        TupleCommands((repeat each content))
    }
    /// A command listed as is.
    public static func buildExpression<Content: Commands>(_ content: Content) -> Content { content }
    /// An `if` without `else`.
    public static func buildOptional<Content: Commands>(_ content: Content?) -> Content? { content }
    /// The first branch of an `if`/`else` or `switch`.
    public static func buildEither<TrueContent: Commands, FalseContent: Commands>(first: TrueContent) -> ConditionalCommands<TrueContent, FalseContent> {
        ConditionalCommands(storage: .first(first))
    }
    /// The second branch of an `if`/`else` or `switch`.
    public static func buildEither<TrueContent: Commands, FalseContent: Commands>(second: FalseContent) -> ConditionalCommands<TrueContent, FalseContent> {
        ConditionalCommands(storage: .second(second))
    }
    /// A branch under `if #available`.
    public static func buildLimitedAvailability<Content: Commands>(_ content: Content) -> Content { content }
}

extension Optional: Commands where Wrapped: Commands {
    /// An optional command has no body of its own.
    public var body: Never { fatalError("Optional commands have no body") }
}

/// No commands (Apple: `EmptyCommands`).
public struct EmptyCommands {
    /// No commands.
    public init() {}
}

/// Several commands in a block.
public struct TupleCommands<T> {
    /// The commands.
    public let value: T
    /// Commands in a tuple.
    public init(_ value: T) { self.value = value }
}

/// One of two branches of commands.
public struct ConditionalCommands<TrueContent: Commands, FalseContent: Commands> {
    enum Storage {
        case first(TrueContent)
        case second(FalseContent)
    }
    let storage: Storage
}

// Conformances apart from the types, so that their initializers stay nonisolated for the
// builder (as the views' are).
extension EmptyCommands: PrimitiveCommands {}
extension TupleCommands: PrimitiveCommands {}
extension ConditionalCommands: PrimitiveCommands {}

/// A menu of its own in the menu bar (Apple: `CommandMenu`): never shown on Linux.
public struct CommandMenu<Content: View>: PrimitiveCommands {
    /// The menu's name.
    public let name: Text
    /// The menu's items.
    public let content: Content

    /// A menu named `nameKey`.
    public init(_ nameKey: LocalizedStringKey, @ViewBuilder content: () -> Content) {
        name = Text(nameKey)
        self.content = content()
    }

    /// A menu named `name`.
    @_disfavoredOverload
    public init<S: StringProtocol>(_ name: S, @ViewBuilder content: () -> Content) {
        self.name = Text(String(name))
        self.content = content()
    }

    /// A menu named by `name`.
    public init(_ name: Text, @ViewBuilder content: () -> Content) {
        self.name = name
        self.content = content()
    }
}

/// Items added to, or replacing, one of the system's menu groups (Apple: `CommandGroup`):
/// never shown on Linux.
public struct CommandGroup<Content: View>: PrimitiveCommands {
    /// Where the items go.
    public let placement: CommandGroupPlacement
    /// The items.
    public let content: Content

    /// Items before `group`.
    public init(before group: CommandGroupPlacement, @ViewBuilder addition: () -> Content) {
        placement = group
        content = addition()
    }

    /// Items after `group`.
    public init(after group: CommandGroupPlacement, @ViewBuilder addition: () -> Content) {
        placement = group
        content = addition()
    }

    /// Items instead of `group`'s.
    public init(replacing group: CommandGroupPlacement, @ViewBuilder addition: () -> Content) {
        placement = group
        content = addition()
    }
}

/// One of the system's menu groups (Apple: `CommandGroupPlacement`).
public struct CommandGroupPlacement: Hashable, Sendable {
    let name: String
    /// About the app.
    public static let appInfo = CommandGroupPlacement(name: "appInfo")
    /// The app's settings.
    public static let appSettings = CommandGroupPlacement(name: "appSettings")
    /// The system's services.
    public static let systemServices = CommandGroupPlacement(name: "systemServices")
    /// Hiding and showing the app.
    public static let appVisibility = CommandGroupPlacement(name: "appVisibility")
    /// Quitting the app.
    public static let appTermination = CommandGroupPlacement(name: "appTermination")
    /// New documents and windows.
    public static let newItem = CommandGroupPlacement(name: "newItem")
    /// Saving.
    public static let saveItem = CommandGroupPlacement(name: "saveItem")
    /// Importing and exporting.
    public static let importExport = CommandGroupPlacement(name: "importExport")
    /// Printing.
    public static let printItem = CommandGroupPlacement(name: "printItem")
    /// Undo and redo.
    public static let undoRedo = CommandGroupPlacement(name: "undoRedo")
    /// Cut, copy and paste.
    public static let pasteboard = CommandGroupPlacement(name: "pasteboard")
    /// Editing text.
    public static let textEditing = CommandGroupPlacement(name: "textEditing")
    /// Formatting text.
    public static let textFormatting = CommandGroupPlacement(name: "textFormatting")
    /// The toolbar.
    public static let toolbar = CommandGroupPlacement(name: "toolbar")
    /// The sidebar.
    public static let sidebar = CommandGroupPlacement(name: "sidebar")
    /// The window's size.
    public static let windowSize = CommandGroupPlacement(name: "windowSize")
    /// The list of windows.
    public static let windowList = CommandGroupPlacement(name: "windowList")
    /// The list of single windows.
    public static let singleWindowList = CommandGroupPlacement(name: "singleWindowList")
    /// Arranging windows.
    public static let windowArrangement = CommandGroupPlacement(name: "windowArrangement")
    /// Help.
    public static let help = CommandGroupPlacement(name: "help")
}

/// The system's sidebar commands (Apple: `SidebarCommands`).
public struct SidebarCommands: PrimitiveCommands {
    /// The sidebar commands.
    public init() {}
}

/// The system's toolbar commands (Apple: `ToolbarCommands`).
public struct ToolbarCommands: PrimitiveCommands {
    /// The toolbar commands.
    public init() {}
}

/// The system's text editing commands (Apple: `TextEditingCommands`).
public struct TextEditingCommands: PrimitiveCommands {
    /// The text editing commands.
    public init() {}
}

/// The system's text formatting commands (Apple: `TextFormattingCommands`).
public struct TextFormattingCommands: PrimitiveCommands {
    /// The text formatting commands.
    public init() {}
}

nonisolated extension Scene {
    /// Adds `content` to the app's menus and key commands (Apple: `commands(content:)`):
    /// Linux shows no menu bar, so the commands are built and never shown.
    public func commands<Content: Commands>(@CommandsBuilder content: () -> Content) -> Self {
        _ = content()
        return self
    }

    /// Removes the system's default commands (Apple: `commandsRemoved()`): there are none.
    public func commandsRemoved() -> Self { self }
}

// MARK: Keyboard shortcuts

/// A key of a keyboard shortcut (Apple: `KeyEquivalent`).
public struct KeyEquivalent: Hashable, Sendable, ExpressibleByExtendedGraphemeClusterLiteral {
    /// The key's character.
    public let character: Character
    /// The key of `character`.
    public init(_ character: Character) { self.character = character }
    /// The key of a character literal (`"n"`).
    public init(extendedGraphemeClusterLiteral character: Character) { self.character = character }

    /// Up arrow.
    public static let upArrow = KeyEquivalent("\u{F700}")
    /// Down arrow.
    public static let downArrow = KeyEquivalent("\u{F701}")
    /// Left arrow.
    public static let leftArrow = KeyEquivalent("\u{F702}")
    /// Right arrow.
    public static let rightArrow = KeyEquivalent("\u{F703}")
    /// Escape.
    public static let escape = KeyEquivalent("\u{1B}")
    /// Delete (backspace).
    public static let delete = KeyEquivalent("\u{8}")
    /// Forward delete.
    public static let deleteForward = KeyEquivalent("\u{F728}")
    /// Home.
    public static let home = KeyEquivalent("\u{F729}")
    /// End.
    public static let end = KeyEquivalent("\u{F72B}")
    /// Page up.
    public static let pageUp = KeyEquivalent("\u{F72C}")
    /// Page down.
    public static let pageDown = KeyEquivalent("\u{F72D}")
    /// Clear.
    public static let clear = KeyEquivalent("\u{F739}")
    /// Tab.
    public static let tab = KeyEquivalent("\t")
    /// Space.
    public static let space = KeyEquivalent(" ")
    /// Return.
    public static let `return` = KeyEquivalent("\r")
}

/// Modifier keys (Apple: `EventModifiers`).
public struct EventModifiers: OptionSet, Hashable, Sendable {
    /// The modifiers' bits.
    public let rawValue: Int
    /// Modifiers of `rawValue`'s bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Caps Lock.
    public static let capsLock = EventModifiers(rawValue: 1 << 0)
    /// Shift.
    public static let shift = EventModifiers(rawValue: 1 << 1)
    /// Control.
    public static let control = EventModifiers(rawValue: 1 << 2)
    /// Option.
    public static let option = EventModifiers(rawValue: 1 << 3)
    /// Command.
    public static let command = EventModifiers(rawValue: 1 << 4)
    /// A key of the numeric keypad.
    public static let numericPad = EventModifiers(rawValue: 1 << 5)
    /// Function.
    public static let function = EventModifiers(rawValue: 1 << 6)
    /// Every modifier.
    public static let all: EventModifiers = [.capsLock, .shift, .control, .option, .command, .numericPad, .function]
}

/// A key with its modifiers (Apple: `KeyboardShortcut`).
public struct KeyboardShortcut: Hashable, Sendable {
    /// The key.
    public let key: KeyEquivalent
    /// The modifiers.
    public let modifiers: EventModifiers
    /// `key` with `modifiers` (Command by default, as Apple's).
    public init(_ key: KeyEquivalent, modifiers: EventModifiers = .command) {
        self.key = key
        self.modifiers = modifiers
    }
    /// Return: a dialog's default action.
    public static let defaultAction = KeyboardShortcut(.return, modifiers: [])
    /// Escape: a dialog's cancel action.
    public static let cancelAction = KeyboardShortcut(.escape, modifiers: [])
}

nonisolated extension View {
    /// Makes `key` with `modifiers` perform the view's action (Apple:
    /// `keyboardShortcut(_:modifiers:)`): Linux takes no key commands.
    public func keyboardShortcut(_ key: KeyEquivalent, modifiers: EventModifiers = .command) -> Self { self }
    /// Makes `shortcut` perform the view's action: Linux takes no key commands.
    public func keyboardShortcut(_ shortcut: KeyboardShortcut) -> Self { self }
    /// Makes `shortcut`, if any, perform the view's action: Linux takes no key commands.
    public func keyboardShortcut(_ shortcut: KeyboardShortcut?) -> Self { self }
}

// MARK: Colours

extension UIColor {
    /// A SwiftUI colour's UIKit equivalent (Apple: `UIColor(_:)`, iOS 14): what the colour
    /// says, as ``Color/init(uiColor:)`` keeps a UIKit colour's.
    public convenience init(_ color: Color) {
        self.init(name: color.name)
    }
}
