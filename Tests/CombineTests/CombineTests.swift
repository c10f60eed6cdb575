import Combine
import Foundation
import Testing

/// A scheduler on virtual time, so that time operators are tested without waiting.
/// Not thread-safe: the tests drive it from one thread.
final class VirtualScheduler: Scheduler, @unchecked Sendable {
    struct SchedulerTimeType: Strideable, Hashable {
        var nanoseconds: Int
        func distance(to other: SchedulerTimeType) -> SchedulerStride { .nanoseconds(other.nanoseconds - nanoseconds) }
        func advanced(by n: SchedulerStride) -> SchedulerTimeType { SchedulerTimeType(nanoseconds: nanoseconds + n.magnitude) }
    }
    typealias SchedulerOptions = Never
    private(set) var now = SchedulerTimeType(nanoseconds: 0)
    var minimumTolerance: SchedulerStride { .zero }
    private var queue: [(at: Int, order: Int, action: () -> Void)] = []
    private var order = 0

    func schedule(options: Never?, _ action: @escaping () -> Void) { enqueue(at: now.nanoseconds, action) }
    func schedule(after date: SchedulerTimeType, tolerance: SchedulerStride, options: Never?, _ action: @escaping () -> Void) {
        enqueue(at: date.nanoseconds, action)
    }
    func schedule(after date: SchedulerTimeType, interval: SchedulerStride, tolerance: SchedulerStride, options: Never?,
                  _ action: @escaping () -> Void) -> any Cancellable {
        var cancelled = false
        func fire(at time: Int) {
            enqueue(at: time) { [weak self] in
                guard !cancelled, let self else { return }
                action()
                fire(at: self.now.nanoseconds + interval.magnitude)
            }
        }
        fire(at: date.nanoseconds)
        return AnyCancellable { cancelled = true }
    }

    private func enqueue(at time: Int, _ action: @escaping () -> Void) {
        order += 1
        queue.append((max(time, now.nanoseconds), order, action))
    }

    /// Runs everything due within `stride`, in time order.
    func advance(by stride: SchedulerStride = .zero) {
        let end = now.nanoseconds + stride.magnitude
        while let next = queue.enumerated().filter({ $0.element.at <= end }).min(by: { ($0.element.at, $0.element.order) < ($1.element.at, $1.element.order) }) {
            queue.remove(at: next.offset)
            now = SchedulerTimeType(nanoseconds: next.element.at)
            next.element.action()
        }
        now = SchedulerTimeType(nanoseconds: end)
    }
}

/// A subscriber that asks for a fixed number of values and records what it gets.
final class Recorder<Input, Failure: Error>: Subscriber, @unchecked Sendable {
    private let initialDemand: Subscribers.Demand
    private(set) var values: [Input] = []
    private(set) var completions: [Subscribers.Completion<Failure>] = []
    private(set) var subscription: (any Subscription)?
    init(demand: Subscribers.Demand) { initialDemand = demand }
    func receive(subscription: any Subscription) {
        self.subscription = subscription
        subscription.request(initialDemand)
    }
    func receive(_ input: Input) -> Subscribers.Demand {
        values.append(input)
        return .none
    }
    func receive(completion: Subscribers.Completion<Failure>) { completions.append(completion) }
}

enum TestError: Error, Equatable { case broken, other }

/// A box a sink writes into (tests run their closures synchronously on one thread).
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

@Suite struct CombineCore {
    @Test func demandIsCountedAndSaturates() {
        #expect(Subscribers.Demand.max(2) + .max(3) == .max(5))
        #expect(Subscribers.Demand.unlimited + .max(3) == .unlimited)
        #expect(Subscribers.Demand.max(Int.max) + .max(1) == .unlimited)
        #expect(Subscribers.Demand.max(1) - .max(3) == .none)
        #expect(Subscribers.Demand.unlimited - .max(3) == .unlimited)
        #expect(Subscribers.Demand.max(-4) == .none)
        #expect(Subscribers.Demand.max(7) < .unlimited && Subscribers.Demand.max(7).max == 7 && Subscribers.Demand.unlimited.max == nil)
    }

    @Test func aSubscriberGetsOnlyWhatItAskedFor() {
        let recorder = Recorder<Int, Never>(demand: .max(2))
        [1, 2, 3, 4].publisher.subscribe(recorder)
        #expect(recorder.values == [1, 2] && recorder.completions.isEmpty)
        recorder.subscription?.request(.max(5))
        #expect(recorder.values == [1, 2, 3, 4] && recorder.completions.count == 1)
    }

    @Test func sinkAndCancellation() {
        let subject = PassthroughSubject<Int, TestError>()
        let got = Box<[Int]>([]), ended = Box<[Subscribers.Completion<TestError>]>([])
        let cancellable = subject.sink(receiveCompletion: { ended.value.append($0) }, receiveValue: { got.value.append($0) })
        subject.send(1)
        subject.send(2)
        cancellable.cancel()
        subject.send(3)
        subject.send(completion: .failure(.broken))
        #expect(got.value == [1, 2] && ended.value.isEmpty, "nothing after cancel")
    }

