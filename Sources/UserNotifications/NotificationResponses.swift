import Foundation

/// Why a response to a notification could not be made (``UNUserNotificationCenter/simulateResponse(toNotificationWithIdentifier:actionIdentifier:userText:)``,
/// `bgtask respond`): the message names the notification and what is wrong.
public struct NotificationResponseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the notification and the action.
    public let message: String
    /// An error saying `message`.
    public init(message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// What the user's response to a delivered notification does, as iOS decides it (a pure
/// function of the notification, the app's categories and the action chosen;
/// docs/porting.md, "Local notifications").
struct NotificationResponseDecision {
    /// The notification responded to.
    let notification: UNNotification
    /// The response the delegate's `didReceive` gets, or `nil` when the app is not told (a
    /// dismissal of a notification whose category did not ask for it).
    let response: UNNotificationResponse?
    /// Whether the app comes to the foreground first: the default action (a tap) and an
    /// action with ``UNNotificationActionOptions/foreground``.
    let bringsToForeground: Bool

    /// The decision for `actionIdentifier` (``UNNotificationDefaultActionIdentifier``,
    /// ``UNNotificationDismissActionIdentifier`` or one of the notification's category's
    /// actions) on `notification`, with `userText` for a text-input action.
    static func decide(
        _ notification: UNNotification, actionIdentifier: String, userText: String?,
        categories: Set<UNNotificationCategory>
    ) -> Result<NotificationResponseDecision, NotificationResponseError> {
        let identifier = notification.request.identifier
        let categoryIdentifier = notification.request.content.categoryIdentifier
        let category = categories.first { $0.identifier == categoryIdentifier }
        func refused(_ why: String) -> Result<NotificationResponseDecision, NotificationResponseError> {
            .failure(NotificationResponseError(message: "no response to notification \"\(identifier)\" with action \"\(actionIdentifier)\": \(why)"))
        }
        switch actionIdentifier {
        case UNNotificationDefaultActionIdentifier, UNNotificationDismissActionIdentifier:
            guard userText == nil else { return refused("only a text-input action takes text") }
            guard actionIdentifier == UNNotificationDefaultActionIdentifier else {
                // iOS tells the app of a dismissal only when the category asks for it.
                let told = category?.options.contains(.customDismissAction) == true
                return .success(NotificationResponseDecision(
                    notification: notification, response: told ? UNNotificationResponse(notification: notification, actionIdentifier: actionIdentifier) : nil,
                    bringsToForeground: false))
            }
            return .success(NotificationResponseDecision(
                notification: notification, response: UNNotificationResponse(notification: notification, actionIdentifier: actionIdentifier),
                bringsToForeground: true))
        default:
            guard !categoryIdentifier.isEmpty else {
                return refused("the notification has no category (its content's categoryIdentifier), so no action but the default and the dismissal")
            }
            guard let category else {
                return refused("its category \"\(categoryIdentifier)\" is not one the app set (setNotificationCategories(_:), whose latest set is kept between launches)")
            }
            guard let action = category.actions.first(where: { $0.identifier == actionIdentifier }) else {
                let known = category.actions.map { "\"\($0.identifier)\"" }.joined(separator: ", ")
                return refused("its category \"\(categoryIdentifier)\" has no such action (\(known.isEmpty ? "it has none" : "its actions: \(known)"))")
            }
            let foreground = action.options.contains(.foreground)
            if action is UNTextInputNotificationAction {
                return .success(NotificationResponseDecision(
                    notification: notification, response: UNTextInputNotificationResponse(notification: notification, actionIdentifier: actionIdentifier, userText: userText ?? ""),
                    bringsToForeground: foreground))
            }
            guard userText == nil else { return refused("the action is not a text-input action (UNTextInputNotificationAction): it takes no text") }
            return .success(NotificationResponseDecision(
                notification: notification, response: UNNotificationResponse(notification: notification, actionIdentifier: actionIdentifier),
                bringsToForeground: foreground))
        }
    }
}
