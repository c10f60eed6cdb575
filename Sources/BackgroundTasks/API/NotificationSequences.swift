import Foundation
import Synchronization

// `NotificationCenter.notifications(named:object:)` (iOS 15), which swift-corelibs-foundation
// lacks: modern background-work code waits for the app's lifecycle with
// `for await _ in NotificationCenter.default.notifications(named: UIApplication.didEnterBackgroundNotification)`
// (docs/porting.md, "Foundation beside the API"). The method is `@_disfavoredOverload`, so a
// later Foundation's own is taken first; the sequence's type is nested in `NotificationCenter`
// under Apple's name and would clash with a Foundation that declares it.

extension NotificationCenter {
    /// The notifications named `name` (from `object` only, when given) that this center posts
    /// from now on, as an asynchronous sequence (Apple: `notifications(named:object:)`, iOS 15).
    /// The center is observed from this call until the sequence is released, and what is
    /// posted meanwhile is kept until it is read, in the order it was posted; the sequence never
    /// ends by itself (a `for await` loop over it ends when its task is cancelled).
    ///
    /// One loop reads a sequence at a time (two tasks waiting on one sequence at once stop
    /// the program, as `AsyncStream` does), and a loop ended by its task's cancellation ends
    /// the sequence: a later loop over it ends at once. Each observer that needs its own
    /// reading makes its own sequence.
    @_disfavoredOverload
    public func notifications(named name: Notification.Name, object: AnyObject? = nil) -> Notifications {
        Notifications(center: self, name: name, object: object)
    }

    /// An asynchronous sequence of the notifications a center posts (Apple:
    /// `NotificationCenter.Notifications`), made by `notifications(named:object:)`.
    ///
    /// Unlike Apple's, iterating it gives no warning that `Notification` is not `Sendable`:
    /// the iterator hands each notification to the caller's own isolation (`next(isolation:)`).
    ///
    /// @unchecked Sendable: its stored properties are constants; the observer token is only
    /// given back to the center at `deinit`, and the stream's continuation is thread-safe.
    public final class Notifications: AsyncSequence, @unchecked Sendable {
        /// The sequence's element: a posted notification.
        public typealias Element = Notification

        private let center: NotificationCenter
        private let observer: any NSObjectProtocol
        private let stream: AsyncStream<PostedNotification>
        private let continuation: AsyncStream<PostedNotification>.Continuation

        init(center: NotificationCenter, name: Notification.Name, object: AnyObject?) {
            let (stream, continuation) = AsyncStream.makeStream(of: PostedNotification.self, bufferingPolicy: .unbounded)
            self.center = center
            self.stream = stream
            self.continuation = continuation
            // No queue: the block runs on the posting thread, as it posts, so the order of
            // posts is the order of the sequence.
            observer = center.addObserver(forName: name, object: object, queue: nil) { notification in
                continuation.yield(PostedNotification(notification: notification))
            }
        }

        deinit {
            center.removeObserver(observer)
            continuation.finish()
        }

        /// An iterator over the notifications posted since the sequence was made.
        public func makeAsyncIterator() -> Iterator {
            Iterator(sequence: self, cursor: Cursor(base: stream.makeAsyncIterator()))
        }

        /// The iterator of `NotificationCenter.Notifications` (Apple's is a structure with a
        /// non-mutating `next()`; the position it advances is kept in a reference).
        public struct Iterator: AsyncIteratorProtocol {
            /// Keeps the sequence, and with it the observation, alive while the iterator is.
            let sequence: Notifications
            let cursor: Cursor

            /// The next notification posted, waiting for one; `nil` once the task waiting is
            /// cancelled.
            public func next() async -> Notification? {
                await cursor.next(isolation: nil)
            }

            /// The next notification posted, handed over in the caller's isolation (what a
            /// `for await` loop calls), so a main-actor loop receives it without crossing.
            public func next(isolation actor: isolated (any Actor)?) async -> Notification? {
                await cursor.next(isolation: actor)
            }
        }

        /// Where an iterator stands in the stream. Copies of an iterator share it, as copies of
        /// Apple's do. @unchecked Sendable: `base` is advanced only by the task iterating (the
        /// stream refuses two waiting at once), as any `AsyncIterator`.
        final class Cursor: @unchecked Sendable {
            private var base: AsyncStream<PostedNotification>.Iterator

            init(base: AsyncStream<PostedNotification>.Iterator) {
                self.base = base
            }

            func next(isolation actor: isolated (any Actor)?) async -> Notification? {
                await base.next(isolation: actor)?.notification
            }
        }
    }
}

/// A notification on its way from the posting thread to the task reading the sequence.
/// @unchecked Sendable: the poster hands the notification over and does not change it (a
/// `Notification` is a value; its `object` and `userInfo` are the poster's to share, as on
/// Apple's platforms, where this sequence carries the same values).
struct PostedNotification: @unchecked Sendable {
    let notification: Notification
}