    @Test func anAnyCancellableCancelsWhenReleased() {
        let subject = PassthroughSubject<Int, Never>()
        let got = Box<[Int]>([])
        var bag = Set<AnyCancellable>()
        subject.sink { got.value.append($0) }.store(in: &bag)
        subject.send(1)
        bag.removeAll()
        subject.send(2)
        #expect(got.value == [1])
    }

    @Test func aSubjectDropsValuesForASubscriberThatAskedForNone() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>(demand: .none)
        subject.subscribe(recorder)
        subject.send(1)
        recorder.subscription?.request(.max(1))
        subject.send(2)
        subject.send(3)
        #expect(recorder.values == [2])
    }

    @Test func anEndedSubjectCompletesLaterSubscribersAtOnce() {
        let subject = PassthroughSubject<Int, TestError>()
        subject.send(completion: .failure(.broken))
        let recorder = Recorder<Int, TestError>(demand: .unlimited)
        subject.subscribe(recorder)
        #expect(recorder.completions == [.failure(.broken)])
    }

    @Test func aCurrentValueSubjectGivesItsValueFirst() {
        let subject = CurrentValueSubject<String, Never>("a")
        let got = Box<[String]>([])
        let c = subject.sink { got.value.append($0) }
        subject.value = "b"
        subject.send("c")
        subject.send(completion: .finished)
        subject.send("d")
        #expect(got.value == ["a", "b", "c"] && subject.value == "c")
        c.cancel()
    }

    @Test func justEmptyFailFutureAndDeferred() {
        let got = Box<[Int]>([])
        let ended = Box<Int>(0)
        _ = Just(1).sink(receiveCompletion: { _ in ended.value += 1 }, receiveValue: { got.value.append($0) })
        _ = Empty<Int, Never>().sink(receiveCompletion: { _ in ended.value += 1 }, receiveValue: { got.value.append($0) })
        let failed = Box<TestError?>(nil)
        _ = Fail<Int, TestError>(error: .broken).sink(receiveCompletion: { if case .failure(let e) = $0 { failed.value = e } }, receiveValue: { _ in })
        let runs = Box(0)
        let promise = Box<((Result<Int, Never>) -> Void)?>(nil)
        let future = Future<Int, Never> { fulfil in runs.value += 1; promise.value = fulfil }
        let waiting = future.sink { got.value.append($0) }
        promise.value?(.success(7))
        promise.value?(.success(8))
        _ = future.sink { got.value.append($0) }
        _ = waiting
        let made = Box(0)
        let deferred = Deferred { () -> Just<Int> in made.value += 1; return Just(9) }
        #expect(made.value == 0)
        _ = deferred.sink { got.value.append($0) }
        #expect(got.value == [1, 7, 7, 9] && ended.value == 2 && failed.value == .broken)
        #expect(runs.value == 1 && made.value == 1, "a future runs once, at once; deferred at subscription")
    }
}

@Suite struct CombineOperators {
    @Test func stepOperators() {
        let got = Box<[String]>([])
        _ = [1, 2, 2, 3, nil, 4, 4, 5].publisher
            .compactMap { $0 }
            .removeDuplicates()
            .filter { $0 != 3 }
            .dropFirst()
            .map { "n\($0)" }
            .prefix(3)
            .sink { got.value.append($0) }
        #expect(got.value == ["n2", "n4", "n5"])
        let sums = Box<[Int]>([])
        _ = [1, 2, 3].publisher.scan(0, +).sink { sums.value.append($0) }
        _ = [1, 2, 3].publisher.collect().sink { sums.value.append($0.count) }
        #expect(sums.value == [1, 3, 6, 3])
    }

    @Test func errorsAreMappedCaughtAndReplaced() {
        let subject = PassthroughSubject<Int, TestError>()
        let got = Box<[Int]>([])
        let c = subject.tryMap { value -> Int in
            if value < 0 { throw TestError.other }
            return value * 10
        }
        .mapError { ($0 as? TestError) ?? .broken }
        .catch { _ in Just(-1) }
        .sink { got.value.append($0) }
        subject.send(1)
        subject.send(-5)
        subject.send(2)
        _ = Fail<Int, TestError>(error: .broken).replaceError(with: 0).sink { got.value.append($0) }
        #expect(got.value == [10, -1, 0], "the catch's publisher ends it: 2 is not seen")
        _ = c
    }

