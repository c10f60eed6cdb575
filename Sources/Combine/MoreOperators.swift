// Less common operators that app code still reaches for (Apple: `retry`, `prepend`,
// `append`, `zip`, `timeout`, `last`, `reduce`, `count`, `contains`, `replaceEmpty`,
// `tryFilter`, `tryCompactMap`, `assertNoFailure`, `print`). They build on the Funnel
// (Combining.swift) and the step publisher (Operators.swift).
import Foundation

extension Publishers {
    /// A publisher that runs `run` for each subscriber with a Funnel to that subscriber: the
    /// shape of the operators here, which follow upstreams and decide what to send.
    public struct Funneled<Output, Failure: Error>: Publisher {
        let run: (Funnel<Output, Failure>) -> Void
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let funnel = Funnel<Output, Failure>(AnySubscriber(subscriber))
            funnel.start()
            run(funnel)
        }
    }
}

extension Publisher {
    /// On failure, subscribes again, at most `retries` times; the values of failed attempts
    /// were sent already.
    public func retry(_ retries: Int) -> Publishers.Funneled<Output, Failure> {
        let upstream = self
        return Publishers.Funneled { funnel in
            let left = Held(max(0, retries))
            func attempt() {
                funnel.follow(upstream) { completion in
                    if case .failure = completion, left.update({ count -> Bool in
                        guard count > 0 else { return false }
                        count -= 1
                        return true
                    }) {
                        attempt()
                    } else {
                        funnel.finish(completion)
                    }
                }
            }
            attempt()
        }
    }

    /// The values of `publisher` first, then this publisher's.
    public func prepend<P: Publisher>(_ publisher: P) -> Publishers.Funneled<Output, Failure> where P.Output == Output, P.Failure == Failure {
        Publishers.concatenate(publisher, self)
    }

    /// `elements` first, then this publisher's values.
    public func prepend(_ elements: Output...) -> Publishers.Funneled<Output, Failure> {
        prepend(elements.publisher.setFailureType(to: Failure.self))
    }

    /// This publisher's values, then those of `publisher`.
    public func append<P: Publisher>(_ publisher: P) -> Publishers.Funneled<Output, Failure> where P.Output == Output, P.Failure == Failure {
        Publishers.concatenate(self, publisher)
    }

    /// This publisher's values, then `elements`.
    public func append(_ elements: Output...) -> Publishers.Funneled<Output, Failure> {
        append(elements.publisher.setFailureType(to: Failure.self))
    }

    /// Pairs of this publisher's and `other`'s values, in order: the n-th of each
    /// (``Publishers/Zip``).
    public func zip<P: Publisher>(_ other: P) -> Publishers.Zip<Self, P> where P.Failure == Failure {
        Publishers.Zip(self, other)
    }

    /// Pairs, transformed.
    public func zip<P: Publisher, T>(_ other: P, _ transform: @escaping (Output, P.Output) -> T) -> Publishers.Step<Publishers.Zip<Self, P>, T, Failure> where P.Failure == Failure {
        zip(other).map(transform)
    }

    /// Triples of this publisher's and two others' values, in order (``Publishers/Zip3``).
    public func zip<B: Publisher, C: Publisher>(_ b: B, _ c: C) -> Publishers.Zip3<Self, B, C> where B.Failure == Failure, C.Failure == Failure {
        Publishers.Zip3(self, b, c)
    }

    /// Quadruples of this publisher's and three others' values, in order (``Publishers/Zip4``).
    public func zip<B: Publisher, C: Publisher, D: Publisher>(_ b: B, _ c: C, _ d: D) -> Publishers.Zip4<Self, B, C, D>
    where B.Failure == Failure, C.Failure == Failure, D.Failure == Failure {
        Publishers.Zip4(self, b, c, d)
    }

