import ArgumentParser
import Examples
import FluxCore
import Foundation

extension BenchCommand {
    /// How long each codec takes to encode and decode actions and states of growing size.
    struct Codec: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "codec",
            abstract: "Time the wire codecs (binary, JSON) on an action, states of 10 to 10,000 items, and a one-item change.")

        @Option(help: "Milliseconds to spend on each measurement.") var milliseconds = 300

        func run() throws {
            emitLine("codec     value                         bytes   encode µs   decode µs")
            let action = Todo.Action.addTodo(title: "Buy milk")
            try measure("todo.addTodo action", action)
            for count in [10, 100, 1000, 10_000] {
                let todos = Todo.State(todos: (0..<count).map { Todo.Item(title: "todo number \($0)", done: $0 % 3 == 0) })
                try measure("todo state, \(count) items", todos)
            }
            var ledger = Ledger.State()
            _ = Ledger.reducer(&ledger, .open(count: 10_000), ())
            try measure("ledger state, 10000 items", ledger)
            _ = ledger.takeChanges()
            _ = Ledger.reducer(&ledger, .post(account: 42, amount: 5, memo: "x"), ())
            try measure("ledger change, 1 of 10000", ledger.takeChanges())
        }

        func measure<T: Codable>(_ name: String, _ value: T) throws {
            for codec in [WireCodec(.binary), WireCodec(.json)] {
                let bytes = try codec.encode(value)
                let encode = try time { _ = try codec.encode(value) }
                let decode = try time { _ = try codec.decode(T.self, from: bytes) }
                emitLine(String(format: "%-8@  %-28@ %6d  %10.2f  %10.2f", codec.name, name, bytes.count, encode, decode))
            }
        }

        /// Mean microseconds per call over about `milliseconds`.
        func time(_ body: () throws -> Void) throws -> Double {
            let budget = UInt64(milliseconds) * 1_000_000
            let start = MonotonicClock.nowNanoseconds()
            var calls = 0
            repeat {
                try body()
                calls += 1
            } while MonotonicClock.nowNanoseconds() - start < budget
            return Double(MonotonicClock.nowNanoseconds() - start) / 1000 / Double(calls)
        }
    }
}