    @Test func decodeFailsOnBadInput() {
        struct Item: Decodable, Equatable { let id: Int }
        let got = Box<[Item]>([]), failed = Box(false)
        _ = [Data(#"{"id": 3}"#.utf8), Data("not json".utf8)].publisher
            .decode(type: Item.self, decoder: JSONDecoder())
            .sink(receiveCompletion: { if case .failure = $0 { failed.value = true } }, receiveValue: { got.value.append($0) })
        #expect(got.value == [Item(id: 3)] && failed.value)
    }

    @Test func flatMapMergeCombineLatestAndSwitchToLatest() {
        let got = Box<[String]>([])
        let ended = Box(0)
        _ = [1, 2].publisher.flatMap { n in [n, n * 10].publisher }
            .sink(receiveCompletion: { _ in ended.value += 1 }, receiveValue: { got.value.append("f\($0)") })
        let a = PassthroughSubject<Int, Never>(), b = PassthroughSubject<Int, Never>()
        let merged = a.merge(with: b).sink(receiveCompletion: { _ in ended.value += 1 }, receiveValue: { got.value.append("m\($0)") })
        a.send(1); b.send(2)
        a.send(completion: .finished)
        #expect(ended.value == 1, "merge ends when both ended")
        b.send(completion: .finished)
        let x = PassthroughSubject<Int, Never>(), y = PassthroughSubject<String, Never>()
        let combined = x.combineLatest(y).sink { got.value.append("c\($0)\($1)") }
        x.send(1); x.send(2); y.send("a"); x.send(3)
        let outer = PassthroughSubject<PassthroughSubject<Int, Never>, Never>()
        let first = PassthroughSubject<Int, Never>(), second = PassthroughSubject<Int, Never>()
        let switched = outer.switchToLatest().sink { got.value.append("s\($0)") }
        outer.send(first); first.send(1)
        outer.send(second); first.send(2); second.send(3)
        #expect(got.value == ["f1", "f10", "f2", "f20", "m1", "m2", "c2a", "c3a", "s1", "s3"])
        #expect(ended.value == 2)
        _ = (merged, combined, switched)
    }

    @Test func shareSubscribesOnce() {
        let subscriptions = Box(0)
        let subject = PassthroughSubject<Int, Never>()
        let shared = subject.handleEvents(receiveSubscription: { _ in subscriptions.value += 1 }).share()
        let got = Box<[Int]>([])
        let one = shared.sink { got.value.append($0) }, two = shared.sink { got.value.append($0 * 100) }
        subject.send(1)
        #expect(subscriptions.value == 1 && got.value == [1, 100])
        _ = (one, two)
    }

    @Test func multicastAndMakeConnectableStartWhenConnected() {
        let subscriptions = Box(0)
        let made = Box(0)
        let multicast = [1, 2, 3].publisher
            .handleEvents(receiveSubscription: { _ in subscriptions.value += 1 })
            .multicast { () -> PassthroughSubject<Int, Never> in
                made.value += 1
                return PassthroughSubject()
            }
        let got = Box<[Int]>([])
        let one = multicast.sink { got.value.append($0) }, two = multicast.sink { got.value.append($0 * 10) }
        #expect(got.value.isEmpty && subscriptions.value == 0, "nothing before connect")
        let connection = multicast.connect()
        #expect(got.value == [1, 10, 2, 20, 3, 30] && subscriptions.value == 1 && made.value == 1)

        let subject = PassthroughSubject<String, Never>()
        let connectable = subject.makeConnectable()
        let words = Box<[String]>([])
        let three = connectable.sink { words.value.append($0) }
        subject.send("early")
        let started = connectable.connect()
        subject.send("late")
        started.cancel()
        subject.send("after")
        #expect(words.value == ["late"])
        let auto = subject.makeConnectable().autoconnect().sink { words.value.append($0 + "!") }
        subject.send("auto")
        #expect(words.value == ["late", "auto!"])
        _ = (one, two, three, connection, auto, multicast.multicast(subject: PassthroughSubject<Int, Never>()))
    }
}

/// Calls into one subscriber of a subject come one at a time, as Apple's subjects take a lock
/// per downstream (an outside thread probe: eight threads sending delivered to one sink at
/// once, `prefix(1000)` gave 1,325 values, and a value came after the completion).
@Suite struct CombineSubjectsFromSeveralThreads {
    /// How many calls are inside the subscriber at once, and the most there ever were.
    final class Overlap: @unchecked Sendable {
        // @unchecked: every field is read and written under `lock`.
        private let lock = NSLock()
        private var inside = 0
        private var deepest = 0
        private var flag = false
        private var count = 0
        func enter() { lock.withLock { inside += 1; deepest = max(deepest, inside) } }
        func leave() { lock.withLock { inside -= 1 } }
        var most: Int { lock.withLock { deepest } }
        /// A flag and a count beside it, for the completion test.
        func set() { lock.withLock { flag = true } }
        var isSet: Bool { lock.withLock { flag } }
        func add() { lock.withLock { count += 1 } }
        var added: Int { lock.withLock { count } }
    }

    @Test func sendsFromEightThreadsReachEachSubscriberOneAtATime() {
        let subject = PassthroughSubject<Int, Never>()
        let overlap = Overlap()
        let plain = Box(0)  // not locked: safe only if the sink is never entered twice at once
        let sink = subject.sink { _ in
            overlap.enter()
            plain.value += 1
            overlap.leave()
        }
        let taken = Box(0)
        let firstThousand = subject.prefix(1_000).sink { _ in taken.value += 1 }
        let stepped = Box(0)
        let scanned = subject.scan(0) { count, _ in count + 1 }.sink { stepped.value = $0 }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for value in 0..<5_000 { subject.send(value) }
        }
        #expect(overlap.most == 1)
        #expect(plain.value == 40_000)
        #expect(taken.value == 1_000)
        #expect(stepped.value == 40_000)
        withExtendedLifetime((sink, firstThousand, scanned)) {}
    }

    /// A subscriber that records its calls (a sink drops a value that comes after its
    /// completion, so it could not see one).
    final class Recorder: Subscriber, @unchecked Sendable {
        // @unchecked: `events` is read and written under `lock`.
        typealias Input = Int
        typealias Failure = Never
        private let lock = NSLock()
        private var events: [String] = []
        let overlap = Overlap()
        func receive(subscription: any Subscription) {
            overlap.enter()
            lock.withLock { events.append("subscription") }
            subscription.request(.unlimited)
            overlap.leave()
        }
        func receive(_ input: Int) -> Subscribers.Demand {
            overlap.enter()
            lock.withLock { events.append("value") }
            overlap.leave()
            return .none
        }
        func receive(completion: Subscribers.Completion<Never>) {
            overlap.enter()
            lock.withLock { events.append("completion") }
            overlap.leave()
        }
        var recorded: [String] { lock.withLock { events } }
    }

    @Test func noValueFollowsTheCompletionNorRunsBesideIt() {
        for _ in 0..<300 {
            let subject = PassthroughSubject<Int, Never>()
            let recorder = Recorder()
            subject.subscribe(recorder)
            DispatchQueue.concurrentPerform(iterations: 3) { thread in
                if thread == 2 {
                    subject.send(completion: .finished)
                } else {
                    for value in 0..<20 { subject.send(value) }
                }
            }
            let events = recorder.recorded
            #expect(events.first == "subscription" && events.last == "completion" && events.filter { $0 == "completion" }.count == 1, "\(events)")
            #expect(recorder.overlap.most == 1)
        }
    }

    @Test func aSubscriberAttachedWhileTheSubjectEndsGetsItsSubscriptionFirst() {
        for _ in 0..<300 {
            let subject = PassthroughSubject<Int, Never>()
            let recorder = Recorder()
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                if thread == 0 { subject.subscribe(recorder) } else { subject.send(completion: .finished) }
            }
            let events = recorder.recorded
            #expect(events == ["subscription", "completion"], "\(events)")
        }
    }