    /// The pairing behind ``Publishers/Zip``.
    func pairedFunnel<P: Publisher>(_ other: P) -> Publishers.Funneled<(Output, P.Output), Failure> where P.Failure == Failure {
        let a = self
        return Publishers.Funneled { funnel in
            let queues = Held<(first: [Output], second: [P.Output], firstDone: Bool, secondDone: Bool, pairing: Bool, again: Bool)>(
                ([], [], false, false, false, false))
            /// Pairs what both sides sent, one thread at a time (another thread's call is
            /// served by the loop already running), so pairs reach the funnel in order.
            func pairUp() {
                guard queues.update({ q -> Bool in
                    if q.pairing { q.again = true; return false }
                    q.pairing = true
                    return true
                }) else { return }
                while true {
                    while let pair = queues.update({ q -> (Output, P.Output)? in
                        guard !q.first.isEmpty, !q.second.isEmpty else { return nil }
                        return (q.first.removeFirst(), q.second.removeFirst())
                    }) { funnel.send(pair) }
                    let (more, ended) = queues.update { q -> (Bool, Bool) in
                        let more = q.again
                        q.again = false
                        if !more { q.pairing = false }
                        // A side that finished with nothing left to pair ends the zip.
                        return (more, (q.firstDone && q.first.isEmpty) || (q.secondDone && q.second.isEmpty))
                    }
                    if ended { funnel.finish(.finished) }
                    if !more { return }
                }
            }
            funnel.follow(a, onValue: { value in queues.update { $0.first.append(value) }; pairUp() }, onCompletion: { completion in
                if case .failure = completion { return funnel.finish(completion) }
                queues.update { $0.firstDone = true }
                pairUp()
            })
            funnel.follow(other, onValue: { value in queues.update { $0.second.append(value) }; pairUp() }, onCompletion: { completion in
                if case .failure = completion { return funnel.finish(completion) }
                queues.update { $0.secondDone = true }
                pairUp()
            })
        }
    }

    /// Finishes (or fails with `customError()`) if no value or completion comes within
    /// `interval` of the subscription or of the last value; values and the end are given on
    /// `scheduler`.
    public func timeout<S: Scheduler>(_ interval: S.SchedulerTimeType.Stride, scheduler: S, options: S.SchedulerOptions? = nil,
                                      customError: (() -> Failure)? = nil) -> Publishers.Funneled<Output, Failure> {
        let upstream = self
        return Publishers.Funneled { funnel in
            let generation = Held(0)
            func arm() {
                let mine = generation.update { $0 += 1; return $0 }
                scheduler.schedule(after: scheduler.now.advanced(by: interval), tolerance: scheduler.minimumTolerance, options: options) {
                    guard generation.update({ $0 == mine }) else { return }
                    funnel.finish(customError.map { .failure($0()) } ?? .finished)
                }
            }
            arm()
            // Values and the end are given on `scheduler`, as Apple's timeout gives them.
            funnel.follow(upstream, onValue: { value in
                arm()
                scheduler.schedule(options: options) { funnel.send(value) }
            }, onCompletion: { completion in
                generation.update { $0 += 1 }
                scheduler.schedule(options: options) { funnel.finish(completion) }
            })
        }
    }

    /// The last value, sent when the upstream finishes.
    public func last() -> Publishers.Funneled<Output, Failure> { last { _ in true } }

    /// The last value that passes `predicate`, sent when the upstream finishes.
    public func last(where predicate: @escaping (Output) -> Bool) -> Publishers.Funneled<Output, Failure> {
        let upstream = self
        return Publishers.Funneled { funnel in
            let latest = Held<Output?>(nil)
            funnel.follow(upstream, onValue: { value in
                if predicate(value) { latest.update { $0 = value } }
            }, onCompletion: { completion in
                if case .finished = completion, let value = latest.update({ $0 }) { funnel.send(value) }
                funnel.finish(completion)
            })
        }
    }

    /// Every value folded into one, sent when the upstream finishes.
    public func reduce<T>(_ initialResult: T, _ nextPartialResult: @escaping (T, Output) -> T) -> Publishers.Funneled<T, Failure> {
        let upstream = self
        return Publishers.Funneled { funnel in
            let result = Held(initialResult)
            funnel.follow(upstream, onValue: { value in
                let current = result.update { $0 }
                let next = nextPartialResult(current, value)
                result.update { $0 = next }
            }, onCompletion: { completion in
                if case .finished = completion { funnel.send(result.update { $0 }) }
                funnel.finish(completion)
            })
        }
    }

    /// How many values came, sent when the upstream finishes.
    public func count() -> Publishers.Funneled<Int, Failure> { reduce(0) { count, _ in count + 1 } }

