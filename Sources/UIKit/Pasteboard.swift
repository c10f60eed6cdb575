// The pasteboard (Apple: `UIPasteboard`), which apps touch around their lifecycle: a wallet
// clears the general pasteboard when it becomes active again, so that an address copied
// before it went to the background does not linger (the sixteenth outside probe).
//
// Linux offers an app in the background no system pasteboard it could rely on: X11's and
// Wayland's selections belong to a graphical session, which a headless machine or a service
// does not have, and each needs a client that stays connected to serve what it copied. So the
// pasteboards here live in the process: what the app writes it reads back, from any thread,
// and no other process sees it; they are gone when the process ends (docs/porting.md,
// "Pasteboard").
import BackgroundTasks
import Dispatch
import Foundation

/// A pasteboard (Apple: `UIPasteboard`): strings and URLs, kept in this process. Its change
/// count grows with every write, and each write posts ``changedNotification``. Usable from
/// any thread.
open class UIPasteboard: NSObject, @unchecked Sendable {
    // @unchecked Sendable: the pasteboard's own properties are constants; its contents are
    // its `Board`'s, read and written under the board's lock.

    /// A pasteboard's name (Apple: `UIPasteboard.Name`).
    public struct Name: RawRepresentable, Hashable, Sendable {
        /// The name's string.
        public let rawValue: String
        /// A name of `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A name of `rawValue`.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The general pasteboard's name (Apple's string, `"com.apple.UIKit.pboard.general"`).
        public static let general = Name("com.apple.UIKit.pboard.general")
    }

    /// Posted (object: the pasteboard) after each write to a pasteboard, once its
    /// ``changeCount`` has grown (Apple: `UIPasteboard.changedNotification`). Posted
    /// asynchronously, one per write (in the order the posts were queued: writes from several
    /// threads at once may be told in another order), never from the main queue and never under
    /// the pasteboard's lock: from the application's notification queue, as UIApplication's
    /// notifications are, when an app is running (else from a queue of the process's
    /// own), so that an observer on `.main` does not wait on a main queue that is writing.
    /// Its `userInfo` is `nil`: the added and removed types are not said.
    public static let changedNotification = Notification.Name("UIPasteboardChangedNotification")

    /// The general pasteboard (Apple: `general`): the process's one, shared by every app of
    /// a simulated device as iOS's is by every app.
    open class var general: UIPasteboard { generalPasteboard }

    /// The general pasteboard, made once.
    private static let generalPasteboard: UIPasteboard = {
        guard let pasteboard = Registry.pasteboard(named: .general, create: true) else {
            fatalError("the general pasteboard is always made")
        }
        return pasteboard
    }()

    /// The pasteboard's name.
    public let name: Name
    /// What the pasteboard holds; shared by every `UIPasteboard` of one name.
    fileprivate let board: Board

    /// The pasteboard named `name` (Apple: `init?(name:create:)`): a handle on the same
    /// contents as every other of that name; with `create` false, `nil` when no pasteboard of
    /// that name was made (the general one always exists). Named pasteboards last until
    /// ``remove(withName:)`` or the end of the process.
    public convenience init?(name: Name, create: Bool) {
        guard let named = Registry.pasteboard(named: name, create: create) else { return nil }
        self.init(name: name, board: named.board)
    }

    /// A pasteboard on `board`.
    fileprivate init(name: Name, board: Board) {
        self.name = name
        self.board = board
        super.init()
    }

    /// A new pasteboard with a name no other has (Apple: `withUniqueName()`).
    open class func withUniqueName() -> UIPasteboard {
        let name = Name(UUID().uuidString)
        guard let pasteboard = Registry.pasteboard(named: name, create: true) else {
            fatalError("a pasteboard is made when asked to create it")
        }
        return pasteboard
    }

    /// Forgets the pasteboard named `name` (Apple: `remove(withName:)`): `init?(name:create:)`
    /// no longer finds it; handles already held keep its contents. The general pasteboard
    /// cannot be removed.
    open class func remove(withName name: Name) {
        guard name != .general else { return }
        Registry.remove(name)
    }

    /// How many times the contents changed (Apple: `changeCount`): one more after every write,
    /// whatever it wrote.
    open var changeCount: Int { board.read { $0.changeCount } }