    @Test func aSubscriberMaySendIntoItsSubjectFromItsOwnReceive() {
        let subject = CurrentValueSubject<Int, Never>(0)
        let seen = Box<[Int]>([])
        let sink = subject.sink { value in
            seen.value.append(value)
            if value < 3 { subject.send(value + 1) }
        }
        #expect(seen.value == [0, 1, 2, 3])
        withExtendedLifetime(sink) {}
    }
}

@Suite struct CombineReviewedCases {
    final class Token: @unchecked Sendable {}

    @Test func aPendingFutureGivesItsSubscriptionAtOnceAndForgetsACancelledSubscriber() {
        let promise = Box<((Result<Int, Never>) -> Void)?>(nil)
        let future = Future<Int, Never> { promise.value = $0 }
        let cancelled = Box(false), got = Box<[Int]>([])
        weak var released: Token?
        var c: AnyCancellable?
        do {
            let token = Token()
            released = token
            c = future.handleEvents(receiveCancel: { cancelled.value = true }).sink { _ in withExtendedLifetime(token) { got.value.append(1) } }
        }
        c?.cancel()
        #expect(cancelled.value, "cancellation reaches a pending future's subscription (a data task is cancelled)")
        #expect(released == nil, "the cancelled subscriber is not kept until the result")
        promise.value?(.success(1))
        #expect(got.value.isEmpty)
    }

    @Test func switchToLatestIgnoresAnInnerItSwitchedAwayFrom() {
        let outer = PassthroughSubject<Future<String, Never>, Never>()
        let first = Box<((Result<String, Never>) -> Void)?>(nil), second = Box<((Result<String, Never>) -> Void)?>(nil)
        let got = Box<[String]>([])
        let c = outer.switchToLatest().sink { got.value.append($0) }
        outer.send(Future { first.value = $0 })
        outer.send(Future { second.value = $0 })
        first.value?(.success("stale"))
        second.value?(.success("fresh"))
        #expect(got.value == ["fresh"])
        c.cancel()
    }

