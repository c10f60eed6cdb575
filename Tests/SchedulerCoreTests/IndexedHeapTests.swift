import Testing
@testable import SchedulerCore

/// The keyed min-heap under the eligibility index and the run deadlines.
@Suite("Indexed heap")
struct IndexedHeapTests {
    private func drain<Positions, P>(_ heap: inout PositionedHeap<Positions, P>) -> [(key: Positions.Key, priority: P)] {
        var out: [(key: Positions.Key, priority: P)] = []
        while let next = heap.popMin() { out.append(next) }
        return out
    }

    @Test func popMinReturnsKeysInPriorityOrder() {
        var heap = IndexedHeap<String, Int>()
        for (key, priority) in [("e", 50), ("b", 20), ("g", 70), ("a", 10), ("d", 40), ("f", 60), ("c", 30)] {
            heap.update(key, priority: priority)
        }
        #expect(heap.count == 7)
        #expect(heap.min?.key == "a")
        #expect(drain(&heap).map(\.key) == ["a", "b", "c", "d", "e", "f", "g"])
        #expect(heap.isEmpty)
        #expect(heap.popMin() == nil)
    }

    @Test func theSmallestPriorityOfTheOtherKeys() {
        var heap = IndexedHeap<String, Int>()
        #expect(heap.minPriority(excluding: "a") == nil)
        heap.update("a", priority: 10)
        #expect(heap.minPriority(excluding: "a") == nil)
        #expect(heap.minPriority(excluding: "z") == 10)
        heap.update("b", priority: 20)
        #expect(heap.minPriority(excluding: "a") == 20)
        for (key, priority) in [("e", 50), ("c", 30), ("d", 40), ("f", 15)] { heap.update(key, priority: priority) }
        #expect(heap.minPriority(excluding: "a") == 15)
        #expect(heap.minPriority(excluding: "b") == 10)
    }

    @Test func updateToLowerPriorityMovesKeyUp() {
        var heap = IndexedHeap<String, Int>()
        for (key, priority) in [("a", 10), ("b", 20), ("c", 30), ("d", 40)] { heap.update(key, priority: priority) }
        heap.update("d", priority: 5)
        #expect(heap.count == 4, "updating an existing key does not add one")
        #expect(heap.min?.key == "d")
        #expect(heap.priority(of: "d") == 5)
        #expect(drain(&heap).map(\.key) == ["d", "a", "b", "c"])
    }

    @Test func updateToHigherPriorityMovesKeyDown() {
        var heap = IndexedHeap<String, Int>()
        for (key, priority) in [("a", 10), ("b", 20), ("c", 30), ("d", 40)] { heap.update(key, priority: priority) }
        heap.update("a", priority: 35)
        #expect(heap.count == 4)
        #expect(heap.min?.key == "b")
        #expect(drain(&heap).map(\.key) == ["b", "c", "a", "d"])
    }

    @Test func removeArbitraryKeyKeepsHeapOrder() {
        var heap = IndexedHeap<Int, Int>()
        for key in 0..<20 { heap.update(key, priority: (key * 7) % 20) }
        #expect(heap.remove(3) == 1)
        #expect(heap.remove(0) == 0, "removing the minimum works too")
        #expect(heap.remove(99) == nil, "removing an absent key returns nil")
        #expect(!heap.contains(3))
        #expect(heap.count == 18)
        let priorities = drain(&heap).map(\.priority)
        #expect(priorities == priorities.sorted())
        #expect(!priorities.contains(0) && !priorities.contains(1))
    }

    @Test func containsAndPriorityReflectContents() {
        var heap = IndexedHeap<String, Double>()
        #expect(heap.min == nil)
        heap.update("x", priority: 1.5)
        #expect(heap.contains("x"))
        #expect(heap.priority(of: "x") == 1.5)
        #expect(heap.priority(of: "y") == nil)
        #expect(Set(heap.keys) == ["x"])
    }

    /// 1000 seeded random operations against a dictionary model; after every operation the
    /// heap's count and minimum match the model, and the final drain is in sorted order.
    @Test func randomizedOperationsMatchNaiveModel() {
        var hashed = IndexedHeap<Int, Int>()
        checkAgainstModel(&hashed, key: { $0 })
    }

    /// The same with slot numbers as keys (the eligibility index's heaps): positions in an
    /// array instead of a dictionary must behave identically.
    @Test func slotHeapMatchesNaiveModel() {
        var slots = SlotHeap<Int>()
        checkAgainstModel(&slots, key: { Int32($0) })
    }

    @Test func slotPositionsGrowOnDemandAndForget() {
        var positions = SlotPositions()
        #expect(positions[7] == nil, "an unknown slot has no position")
        positions[7] = 3
        #expect(positions[7] == 3)
        #expect(positions[2] == nil, "growing to slot 7 leaves the slots below it absent")
        positions[7] = nil
        #expect(positions[7] == nil)
        positions[100] = nil
        #expect(positions[100] == nil, "clearing an unknown slot is a no-op")
    }

    private func checkAgainstModel<Positions: HeapPositions>(_ heap: inout PositionedHeap<Positions, Int>, key makeKey: (Int) -> Positions.Key) where Positions.Key: Equatable {
        var rng = SeededRandom(seed: 0xB6_7A5C)
        var model: [Int: Int] = [:]
        var pops = 0
        // Priorities are value * 100 + key: unique per key, so the minimum is unambiguous.
        for step in 0..<1000 {
            let key = Int.random(in: 0..<60, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                let priority = Int.random(in: 0..<1000, using: &rng) * 100 + key
                heap.update(makeKey(key), priority: priority)
                model[key] = priority
            case 5..<7:
                #expect(heap.remove(makeKey(key)) == model.removeValue(forKey: key), "step \(step): remove \(key)")
            default:
                let expected = model.min { $0.value < $1.value }
                let popped = heap.popMin()
                #expect(popped?.key == expected.map { makeKey($0.key) } && popped?.priority == expected?.value, "step \(step): popMin")
                if let expected { model[expected.key] = nil; pops += 1 }
            }
            #expect(heap.count == model.count, "step \(step): count")
            #expect(heap.min?.priority == model.values.min(), "step \(step): min")
        }
        #expect(pops > 100, "the sequence exercises popMin")
        let drained = drain(&heap)
        #expect(drained.map(\.priority) == model.values.sorted())
        #expect(drained.map(\.key) == model.sorted { $0.value < $1.value }.map { makeKey($0.key) })
    }
}
