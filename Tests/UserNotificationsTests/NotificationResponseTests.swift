import Foundation
import Synchronization
import Testing
@testable import UserNotifications

/// The user's responses to delivered notifications
/// (``UNUserNotificationCenter/simulateResponse(toNotificationWithIdentifier:actionIdentifier:userText:)``):
/// what the delegate is told, when the app comes to the foreground, what is refused.
@Suite("UserNotifications: responses")
struct NotificationResponseTests {
    private static let categories: Set<UNNotificationCategory> = [
        UNNotificationCategory(identifier: "article", actions: [
            UNNotificationAction(identifier: "open", title: "Open", options: [.foreground]),
            UNNotificationAction(identifier: "save", title: "Save for later"),
            UNTextInputNotificationAction(identifier: "comment", title: "Comment", textInputButtonTitle: "Send", textInputPlaceholder: "Say something"),
        ], intentIdentifiers: [], options: [.customDismissAction]),
        UNNotificationCategory(identifier: "quiet", actions: [], intentIdentifiers: []),
    ]

    /// A center with notifications delivered in the background, one per (identifier, category).
    private func center(delivering notifications: [(String, String)], host: FakeNotificationHost) async throws -> UNUserNotificationCenter {
        let center = UNUserNotificationCenter(host: host)
        #expect(try await center.requestAuthorization(options: [.alert, .sound]))
        center.setNotificationCategories(Self.categories)
        for (identifier, category) in notifications {
            let content = UNMutableNotificationContent()
            content.title = identifier
            content.categoryIdentifier = category
            try await center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
        }
        #expect(await center.deliveredNotifications().map(\.request.identifier) == notifications.map(\.0))
        return center
    }

    @Test("a tap brings the app to the foreground, then the delegate gets the default action; the notification leaves the list")
    @MainActor
    func aTapOpensTheApp() async throws {
        let host = FakeNotificationHost()
        let center = try await center(delivering: [("a", "article"), ("b", "")], host: host)
        let delegate = ResponseDelegate()
        center.delegate = delegate
        try center.simulateResponse(toNotificationWithIdentifier: "b")
        #expect(host.broughtToForeground == 1 && host.isInForeground)
        await host.runMainActorCalls()
        #expect(delegate.received == ["b \(UNNotificationDefaultActionIdentifier)"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["a"])
        // Responded to once: a second response finds it gone, and says what is delivered.
        #expect(throws: NotificationResponseError.self) { try center.simulateResponse(toNotificationWithIdentifier: "b") }
        do {
            try center.simulateResponse(toNotificationWithIdentifier: "b")
        } catch {
            #expect(error.message.contains("\"b\"") && error.message.contains("the latest: \"a\""), "\(error)")
        }
        withExtendedLifetime(delegate) {}
    }

    @Test("an action runs in the foreground only with .foreground; a text action's response carries the text")
    @MainActor
    func actionsAndText() async throws {
        let host = FakeNotificationHost()
        let center = try await center(delivering: [("a", "article"), ("b", "article"), ("c", "article")], host: host)
        let delegate = ResponseDelegate()
        center.delegate = delegate
        try center.simulateResponse(toNotificationWithIdentifier: "a", actionIdentifier: "save")
        #expect(host.broughtToForeground == 0, "a background action leaves the app where it is")
        try center.simulateResponse(toNotificationWithIdentifier: "b", actionIdentifier: "comment", userText: "nice")
        #expect(host.broughtToForeground == 0)
        try center.simulateResponse(toNotificationWithIdentifier: "c", actionIdentifier: "open")
        #expect(host.broughtToForeground == 1)
        #expect(host.backgroundTime == (held: 2, ended: 0), "the two background actions hold background time until the delegate answers")
        await host.runMainActorCalls()
        #expect(delegate.received == ["a save", "b comment text=nice", "c open"])
        #expect(host.backgroundTime == (held: 2, ended: 2))
        #expect(await center.deliveredNotifications().isEmpty)
        withExtendedLifetime(delegate) {}
    }

