@testable import BackgroundTasks
import Foundation
import Testing

/// `NotificationCenter.notifications(named:object:)`: each test observes a center of its own,
/// never `.default`, so tests running beside it post nothing into it.
@Suite struct NotificationSequenceTests {
    static let name = Notification.Name("com.example.test.sequence")

    /// The `index` of each notification's userInfo, reading `count` of them.
    static func indices(_ sequence: NotificationCenter.Notifications, count: Int) async -> [Int] {
        var seen: [Int] = []
        for await notification in sequence {
            seen.append(notification.userInfo?["index"] as? Int ?? -1)
            if seen.count == count { break }
        }
        return seen
    }

    @Test func whatIsPostedBeforeTheLoopReadsIsKeptInOrder() async {
        let center = NotificationCenter()
        let sequence = center.notifications(named: Self.name)
        for index in 0..<5 { center.post(name: Self.name, object: nil, userInfo: ["index": index]) }
        #expect(await Self.indices(sequence, count: 5) == [0, 1, 2, 3, 4])
    }

    @Test func onlyTheNameAndTheObjectAskedForAreIncluded() async {
        let center = NotificationCenter()
        let wanted = NSObject()
        let other = NSObject()
        let fromWanted = center.notifications(named: Self.name, object: wanted)
        let fromAnyone = center.notifications(named: Self.name)
        center.post(name: Notification.Name("com.example.test.other"), object: wanted, userInfo: ["index": 0])
        center.post(name: Self.name, object: other, userInfo: ["index": 1])
        center.post(name: Self.name, object: wanted, userInfo: ["index": 2])
        center.post(name: Self.name, object: nil, userInfo: ["index": 3])
        center.post(name: Self.name, object: wanted, userInfo: ["index": 4])
        #expect(await Self.indices(fromWanted, count: 2) == [2, 4])
        #expect(await Self.indices(fromAnyone, count: 4) == [1, 2, 3, 4])
    }

    @Test func notificationsBeforeTheSequenceWasMadeAreNotIncluded() async {
        let center = NotificationCenter()
        center.post(name: Self.name, object: nil, userInfo: ["index": 0])
        let sequence = center.notifications(named: Self.name)
        center.post(name: Self.name, object: nil, userInfo: ["index": 1])
        #expect(await Self.indices(sequence, count: 1) == [1])
    }

    @Test func postsFromOtherThreadsAllArrive() async {
        let center = NotificationCenter()
        let sequence = center.notifications(named: Self.name)
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            center.post(name: Self.name, object: nil, userInfo: ["index": index])
        }
        #expect(await Self.indices(sequence, count: 200).sorted() == Array(0..<200))
    }

    @Test func cancellingTheTaskEndsAWaitingLoop() async {
        let center = NotificationCenter()
        let sequence = center.notifications(named: Self.name)
        let reader = Task {
            var count = 0
            for await _ in sequence { count += 1 }
            return count
        }
        center.post(name: Self.name, object: nil)
        reader.cancel()
        // The loop ends (the stream gives nil to a cancelled task); the one notification
        // posted before may or may not have been read by then.
        #expect(await reader.value <= 1)
    }

    /// The center's observer block holds the stream's continuation, not the sequence, so the
    /// sequence goes when nothing else holds it (and its `deinit` gives the observer back).
    @Test func theSequenceGoesWhenNothingHoldsIt() async {
        let center = NotificationCenter()
        weak var released: NotificationCenter.Notifications?
        do {
            let sequence = center.notifications(named: Self.name)
            released = sequence
            center.post(name: Self.name, object: nil)
        }
        #expect(released == nil)
        // Posting after it went is harmless.
        center.post(name: Self.name, object: nil)
    }

    @Test func copiesOfAnIteratorShareOnePosition() async {
        let center = NotificationCenter()
        let sequence = center.notifications(named: Self.name)
        for index in 0..<2 { center.post(name: Self.name, object: nil, userInfo: ["index": index]) }
        let iterator = sequence.makeAsyncIterator()
        let copy = iterator
        #expect(await iterator.next()?.userInfo?["index"] as? Int == 0)
        #expect(await copy.next()?.userInfo?["index"] as? Int == 1)
    }
}

/// `NSException`'s values; raising, which ends the process, is tested by exit tests under
/// ``ProcessTests`` (`UncaughtExceptions`).
@Suite struct ExceptionValueTests {
    @Test func anExceptionKeepsWhatItWasMadeWith() throws {
        let exception = NSException(name: .invalidArgumentException, reason: "bad index", userInfo: ["index": 7])
        #expect(exception.name == .invalidArgumentException)
        #expect(exception.name.rawValue == "NSInvalidArgumentException")
        #expect(exception.reason == "bad index")
        #expect(exception.userInfo?["index"] as? Int == 7)
        #expect(!exception.callStackSymbols.isEmpty)
        #expect(exception.description == "bad index")
        let copied = try #require(exception.copy() as? NSException)
        #expect(ObjectIdentifier(copied) == ObjectIdentifier(exception))
        #expect(NSException(name: .genericException, reason: nil).description == "NSGenericException")
    }