    /// How many items the pasteboard holds (Apple: `numberOfItems`).
    open var numberOfItems: Int { board.read { $0.items.count } }

    /// The first item's string (Apple: `string`); `nil` when the first item is not a string
    /// or there is none. Setting it replaces every item with one string (`nil`: with none).
    open var string: String? {
        get { board.read { $0.items.first?.string } }
        set { write(newValue.map { [.string($0)] } ?? []) }
    }

    /// The items' strings, in order (Apple: `strings`); `nil` when no item is a string.
    /// Setting it replaces every item with one per string.
    open var strings: [String]? {
        get { nonEmpty(board.read { $0.items.compactMap(\.string) }) }
        set { write((newValue ?? []).map { .string($0) }) }
    }

    /// Whether an item is a string (Apple: `hasStrings`).
    open var hasStrings: Bool { board.read { $0.items.contains { $0.string != nil } } }

    /// The first item's URL (Apple: `url`); `nil` when the first item is not a URL or there is
    /// none. Setting it replaces every item with one URL (`nil`: with none).
    open var url: URL? {
        get { board.read { $0.items.first?.url } }
        set { write(newValue.map { [.url($0)] } ?? []) }
    }

    /// The items' URLs, in order (Apple: `urls`); `nil` when no item is a URL. Setting it
    /// replaces every item with one per URL.
    open var urls: [URL]? {
        get { nonEmpty(board.read { $0.items.compactMap(\.url) }) }
        set { write((newValue ?? []).map { .url($0) }) }
    }

    /// Whether an item is a URL (Apple: `hasURLs`).
    open var hasURLs: Bool { board.read { $0.items.contains { $0.url != nil } } }

    /// Replaces the items, counts the change and announces it.
    private func write(_ items: [Item]) {
        board.replace(with: items)
        BGApplication.postFromCurrentApp([(Self.changedNotification, .kept(Registry.announcedPasteboard(for: self)))])
    }

    private func nonEmpty<T>(_ values: [T]) -> [T]? { values.isEmpty ? nil : values }
}

/// One pasteboard item: a string or a URL (Apple's hold any number of representations;
/// these are the two the app's lifecycle code reads and writes).
private enum Item: Sendable {
    case string(String)
    case url(URL)

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var url: URL? {
        if case .url(let value) = self { return value }
        return nil
    }
}

/// The contents of one named pasteboard, shared by its handles. @unchecked Sendable: `state`
/// is only touched under `lock`. NSLock is a pthread mutex, which ThreadSanitizer models, so
/// this module needs no `SanitizerMutex.swift`.
private final class Board: @unchecked Sendable {
    struct State {
        var items: [Item] = []
        var changeCount = 0
    }

    private let lock = NSLock()
    private var state = State()

    func read<T>(_ body: (State) -> T) -> T { lock.withLock { body(state) } }

    func replace(with items: [Item]) {
        lock.withLock {
            state.items = items
            state.changeCount += 1
        }
    }
}

/// The process's named pasteboards: the first handle made for each name, which changes
/// through any handle of that name are announced with (so that an observer of
/// `object: UIPasteboard.general` hears a write through `UIPasteboard(name: .general, create: false)`).
private enum Registry {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var pasteboards: [UIPasteboard.Name: UIPasteboard] = [:]
    // nonisolated(unsafe): `pasteboards` is only touched under `lock`.

    /// The pasteboard named `name`, made when missing and `create` is true.
    static func pasteboard(named name: UIPasteboard.Name, create: Bool) -> UIPasteboard? {
        lock.withLock {
            if let existing = pasteboards[name] { return existing }
            guard create else { return nil }
            let made = UIPasteboard(name: name, board: Board())
            pasteboards[name] = made
            return made
        }
    }

    /// Forgets `name`'s pasteboard.
    static func remove(_ name: UIPasteboard.Name) {
        _ = lock.withLock { pasteboards.removeValue(forKey: name) }
    }

    /// The pasteboard a change through `handle` is announced with: the first made of its
    /// name, or `handle` itself once that one was removed (a pasteboard made again under the
    /// name is another).
    static func announcedPasteboard(for handle: UIPasteboard) -> UIPasteboard {
        guard let first = lock.withLock({ pasteboards[handle.name] }), first.board === handle.board else { return handle }
        return first
    }
}