    /// Apple's iOS 14 overloads: a publisher that never fails flat-maps into one that may
    /// (a timer polling a request), one that may into one that never does, and neither.
    @Test func flatMapAcrossFailureTypes() {
        struct Offline: Error {}
        let got = Box<[String]>([])
        let timer = PassthroughSubject<Int, Never>()
        let polling = timer.flatMap { tick -> AnyPublisher<String, Offline> in
            tick == 2 ? Fail(error: Offline()).eraseToAnyPublisher() : Just("page \(tick)").setFailureType(to: Offline.self).eraseToAnyPublisher()
        }.sink(receiveCompletion: { if case .failure = $0 { got.value.append("offline") } }, receiveValue: { got.value.append($0) })
        timer.send(1)
        timer.send(2)
        timer.send(3)
        #expect(got.value == ["page 1", "offline"], "a failure of the made publisher ends it")
        got.value = []
        let requests = PassthroughSubject<Int, Offline>()
        let cached = requests.flatMap { Just($0 * 10) }.sink(receiveCompletion: { _ in got.value.append("end") }, receiveValue: { got.value.append("\($0)") })
        requests.send(1)
        requests.send(completion: .failure(Offline()))
        #expect(got.value == ["10", "end"])
        got.value = []
        let plain = [1, 2].publisher.flatMap { Just($0 + 1) }.sink { got.value.append("\($0)") }
        #expect(got.value == ["2", "3"])
        _ = (polling, cached, plain)
    }

    @Test func flatMapFollowsAtMostMaxPublishersAtOnce() {
        let inners = [PassthroughSubject<Int, Never>(), PassthroughSubject<Int, Never>()]
        let got = Box<[Int]>([])
        let c = inners.publisher.flatMap(maxPublishers: .max(1)) { $0 }.sink { got.value.append($0) }
        inners[1].send(20)
        inners[0].send(1)
        inners[0].send(completion: .finished)
        inners[1].send(21)
        #expect(got.value == [1, 21], "the second is subscribed to only when the first finished")
        c.cancel()
    }

    @Test func aCurrentValueSubjectGivesTheLatestValueWhenDemandComesBack() {
        let subject = CurrentValueSubject<Int, Never>(0)
        let recorder = Recorder<Int, Never>(demand: .max(1))
        subject.subscribe(recorder)
        subject.send(1)
        subject.send(2)
        recorder.subscription?.request(.max(1))
        #expect(recorder.values == [0, 2])
    }

    @Test func shareCancelsItsUpstreamWhenTheLastSubscriberLeaves() {
        let upstreamCancels = Box(0)
        let shared = PassthroughSubject<Int, Never>().handleEvents(receiveCancel: { upstreamCancels.value += 1 }).share()
        let one = shared.sink { _ in }, two = shared.sink { _ in }
        one.cancel()
        #expect(upstreamCancels.value == 0)
        two.cancel()
        #expect(upstreamCancels.value == 1)
    }

    @Test func aSequencePublisherIsLazy() {
        let got = Box<[Int]>([])
        // Finite, so that an eager publisher fails here instead of running for ever.
        let pulled = Box(0)
        let numbers = (1...1_000_000).lazy.map { number -> Int in
            pulled.value += 1
            return number
        }
        _ = numbers.publisher.prefix(3).sink { got.value.append($0) }
        #expect(got.value == [1, 2, 3])
        #expect(pulled.value <= 4, "pulled \(pulled.value) elements for 3")
    }

    @Test func mergeTakesAnyPublisherOfTheSameTypes() {
        let got = Box<[Int]>([])
        let subject = PassthroughSubject<Int, Never>()
        let c = subject.merge(with: Just(0)).sink { got.value.append($0) }
        subject.send(1)
        #expect(got.value == [0, 1])
        c.cancel()
    }

    final class Detail: @unchecked Sendable {
        var watching: AnyCancellable?
        deinit { watching?.cancel() }
    }
    final class Parent: ObservableObject {
        @Published var detail: Detail?
    }

    @Test func anOldValueWhoseDeinitCancelsASubscriptionToTheSamePropertyDoesNotDeadlock() {
        // On a thread of its own, waited for at most 10 s: a deadlock fails the test instead
        // of hanging the run (the stuck thread is left behind).
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            Self.replaceValuesWhoseDeinitCancels()
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 10) == .success, "deadlocked: a value released under the property's lock cancelled a subscription to it")
    }

    private static func replaceValuesWhoseDeinitCancels() {
        let parent = Parent()
        weak var replaced: Detail?
        do {
            let first = Detail()
            first.watching = parent.$detail.sink { _ in }
            parent.detail = first
            replaced = first
        }
        parent.detail = Detail()  // the first one's deinit runs here, cancelling its sink
        #expect(replaced == nil && parent.detail != nil)
        let subject = CurrentValueSubject<Detail?, Never>(nil)
        weak var sent: Detail?
        do {
            let held = Detail()
            held.watching = subject.sink { _ in }
            subject.send(held)
            sent = held
        }
        subject.send(nil)
        #expect(sent == nil)
    }
}