    /// True at the first value that passes `predicate` (then finished), false if none did.
    public func contains(where predicate: @escaping (Output) -> Bool) -> Publishers.Funneled<Bool, Failure> {
        let upstream = self
        return Publishers.Funneled { funnel in
            funnel.follow(upstream, onValue: { value in
                guard predicate(value) else { return }
                funnel.send(true)
                funnel.finish(.finished)
            }, onCompletion: { completion in
                if case .finished = completion { funnel.send(false) }
                funnel.finish(completion)
            })
        }
    }

    /// `output` if the upstream finishes without a value.
    public func replaceEmpty(with output: Output) -> Publishers.Funneled<Output, Failure> {
        let upstream = self
        return Publishers.Funneled { funnel in
            let sent = Held(false)
            funnel.follow(upstream, onValue: { value in
                sent.update { $0 = true }
                funnel.send(value)
            }, onCompletion: { completion in
                if case .finished = completion, !sent.update({ $0 }) { funnel.send(output) }
                funnel.finish(completion)
            })
        }
    }

    /// The values that pass a predicate that may throw: an error fails the publisher.
    public func tryFilter(_ isIncluded: @escaping (Output) throws -> Bool) -> Publishers.Step<Self, Output, any Error> {
        tryStep { try isIncluded($0) ? .emit($0) : .skip }
    }

    /// The values a throwing transform turns into non-nil ones: an error fails the publisher.
    public func tryCompactMap<T>(_ transform: @escaping (Output) throws -> T?) -> Publishers.Step<Self, T, any Error> {
        tryStep { try transform($0).map { .emit($0) } ?? .skip }
    }

    /// A step that may throw.
    private func tryStep<T>(_ step: @escaping (Output) throws -> StepOutcome<T, any Error>) -> Publishers.Step<Self, T, any Error> {
        Publishers.Step(upstream: self) {
            (value: { value in
                do { return try step(value) } catch { return .fail(error) }
            }, completion: { completion in
                switch completion {
                case .finished: return .finished
                case .failure(let error): return .failure(error)
                }
            })
        }
    }

    /// The same publisher as one that never fails: a failure stops the program with its
    /// error, as Apple's does (`assertNoFailure` is for failures that cannot happen).
    public func assertNoFailure(_ prefix: String = "", file: StaticString = #file, line: UInt = #line) -> Publishers.Step<Self, Output, Never> {
        Publishers.Step(upstream: self) {
            (value: { .emit($0) }, completion: { completion in
                switch completion {
                case .finished: return .finished
                case .failure(let error): fatalError("\(prefix.isEmpty ? "" : prefix + ": ")Unexpected failure: \(error)", file: file, line: line)
                }
            })
        }
    }

    /// Prints every event to standard output (or `stream`), prefixed, as Apple's does:
    /// `prefix: receive value: (1)`.
    public func print(_ prefix: String = "", to stream: (any TextOutputStream)? = nil) -> Publishers.HandleEvents<Self> {
        let lead = prefix.isEmpty ? "" : prefix + ": "
        let output = PrintTarget(stream)
        return handleEvents(receiveSubscription: { output.write("\(lead)receive subscription: (\(type(of: $0)))") },
                            receiveOutput: { output.write("\(lead)receive value: (\($0))") },
                            receiveCompletion: { completion in
                                switch completion {
                                case .finished: output.write("\(lead)receive finished")
                                case .failure(let error): output.write("\(lead)receive error: (\(error))")
                                }
                            },
                            receiveCancel: { output.write("\(lead)receive cancel") },
                            receiveRequest: { output.write("\(lead)request \($0)") })
    }
}

extension Publishers {
    /// When `buffer` asks its upstream for values (Apple: `Publishers.PrefetchStrategy`).
    /// Here both ask for every value and keep `size` of those the subscriber has not asked for
    /// yet: `.keepFull` does not hold its upstream to `size` values as Apple's does (a subject
    /// upstream drops the extra values there; here `whenFull` does).
    public enum PrefetchStrategy: Hashable, Sendable {
        /// Keep the buffer full.
        case keepFull
        /// Ask as the subscriber asks.
        case byRequest
    }

    /// What `buffer` does with a value when it is full (Apple: `Publishers.BufferingStrategy`).
    public enum BufferingStrategy<Failure: Error> {
        /// Drop the new value.
        case dropNewest
        /// Drop the oldest value kept.
        case dropOldest
        /// Fail with the error made.
        case customError(() -> Failure)
    }
}

