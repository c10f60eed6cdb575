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
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path: url.path, limit: Self.sizeLimit)
        } catch {
            return (nil, error.problem == .missing ? nil : "the notification categories kept in \(url.path) could not be read: \(error)")
        }
        do {
            let saved = try JSONDecoder().decode([SavedCategory].self, from: Data(bytes))
            guard Set(saved.map(\.identifier)).count == saved.count else {
                return (nil, "\(url.path) keeps a category twice; not used")
            }
            return (saved, nil)
        } catch {
            return (nil, "\(url.path) could not be read (\(DecodingErrorText.describe(error))); not used")
        }
    }

    /// Keeps `categories`; the reason when it could not.
    func write(_ categories: [SavedCategory]) -> String? {
        do {
            try JSONEncoder().encode(categories).write(to: url, options: .atomic)
            return nil
        } catch {
            return "the notification categories could not be kept in \(url.path) (\(error.localizedDescription)); they last as long as the process"
        }
    }
}