@Suite struct CombineTime {
    @Test func receiveOnDeliversOnTheScheduler() {
        let scheduler = VirtualScheduler()
        let got = Box<[Int]>([])
        let c = [1, 2].publisher.receive(on: scheduler).sink { got.value.append($0) }
        #expect(got.value.isEmpty)
        scheduler.advance()
        #expect(got.value == [1, 2])
        c.cancel()
    }

    @Test func debounceSendsTheLastOfABurst() {
        let scheduler = VirtualScheduler()
        let subject = PassthroughSubject<String, Never>()
        let got = Box<[String]>([])
        let c = subject.debounce(for: .milliseconds(300), scheduler: scheduler).sink { got.value.append($0) }
        subject.send("s"); scheduler.advance(by: .milliseconds(100))
        subject.send("sw"); scheduler.advance(by: .milliseconds(100))
        subject.send("swi"); scheduler.advance(by: .milliseconds(299))
        #expect(got.value.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        subject.send("x")
        subject.send(completion: .finished)
        scheduler.advance(by: .milliseconds(500))
        #expect(got.value == ["swi"], "a value pending when the upstream finishes is dropped, as Apple's debounce drops it")
        c.cancel()
    }

    @Test func debounceOfAFinishedSequenceSendsOnlyTheCompletion() {
        // An outside probe: [1, 2, 3].publisher.debounce(...) sent 3, then finished; Apple's
        // sends the completion alone (OpenCombine's compatibility tests, testFailBeforeDue).
        let scheduler = VirtualScheduler()
        let got = Box<[String]>([])
        let c = [1, 2, 3].publisher.debounce(for: .milliseconds(200), scheduler: scheduler)
            .sink(receiveCompletion: { _ in got.value.append("finished") }) { got.value.append("\($0)") }
        scheduler.advance(by: .seconds(1))
        #expect(got.value == ["finished"])
        c.cancel()
    }

    @Test func namedZipsPairTheNthValuesOfEachSide() {
        let a = PassthroughSubject<Int, Never>(), b = PassthroughSubject<String, Never>(), c = PassthroughSubject<Bool, Never>()
        let pairs = Box<[String]>([])
        let triples = Box<[String]>([])
        let finished = Box(false)
        let p = Publishers.Zip(a, b).sink { pairs.value.append("\($0)\($1)") }
        let t = a.zip(b, c).sink(receiveCompletion: { _ in finished.value = true }) { triples.value.append("\($0)\($1)\($2)") }
        a.send(1); a.send(2)
        b.send("x")
        c.send(true)
        b.send("y")
        #expect(pairs.value == ["1x", "2y"])
        #expect(triples.value == ["1xtrue"])
        c.send(false)
        #expect(triples.value == ["1xtrue", "2yfalse"])
        a.send(completion: .finished)
        #expect(finished.value, "a side that finished with nothing left to pair ends it")
        let four = Box<[Int]>([])
        let q = Just(1).zip(Just(2), Just(3), Just(4)).sink { four.value = [$0, $1, $2, $3] }
        #expect(four.value == [1, 2, 3, 4])
        let summed = Box<Int>(0)
        let s = Just(20).zip(Just(22)) { $0 + $1 }.sink { summed.value = $0 }
        #expect(summed.value == 42)
        p.cancel(); t.cancel(); q.cancel(); s.cancel()
    }

    @Test func collectByTimeGroupsWhatCameInEachInterval() {
        let scheduler = VirtualScheduler()
        let subject = PassthroughSubject<Int, Never>()
        let got = Box<[[Int]]>([])
        let finished = Box(false)
        let c = subject.collect(.byTime(scheduler, .seconds(1))).sink(receiveCompletion: { _ in finished.value = true }) { got.value.append($0) }
        subject.send(1); subject.send(2)
        scheduler.advance(by: .milliseconds(999))
        #expect(got.value.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        #expect(got.value == [[1, 2]])
        // An interval without values publishes nothing.
        scheduler.advance(by: .seconds(1))
        #expect(got.value == [[1, 2]])
        subject.send(3)
        subject.send(completion: .finished)
        scheduler.advance()
        #expect(got.value == [[1, 2], [3]], "what is held goes out before the end")
        #expect(finished.value)
        c.cancel()
    }

    @Test func collectByTimeOrCountPublishesAFullBatchAtOnce() {
        let scheduler = VirtualScheduler()
        let subject = PassthroughSubject<Int, TestError>()
        let got = Box<[[Int]]>([])
        let failure = Box<TestError?>(nil)
        let c = subject.collect(.byTimeOrCount(scheduler, .seconds(10), 3)).sink(receiveCompletion: { completion in
            if case .failure(let error) = completion { failure.value = error }
        }) { got.value.append($0) }
        for value in 1...7 { subject.send(value) }
        scheduler.advance()
        #expect(got.value == [[1, 2, 3], [4, 5, 6]])
        scheduler.advance(by: .seconds(10))
        #expect(got.value == [[1, 2, 3], [4, 5, 6], [7]])
        subject.send(8)
        subject.send(completion: .failure(.broken))
        scheduler.advance()
        #expect(got.value.count == 3, "a failure drops what is held")
        #expect(failure.value == .broken)
        c.cancel()
    }

