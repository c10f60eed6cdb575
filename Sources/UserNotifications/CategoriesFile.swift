import Foundation
import SchedulerCore
import SchedulerStore

/// A notification category as it is kept between launches (iOS keeps the categories an app
/// registered in the system, so a response that launches the app finds its actions before
/// the app registers them again). Action icons are not kept: Linux draws none.
struct SavedCategory: Codable, Equatable {
    struct Action: Codable, Equatable {
        var identifier: String
        var title: String
        var options: UInt
        /// For a text-input action: its button's title and its placeholder.
        var textInputButtonTitle: String?
        var textInputPlaceholder: String?
    }

    var identifier: String
    var actions: [Action]
    var intentIdentifiers: [String]
    var options: UInt
    var hiddenPreviewsBodyPlaceholder: String
    var categorySummaryFormat: String

    /// The kept form of `category`.
    init(_ category: UNNotificationCategory) {
        identifier = category.identifier
        actions = category.actions.map { action in
            let text = action as? UNTextInputNotificationAction
            return Action(identifier: action.identifier, title: action.title, options: action.options.rawValue,
                          textInputButtonTitle: text?.textInputButtonTitle, textInputPlaceholder: text?.textInputPlaceholder)
        }
        intentIdentifiers = category.intentIdentifiers
        options = category.options.rawValue
        hiddenPreviewsBodyPlaceholder = category.hiddenPreviewsBodyPlaceholder
        categorySummaryFormat = category.categorySummaryFormat
    }

    /// The category again.
    var category: UNNotificationCategory {
        let made = actions.map { action -> UNNotificationAction in
            let options = UNNotificationActionOptions(rawValue: action.options)
            if let button = action.textInputButtonTitle, let placeholder = action.textInputPlaceholder {
                return UNTextInputNotificationAction(identifier: action.identifier, title: action.title, options: options,
                                                     textInputButtonTitle: button, textInputPlaceholder: placeholder)
            }
            return UNNotificationAction(identifier: action.identifier, title: action.title, options: options)
        }
        return UNNotificationCategory(identifier: identifier, actions: made, intentIdentifiers: intentIdentifiers,
                                      hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder,
                                      categorySummaryFormat: categorySummaryFormat, options: UNNotificationCategoryOptions(rawValue: options))
    }
}

/// The file that keeps the app's notification categories (`notification-categories.json` in
/// its state directory): read bounded and without blocking, written atomically at each
/// `setNotificationCategories(_:)` (the latest call wins, as on iOS); every failure is a
/// warning naming the file, and the categories last as long as the process.
struct CategoriesFile {
    let url: URL

    /// The most bytes the file may have (an app's categories are a few lines).
    static let sizeLimit = 1 << 20

    /// The kept categories, or `nil` with the reason when there are none to use (no file:
    /// no reason).
    func read() -> (categories: [SavedCategory]?, problem: String?) {
        switch KeptJSONFile.read([SavedCategory].self, at: url, limit: Self.sizeLimit) {
        case .success(nil):
            return (nil, nil)
        case .success(let saved?):
            guard Set(saved.map(\.identifier)).count == saved.count else {
                return (nil, "\(url.path) keeps a category twice; not used")
            }
            return (saved, nil)
        case .failure(.unreadable(let why)):
            return (nil, "the notification categories kept in \(url.path) could not be read: \(why)")
        case .failure(.undecodable(let why)):
            return (nil, "\(url.path) could not be read (\(why)); not used")
        }
    }

    /// Keeps `categories`; the reason when it could not.
    func write(_ categories: [SavedCategory]) -> String? {
        KeptJSONFile.write(categories, to: url, limit: Self.sizeLimit).map {
            "the notification categories could not be kept in \(url.path) (\($0)); they last as long as the process"
        }
    }
}

/// A small JSON document the center keeps in the app's state directory (the answer to the
/// notification request, the categories): read bounded and without blocking (a FIFO or a
/// huge file in its place is refused), written atomically. Callers phrase the problems.
enum KeptJSONFile {
    /// Why a kept document cannot be used.
    enum Problem: Error, Equatable {
        /// The file could not be read (its error, in words).
        case unreadable(String)
        /// It was read, and is not the document (the decoding error, in words).
        case undecodable(String)
    }

    /// The document at `url` (at most `limit` bytes) as `Value`; `nil` when there is no file.
    static func read<Value: Decodable>(_ type: Value.Type, at url: URL, limit: Int) -> Result<Value?, Problem> {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path: url.path, limit: limit)
        } catch {
            return error.problem == .missing ? .success(nil) : .failure(.unreadable("\(error)"))
        }
        do {
            return .success(try JSONDecoder().decode(Value.self, from: Data(bytes)))
        } catch {
            return .failure(.undecodable(DecodingErrorText.describe(error, decoding: bytes, retrying: { _ = try JSONDecoder().decode(Value.self, from: $0) })))
        }
    }

    /// Writes `value` at `url` atomically; why it could not, in words. A document larger than
    /// `limit` (the most ``read(_:at:limit:)`` takes back) is not written, and the file an
    /// earlier write left is removed: the next launch would otherwise lose the whole document,
    /// or take an older one for the latest.
    static func write<Value: Encodable>(_ value: Value, to url: URL, limit: Int) -> String? {
        do {
            let data = try JSONEncoder().encode(value)
            guard data.count <= limit else {
                try? FileManager.default.removeItem(at: url)
                return "it would take \(data.count) bytes, more than the \(limit) kept"
            }
            try data.write(to: url, options: .atomic)
            return nil
        } catch {
            return error.localizedDescription
        }
    }
}
