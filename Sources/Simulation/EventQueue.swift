/// Events ordered by simulated time, ties broken by the order they were scheduled in: the same
/// schedule always comes out in the same order. The heap moves small keys; events stay put.
struct EventQueue<Event> {
    private struct Key {
        var time: UInt64
        var order: UInt64
        var slot: Int
        func precedes(_ other: Key) -> Bool { time != other.time ? time < other.time : order < other.order }
    }

    private var heap: [Key] = []
    private var slots: [Event?] = []
    private var free: [Int] = []
    private var scheduled: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }

    mutating func schedule(_ event: Event, at time: UInt64) {
        scheduled += 1
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = event
        } else {
            slot = slots.count
            slots.append(event)
        }
        heap.append(Key(time: time, order: scheduled, slot: slot))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func next() -> (time: UInt64, event: Event)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].precedes(heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        // swift-format-ignore: NeverForceUnwrap
        // (a key in the heap always names a filled slot: schedule fills it, only this pop empties it)
        let event = slots[first.slot]!
        slots[first.slot] = nil
        free.append(first.slot)
        return (first.time, event)
    }
}