    @Test func cancellingACollectByTimeStopsItsTimer() {
        let scheduler = VirtualScheduler()
        let subject = PassthroughSubject<Int, Never>()
        let got = Box<[[Int]]>([])
        let c = subject.collect(.byTime(scheduler, .seconds(1))).sink { got.value.append($0) }
        subject.send(1)
        c.cancel()
        subject.send(2)
        scheduler.advance(by: .seconds(5))
        #expect(got.value.isEmpty)
    }

    @Test func throttleSendsAtMostOnePerInterval() {
        let scheduler = VirtualScheduler()
        let subject = PassthroughSubject<Int, Never>()
        let got = Box<[Int]>([])
        let c = subject.throttle(for: 1.0, scheduler: scheduler, latest: true).sink { got.value.append($0) }
        subject.send(1); scheduler.advance()
        subject.send(2); subject.send(3)
        scheduler.advance(by: .seconds(1))
        scheduler.advance(by: .seconds(1))
        subject.send(4)
        scheduler.advance()
        #expect(got.value == [1, 3, 4])
        c.cancel()
    }

    @Test func delayMovesValuesAndTheEnd() {
        let scheduler = VirtualScheduler()
        let got = Box<[Int]>([]), ended = Box(false)
        let c = Just(5).delay(for: .seconds(2), scheduler: scheduler).sink(receiveCompletion: { _ in ended.value = true }, receiveValue: { got.value.append($0) })
        scheduler.advance(by: .seconds(1))
        #expect(got.value.isEmpty && !ended.value)
        scheduler.advance(by: .seconds(1))
        #expect(got.value == [5] && ended.value)
        c.cancel()
    }

    @Test func strideLiteralsAreSeconds() {
        let half: SchedulerStride = 0.5
        #expect(half == .milliseconds(500) && SchedulerStride(integerLiteral: 2) == .seconds(2))
        #expect(DispatchQueue.SchedulerTimeType.Stride.seconds(Double.infinity).magnitude == Int.max, "no trap on a huge interval")
        #expect(RunLoop.SchedulerTimeType(Date(timeIntervalSince1970: 0)).advanced(by: .seconds(90)).date == Date(timeIntervalSince1970: 90))
    }
}

@Suite struct CombineObservable {
    final class Store: ObservableObject {
        @Published var items: [String] = []
        @Published var count = 0
        @Published var mirrored = 0
        init(counts: PassthroughSubject<Int, Never>) { counts.assign(to: &$mirrored) }
    }

    @Test func publishedSendsTheCurrentValueThenEachNewOneBeforeTheChange() {
        let counts = PassthroughSubject<Int, Never>()
        let store = Store(counts: counts)
        let seen = Box<[[String]]>([]), storedWhenSent = Box<[[String]]>([])
        let willChange = Box(0)
        let a = store.objectWillChange.sink { willChange.value += 1 }
        let b = store.$items.sink { [unowned store] in seen.value.append($0); storedWhenSent.value.append(store.items) }
        store.items.append("a")
        store.items = ["b"]
        #expect(seen.value == [[], ["a"], ["b"]])
        #expect(storedWhenSent.value == [[], [], ["a"]], "sent before the property changes, as willSet")
        #expect(willChange.value == 2)
        counts.send(4)
        #expect(store.mirrored == 4 && willChange.value == 3)
        _ = (a, b)
    }

    @Test func assignWritesAProperty() {
        final class Target { var text = "" }
        let target = Target()
        let subject = PassthroughSubject<String, Never>()
        let c = subject.assign(to: \.text, on: target)
        subject.send("hello")
        #expect(target.text == "hello")
        c.cancel()
        subject.send("ignored")
        #expect(target.text == "hello")
    }

    @Test func notificationsArePublishedUntilCancelled() {
        let center = NotificationCenter()
        let name = Notification.Name("com.example.refreshed")
        let got = Box(0)
        let c = center.publisher(for: name).sink { _ in got.value += 1 }
        center.post(name: name, object: nil)
        c.cancel()
        center.post(name: name, object: nil)
        #expect(got.value == 1)
    }

    @Test func valuesIterateAPublisher() async {
        let subject = PassthroughSubject<Int, Never>()
        var iterator = subject.values.makeAsyncIterator()
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        var got: [Int] = []
        while let value = await iterator.next() { got.append(value) }
        #expect(got == [1, 2])
    }
}