    @Test("a dismissal tells the delegate only when the category asks for it (customDismissAction), and never opens the app")
    @MainActor
    func dismissals() async throws {
        let host = FakeNotificationHost()
        let center = try await center(delivering: [("told", "article"), ("silent", "quiet")], host: host)
        let delegate = ResponseDelegate()
        center.delegate = delegate
        try center.simulateResponse(toNotificationWithIdentifier: "told", actionIdentifier: UNNotificationDismissActionIdentifier)
        try center.simulateResponse(toNotificationWithIdentifier: "silent", actionIdentifier: UNNotificationDismissActionIdentifier)
        await host.runMainActorCalls()
        #expect(delegate.received == ["told \(UNNotificationDismissActionIdentifier)"])
        #expect(host.broughtToForeground == 0)
        #expect(await center.deliveredNotifications().isEmpty, "both left the list")
        #expect(host.reports.contains { $0.contains("\"silent\" dismissed") })
        withExtendedLifetime(delegate) {}
    }

    @Test("refused, naming the culprit, with nothing changed: an action the category lacks, an unknown or missing category, text for a plain action")
    @MainActor
    func refusals() async throws {
        let host = FakeNotificationHost()
        let center = try await center(delivering: [("a", "article"), ("n", ""), ("u", "unknown")], host: host)
        func refusal(_ identifier: String, _ action: String, text: String? = nil) -> String {
            do {
                try center.simulateResponse(toNotificationWithIdentifier: identifier, actionIdentifier: action, userText: text)
                return "made"
            } catch {
                return error.message
            }
        }
        #expect(refusal("a", "delete").contains("has no such action (its actions: \"open\", \"save\", \"comment\")"))
        #expect(refusal("a", "save", text: "x").contains("takes no text"))
        #expect(refusal("a", UNNotificationDefaultActionIdentifier, text: "x").contains("only a text-input action takes text"))
        #expect(refusal("n", "save").contains("has no category"))
        #expect(refusal("u", "save").contains("\"unknown\" is not one the app set"))
        #expect(refusal("never", UNNotificationDefaultActionIdentifier).contains("not among the delivered notifications"))
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["a", "n", "u"], "nothing left the list")
        #expect(host.broughtToForeground == 0)
        #expect(host.reports.filter { $0.hasPrefix("warning: no response to notification") }.count == 6, "each said in the log")
    }

    @Test("a notification bgtaskd delivered while the process was frozen can be responded to: it is taken in first")
    @MainActor
    func aResponseTakesInWhatBgtaskdDelivered() async throws {
        let host = FakeNotificationHost()
        let center = try await center(delivering: [], host: host)
        let delegate = ResponseDelegate()
        center.delegate = delegate
        // bgtaskd delivered "away" while this process was frozen (the file says so).
        let request = UNNotificationRequest(identifier: "away", content: UNMutableNotificationContent(), trigger: nil)
        var problem: String?
        let stored = StoredNotificationRequest(request, added: host.now, fireDate: host.now, problem: &problem)
        host.kept = KeptNotifications(deliveredWhileAway: [AwayDelivery(request: stored, date: host.now, listed: true)])
        try center.simulateResponse(toNotificationWithIdentifier: "away")
        await host.runMainActorCalls()
        #expect(delegate.received == ["away \(UNNotificationDefaultActionIdentifier)"])
        #expect(host.kept.deliveredWhileAway.isEmpty && host.kept.delivered.isEmpty, "taken in, then out of the list")
        withExtendedLifetime(delegate) {}
    }

    @Test("categories outlive the launch, as iOS keeps them: a later launch's response finds the actions before the app sets them again; its own set replaces them")
    @MainActor
    func categoriesOutliveTheLaunch() async throws {
        let host = FakeNotificationHost()
        _ = try await center(delivering: [("a", "article"), ("b", "article")], host: host)
        let next = host.nextLaunch(after: 60)
        let again = UNUserNotificationCenter(host: next)
        let delegate = ResponseDelegate()
        again.delegate = delegate
        #expect(await again.notificationCategories().map(\.identifier).sorted() == ["article", "quiet"])
        try again.simulateResponse(toNotificationWithIdentifier: "a", actionIdentifier: "comment", userText: "kept")
        await next.runMainActorCalls()
        #expect(delegate.received == ["a comment text=kept"], "the text action came back as one")
        // The app's own call replaces what was kept, here and for the launches after.
        again.setNotificationCategories([])
        #expect(throws: NotificationResponseError.self) { try again.simulateResponse(toNotificationWithIdentifier: "b", actionIdentifier: "save") }
        #expect(await UNUserNotificationCenter(host: next.nextLaunch(after: 60)).notificationCategories().isEmpty)
        withExtendedLifetime(delegate) {}
    }

    @Test("the categories' file: kept and read back; one keeping a category twice, or not JSON, is not used and said")
    func theCategoriesFile() throws {
        let scratch = try ScratchStateDirectory()
        defer { scratch.remove() }
        let file = CategoriesFile(url: scratch.url.appendingPathComponent("notification-categories.json"))
        #expect(file.read().categories == nil && file.read().problem == nil, "no file: nothing, and nothing to say")
        let saved = Self.categories.sorted { $0.identifier < $1.identifier }.map(SavedCategory.init)
        #expect(file.write(saved) == nil)
        let read = file.read()
        #expect(read.categories == saved && read.problem == nil)
        let article = try #require(read.categories?.first).category
        #expect(article.options.contains(.customDismissAction))
        #expect((article.actions.last as? UNTextInputNotificationAction)?.textInputPlaceholder == "Say something")
        #expect(article.actions.first?.options == [.foreground])
        #expect(file.write(saved + saved.prefix(1)) == nil)
        #expect(file.read().categories == nil && file.read().problem?.contains("keeps a category twice") == true)
        try Data("{".utf8).write(to: file.url)
        #expect(file.read().problem?.contains("could not be read") == true)
    }

    @Test("the tap a launch was for is its connection options' response: the default action on the notification named; none for another launch or a notification not delivered")
    func theLaunchResponse() async throws {
        let host = FakeNotificationHost()
        host.launchNotification = "b"
        let center = try await center(delivering: [("a", "article"), ("b", "")], host: host)
        let response = center.launchResponse()
        #expect(response?.notification.request.identifier == "b" && response?.actionIdentifier == UNNotificationDefaultActionIdentifier)
        #expect(center.launchResponse() === response, "found once")
        let other = FakeNotificationHost()
        #expect(try await self.center(delivering: [("b", "")], host: other).launchResponse() == nil, "not launched for a tap")
        let missing = FakeNotificationHost()
        missing.launchNotification = "gone"
        #expect(try await self.center(delivering: [("b", "")], host: missing).launchResponse() == nil)
    }

    @Test("a dismissal whose category the app never set is not told, and the log says why")
    func aDismissalOfAnUnknownCategory() async throws {
        let host = FakeNotificationHost()
        let center = try await center(delivering: [("x", "elsewhere")], host: host)
        try center.simulateResponse(toNotificationWithIdentifier: "x", actionIdentifier: UNNotificationDismissActionIdentifier)
        #expect(host.reports.contains { $0.contains("its category \"elsewhere\" is not one the app set") }, "\(host.reports)")
    }

    @Test("without a delegate the tap still opens the app, and the log says the response reached no one; a handler-form delegate is called")
    @MainActor
    func noDelegateAndTheHandlerForm() async throws {
        let host = FakeNotificationHost()
        let center = try await center(delivering: [("a", "article"), ("b", "article")], host: host)
        try center.simulateResponse(toNotificationWithIdentifier: "a")
        #expect(host.broughtToForeground == 1)
        #expect(host.reports.contains { $0.contains("reached no delegate") })
        let handlerForm = HandlerResponseDelegate()
        center.delegate = handlerForm
        try center.simulateResponse(toNotificationWithIdentifier: "b", actionIdentifier: "comment", userText: "from the handler form")
        await host.runMainActorCalls()
        #expect(handlerForm.received.withLock { $0 } == ["b comment text=from the handler form"])
        withExtendedLifetime(handlerForm) {}
    }
}

/// Records the responses it gets, in the `async` form.
@MainActor
final class ResponseDelegate: NSObject, UNUserNotificationCenterDelegate {
    var received: [String] = []
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        received.append(ResponseDelegate.describe(response))
    }

    nonisolated static func describe(_ response: UNNotificationResponse) -> String {
        let text = (response as? UNTextInputNotificationResponse).map { " text=\($0.userText)" } ?? ""
        return "\(response.notification.request.identifier) \(response.actionIdentifier)\(text)"
    }
}

/// Records the responses it gets, in the completion-handler form Swift 5 apps write.
final class HandlerResponseDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let received = Mutex<[String]>([])
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse, withCompletionHandler completionHandler: @escaping () -> Void) {
        received.withLock { $0.append(ResponseDelegate.describe(response)) }
        completionHandler()
    }
}