extension Publisher {
    /// Keeps up to `size` values the subscriber has not asked for yet; beyond, `whenFull`.
    public func buffer(size: Int, prefetch: Publishers.PrefetchStrategy, whenFull: Publishers.BufferingStrategy<Failure>) -> Publishers.Funneled<Output, Failure> {
        let upstream = self, limit = max(0, size)
        return Publishers.Funneled { funnel in
            funnel.follow(upstream, onValue: { funnel.send($0, limit: limit, whenFull: whenFull) }, onCompletion: { funnel.finish($0) })
        }
    }
}

extension Publisher where Output: Equatable {
    /// True at the first value equal to `output` (then finished), false if none was.
    public func contains(_ output: Output) -> Publishers.Funneled<Bool, Failure> { contains { $0 == output } }
}

extension Publishers {
    /// `first`'s values, then `second`'s (subscribed when `first` finished).
    static func concatenate<A: Publisher, B: Publisher>(_ first: A, _ second: B) -> Funneled<A.Output, A.Failure> where A.Output == B.Output, A.Failure == B.Failure {
        Funneled { funnel in
            funnel.follow(first) { completion in
                if case .failure = completion { return funnel.finish(completion) }
                funnel.follow(second) { funnel.finish($0) }
            }
        }
    }
}

/// Where `print` writes: the stream given, or standard output. @unchecked Sendable: the
/// stored stream is read and replaced under `lock`.
private final class PrintTarget: @unchecked Sendable {
    private let lock = NSLock()
    private var stream: (any TextOutputStream)?
    init(_ stream: (any TextOutputStream)?) { self.stream = stream }
    func write(_ line: String) {
        // The app's stream is written outside the lock (it may print in turn); a class stream
        // is the app's object, a struct one a copy, as Apple's `print(_:to:)` takes it.
        lock.lock()
        var target = stream
        lock.unlock()
        if target != nil {
            target?.write(line + "\n")
            lock.lock()
            stream = target
            lock.unlock()
        } else {
            Swift.print(line)
        }
    }
}

extension Publishers {
    /// The n-th values of two publishers, paired (Apple: `Publishers.Zip`): finished when a
    /// side finished with nothing left to pair, failed at the first failure.
    public struct Zip<A: Publisher, B: Publisher>: Publisher where A.Failure == B.Failure {
        public typealias Output = (A.Output, B.Output)
        public typealias Failure = A.Failure
        /// The first publisher.
        public let a: A
        /// The second publisher.
        public let b: B
        /// Pairs of `a`'s and `b`'s values.
        public init(_ a: A, _ b: B) {
            self.a = a
            self.b = b
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            a.pairedFunnel(b).receive(subscriber: subscriber)
        }
    }

    /// The n-th values of three publishers (Apple: `Publishers.Zip3`).
    public struct Zip3<A: Publisher, B: Publisher, C: Publisher>: Publisher where A.Failure == B.Failure, A.Failure == C.Failure {
        public typealias Output = (A.Output, B.Output, C.Output)
        public typealias Failure = A.Failure
        /// The first publisher.
        public let a: A
        /// The second publisher.
        public let b: B
        /// The third publisher.
        public let c: C
        /// Triples of `a`'s, `b`'s and `c`'s values.
        public init(_ a: A, _ b: B, _ c: C) {
            self.a = a
            self.b = b
            self.c = c
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            a.pairedFunnel(b).pairedFunnel(c).map { ($0.0.0, $0.0.1, $0.1) }.receive(subscriber: subscriber)
        }
    }

    /// The n-th values of four publishers (Apple: `Publishers.Zip4`).
    public struct Zip4<A: Publisher, B: Publisher, C: Publisher, D: Publisher>: Publisher
    where A.Failure == B.Failure, A.Failure == C.Failure, A.Failure == D.Failure {
        public typealias Output = (A.Output, B.Output, C.Output, D.Output)
        public typealias Failure = A.Failure
        /// The first publisher.
        public let a: A
        /// The second publisher.
        public let b: B
        /// The third publisher.
        public let c: C
        /// The fourth publisher.
        public let d: D
        /// Quadruples of the four publishers' values.
        public init(_ a: A, _ b: B, _ c: C, _ d: D) {
            self.a = a
            self.b = b
            self.c = c
            self.d = d
        }
        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            a.pairedFunnel(b).pairedFunnel(c).pairedFunnel(d).map { ($0.0.0.0, $0.0.0.1, $0.0.1, $0.1) }.receive(subscriber: subscriber)
        }
    }
}