@Suite struct CombineMoreOperators {
    @Test func retryResubscribesAfterAFailure() {
        let attempts = Box(0)
        let got = Box<[Int]>([]), failed = Box(false)
        _ = Deferred { () -> AnyPublisher<Int, TestError> in
            attempts.value += 1
            return attempts.value < 3 ? Fail(error: .broken).eraseToAnyPublisher() : Just(7).setFailureType(to: TestError.self).eraseToAnyPublisher()
        }
        .retry(5)
        .sink(receiveCompletion: { if case .failure = $0 { failed.value = true } }, receiveValue: { got.value.append($0) })
        #expect(attempts.value == 3 && got.value == [7] && !failed.value)
        attempts.value = -10
        _ = Fail<Int, TestError>(error: .other).retry(2).sink(receiveCompletion: { if case .failure = $0 { failed.value = true } }, receiveValue: { _ in })
        #expect(failed.value)
    }

    @Test func prependAppendZipAndFolds() {
        let got = Box<[String]>([])
        _ = [2, 3].publisher.prepend(1).append(4).sink { got.value.append("\($0)") }
        let a = PassthroughSubject<Int, Never>(), b = PassthroughSubject<String, Never>()
        let zipped = a.zip(b).sink { got.value.append("z\($0)\($1)") }
        a.send(1); a.send(2); b.send("x"); b.send("y"); b.send("z")
        _ = [1, 2, 3].publisher.reduce(0, +).sink { got.value.append("r\($0)") }
        _ = [1, 2, 3].publisher.count().sink { got.value.append("c\($0)") }
        _ = [1, 2, 3].publisher.last().sink { got.value.append("l\($0)") }
        _ = [1, 2, 3].publisher.contains(2).sink { got.value.append("h\($0)") }
        _ = Empty<Int, Never>().replaceEmpty(with: 9).sink { got.value.append("e\($0)") }
        #expect(got.value == ["1", "2", "3", "4", "z1x", "z2y", "r6", "c3", "l3", "htrue", "e9"])
        zipped.cancel()
    }

    @Test func timeoutEndsASilentPublisher() {
        let scheduler = VirtualScheduler()
        let subject = PassthroughSubject<Int, TestError>()
        let got = Box<[Int]>([]), ended = Box<Subscribers.Completion<TestError>?>(nil)
        let c = subject.timeout(.seconds(5), scheduler: scheduler, customError: { .broken })
            .sink(receiveCompletion: { ended.value = $0 }, receiveValue: { got.value.append($0) })
        scheduler.advance(by: .seconds(4))
        subject.send(1)
        #expect(got.value.isEmpty, "given on the scheduler")
        scheduler.advance(by: .seconds(4))
        #expect(ended.value == nil, "a value restarts the wait")
        scheduler.advance(by: .seconds(1))
        #expect(got.value == [1] && ended.value == .failure(.broken))
        c.cancel()
    }

    @Test func tryFilterAndPrint() {
        final class Stream: TextOutputStream, @unchecked Sendable { var text = ""; func write(_ string: String) { text += string } }
        let failed = Box(false), got = Box<[Int]>([])
        _ = [1, 2, 3].publisher.tryFilter { value in
            if value == 3 { throw TestError.broken }
            return value > 1
        }.sink(receiveCompletion: { if case .failure = $0 { failed.value = true } }, receiveValue: { got.value.append($0) })
        #expect(got.value == [2] && failed.value)
        let stream = Stream()
        _ = Just(5).print("p", to: stream).sink { _ in }
        #expect(stream.text.contains("p: receive value: (5)") && stream.text.contains("p: receive finished"))
    }
}

@Suite struct CombineNamedPublishers {
    @Test func mergeAndCombineLatestByTypeAsFormCodeWritesThem() {
        let a = PassthroughSubject<Int, Never>(), b = PassthroughSubject<Int, Never>(), c = PassthroughSubject<Int, Never>()
        let got = Box<[String]>([])
        let merged = Publishers.Merge(a, b).sink { got.value.append("m\($0)") }
        let merged3 = a.merge(with: b, c).sink { got.value.append("3m\($0)") }
        let combined = Publishers.CombineLatest(a, b).map { $0 + $1 }.sink { got.value.append("c\($0)") }
        let combined3 = a.combineLatest(b, c).sink { got.value.append("3c\($0)\($1)\($2)") }
        a.send(1); b.send(2); c.send(3)
        #expect(got.value == ["m1", "3m1", "m2", "3m2", "c3", "3m3", "3c123"])
        _ = (merged, merged3, combined, combined3)
    }

    @Test func bufferKeepsAtMostSizeValuesForASlowSubscriber() {
        let subject = PassthroughSubject<Int, TestError>()
        let oldest = Recorder<Int, TestError>(demand: .none), failing = Recorder<Int, TestError>(demand: .none)
        subject.buffer(size: 2, prefetch: .byRequest, whenFull: .dropOldest).subscribe(oldest)
        subject.buffer(size: 2, prefetch: .byRequest, whenFull: .customError { .broken }).subscribe(failing)
        subject.send(1); subject.send(2); subject.send(3)
        oldest.subscription?.request(.unlimited)
        #expect(oldest.values == [2, 3])
        #expect(failing.completions == [.failure(.broken)])
    }
}