    @Test func theNamesAreApples() {
        let names: [NSExceptionName] = [
            .genericException, .rangeException, .invalidArgumentException, .internalInconsistencyException, .mallocException,
            .objectInaccessibleException, .objectNotAvailableException, .destinationInvalidException,
            .inconsistentArchiveException, .characterConversionException, .parseErrorException,
        ]
        #expect(names.map(\.rawValue) == [
            "NSGenericException", "NSRangeException", "NSInvalidArgumentException", "NSInternalInconsistencyException",
            "NSMallocException", "NSObjectInaccessibleException", "NSObjectNotAvailableException",
            "NSDestinationInvalidException", "NSInconsistentArchiveException", "NSCharacterConversionException",
            "NSParseErrorException",
        ])
    }
}

/// Raising an exception calls the uncaught-exception handler, then ends the process, as an
/// uncaught exception ends an iOS app. The handler is the process's: each test sets it in
/// the child process of an exit test, never in this one.
extension ProcessTests {
    @Suite struct UncaughtExceptions {
        static func standardError(_ result: ExitTest.Result?) -> String {
            result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? "(no result)"
        }

        @Test func raisingCallsTheHandlerThenEndsTheProcessNamingTheException() async {
            // SIGABRT, as iOS ends an app with an uncaught exception (crash reporters' signal
            // handlers expect it).
            let text = Self.standardError(await #expect(processExitsWith: .signal(SIGABRT), observing: [\.standardErrorContent]) {
                NSSetUncaughtExceptionHandler { exception in
                    FileHandle.standardError.write(Data("handler saw \(exception.name.rawValue) (\(exception.userInfo?["step"] as? String ?? "?"))\n".utf8))
                }
                NSException(name: .internalInconsistencyException, reason: "broken", userInfo: ["step": "flush"]).raise()
            })
            #expect(text.contains("handler saw NSInternalInconsistencyException (flush)"), "\(text)")
            #expect(text.contains("Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: 'broken'"), "\(text)")
            let handlerAt = text.range(of: "handler saw")?.lowerBound
            let terminatingAt = text.range(of: "Terminating app")?.lowerBound
            #expect(handlerAt != nil && terminatingAt != nil && handlerAt! < terminatingAt!, "the handler runs first")
        }

        @Test func aChainedHandlerCallsThePreviousOne() async {
            let text = Self.standardError(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                NSSetUncaughtExceptionHandler { _ in FileHandle.standardError.write(Data("first handler\n".utf8)) }
                let previous = NSGetUncaughtExceptionHandler()
                NSSetUncaughtExceptionHandler { exception in
                    FileHandle.standardError.write(Data("second handler\n".utf8))
                    previous?(exception)
                }
                withVaList([5, 3]) { NSException.raise(.rangeException, format: "index %d beyond %d", arguments: $0) }
            })
            #expect(text.contains("second handler\nfirst handler\n"), "\(text)")
            #expect(text.contains("uncaught exception 'NSRangeException', reason: 'index 5 beyond 3'"), "\(text)")
        }

        @Test func anExceptionRaisedInTheHandlerEndsTheProcessWithoutCallingItAgain() async {
            let text = Self.standardError(await #expect(processExitsWith: .signal(SIGABRT), observing: [\.standardErrorContent]) {
                NSSetUncaughtExceptionHandler { exception in
                    FileHandle.standardError.write(Data("handler for \(exception.name.rawValue)\n".utf8))
                    NSException(name: .rangeException, reason: "from the handler").raise()
                }
                NSException(name: .genericException, reason: "first").raise()
            })
            #expect(text.components(separatedBy: "handler for").count == 2, "the handler ran once: \(text)")
            #expect(text.contains("uncaught exception 'NSRangeException', reason: 'from the handler'"), "\(text)")
        }

        @Test func withoutAHandlerRaisingStillEndsTheProcess() async {
            let text = Self.standardError(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                NSException(name: .genericException, reason: nil).raise()
            })
            #expect(text.contains("Terminating app due to uncaught exception 'NSGenericException'"), "\(text)")
            #expect(!text.contains("reason:"), "\(text)")
        }

        @Test func theHandlerSetIsTheOneGivenBackAndNilRemovesIt() async {
            await #expect(processExitsWith: .success) {
                guard NSGetUncaughtExceptionHandler() == nil else { exit(2) }
                NSSetUncaughtExceptionHandler { _ in }
                guard NSGetUncaughtExceptionHandler() != nil else { exit(3) }
                NSSetUncaughtExceptionHandler(nil)
                guard NSGetUncaughtExceptionHandler() == nil else { exit(4) }
            }
        }
    }
}
