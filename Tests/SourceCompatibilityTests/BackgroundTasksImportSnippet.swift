// What `import BackgroundTasks` brings with Foundation, as on iOS, in Swift 6 mode with
// warnings as errors: a refresh handler in a file that imports only these two fetches with
// URLSession (Apple's Foundation has it; Linux keeps it in FoundationNetworking, which
// BackgroundTasks re-exports) and cancels the fetch when the task expires.
import Foundation
import BackgroundTasks

final class FoundationOnlyRefresher: Sendable {
    let feedURL = URL(string: "https://example.com/feed.json")!

    /// Starts the fetch a refresh task waits for; returns it so expiration can cancel it.
    func performRequest(completion: @escaping @Sendable ((any Error)?) -> Void) -> URLSessionTask {
        var request = URLRequest(url: feedURL)
        request.timeoutInterval = 20
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode
            completion(error ?? (status == 200 && data != nil ? nil : URLError(.badServerResponse)))
        }
        task.resume()
        return task
    }

    func handle(_ task: BGAppRefreshTask) {
        let fetch = performRequest { error in task.setTaskCompleted(success: error == nil) }
        task.expirationHandler = { fetch.cancel() }
    }
}
